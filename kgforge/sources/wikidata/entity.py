"""One Wikidata entity (a dump line, decoded) → quads, truthy selection, terms and qualifiers.

Pure functions over plain dicts, so they run unchanged in worker processes. The rules:

* statements: per (entity, property) the best rank only — preferred if any, else normal; a
  deprecated statement never becomes a fact (it goes to the ``deprecated`` list when asked);
* a truthy statement gives a direct triple (the domain relation IRI when the schema maps the
  property, ``wdt:Pxx`` otherwise) and, when it has qualifiers or its value carries more than the
  literal (unit, bounds, precision, calendar), a reified statement node
  ``wd:Q p:Pxx wds:ID . wds:ID ps:Pxx value ; pq:Pyy qualifier ; wikibase:rank …``;
* terms: one label (and its aliases) per configured language, picked along a fallback chain;
  the literal keeps the tag it was found under (``@zh-hans``, ``@mul``), recording which was used.
  The zh chain tries every Simplified tag, then the Traditional ones (``zh-hant``, ``zh-tw``, ``zh-hk``,
  ``zh-mo``), then ``mul``: a Traditional term is written converted to Simplified (OpenCC) as
  ``@zh-hans``, its original kept as an ``skos:altLabel`` under its own tag;
* quirks: empty maps written ``[]``, ``numeric-id`` without ``id``, missing hashes or statement
  ids, lower-case statement ids and unknown keys are all accepted.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, fields
from typing import Any

from kgforge.core.quads import check_lang, literal_term
from kgforge.core.schema import Schema
from kgforge.core.text import SIMPLIFIED_TAG, is_traditional_tag, to_simplified
from kgforge.core.vocab import (
    RDF_TYPE,
    RDFS_LABEL,
    SCHEMA_DESCRIPTION,
    SKOS_ALT_LABEL,
    class_iri,
    safe_segment,
)
from kgforge.sources.options import option_names, read_options
from kgforge.sources.wikidata.values import (
    ENTITY_ID,
    PQ,
    PS,
    WDNO,
    WDS,
    WDT,
    WIKIBASE,
    BadValue,
    P,
    Value,
    entity_id,
    entity_iri,
    iri_term,
    map_value,
    skolem_iri,
)

DEFAULT_CHAINS = {
    "zh": ("zh-hans", "zh-cn", "zh", "zh-sg", "zh-my", "zh-hant", "zh-tw", "zh-hk", "zh-mo", "mul"),
    "en": ("en", "mul", "en-gb", "en-ca"),
}
RANKS = {"preferred": "PreferredRank", "normal": "NormalRank", "deprecated": "DeprecatedRank"}
SUBCLASS_OF, INSTANCE_OF = "P279", "P31"
Triple = tuple[str, str, str]  # subject IRI, predicate IRI, object term


@dataclass(frozen=True)
class WikidataMapping:
    """The options (``[options.wikidata]``, or a source's own) that say what to keep of each entity."""

    languages: tuple[str, ...] = ("zh", "en")
    """The languages whose label, aliases and description are kept, one term each along its fallback chain."""
    fallback: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Language → the tags tried in order (default: zh-hans … zh-hant … mul for zh; en, mul, en-gb, en-ca)."""
    exclude: tuple[str, ...] = ()
    """Properties (P-ids) never imported."""
    only_mapped: bool = False
    """Import only the properties the schema maps onto a relation."""
    no_follow: tuple[str, ...] = ()
    """Properties imported but not followed by the N-hop selection (type or country hubs)."""
    descriptions: bool = True
    """Keep each entity's description (``schema:description``)."""
    keep_deprecated: bool = False
    """Write deprecated statements to a side file (never as facts)."""
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Schema type → the QIDs whose instances (P31) are of that type."""


@dataclass(frozen=True)
class WikidataConfig:
    """What to keep from each entity and under which IRIs: the schema's mapping and the options, resolved."""

    relation_iris: dict[str, str] = field(default_factory=dict)  # P-id → domain relation IRI
    exclude: frozenset[str] = frozenset()
    only_mapped: bool = False
    no_follow: frozenset[str] = frozenset()  # imported, but not edges for N-hop expansion (type/country hubs)
    languages: tuple[str, ...] = ("zh", "en")
    chains: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(DEFAULT_CHAINS))
    descriptions: bool = True
    keep_deprecated: bool = False
    classes: dict[str, str] = field(default_factory=dict)  # QID → schema class IRI (P31 → rdf:type)
    _plans: dict[str, tuple[str, str] | None] = field(default_factory=dict, init=False, repr=False, compare=False)

    @classmethod
    def from_schema(cls, schema: Schema | None, options: dict[str, Any] | None = None) -> WikidataConfig:
        """The mapping keys of ``[options.wikidata]`` (its selection and run keys are the importer's to check),
        overridden by ``options``, which may hold mapping keys only."""
        if schema is None:
            return cls.from_options(None, read_options(WikidataMapping, "(no schema)", "wikidata", {}, options))
        names = option_names(WikidataMapping)
        table = {k: v for k, v in (schema.options.get("wikidata") or {}).items() if k in names}
        return cls.from_options(schema, read_options(WikidataMapping, schema.path, "wikidata", table, options))

    @classmethod
    def from_options(cls, schema: Schema | None, mapping: WikidataMapping) -> WikidataConfig:
        relations = {pid.upper(): rel.iri for pid, rel in (schema.relation_by_wikidata() if schema else {}).items()}
        chains = {
            lang: mapping.fallback.get(lang) or DEFAULT_CHAINS.get(lang) or (lang, "mul") for lang in mapping.languages
        }
        classes = {qid.upper(): class_iri(type_id) for type_id, qids in mapping.classes.items() for qid in qids}
        return cls(
            relation_iris=relations,
            exclude=frozenset(p.upper() for p in mapping.exclude),
            only_mapped=mapping.only_mapped,
            languages=mapping.languages,
            chains=chains,
            no_follow=frozenset(p.upper() for p in mapping.no_follow),
            descriptions=mapping.descriptions,
            keep_deprecated=mapping.keep_deprecated,
            classes=classes,
        )

    def plan(self, pid: str) -> tuple[str, str] | None:
        """``(PID, direct predicate IRI)`` for a claims key as the dump spells it; None if not wanted."""
        plan = self._plans.get(pid, False)
        if plan is False:
            upper = pid.upper()
            plan = self._plans[pid] = (upper, self.direct_predicate(upper)) if self.wants(upper) else None
        return plan  # type: ignore[return-value]

    def as_dict(self) -> dict[str, Any]:
        """Every setting (not the cache), for keys that must change when the output would."""
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    def wants(self, pid: str) -> bool:
        return pid not in self.exclude and (not self.only_mapped or pid in self.relation_iris)

    def follows(self, pid: str) -> bool:
        """Whether N-hop expansion goes along this property."""
        return pid not in self.no_follow and self.wants(pid)

    def direct_predicate(self, pid: str) -> str:
        return self.relation_iris.get(pid) or WDT + pid


