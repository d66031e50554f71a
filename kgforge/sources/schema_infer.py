"""A schema inferred from sample data: what `kgforge init` writes, and what a build without a schema uses.

Each sample source is imported once with an empty schema into a scratch folder (the real importer, so what
is inferred is what the build will see), and its quads are read back to decide, per relation:

* its **kind**: ``entity`` when most values are entities (IRIs, or names that are also subjects), ``text`` when
  its literals are long (free text: synopses, comments), ``literal`` otherwise;
* its **datatype**, when every literal is one lexical type (``xsd:integer``, ``xsd:decimal``, ``xsd:date``,
  ``xsd:boolean``), so tables and JSON lines type their cells as RDF sources do;
* the **type relation**: a column or key called ``type``/``class``/``category``/``类型``/``领域``… with few
  distinct values, whose values become the schema's types (``rdf:type`` classes); for RDF sources, the
  classes ``rdf:type`` names;
* the **label and alias** columns/keys (tables, JSON lines) or predicates (RDF) the importer used, and the
  **language**, from the script of the labels (Chinese when a third of their letters are Han characters).

The schema comes out as TOML, commented for the person who checks it, and marked ``inferred = true`` so that
every stage that reads it says so.
"""

from __future__ import annotations

import hashlib
import json
import re
import tempfile
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.core.errors import KgforgeError
from kgforge.core.files import write_text_atomic
from kgforge.core.output import OutputFile
from kgforge.core.quads import XSD, QuadWriter
from kgforge.core.quarantine import Quarantine
from kgforge.core.schema import Relation, Schema, SourceSpec, load_schema, local_name
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, SKOS_ALT_LABEL, graph_iri
from kgforge.sources.importer import ImportContext, importer_for
from kgforge.sources.records import fits_datatype

TYPE_NAMES = {"type", "class", "category", "kind", "types", "类型", "类别", "领域", "种类", "分类"}
MAX_TYPES = 50
TEXT_LENGTH = 50  # mean characters of a relation's literals from which it is free text
ENTITY_SHARE = 0.5
DATATYPES = ("integer", "decimal", "date", "boolean")
SAMPLE_VALUES = 2000
_IDENTIFIER = re.compile(r"[^A-Za-z0-9_]+")


