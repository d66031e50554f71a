"""XLORE's dump files on the resumable passes the Wikidata importers run on (local process pool or Ray tasks).

Each file is one pass (or two, seeded: ``xlore-index`` then ``xlore-extract``); its batches are parsed
apart, so every batch reads its lines with what the file's leading ``@base``/``@prefix`` lines say
(:class:`XloreConfig`). The journal holds, per line:

- ``T`` lines: triples to write (the infobox property mapped onto its schema relation, and the schema
  type of an instance of a mapped concept after its ``rdf:type``);
- ``H`` lines (seeded imports): concept and property triples held back, written only if a written triple
  refers to their subject;
- ``E`` lines: lines that cannot be read or whose triple the store would refuse;
- ``I`` lines (index pass): an instance's edge to another instance, or one of its labels.

A directive further down a file changes what the lines after it mean, which a batch cannot know from the
batches before it: such a file is counted in ``directives_after_head`` and read again, in order, in this
process (:func:`run_file`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

from kgforge.core.quads import check_iri
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL
from kgforge.sources.wikidata.engines import LocalEngine
from kgforge.sources.wikidata.entity import IndexRecord
from kgforge.sources.wikidata.framing import line_spans
from kgforge.sources.wikidata.passes import PassResult, PassRunner
from kgforge.sources.wikidata.pipeline import Batch, BatchResult, PassSpec, journal_error
from kgforge.sources.xlore.lines import (
    INSTANCE,
    ConceptLines,
    LineError,
    LineReader,
    Triple,
    TurtleLines,
    decoded,
    head,
    is_concept_mapping,
    line_items,
)

INDEX, EXTRACT = "xlore-index", "xlore-extract"
DIRECTIVES_AFTER_HEAD = "directives_after_head"


@dataclass(frozen=True)
class XloreConfig:
    """What one file's lines are read with, and what is written for each triple (every field is in the pass's key)."""

    concepts: bool  # the file is the concept mapping (tab-separated), not Turtle-like lines
    base: str = INSTANCE  # what the file's head makes of relative IRIs and prefixed names
    prefixes: tuple[tuple[str, str], ...] = ()
    property_map: tuple[tuple[str, str], ...] = ()  # XLORE infobox property IRI → schema relation IRI
    classes: tuple[tuple[str, str], ...] = ()  # XLORE concept IRI → schema class IRI
    in_order: bool = False  # directives carry over from batch to batch: batches parsed in order, in this process
    _carried: list[TurtleLines] = field(default_factory=list, init=False, repr=False, compare=False)

    @classmethod
    def of(cls, path: Path, base: str | None, property_map: dict[str, str], classes: dict[str, str]) -> XloreConfig:
        mapped, typed = tuple(sorted(property_map.items())), tuple(sorted(classes.items()))
        if is_concept_mapping(path):
            return cls(True, property_map=mapped, classes=typed)
        lines = head(path, base)
        return cls(False, lines.base, tuple(sorted(lines.prefixes.items())), property_map=mapped, classes=typed)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.init}

    @cached_property
    def mapped(self) -> dict[str, str]:
        return dict(self.property_map)

    @cached_property
    def typed(self) -> dict[str, str]:
        return dict(self.classes)

    def lines(self) -> LineReader:
        """The reader a batch starts with: the file's head, or (``in_order``) where the batch before stopped."""
        if self.concepts:
            return ConceptLines()
        if self.in_order and self._carried:
            return self._carried[0]
        lines = TurtleLines(self.base, dict(self.prefixes))
        if self.in_order:
            self._carried.append(lines)
        return lines


def parse_xlore_batch(
    batch: Batch, spec: PassSpec, buffer: Any, base: int, stop: int, result: BatchResult
) -> list[str]:
    """Journal text of a batch of XLORE lines; ``result`` gets the counts and the last line."""
    cfg: XloreConfig = spec.cfg  # type: ignore[assignment]
    lines = cfg.lines()
    keep = _index_line if spec.mode == INDEX else _extract_line
    parts: list[str] = []
    for index, first, last in line_spans(buffer, base, stop):
        result.end_line = line = batch.first_line + index
        offset = batch.first_offset + first - base
        for item in line_items(lines, decoded(bytes(buffer[first:last]), offset)):
            if isinstance(item, LineError):
                if spec.mode == EXTRACT:
                    result.counts["lines_bad"] += 1
                    parts.append(journal_error(line, offset, str(item), _excerpt(buffer, first, last)))
            else:
                parts.append(keep(item, spec, cfg, line, offset, result))
    if not cfg.in_order:  # a fresh reader from the file's head: every change came from this batch's lines
        result.counts[DIRECTIVES_AFTER_HEAD] += lines.changes
    return parts


def _excerpt(buffer: Any, first: int, last: int) -> str:
    return bytes(buffer[first : min(last, first + 300)]).decode("utf-8", "replace")


def _extract_line(triple: Triple, spec: PassSpec, cfg: XloreConfig, line: int, offset: int, result: BatchResult) -> str:
    subject, predicate, obj = triple
    if spec.wanted is None or subject.value in spec.wanted:
        kind = "T"
    elif not subject.value.startswith(INSTANCE):
        kind = "H"  # a concept's or property's triple: written if the selection refers to it
    else:
        return ""
    predicate = cfg.mapped.get(predicate, predicate)
    try:
        text = f"{kind} {check_iri(subject.value)} {check_iri(predicate)} {obj.nquads()}\n"
    except ValueError as exc:  # UnicodeEncodeError included
        result.counts["lines_bad"] += 1
        return journal_error(line, offset, f"bad triple: {exc}", f"{subject.value} {predicate} {obj.value}"[:300])
    result.entities += 1
    result.counts["triples_read"] += 1
    typed = cfg.typed.get(obj.value) if predicate == RDF_TYPE else None
    return (text + f"{kind} {subject.value} {RDF_TYPE} <{typed}>\n") if typed else text


def _index_line(triple: Triple, spec: PassSpec, cfg: XloreConfig, line: int, offset: int, result: BatchResult) -> str:
    """An instance's record for the selection: the instance it points to (not a class), or its label."""
    subject, predicate, obj = triple
    if not subject.value.startswith(INSTANCE):
        return ""
    edge = obj.is_iri and obj.value.startswith(INSTANCE) and predicate != RDF_TYPE
    label = predicate == RDFS_LABEL and not obj.is_iri
    return (
        "I "
        + IndexRecord(subject.value, [obj.value] if edge else [], [], [], [obj.value] if label else [], []).to_line()
    )


def run_file(
    runner: PassRunner, path: Path, mode: str, cfg: XloreConfig, state_root: Path, wanted: frozenset[str] | None = None
) -> PassResult:
    """One pass over one file; a file with directives after its head is read again in order, in this process
    (never resumed from a checkpoint, where the directives read before it would be unknown)."""
    spec = PassSpec(mode, cfg, wanted, parse_xlore_batch)
    result = runner.run(path, spec, state_root)
    late = result.counts[DIRECTIVES_AFTER_HEAD]
    if late:
        in_order = PassRunner(replace(runner.options, resume=False), 0, LocalEngine(0))
        result = in_order.run(path, replace(spec, cfg=replace(cfg, in_order=True)), state_root)
        result.counts.update({DIRECTIVES_AFTER_HEAD: late, "files_read_in_order": 1})
    return result
