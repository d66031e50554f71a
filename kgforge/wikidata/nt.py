"""The Wikidata truthy N-Triples dump (``latest-truthy.nt``, plain/.gz/.bz2), read line by line.

``wdt:`` claims become facts (under the schema's relation IRI when mapped, excluded properties
dropped), ``rdfs:label`` / ``skos:altLabel`` / ``schema:description`` go through the same
language fallback chains as the JSON importer (the dump lists an entity's lines together, so
they are grouped by subject), ``\\uXXXX`` escapes are decoded, and unknown values (blank nodes)
become skolem IRIs. Duplicated label forms (``skos:prefLabel``, ``schema:name``), ``wdtn:``
normalised ids and dump metadata are skipped and counted. A line that is not N-Triples is
quarantined with its line number and byte offset. With seeds, a first pass writes one index
record per entity and the JSON importer's selection (classes, names, hops, fan-out cap) chooses
the entities the second pass keeps.
"""

from __future__ import annotations

import re
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.quads import check_iri, literal_term
from kgforge.sources import ImportContext
from kgforge.vocab import RDFS_LABEL, SKOS_ALT_LABEL
from kgforge.wikidata.dump import SEED_OPTIONS, select_entities
from kgforge.wikidata.entity import (
    INSTANCE_OF, SCHEMA_DESCRIPTION, SUBCLASS_OF, EntityOutput, IndexRecord, WikidataConfig, emit_terms,
)
from kgforge.wikidata.framing import DumpReader
from kgforge.wikidata.passes import PassResult
from kgforge.wikidata.values import WD, WDT, iri_term, skolem_iri

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*)>"
_LINE = re.compile(
    rf'^{_IRI}\s+{_IRI}\s+(?:{_IRI}|_:(\S+)|"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^{_IRI})?)\s*\.\s*$')
_ESCAPE = re.compile(r'\\(?:u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8})|([tbnrf"\'\\]))')
_SIMPLE = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
SKIPPED = {
    "http://www.w3.org/2004/02/skos/core#prefLabel": "label_duplicates",
    "http://schema.org/name": "label_duplicates",
}
TERM_KEYS = {RDFS_LABEL: "labels", SKOS_ALT_LABEL: "aliases", SCHEMA_DESCRIPTION: "descriptions"}


def unescape(text: str) -> str:
    """N-Triples string escapes (``\\u5FEB``, ``\\U0001F600``, ``\\n`` …) decoded."""
    def one(match: re.Match[str]) -> str:
        code = match.group(1) or match.group(2)
        return chr(int(code, 16)) if code else _SIMPLE[match.group(3)]
    return _ESCAPE.sub(one, text) if "\\" in text else text


@dataclass
class SubjectGroup:
    """The lines of one entity, collected until the subject changes."""

    subject: str
    terms: dict[str, dict] = field(default_factory=lambda: {"labels": {}, "aliases": {}, "descriptions": {}})
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # (property, entity id) of item values


def import_truthy_nt(ctx: ImportContext) -> None:
    cfg = WikidataConfig.from_schema(ctx.schema, ctx.options)
    options = dict(ctx.schema.options.get("wikidata") or {}, **ctx.options)
    wanted = _select(ctx, cfg, options) if any(options.get(k) for k in SEED_OPTIONS) else None
    relations = {rel.iri: rel for rel in ctx.schema.relations.values()}
    counts: Counter[str] = Counter()
    for group in subject_groups(ctx, cfg, options, counts, report=True):
        if wanted is None or group.subject.removeprefix(WD) in wanted:
            _flush(ctx, group, cfg, relations)
        else:
            counts["entities_skipped"] += 1
    ctx.counts.update(counts)


def subject_groups(ctx: ImportContext, cfg: WikidataConfig, options: dict[str, Any], counts: Counter[str],
                   report: bool) -> Iterator[SubjectGroup]:
    """The dump's lines grouped by subject; bad lines and truncation go to quarantine when ``report``."""
    reader = DumpReader(ctx.path, str(options.get("decompressor", "auto")))
    reject = ctx.reject if report else (lambda *args: None)
    group: SubjectGroup | None = None
    for line_no, offset, raw in reader:
        text = raw.decode("utf-8", "replace").strip()
        if not text or text.startswith("#"):
            continue
        match = _LINE.match(text)
        if match is None:
            reject(f"line {line_no} (byte {offset})", "not an N-Triples line", text[:300])
            continue
        subject = match.group(1)
        if group is None or group.subject != subject:
            if group is not None:
                yield group
            group = SubjectGroup(subject)
        try:
            _take(group, match, cfg, counts)
        except (ValueError, UnicodeEncodeError) as exc:
            reject(f"line {line_no} (byte {offset})", f"bad triple: {exc}", text[:300])
    if group is not None:
        yield group
    if reader.truncated and report:
        reject("end of dump", reader.truncated)
        counts["dump_truncated"] = 1