@dataclass
class EntityOutput:
    id: str
    triples: list[Triple] = field(default_factory=list)
    problems: list[tuple[str, str, Any]] = field(default_factory=list)  # (where, reason, record)
    deprecated: list[dict[str, Any]] = field(default_factory=list)
    counts: dict[str, int] = field(default_factory=dict)  # a plain dict: Counter() costs ~0.4 µs an entity


class BadEntity(ValueError):
    """The whole entity is unusable (no id, wrong shape)."""


def check_entity(entity: Any) -> str:
    """The entity's id, or BadEntity saying what is wrong with its top level."""
    if not isinstance(entity, dict):
        raise BadEntity(f"entity must be a JSON object, got {type(entity).__name__}")
    qid = entity.get("id")
    if not isinstance(qid, str) or not ENTITY_ID.match(qid):
        raise BadEntity(f"entity has no valid 'id' (got {qid!r})")
    for key in ("labels", "descriptions", "aliases", "claims"):
        if not isinstance(entity.get(key) or {}, (dict, list)):
            raise BadEntity(f"{qid}: '{key}' must be an object, got {type(entity[key]).__name__}")
    return qid


def _terms(entity: dict, key: str) -> dict:
    value = entity.get(key) or {}
    return value if isinstance(value, dict) else {}  # PHP writes an empty map as []


