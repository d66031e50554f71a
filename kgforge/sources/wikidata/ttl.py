"""The Wikidata full RDF dump (``latest-all.ttl``, plain/.gz/.bz2): Turtle, one block per entity.

The dump starts with its ``@prefix`` lines; then each entity is a block opened by its
``data:Q… a schema:Dataset`` line. Batches end only where a block starts, and each block is
parsed on its own (after the prefixes) with Oxigraph's Turtle parser, so a broken block is
quarantined with its line and byte offset and the others still land. It runs on the same
resumable passes as the JSON and truthy importers.

What is kept, per entity, is what the truthy importer keeps — ``wdt:`` facts (mapped, excluded),
labels, aliases and descriptions along the fallback chains — plus the qualifiers of best-rank
statements, on statement nodes as the JSON importer writes them (``p:``, ``ps:``, ``pq:``,
``wikibase:rank``). References, full values (``psv:``, ``pqv:``), sitelinks, normalised ids and
dump metadata are skipped and counted.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from typing import Any

import pyoxigraph as ox

from kgforge.core.vocab import RDF_TYPE
from kgforge.sources.importer import ImportContext
from kgforge.sources.wikidata.dump import import_passes
from kgforge.sources.wikidata.entity import WikidataConfig
from kgforge.sources.wikidata.framing import TURTLE_DIRECTIVES, DumpReader, line_spans
from kgforge.sources.wikidata.nt import (
    SubjectGroup,
    TripleParts,
    render_group,
    take_triple,
)
from kgforge.sources.wikidata.pipeline import (
    Batch,
    BatchResult,
    PassSpec,
    journal_error,
)
from kgforge.sources.wikidata.values import (
    PQ,
    PS,
    WD,
    WDS,
    WIKIBASE,
    P,
    iri_term,
    skolem_iri,
)

BLOCK_START = b"data:"
BEST_RANK = WIKIBASE + "BestRank"
_RANK = WIKIBASE + "rank"


def import_wikidata_ttl(ctx: ImportContext) -> None:
    import_passes(
        ctx, ctx.path, ("ttl-index", "ttl-extract"), parse_ttl_batch, block_boundary, header=prefix_header(ctx)
    )


def prefix_header(ctx: ImportContext) -> bytes:
    """The dump's leading ``@prefix`` / ``@base`` lines, which every block is parsed after."""
    lines: list[bytes] = []
    for _, _, raw in DumpReader(ctx.path, decompressor="python"):
        text = raw.strip()
        if text and not text.startswith(b"#") and not text.startswith(TURTLE_DIRECTIVES):
            break
        lines.append(raw if raw.endswith(b"\n") else raw + b"\n")
    return b"".join(lines)


def block_boundary(block: bytes) -> int:
    """Where the block's last entity starts (0: one entity fills the block, so it grows)."""
    start = block.rfind(b"\n" + BLOCK_START)
    return start + 1 if start >= 0 else 0


def parse_ttl_batch(
    batch: Batch, spec: PassSpec[WikidataConfig], buffer: Any, base: int, stop: int, result: BatchResult
) -> list[str]:
    """Journal text of a batch of entity blocks: ``T``/``E`` lines (ttl-extract) or ``I`` records (ttl-index)."""
    parts: list[str] = []
    with memoryview(buffer) as view:
        for first_index, first, last in _blocks(buffer, base, stop, result, batch.first_line):
            line, offset = batch.first_line + first_index, batch.first_offset + first - base
            try:
                triples = list(ox.parse(spec.header + bytes(view[first:last]), format=ox.RdfFormat.TURTLE))
            except SyntaxError as exc:
                excerpt = bytes(view[first : min(last, first + 300)]).decode("utf-8", "replace")
                prefixes = spec.header.count(b"\n")
                reason = f"bad Turtle block: {exc} (the parser counts the {prefixes} prefix lines it reads first)"
                parts.append(journal_error(line, offset, reason, excerpt))
                continue
            parts.append(_render_entity(triples, line, offset, spec, result))
    return parts


