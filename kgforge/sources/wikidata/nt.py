"""The Wikidata truthy N-Triples dump (``latest-truthy.nt``, plain/.gz/.bz2), read line by line.

``wdt:`` claims become facts (under the schema's relation IRI when mapped, excluded properties
dropped), ``rdfs:label`` / ``skos:altLabel`` / ``schema:description`` go through the same
language fallback chains as the JSON importer (the dump lists an entity's lines together, so
they are grouped by subject), ``\\uXXXX`` escapes are decoded, and unknown values (blank nodes)
become skolem IRIs. Duplicated label forms (``skos:prefLabel``, ``schema:name``), ``wdtn:``
normalised ids and dump metadata are skipped and counted. A line that is not N-Triples is
quarantined with its line number and byte offset.

It runs on the JSON importer's resumable passes (:func:`~kgforge.sources.wikidata.dump.import_passes`):
the reader cuts blocks only where the subject changes, workers turn each block's subject groups
into journal lines, and a killed import resumes from its last checkpoint. With seeds, a first
pass writes one index record per entity and the same selection (classes, names, hops, fan-out
cap) chooses the entities the second pass keeps.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgforge.core.quads import check_iri, literal_term
from kgforge.core.text import NotUtf8Error, decode_utf8
from kgforge.core.vocab import RDFS_LABEL, SKOS_ALT_LABEL
from kgforge.sources.importer import ImportContext
from kgforge.sources.wikidata.dump import import_passes
from kgforge.sources.wikidata.entity import (
    INSTANCE_OF,
    SCHEMA_DESCRIPTION,
    EntityOutput,
    WikidataConfig,
    emit_terms,
    index_record,
)
from kgforge.sources.wikidata.framing import line_spans
from kgforge.sources.wikidata.pipeline import (
    Batch,
    BatchResult,
    PassSpec,
    journal_error,
    render,
)
from kgforge.sources.wikidata.values import WD, WDT, iri_term, skolem_iri

_IRI = r"<([^<>\"{}|^`\\\x00-\x20]*)>"
_LINE = re.compile(
    rf'^{_IRI}\s+{_IRI}\s+(?:{_IRI}|_:(\S+)|"((?:[^"\\]|\\.)*)"(?:@([A-Za-z0-9-]+)|\^\^{_IRI})?)\s*\.\s*$'
)
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
    line: int  # line number and byte offset of its first line
    offset: int
    terms: dict[str, dict] = field(default_factory=lambda: {"labels": {}, "aliases": {}, "descriptions": {}})
    triples: list[tuple[str, str, str]] = field(default_factory=list)
    edges: list[tuple[str, str]] = field(default_factory=list)  # (property, entity id) of item values


def import_truthy_nt(ctx: ImportContext) -> None:
    import_passes(ctx, ctx.path, ("nt-index", "nt-extract"), parse_nt_batch, subject_boundary)


def subject_boundary(block: bytes) -> int:
    """Where the lines of the block's last subject start, so that a batch holds whole subjects.

    0 when one subject fills the whole block: the reader then reads on until the subject changes.
    """
    start = block.rfind(b"\n", 0, len(block) - 1) + 1  # the last line; the block ends with a newline
    ends = [i for i in (block.find(b" ", start), block.find(b"\t", start)) if i >= 0]
    if not ends:
        return 0
    subject = block[start : min(ends) + 1]  # "<…> " with its separator
    while start:
        previous = block.rfind(b"\n", 0, start - 1) + 1
        if not block.startswith(subject, previous):
            break
        start = previous
    return start


def parse_nt_batch(
    batch: Batch, spec: PassSpec[WikidataConfig], buffer: Any, base: int, stop: int, result: BatchResult
) -> list[str]:
    """Journal text of a batch of N-Triples lines: ``T``/``E`` lines (nt-extract) or ``I`` records (nt-index)."""
    parts: list[str] = []
    group: SubjectGroup | None = None
    with memoryview(buffer) as view:
        for index, first, last in line_spans(buffer, base, stop):
            result.end_line = line = batch.first_line + index
            offset = batch.first_offset + first - base
            raw = bytes(view[first:last])
            try:
                text = decode_utf8(raw, offset).strip()
            except NotUtf8Error as exc:
                parts.append(journal_error(line, offset, str(exc), raw[:300].decode("utf-8", "backslashreplace")))
                continue
            if not text or text.startswith("#"):
                continue
            match = _LINE.match(text)
            if match is None:
                parts.append(journal_error(line, offset, "not an N-Triples line", text[:300]))
                continue
            if group is None or group.subject != match.group(1):
                if group is not None:
                    parts.append(render_group(group, spec, result))
                group = SubjectGroup(match.group(1), line, offset)
            try:
                take_triple(group, parts_of(match), spec.cfg, result.counts)
            except (ValueError, UnicodeEncodeError) as exc:
                parts.append(journal_error(line, offset, f"bad triple: {exc}", text[:300]))
    if group is not None:
        parts.append(render_group(group, spec, result))
    return parts


def render_group(group: SubjectGroup, spec: PassSpec[WikidataConfig], result: BatchResult) -> str:
    if spec.mode.endswith("index"):
        if not group.subject.startswith(WD):
            return ""
        record = index_record(
            group.subject.removeprefix(WD), group.edges, group.terms["labels"], group.terms["aliases"], spec.cfg
        )
        return "I " + record.to_line()
    if spec.wanted is not None and group.subject.removeprefix(WD) not in spec.wanted:
        result.counts["entities_skipped"] += 1
        return ""
    out = EntityOutput(group.subject.removeprefix(WD))
    if group.subject.startswith(WD):
        emit_terms(group.terms, group.subject, spec.cfg, out)
    out.triples += group.triples
    if out.triples:
        result.entities += 1
        result.counts["entities"] += 1
    return render(out, group.line, group.offset, result.counts)


TripleParts = tuple[str, str, "str | None", "str | None", "str | None", "str | None", "str | None"]


def parts_of(match: re.Match[str]) -> TripleParts:
    """``(subject, predicate, object IRI, blank node, literal text, language, datatype)`` of an N-Triples line."""
    subject, predicate, obj_iri, bnode, lexical, lang, datatype = match.groups()
    return subject, predicate, obj_iri, bnode, None if lexical is None else unescape(lexical), lang, datatype


def take_triple(group: SubjectGroup, parts: TripleParts, cfg: WikidataConfig, counts: Counter[str]) -> None:
    """One triple of ``group``'s subject: a term, a ``wdt:`` fact, or something skipped and counted."""
    subject, predicate, obj_iri, bnode, lexical, lang, datatype = parts
    if predicate in TERM_KEYS:
        if lang:
            value = {"language": lang, "value": lexical or ""}
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
        term = literal_term(lexical or "", lang=lang, datatype=datatype)
    group.triples.append((check_iri(subject), cfg.direct_predicate(pid), term))
    if obj_iri is not None and obj_iri.startswith(WD):
        group.edges.append((pid, obj_iri.removeprefix(WD)))
    if pid == INSTANCE_OF and obj_iri and obj_iri.removeprefix(WD) in cfg.classes:
        group.triples.append(
            (
                subject,
                "http://www.w3.org/1999/02/22-rdf-syntax-ns#type",
                iri_term(cfg.classes[obj_iri.removeprefix(WD)]),
            )
        )
    counts["statements"] += 1