def _select(ctx: ImportContext, cfg: WikidataConfig, options: dict[str, Any]) -> frozenset[str]:
    """An index pass over the dump (one record per entity), then the same selection as for JSON dumps."""
    folder = Path(ctx.workdir) / "raw" / "wikidata" if ctx.workdir else Path(tempfile.mkdtemp())
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / f"nt-index-{ctx.path.name}.journal"
    with open(journal, "w", encoding="utf-8", newline="\n") as out:
        for group in subject_groups(ctx, cfg, options, Counter(), report=False):
            if group.subject.startswith(WD):
                out.write("I " + _index_record(group, cfg).to_line())
    try:
        return select_entities(ctx, PassResult(journal), options)
    finally:
        journal.unlink(missing_ok=True)


def _index_record(group: SubjectGroup, cfg: WikidataConfig) -> IndexRecord:
    mapped = [qid for pid, qid in group.edges if cfg.follows(pid) and pid in cfg.relation_iris]
    other = [qid for pid, qid in group.edges if cfg.follows(pid) and pid not in cfg.relation_iris]
    names = {key: [t["value"] for tag, values in group.terms[key].items() if tag.startswith(("zh", "en")) or tag == "mul"
                   for t in (values if isinstance(values, list) else [values])] for key in ("labels", "aliases")}
    return IndexRecord(group.subject.removeprefix(WD), list(dict.fromkeys(mapped + other)),
                       [q for p, q in group.edges if p == INSTANCE_OF], [q for p, q in group.edges if p == SUBCLASS_OF],
                       names["labels"], names["aliases"])


def _take(group: SubjectGroup, match: re.Match[str], cfg: WikidataConfig, counts: Counter[str]) -> None:
    subject, predicate, obj_iri, bnode, lexical, lang, datatype = match.groups()
    if predicate in TERM_KEYS:
        if lang:
            value = {"language": lang, "value": unescape(lexical or "")}
            terms = group.terms[TERM_KEYS[predicate]]
            if predicate == SKOS_ALT_LABEL:
                terms.setdefault(lang, []).append(value)
            else:
                terms.setdefault(lang, value)
        return
    if not predicate.startswith(WDT):
        counts[SKIPPED.get(predicate, "triples_skipped")] += 1
        return
    pid = predicate.removeprefix(WDT)
    if not cfg.wants(pid):
        counts["statements_excluded"] += 1
        return
    if obj_iri is not None:
        term = iri_term(obj_iri)
    elif bnode is not None:
        term = iri_term(skolem_iri(f"{subject}|{pid}|{bnode}"))
    else:
        term = literal_term(unescape(lexical), lang=lang, datatype=datatype)
    group.triples.append((check_iri(subject), cfg.direct_predicate(pid), term))
    if obj_iri is not None and obj_iri.startswith(WD):
        group.edges.append((pid, obj_iri.removeprefix(WD)))
    if pid == INSTANCE_OF and obj_iri and obj_iri.removeprefix(WD) in cfg.classes:
        group.triples.append((subject, "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                              iri_term(cfg.classes[obj_iri.removeprefix(WD)])))
    counts["statements"] += 1


def _flush(ctx: ImportContext, group: SubjectGroup, cfg: WikidataConfig, relations: dict) -> None:
    out = EntityOutput(group.subject.removeprefix(WD))
    if group.subject.startswith(WD):
        emit_terms(group.terms, group.subject, cfg, out)
    for where, reason, record in out.problems:
        ctx.reject(where, reason, record)
    for s, p, o in out.triples + group.triples:
        ctx.writer.term(s, p, o)
        if p in relations:
            ctx.relations_used.add(relations[p])
    if out.triples or group.triples:
        ctx.accept()