def process_entity(entity: Any, cfg: WikidataConfig) -> EntityOutput:
    """All triples of one entity under ``cfg``; problems with single statements are listed, not raised."""
    qid = check_entity(entity)
    out = EntityOutput(qid)
    subject = entity_iri(qid)
    emit_terms(entity, subject, cfg, out)
    emitted = excluded = 0
    for key, statements in _terms(entity, "claims").items():
        if type(statements) is not list:
            out.problems.append((f"{qid} {key}", "statement list is not a list", statements))
            continue
        plan = cfg.plan(key)
        if plan is None:
            excluded += len(statements)
            continue
        emitted += _emit_statements(subject, qid, plan, best_rank(statements, out, plan[0]), cfg, out)
    counts = out.counts  # these keys are set only here
    counts["entities"] = 1
    counts["statements"] = emitted
    if excluded:
        counts["statements_excluded"] = excluded
    if out.deprecated:
        counts["statements_deprecated"] = len(out.deprecated)
    return out


def emit_terms(entity: dict, subject: str, cfg: WikidataConfig, out: EntityOutput) -> None:
    """Labels, descriptions and aliases of ``entity`` (dump-shaped term maps) along the fallback chains."""
    labels, descriptions, aliases = (_terms(entity, k) for k in ("labels", "descriptions", "aliases"))
    for lang in cfg.languages:
        chain = cfg.chains.get(lang, (lang,))
        _pick_term(subject, RDFS_LABEL, labels, chain, out)
        if cfg.descriptions:
            _pick_term(subject, SCHEMA_DESCRIPTION, descriptions, chain, out)
        tag = next((t for t in chain if isinstance(aliases.get(t), list) and aliases[t]), None)
        if tag:
            for alias in aliases[tag]:
                _add_term(subject, SKOS_ALT_LABEL, alias, tag, out)


def _pick_term(subject: str, predicate: str, terms: dict, chain: tuple[str, ...], out: EntityOutput) -> None:
    for tag in chain:
        if tag in terms and _add_term(subject, predicate, terms[tag], tag, out):
            return


_GOOD_TAGS: set[str] = set()  # language tags already checked


def _add_term(subject: str, predicate: str, term: Any, tag: str, out: EntityOutput) -> bool:
    value = term.get("value") if isinstance(term, dict) else None
    if not isinstance(value, str) or not value.strip():
        out.problems.append((f"{out.id} term {tag}", "term has no string 'value'", term))
        return False
    try:
        if tag not in _GOOD_TAGS:
            _GOOD_TAGS.add(check_lang(tag))
        simplified = to_simplified(value, tag) if is_traditional_tag(tag) else value
        if simplified == value:
            out.triples.append((subject, predicate, f"{literal_term(value)}@{tag}"))
        else:  # Chinese dialogue data is Simplified: the converted term is the one used, the original an alias
            out.triples.append((subject, predicate, f"{literal_term(simplified)}@{SIMPLIFIED_TAG}"))
            if predicate != SCHEMA_DESCRIPTION:
                out.triples.append((subject, SKOS_ALT_LABEL, f"{literal_term(value)}@{tag}"))
    except (ValueError, UnicodeEncodeError) as exc:
        out.problems.append((f"{out.id} term {tag}", f"bad term: {exc}", term))
        return False
    return True


def _count(out: EntityOutput, key: str, n: int = 1) -> None:
    out.counts[key] = out.counts.get(key, 0) + n


def best_rank(statements: list, out: EntityOutput, pid: str) -> list[dict]:
    """Preferred statements if any, else normal ones; deprecated ones are set aside in ``out.deprecated``."""
    for statement in statements:  # the common case: every statement of normal rank
        if type(statement) is not dict or statement.get("rank", "normal") != "normal":
            break
    else:
        return statements
    normal: list[dict] = []
    preferred: list[dict] = []
    for statement in statements:
        rank = statement.get("rank", "normal") if type(statement) is dict else None
        if rank == "normal":
            normal.append(statement)
        elif rank == "preferred":
            preferred.append(statement)
        elif rank == "deprecated":
            out.deprecated.append(statement)
        else:
            out.problems.append((f"{out.id} {pid}", f"statement has unknown rank {rank!r}", statement))
    if preferred:
        if normal:
            _count(out, "statements_outranked", len(normal))
        return preferred
    return normal


