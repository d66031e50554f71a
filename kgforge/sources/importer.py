"""Importers: each turns one input (file, dump, crawl) into the quads of one named graph.

An importer is a function ``(ctx: ImportContext) -> None`` registered under a source kind
(``kdconv``, ``duconv``, ``wikidata``, …) in ``IMPORTERS``. It reads ``ctx.path``, writes quads through
``ctx.writer``, rejects bad records through ``ctx.reject`` and counts through ``ctx.counts``.
The built-in importers register themselves when the registry first loads them; other packages add theirs\nthrough the entry-point group ``kgforge.importers``.
"""

from __future__ import annotations

import importlib
import importlib.util
import pkgutil
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kgforge.core.datasets import room_parts
from kgforge.core.errors import KgforgeError
from kgforge.core.jsonio import Record
from kgforge.core.quads import QuadWriter
from kgforge.core.quarantine import Quarantine
from kgforge.core.registry import Entry, Registry
from kgforge.core.schema import Relation, Schema, SourceSpec
from kgforge.sources.options import read_options

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # an options dataclass (kgforge.sources.options)


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

    def settings(self, section: str, cls: type[T]) -> T:
        """The importer's options: the schema's ``[options.<section>]`` under this source's own, as ``cls``
        (see :mod:`kgforge.sources.options`); SchemaError for an unknown key or a bad value."""
        return read_options(
            cls, self.schema.path, section, self.schema.options.get(section), self.options, f"the source {self.path}"
        )

    def reject(self, location: str, reason: str, record: Any = None) -> None:
        """Quarantine one bad record (``location`` like ``line 12``) and count it."""
        self.quarantine.reject(str(self.path), location, reason, record)
        self.counts["records_bad"] += 1

    def _refused(self, reason: str, quad: str) -> None:
        """A quad the writer would not write (a term the store refuses): quarantined, the record's other
        quads still land."""
        self.quarantine.reject(
            str(self.path), self.location or f"quad {self.writer.count + 1} of the output", reason, quad
        )
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


def _builtin_importer_modules() -> list[str]:
    """The modules of this package, the ``kinds`` module of each subpackage (``wikidata/kinds.py``), and every
    dataset room's ``source`` part: a new input format is one module here or in its dataset's room, found
    without a list to update."""
    package = importlib.import_module("kgforge.sources")
    found = []
    for module in pkgutil.iter_modules(package.__path__, "kgforge.sources."):
        if not module.ispkg:
            found.append(module.name)
        elif importlib.util.find_spec(module.name + ".kinds") is not None:
            found.append(module.name + ".kinds")
    return found + room_parts("source")


def _plugin_importer(kind: str, importer: Any) -> Entry[Importer]:
    """An importer of the entry-point group ``kgforge.importers``: a function taking an :class:`ImportContext`,
    its registration read from its attributes as :func:`register` would set them (``description``, else the
    first line of its docstring; ``reads_file``, ``licence``, ``suffixes``, ``aliases``)."""
    if not callable(importer):
        raise KgforgeError(f"it is a {type(importer).__name__}, not a function taking an ImportContext")
    description = getattr(importer, "description", None) or (importer.__doc__ or "").strip().split("\n")[0]
    return Entry(
        kind,
        importer,
        description,
        tuple(getattr(importer, "aliases", ())),
        {
            "reads_file": getattr(importer, "reads_file", True),
            "licence": getattr(importer, "licence", None),
            "suffixes": tuple(getattr(importer, "suffixes", ())),
        },
    )


IMPORTERS: Registry[Importer] = Registry(
    "source kind",
    modules=_builtin_importer_modules,
    entry_point_group="kgforge.importers",
    plugin=_plugin_importer,
)


def register(
    kind: str, description: str, reads_file: bool = True, licence: str | None = None, suffixes: Iterable[str] = ()
) -> Callable[[Importer], Importer]:
    """Register an importer. ``reads_file=False`` for kinds whose PATH names something else (a site
    spec, a list of names for a web API), so the build does not require it to exist as a file.
    ``licence``: the terms the data this kind reads is released under, as far as they can be verified
    (None for kinds that read a user's own files: their licence is whatever the user says). ``suffixes``:
    the file extensions that name this kind where a command is given a bare FILE (`kgforge init --from`)."""
    return IMPORTERS.register(
        kind,
        description=description,
        reads_file=reads_file,
        licence=licence,
        suffixes=tuple(s.lower() for s in suffixes),
    )


def kind_for_suffix(suffix: str) -> str | None:
    """The source kind whose registration claims the file extension ``suffix`` (``.csv``), or None."""
    return next((entry.name for entry in IMPORTERS if suffix.lower() in entry.meta.get("suffixes", ())), None)


def source_licence(kind: str) -> str | None:
    """The licence registered for a source kind, or None (unregistered kinds too: a manifest may name a
    kind from a plug-in that is no longer installed)."""
    try:
        return IMPORTERS.entry(kind).meta.get("licence")
    except KgforgeError:
        return None


def reads_file(kind: str) -> bool:
    """Whether a source of ``kind`` names an input file (or folder) that must exist."""
    return IMPORTERS.entry(kind).meta["reads_file"]


def importer_for(kind: str) -> Importer:
    return IMPORTERS.get(kind)


def source_kinds() -> dict[str, str]:
    return IMPORTERS.describe()


def sample_source(text: str) -> SourceSpec:
    """``KIND:FILE``, or a FILE whose extension a source kind registers (``.csv``, ``.ttl.gz``, …)."""
    kind, sep, path = text.partition(":")
    if sep and kind in IMPORTERS:
        if not path:
            raise KgforgeError(f"--from expects FILE or KIND:FILE (e.g. csv:films.csv), got {text!r}")
        return SourceSpec(kind=kind, path=path)
    suffixes = [s.lower() for s in Path(text).suffixes if s.lower() not in (".gz", ".bz2")]
    found = kind_for_suffix(suffixes[-1]) if suffixes else None
    if found is None:
        raise KgforgeError(
            f"cannot tell the kind of {text!r} from its extension: write KIND:{text} "
            f"(kinds: {', '.join(source_kinds())})"
        )
    return SourceSpec(kind=found, path=text)
