"""Importers: each turns one input (file, dump, crawl) into the quads of one named graph.

An importer is a function ``(ctx: ImportContext) -> None`` registered under a source kind
(``kdconv``, ``duconv``, ``wikidata``, …). It reads ``ctx.path``, writes quads through
``ctx.writer``, rejects bad records through ``ctx.reject`` and counts through ``ctx.counts``.
Modules in this package register themselves when imported; ``importer_for`` imports them all.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.errors import KgforgeError
from kgforge.jsonio import Record
from kgforge.quads import QuadWriter
from kgforge.quarantine import Quarantine
from kgforge.schema import Relation, Schema


@dataclass
class ImportContext:
    schema: Schema
    path: Path
    writer: QuadWriter
    quarantine: Quarantine
    options: dict[str, Any] = field(default_factory=dict)
    workdir: Path | None = None  # the domain's folder, for caches (raw/) and side files
    counts: Counter[str] = field(default_factory=Counter)
    relations_used: set[Relation] = field(default_factory=set)
    advance: Callable[[int], None] = lambda n: None
    location: str = ""  # of the record being written (``line 12``): where a quad the writer refuses came from
    engine: dict[str, Any] | None = None  # what parsed the input, when not this process (see wikidata.engines)

    def __post_init__(self) -> None:
        self.writer.on_reject = self._refused

    def reject(self, location: str, reason: str, record: Any = None) -> None:
        """Quarantine one bad record (``location`` like ``line 12``) and count it."""
        self.quarantine.reject(str(self.path), location, reason, record)
        self.counts["records_bad"] += 1

    def _refused(self, reason: str, quad: str) -> None:
        """A quad the writer would not write (a term the store refuses): quarantined, the record's other
        quads still land."""
        self.quarantine.reject(str(self.path), self.location or f"quad {self.writer.count + 1} of the output",
                               reason, quad)
        self.counts["quads_refused"] += 1

    def accept(self, n: int = 1) -> None:
        self.counts["records_ok"] += n
        self.advance(n)


def parsed_records(ctx: ImportContext, records: Iterable[Record]) -> Iterator[tuple[str, Record]]:
    """``(location, record)`` for each record that parsed; the others are quarantined on the way."""
    for record in records:
        ctx.location = location = f"line {record.line}"
        if record.error:
            ctx.reject(location, record.error, record.raw)
            continue
        yield location, record


Importer = Callable[[ImportContext], None]
_REGISTRY: dict[str, Importer] = {}
_DESCRIPTIONS: dict[str, str] = {}
_NAMES_NOT_FILES: set[str] = set()


def register(kind: str, description: str, reads_file: bool = True) -> Callable[[Importer], Importer]:
    """Register an importer. ``reads_file=False`` for kinds whose PATH names something else (a site
    spec, a list of names for a web API), so the build does not require it to exist as a file."""
    def decorate(func: Importer) -> Importer:
        _REGISTRY[kind] = func
        _DESCRIPTIONS[kind] = description
        if not reads_file:
            _NAMES_NOT_FILES.add(kind)
        return func

    return decorate


def reads_file(kind: str) -> bool:
    """Whether a source of ``kind`` names an input file (or folder) that must exist."""
    importer_for(kind)
    return kind not in _NAMES_NOT_FILES


def _load_all() -> None:
    for module in pkgutil.iter_modules(__path__):
        importlib.import_module(f"{__name__}.{module.name}")


def importer_for(kind: str) -> Importer:
    _load_all()
    try:
        return _REGISTRY[kind]
    except KeyError:
        raise KgforgeError(f"unknown source kind {kind!r}; known kinds: {', '.join(sorted(_REGISTRY))}") from None


def source_kinds() -> dict[str, str]:
    _load_all()
    return dict(sorted(_DESCRIPTIONS.items()))