_SAFE_ID = re.compile(r"^[A-Za-z0-9._~$-]+$")


def statement_node(qid: str, pid: str, statement: dict) -> str:
    sid = statement.get("id")
    if not isinstance(sid, str) or not sid:
        digest = hashlib.sha1(json.dumps(statement, sort_keys=True).encode("utf-8")).hexdigest()[:20]
        sid = f"{qid}-{pid}-{digest}"
    sid = sid.replace("$", "-")
    return WDS + (sid if _SAFE_ID.match(sid) else safe_segment(sid))


def _where(qid: str, pid: str, statement: dict) -> str:
    return f"{qid} {pid} {statement.get('id', '')}".rstrip()


def _emit_statements(
    subject: str, qid: str, plan: tuple[str, str], statements: list[dict], cfg: WikidataConfig, out: EntityOutput
) -> int:
    """Triples of the truthy statements of one property; returns how many gave a fact (bad values do not)."""
    pid, predicate = plan
    triples = out.triples
    emitted = 0
    for statement in statements:
        snak = statement.get("mainsnak")
        try:
            if type(snak) is dict and snak.get("snaktype", "value") == "value":  # the common case, inlined
                value: Value | None = map_value(snak.get("datavalue"), snak.get("datatype"))
            else:
                value = snak_value(snak, lambda: f"{qid}|{statement.get('id') or json.dumps(snak, sort_keys=True)}")
        except BadValue as exc:
            out.problems.append((_where(qid, pid, statement), f"bad value: {exc}", statement))
            continue
        emitted += 1
        if value is None:  # novalue: "has no P"
            triples.append((subject, RDF_TYPE, f"<{WDNO}{pid}>"))
        else:
            triples.append((subject, predicate, value.term))
            if pid == INSTANCE_OF and value.entity in cfg.classes:
                triples.append((subject, RDF_TYPE, iri_term(cfg.classes[value.entity])))
            if not value.extras and not statement.get("qualifiers"):
                continue
        _emit_statement_node(subject, qid, pid, statement, value, out)
    return emitted


def _emit_statement_node(
    subject: str, qid: str, pid: str, statement: dict, value: Value | None, out: EntityOutput
) -> None:
    """``wd:Q p:P wds:ID``, with the value, its extras (unit, precision…), rank and qualifiers on the node."""
    qualifiers = _qualifiers(statement, qid, pid, out) if statement.get("qualifiers") else ()
    if not qualifiers and (value is None or not value.extras):
        return  # nothing to put on a node (or qualifiers were there but none could be read)
    node = statement_node(qid, pid, statement)
    triples = out.triples
    triples.append((subject, P + pid, f"<{node}>"))
    if value is not None:
        triples.append((node, PS + pid, value.term))
        for extra_predicate, term in value.extras:
            triples.append((node, extra_predicate, term))
    else:
        triples.append((node, RDF_TYPE, f"<{WDNO}{pid}>"))
    triples.append((node, _RANK, _RANK_TERMS[statement.get("rank", "normal")]))
    for qualifier_predicate, term in qualifiers:
        triples.append((node, qualifier_predicate, term))
    _count(out, "statement_nodes")


_RANK = WIKIBASE + "rank"
_RANK_TERMS = {rank: f"<{WIKIBASE}{name}>" for rank, name in RANKS.items()}


def snak_value(snak: Any, skolem_key: Callable[[], str]) -> Value | None:
    """The mapped value of a snak; None for ``novalue``; a skolem IRI for ``somevalue``."""
    if not isinstance(snak, dict):
        raise BadValue("snak must be an object")
    kind = snak.get("snaktype", "value")
    if kind == "value":
        return map_value(snak.get("datavalue"), snak.get("datatype"))
    if kind == "novalue":
        return None
    if kind == "somevalue":
        return Value(iri_term(skolem_iri(skolem_key())))
    raise BadValue(f"unknown snaktype {kind!r}")