@dataclass
class RelationStats:
    relation: Relation
    count: int = 0
    entities: int = 0
    literal_chars: int = 0
    values: list[str] = field(default_factory=list)  # a sample of the literals
    datatypes: Counter[str] = field(default_factory=Counter)
    distinct: dict[str, None] = field(default_factory=dict)  # the first MAX_TYPES + 1 distinct literals, in order

    def add(self, obj: ox.NamedNode | ox.Literal) -> None:
        self.count += 1
        if not isinstance(obj, ox.Literal):
            self.entities += 1
            return
        self.literal_chars += len(obj.value)
        self.datatypes["" if obj.language else obj.datatype.value] += 1
        if len(self.values) < SAMPLE_VALUES:
            self.values.append(obj.value.strip())
        if len(self.distinct) <= MAX_TYPES:
            self.distinct[obj.value.strip()] = None

    def merge(self, other: RelationStats) -> None:
        """Add what another source showed of the same relation, as if its quads had come after these."""
        self.count += other.count
        self.entities += other.entities
        self.literal_chars += other.literal_chars
        self.values.extend(other.values[: SAMPLE_VALUES - len(self.values)])
        self.datatypes.update(other.datatypes)
        for value in other.distinct:
            if len(self.distinct) > MAX_TYPES:
                break
            self.distinct[value] = None

    def to_json(self) -> dict[str, Any]:
        rel = self.relation
        return {
            "relation": [rel.id, rel.zh, rel.en, rel.kind, rel.declared, rel.own_iri],
            "count": self.count,
            "entities": self.entities,
            "literal_chars": self.literal_chars,
            "values": self.values,
            "datatypes": dict(self.datatypes),
            "distinct": list(self.distinct),
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RelationStats:
        rid, zh, en, kind, declared, own_iri = data["relation"]
        relation = Relation(id=rid, zh=zh, en=en, kind=kind, declared=declared, own_iri=own_iri)
        return cls(
            relation,
            data["count"],
            data["entities"],
            data["literal_chars"],
            list(data["values"]),
            Counter(data["datatypes"]),
            dict.fromkeys(data["distinct"]),
        )

    @property
    def literals(self) -> int:
        return self.count - self.entities

    def kind(self) -> str:
        if self.count and self.entities / self.count >= ENTITY_SHARE:
            return "entity"
        return "text" if self.literals and self.literal_chars / self.literals >= TEXT_LENGTH else "literal"

    def datatype(self) -> str | None:
        typed = [d for d in self.datatypes if d and d != XSD + "string"]
        if len(typed) == 1 and len(self.datatypes) == 1:
            return typed[0]
        if not self.values or any(d for d in self.datatypes if d != XSD + "string" and d):
            return None
        return next(
            (
                XSD + name
                for name in DATATYPES
                if all(
                    fits_datatype(v, XSD + name) and (name != "boolean" or v in ("true", "false")) for v in self.values
                )
            ),
            None,
        )


@dataclass
class Observations:
    """What the sample imports showed, over all sample files."""

    relations: dict[str, RelationStats] = field(default_factory=dict)  # by the IRI the empty schema gave
    classes: Counter[str] = field(default_factory=Counter)
    labels: list[str] = field(default_factory=list)
    records: int = 0
    settings: dict[str, dict[str, Any]] = field(default_factory=dict)  # [options.records] / [options.rdf]
    files: list[str] = field(default_factory=list)

    def merge(self, other: Observations) -> None:
        """Add another source's observations, as if it had been imported after the ones seen so far: what
        many sources show is the merge of what each shows alone, so a build can keep each source's."""
        for iri, stats in other.relations.items():
            if iri in self.relations:
                self.relations[iri].merge(stats)
            else:
                self.relations[iri] = RelationStats.from_json(stats.to_json())
        self.classes.update(other.classes)
        self.labels.extend(other.labels[: SAMPLE_VALUES - len(self.labels)])
        self.records += other.records
        for section, values in other.settings.items():
            self.settings.setdefault(section, {}).update(values)
        self.files.extend(other.files)

    def to_json(self) -> dict[str, Any]:
        return {
            "relations": {iri: stats.to_json() for iri, stats in self.relations.items()},
            "classes": dict(self.classes),
            "labels": self.labels,
            "records": self.records,
            "settings": self.settings,
            "files": self.files,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Observations:
        return cls(
            {iri: RelationStats.from_json(stats) for iri, stats in data["relations"].items()},
            Counter(data["classes"]),
            list(data["labels"]),
            data["records"],
            data["settings"],
            list(data["files"]),
        )

    def relation_names(self) -> list[tuple[str, str]]:
        """The names this source gave its relations, as a schema maps them (``("iri", predicate)`` for an RDF
        source's, ``("label", name)`` for the others), sorted."""
        return sorted(
            ("iri", rel.own_iri) if rel.own_iri else ("label", rel.zh)
            for rel in (stats.relation for stats in self.relations.values())
        )


@dataclass
class InferredSchema:
    toml: str
    summary: dict[str, Any]
    observations: list[Observations] = field(default_factory=list)  # one per source, in the sources' order

    def write(self, target: Path | OutputFile) -> Schema:
        """Write the schema atomically and load it back, as every stage will: to a user's file (an
        :class:`OutputFile`, checked: `kgforge init`) or to kgforge's own layout (a build's inferred schema)."""
        if isinstance(target, OutputFile):
            return load_schema(target.write_text(self.toml))
        write_text_atomic(target, self.toml)
        return load_schema(target)


def infer_schema(
    domain: str,
    sources: list[SourceSpec],
    language: str | None = None,
    known: Sequence[Observations | None] = (),
) -> InferredSchema:
    """The schema of ``domain`` as the ``sources`` (``KIND:PATH``) show it. ``known`` holds, per source, what an
    earlier inference observed of the same bytes (None where it cannot say): those sources are not imported
    again, which is what lets a rebuild of a schema-less domain skip the sources that did not change."""
    if not sources:
        raise KgforgeError("nothing to infer a schema from: give at least one sample file")
    observed: list[Observations] = []
    with tempfile.TemporaryDirectory(prefix="kgforge-init-") as scratch:
        blank = _blank_schema(domain, Path(scratch))
        for index, spec in enumerate(sources):
            earlier = known[index] if index < len(known) else None
            observed.append(earlier or observe_source(blank, spec, Path(scratch) / str(index)))
    seen = Observations()
    for one in observed:
        seen.merge(one)
    inferred = _render(domain, seen, language or _language_of(seen.labels))
    inferred.observations = observed
    return inferred


def _blank_schema(domain: str, scratch: Path) -> Schema:
    path = scratch / "blank.toml"
    path.write_text(f"name = {json.dumps(domain)}\n", encoding="utf-8")
    return load_schema(path)


def observe_source(blank: Schema, spec: SourceSpec, scratch: Path) -> Observations:
    """Import one sample with the empty schema and tally its quads."""
    seen = Observations()
    path = Path(spec.path)
    quads = scratch / "sample.nq"
    quarantine = Quarantine(scratch / "quarantine.jsonl", echo=False)
    with QuadWriter(quads, graph_iri("sample")) as writer:
        ctx = ImportContext(
            schema=blank, path=path, writer=writer, quarantine=quarantine, options=dict(spec.options), workdir=scratch
        )
        importer_for(spec.kind)(ctx)
    quarantine.close()
    seen.records += ctx.counts["records_ok"]
    seen.files.append(
        f"{spec.kind}:{spec.path} ({ctx.counts['records_ok']:,} records"
        + (f", {quarantine.count:,} unreadable" if quarantine.count else "")
        + ")"
    )
    by_iri = {rel.iri: rel for rel in ctx.relations_used}
    section = "rdf" if spec.kind == "rdf" else "records"
    used = {k: v for k, v in ctx.options.items() if k in _SETTINGS[section] and v not in (None, [], "")}
    if used:  # what the importer chose (tables, JSON lines, RDF), for the person to check
        seen.settings.setdefault(section, {}).update(used)
    other_languages = set((used.get("labels") or {}).values())  # names in a column declared in a language
    for quad in ox.parse(path=quads, format=ox.RdfFormat.N_QUADS):
        p, o = quad.predicate.value, quad.object
        if p == RDFS_LABEL and isinstance(o, ox.Literal):
            if len(seen.labels) < SAMPLE_VALUES and o.language not in other_languages:
                seen.labels.append(o.value)
        elif p == RDF_TYPE and isinstance(o, ox.NamedNode):
            seen.classes[o.value] += 1
        elif p != SKOS_ALT_LABEL and p in by_iri:
            stats = seen.relations.get(p) or seen.relations.setdefault(p, RelationStats(by_iri[p]))
            stats.add(o)
    return seen


_SETTINGS = {
    "records": ("id", "label", "aliases", "separator", "labels"),
    "rdf": ("format", "label_predicates", "alias_predicates"),
}


def _language_of(labels: list[str]) -> str:
    letters = [c for text in labels for c in text if c.isalpha()]
    han = sum(1 for c in letters if unicodedata.name(c, "").startswith("CJK UNIFIED"))
    return "zh" if letters and han / len(letters) >= 1 / 3 else "en"


def _identifier(name: str, taken: set[str], fallback: str) -> str:
    base = _IDENTIFIER.sub("_", name).strip("_").lower()
    if not base or not base[0].isalpha():
        base = fallback
    ident, n = base, 2
    while ident in taken:
        ident, n = f"{base}_{n}", n + 1
    taken.add(ident)
    return ident


def relation_ids(names: dict[str, str]) -> dict[str, str]:
    """Each relation's id in an inferred schema (``names``: the name of each, by its key): its words in ASCII
    (Chinese by its pinyin: 门票 → men_piao), taken in the order of the names, not of how often the sources use
    them, so that a source added or changed does not rename the relations of the others (their graphs would
    all change)."""
    from pypinyin import (
        lazy_pinyin,
    )  # lazy: its dictionaries load in a third of a second; builds with a schema never need them

    taken: set[str] = set()
    ids: dict[str, str] = {}
    for key, name in sorted(names.items(), key=lambda item: (item[1], item[0])):
        base = _IDENTIFIER.sub("_", " ".join(lazy_pinyin(name))).strip("_").lower()
        if not base:
            base = "r_" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
        elif not base[0].isalpha():
            base = "r_" + base
        ids[key] = _identifier(base, taken, base)
    return ids


def _render(domain: str, seen: Observations, language: str) -> InferredSchema:
    relations: dict[str, dict[str, Any]] = {}
    type_relation, types = _type_relation(seen)
    ids = relation_ids({iri: stats.relation.zh for iri, stats in seen.relations.items()})
    for iri, stats in sorted(seen.relations.items(), key=lambda item: (-item[1].count, item[0])):
        rel = stats.relation
        rid = ids[iri]
        entry: dict[str, Any] = {"zh": rel.zh, "en": rel.en or rel.zh, "kind": stats.kind()}
        if rel.own_iri:
            entry["iris"] = [rel.own_iri]
        if entry["kind"] == "literal" and (datatype := stats.datatype()):
            entry["datatype"] = "xsd:" + datatype.removeprefix(XSD) if datatype.startswith(XSD) else datatype
        entry["_note"] = f"{stats.count:,} values: {stats.entities:,} entities, {stats.literals:,} literals"
        relations[rid] = entry
        if type_relation == iri:
            type_relation = rid
    summary = {
        "domain": domain,
        "language": language,
        "records": seen.records,
        "files": seen.files,
        "relations": {rid: {k: v for k, v in e.items() if not k.startswith("_")} for rid, e in relations.items()},
        "types": {tid: t["en"] for tid, t in types.items()},
        "type_relation": type_relation,
        "settings": seen.settings,
    }
    return InferredSchema(_toml(domain, language, relations, types, type_relation, seen), summary)


def _type_relation(seen: Observations) -> tuple[str | None, dict[str, dict[str, Any]]]:
    """The relation whose few values name the entities' types (its IRI in ``seen``), and the types; or, for RDF
    sources, the classes of ``rdf:type``."""
    taken: set[str] = set()
    for iri, stats in seen.relations.items():
        if stats.relation.zh.casefold() in TYPE_NAMES and stats.literals and len(stats.distinct) <= MAX_TYPES:
            values = sorted(set(stats.distinct) - {""})
            return iri, {_identifier(v, taken, f"type{i + 1}"): {"zh": v, "en": v} for i, v in enumerate(values)}
    if 0 < len(seen.classes) <= MAX_TYPES:
        return None, {
            _identifier(local_name(c), taken, f"type{i + 1}"): {
                "zh": local_name(c) or c,
                "en": local_name(c) or c,
                "iris": [c],
            }
            for i, c in enumerate(sorted(seen.classes))
        }
    return None, {}


def _toml_value(value: Any) -> str:
    """``value`` written in TOML: a string or list as JSON writes it (the same syntax), a table inline."""
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{_toml_value(k)} = {_toml_value(v)}" for k, v in value.items()) + " }"
    return json.dumps(value, ensure_ascii=False)


def _toml(
    domain: str,
    language: str,
    relations: dict[str, dict[str, Any]],
    types: dict[str, dict[str, Any]],
    type_relation: str | None,
    seen: Observations,
) -> str:
    def q(value: object) -> str:
        return json.dumps(value, ensure_ascii=False)  # a TOML basic string is a JSON string

    lines = [
        f"# Schema of domain {q(domain)}, inferred by kgforge from {len(seen.files)} sample(s):",
        *(f"#   {f}" for f in seen.files),
        "# Check it, then delete the `inferred` line: relation kinds (entity: values are entities; literal: short",
        "# values; text: free text), their zh/en labels (exports and goals use them), datatypes, the types.",
        f"name = {q(domain)}",
        "version = 1",
        f"language = {q(language)}",
        "inferred = true",
    ]
    if type_relation:
        lines.append(f"type_relation = {q(type_relation)}")
    for section, values in sorted(seen.settings.items()):
        lines += ["", f"[options.{section}]"] + [f"{key} = {_toml_value(value)}" for key, value in values.items()]
    for tid, spec in types.items():
        lines += ["", f"[types.{q(tid)}]"] + [f"{key} = {q(value)}" for key, value in spec.items()]
    for rid, spec in relations.items():
        lines += ["", f"[relations.{q(rid)}]  # {spec['_note']}"]
        lines += [f"{key} = {q(value)}" for key, value in spec.items() if not key.startswith("_")]
    return "\n".join(lines) + "\n"