def _blocks(buffer: Any, base: int, stop: int, result: BatchResult, first_line: int) -> Iterator[tuple[int, int, int]]:
    """``(index of its first line, start, end)`` of each entity block (and of anything before the first)."""
    start_index, start = 0, base
    for index, first, _ in line_spans(buffer, base, stop):
        result.end_line = first_line + index
        if first > start and buffer[first : first + len(BLOCK_START)] == BLOCK_START:
            yield start_index, start, first
            start_index, start = index, first
    if stop > start:
        yield start_index, start, stop


def _render_entity(
    triples: list[ox.Quad], line: int, offset: int, spec: PassSpec[WikidataConfig], result: BatchResult
) -> str:
    """The entity's group (terms, ``wdt:`` facts) and its best-rank statement nodes with qualifiers."""
    entity = next(
        (s for s in map(_subject, triples) if s.startswith(WD) and not s.startswith(WDS)),
        None,
    )
    if entity is None:  # the dump's own metadata, or a block of shared references and values
        result.counts["blocks_skipped"] += 1
        return ""
    group = SubjectGroup(entity, line, offset)
    nodes: dict[str, list[tuple[str, str, str]]] = {}
    best: set[str] = set()
    for triple in triples:
        subject, predicate = _subject(triple), triple.predicate.value
        if subject == entity and _in_namespace(predicate, P) and isinstance(triple.object, ox.NamedNode):
            nodes.setdefault(triple.object.value, []).append((subject, predicate, iri_term(triple.object.value)))
        elif subject == entity:
            take_triple(group, _parts(triple), spec.cfg, result.counts)
        elif subject.startswith(WDS):
            _statement_fact(triple, nodes, best, result.counts)
        else:
            result.counts["triples_skipped"] += 1
    for node, facts in nodes.items():  # best rank and qualified: as the JSON importer writes them
        if node in best and any(_in_namespace(p, PQ) for _, p, _ in facts):
            group.triples.extend(facts)
            result.counts["statement_nodes"] += 1
    return render_group(group, spec, result)


def _statement_fact(
    triple: ox.Quad, nodes: dict[str, list[tuple[str, str, str]]], best: set[str], counts: Counter[str]
) -> None:
    subject, predicate, obj = _subject(triple), triple.predicate.value, triple.object
    if predicate == RDF_TYPE and not isinstance(obj, ox.Triple) and obj.value == BEST_RANK:
        best.add(subject)
    elif _in_namespace(predicate, PS) or _in_namespace(predicate, PQ) or predicate == _RANK:
        nodes.setdefault(subject, []).append((subject, predicate, _term(triple)))
        if _in_namespace(predicate, PQ):
            counts["qualifiers"] += 1
    else:
        counts["triples_skipped"] += 1


def _in_namespace(predicate: str, namespace: str) -> bool:
    """``predicate`` is ``namespace`` + a property id (``p:P31``, not ``wdt:P31`` or ``pqv:P580``)."""
    rest = predicate[len(namespace) :] if predicate.startswith(namespace) else ""
    return rest[:1] == "P" and rest[1:].isdigit()


def _subject(triple: ox.Quad) -> str:
    """The subject's IRI or blank node id (pyoxigraph's RDF 1.2 parser puts a triple term only in an object)."""
    subject = triple.subject
    if isinstance(subject, ox.Triple):
        raise ValueError(f"a triple term as a subject: {subject}")
    return subject.value


def _parts(triple: ox.Quad) -> TripleParts:
    subject, obj = _subject(triple), triple.object
    if isinstance(obj, ox.NamedNode):
        return subject, triple.predicate.value, obj.value, None, None, None, None
    if isinstance(obj, ox.BlankNode):
        return subject, triple.predicate.value, None, obj.value, None, None, None
    if isinstance(obj, ox.Triple):  # the attribute lookups below failed on one; no Wikidata dump holds one
        raise ValueError(f"a triple term as an object: {obj}")
    datatype = None if obj.language else obj.datatype.value
    return subject, triple.predicate.value, None, None, obj.value, obj.language, datatype


def _term(triple: ox.Quad) -> str:
    """The object in N-Quads syntax, as pyoxigraph writes it; an unknown value (blank node) as a skolem IRI."""
    obj = triple.object
    if isinstance(obj, ox.BlankNode):
        return iri_term(skolem_iri(f"{_subject(triple)}|{triple.predicate.value}|{obj.value}"))
    return str(obj)