def _qualifiers(statement: dict, qid: str, pid: str, out: EntityOutput) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    qualifiers = statement["qualifiers"]
    if not isinstance(qualifiers, dict):
        return found
    for qpid, snaks in qualifiers.items():
        qpid_u = str(qpid).upper()
        for index, snak in enumerate(snaks if isinstance(snaks, list) else []):
            try:
                value = snak_value(snak, lambda: f"{qid}|{statement.get('id')}|{qpid_u}|{index}")
            except BadValue as exc:
                out.problems.append(
                    (f"{_where(qid, pid, statement)} qualifier {qpid_u}", f"bad qualifier value: {exc}", snak)
                )
                continue
            found.append((RDF_TYPE, f"<{WDNO}{qpid_u}>") if value is None else (PQ + qpid_u, value.term))
    if found:
        _count(out, "qualifiers", len(found))
    return found


@dataclass
class IndexRecord:
    """What selection needs to know about one entity: its edges, classes and names."""

    id: str
    neighbours: list[str]  # entity-valued best-rank main values, mapped properties first
    instance_of: list[str]
    subclass_of: list[str]
    labels: list[str]  # labels in zh*/en*/mul
    aliases: list[str]  # aliases in zh*/en*/mul

    def to_line(self) -> str:
        return (
            "\t".join(
                [
                    self.id,
                    " ".join(self.neighbours),
                    " ".join(self.instance_of),
                    " ".join(self.subclass_of),
                    json.dumps([self.labels, self.aliases], ensure_ascii=False),
                ]
            )
            + "\n"
        )

    @classmethod
    def from_line(cls, line: str) -> IndexRecord:
        qid, neighbours, inst, sub, names = line.rstrip("\n").split("\t")
        labels, aliases = json.loads(names)
        return cls(qid, neighbours.split(), inst.split(), sub.split(), labels, aliases)


def index_entity(entity: Any, cfg: WikidataConfig) -> IndexRecord:
    """The selection record of one entity (edges follow the same truthy and exclusion rules)."""
    qid = check_entity(entity)
    return index_record(qid, _item_edges(entity, qid), _terms(entity, "labels"), _terms(entity, "aliases"), cfg)


def _item_edges(entity: dict, qid: str) -> Iterator[tuple[str, str]]:
    """``(PID, target id)`` of the entity's best-rank, item-valued main snaks."""
    scratch = EntityOutput(qid)
    for pid, statements in _terms(entity, "claims").items():
        if isinstance(statements, list):
            for statement in best_rank(statements, scratch, pid.upper()):
                target = _item_target(statement.get("mainsnak"))
                if target is not None:
                    yield pid.upper(), target


def index_record(
    qid: str, edges: Iterable[tuple[str, str]], labels: dict, aliases: dict, cfg: WikidataConfig
) -> IndexRecord:
    """The selection record of an entity from its item edges ``(PID, target id)`` and its label and
    alias maps (dump-shaped); every dump format's index pass ends here."""
    mapped: list[str] = []
    other: list[str] = []
    classes: dict[str, list[str]] = {INSTANCE_OF: [], SUBCLASS_OF: []}
    for pid, target in edges:
        if pid in classes:
            classes[pid].append(target)
        if cfg.follows(pid):
            (mapped if pid in cfg.relation_iris else other).append(target)
    return IndexRecord(
        qid,
        list(dict.fromkeys(mapped + other)),
        classes[INSTANCE_OF],
        classes[SUBCLASS_OF],
        _names(labels),
        _names(aliases),
    )


def _names(terms: dict) -> list[str]:
    """The zh*, en* and mul values of a label or alias map, without duplicates."""
    names: list[str] = []
    for tag, values in terms.items():
        if tag.startswith(("zh", "en")) or tag == "mul":
            for term in values if isinstance(values, list) else [values]:
                if isinstance(term, dict) and isinstance(term.get("value"), str):
                    names.append(term["value"])
    return list(dict.fromkeys(names))


def _item_target(snak: Any) -> str | None:
    if not isinstance(snak, dict) or snak.get("snaktype", "value") != "value":
        return None
    datavalue = snak.get("datavalue")
    if not isinstance(datavalue, dict) or datavalue.get("type") != "wikibase-entityid":
        return None
    try:
        return entity_id(datavalue.get("value"))
    except BadValue:
        return None
