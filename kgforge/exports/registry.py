"""The export formats and their layouts, in one registry: the only place a format or layout name is checked.

A format is one small module in ``kgforge/exports/formats/`` holding one :class:`Format` subclass,
registered with :func:`register` in :data:`FORMATS` (a :class:`kgforge.core.registry.Registry`: names and
aliases in any case, "did you mean" on a typo). It declares its name, its layouts (and whether each one needs a
conversation, so a goal-only export never writes a layout its readers cannot use), how to read real
dialogues written in it, how to write a record, and the checks that say what its readers need. Adding a
layout is one entry in that module.
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from kgforge.core.datasets import room_parts
from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.jsonio import JsonObject, Record, array_items, iter_json_container, iter_json_lines, json_array
from kgforge.core.registry import Entry, Registry
from kgforge.exports.model import TripleShape, value_at

if TYPE_CHECKING:
    from kgforge.exports.labels import Render
    from kgforge.exports.model import Dialogue, SourceDialogue


@dataclass(frozen=True)
class Layout:
    """One field layout of a format. ``kind`` is its qualified name (``duconv-sample``), the same as
    the reader kinds of ``shared/readers/run-readers``."""

    name: str
    kind: str
    description: str
    needs_conversation: bool  # its readers make samples from a conversation: no goal-only export in it
    segmented: bool = False  # strings are cut into words with single spaces, as the real files are
    cut_from: str | tuple[str, ...] | None = None  # the session layout(s) whose dialogues this layout is cut from

    def made_from(self, source: str) -> bool:
        """Whether dialogues read in the layout named ``source`` can be written in this one."""
        return source == self.name or source in (
            (self.cut_from,) if isinstance(self.cut_from, str) else self.cut_from or ()
        )


@dataclass(frozen=True)
class ParallelExport:
    """A format's export in several languages at once (``--lang zh,en``: one corpus in two, twins with the same
    ids and triples): what it writes (said when another format is asked for one) and the module making it,
    named rather than imported (imported when a parallel export runs, :mod:`kgforge.exports.parallel`) so
    that reading the registry loads none of it. The module holds ``export_parallel`` (new goals) and
    ``export_parallel_dialogues`` (real twins), with the signatures of :class:`kgforge.exports.parallel.Writer`."""

    writes: str  # what it writes, as a message ends "--lang zh,en writes ...": "a parallel corpus in my layout"
    module: str


class Format:
    """A dataset's (or kgforge's own) export format. Subclasses set the class attributes and override
    what they support; every method gets the :class:`Layout` already checked by the registry."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()  # other names it answers to (in any case, as its name)
    description: ClassVar[str]
    layouts: ClassVar[tuple[Layout, ...]]
    goal_layout: ClassVar[str | None] = None  # the default layout of goal-only exports
    reads_dialogues: ClassVar[bool] = False  # real dialogues of this format can be read and re-exported
    container: ClassVar[str] = "lines"  # lines (JSON Lines) or array (one JSON array)
    type_facts: ClassVar[bool] = True  # the data states each topic's type (DuConv's 领域); KdConv does not
    type_relation: ClassVar[str | None] = None  # the relation its readers expect type facts under
    marks: ClassVar[tuple[str, ...]] = ()  # what its layouts write in every language: its readers' own words
    finds_mentions: ClassVar[bool] = True  # a real dialogue's topics include the entities its utterances name
    # (and a named entity that is only ever an object brings the facts pointing to it)
    pool_budgets: ClassVar[tuple[int, ...] | None] = None  # facts per topic in a real dialogue's pool; None: all
    shape: ClassVar[TripleShape] = TripleShape()  # how the format wants a dialogue's triples handed to it
    parallel: ClassVar[ParallelExport | None] = None  # its export in several languages at once (--lang zh,en)

    def layout(self, name: str) -> Layout:
        for layout in self.layouts:
            if layout.name == name or layout.kind == name:
                return layout
        raise KgforgeError(
            f"--format {self.name} has no layout {name!r}: choose one of "
            f"{', '.join(layout.name for layout in self.layouts)}"
        )

    # ---------------------------------------------------------------- goal-only exports

    def goal_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        raise NotImplementedError

    # ---------------------------------------------------------------- real dialogues

    @property
    def writes_dialogues(self) -> bool:
        """Whether real dialogues can be written in this format (it says how: :meth:`dialogue_records`)."""
        return type(self).dialogue_records is not Format.dialogue_records

    def detect(self, record: Any) -> Layout | None:
        """The layout ``record`` (the first record of a file) is written in, if it is this format's."""
        return None

    def source_dialogue(self, record: Any, line: int, layout: Layout) -> SourceDialogue | str:
        """The dialogue a record holds, or why it cannot be one (which the export reports with its line)."""
        raise NotImplementedError

    def dialogue_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        """The records of a real dialogue in ``layout``: its own fields as they were (``dialogue.source``),
        plus the subgraph in a field of its own."""
        raise NotImplementedError

    def keeps(self, written: dict[str, Any], source: dict[str, Any], triple: Any) -> bool:
        """Whether the ``written`` record (the dataset's own, see :meth:`dataset_record`) holds gold ``triple``
        of ``source`` unchanged: by default, with the same value where it was."""
        try:
            return value_at(written, triple.where) == value_at(source, triple.where)
        except (KeyError, IndexError, TypeError):
            return False

    def dataset_record(self, record: dict[str, Any]) -> JsonObject:
        """The dataset's own record inside an exported one (itself, but for the generic layouts)."""
        return record

    # ---------------------------------------------------------------- checks and writing

    def check(self, record: dict[str, Any], layout: Layout) -> list[str]:
        """What is wrong with ``record`` for the readers of ``layout`` (empty when nothing)."""
        return []

    def read(self, path: Path) -> Iterator[Record]:
        return iter_json_container(path, list) if self.container == "array" else iter_json_lines(path)

    def write(self, records: Iterable[dict[str, Any]], path: Path, layout: Layout) -> None:
        """Write ``records`` to ``path`` (a temporary file the caller moves into place) as strict UTF-8 JSON
        (orjson: several times faster than ``json`` on a few hundred MB of dialogues), record by record: samples
        cut from a long session share its utterances in memory, but each is written out whole, so the file can
        be far larger than the records held, and it is never held as one string."""
        encoded = (array_items([record]) for record in records)
        with open(path, "wb") as handle:
            if self.container == "array":  # one record a line inside the array
                handle.writelines(json_array(encoded))
            else:
                handle.writelines(piece + b"\n" for piece in encoded)


def _format_modules() -> list[str]:
    """The modules of ``kgforge.exports.formats`` (the formats of no one dataset) and every dataset room's
    ``export`` part."""
    package = importlib.import_module("kgforge.exports.formats")
    found = [f"{package.__name__}.{module.name}" for module in pkgutil.iter_modules(package.__path__)]
    return found + room_parts("export")


def _plugin_format(name: str, obj: Any) -> Entry[Format]:
    """A format of the entry-point group ``kgforge.export_formats``: a :class:`Format` subclass (or instance),
    registered under its entry point's name with its own aliases and description."""
    made = obj() if isinstance(obj, type) and issubclass(obj, Format) else obj
    if not isinstance(made, Format):
        raise KgforgeError(f"it is a {type(obj).__name__}, not a kgforge.exports.Format subclass")
    return Entry(name, made, made.description, tuple(made.aliases))


FORMATS: Registry[Format] = Registry(
    "export format", modules=_format_modules, entry_point_group="kgforge.export_formats", plugin=_plugin_format
)


def register(cls: type[Format]) -> type[Format]:
    """Class decorator: make a format available under its ``name`` and ``aliases``."""
    FORMATS.register(cls.name, cls(), aliases=cls.aliases, description=cls.description)
    return cls


def formats() -> dict[str, Format]:
    """Every format by its name, sorted."""
    return {entry.name: entry.obj for entry in FORMATS}


def layout_names() -> list[str]:
    """Every ``--layout`` name of any format (which ones a format has is checked with the format)."""
    return sorted({layout.name for fmt in formats().values() for layout in fmt.layouts})


def dialogue_kinds() -> list[str]:
    """The layout kinds real dialogues can be read in (``--input-layout``)."""
    return [layout.kind for fmt in formats().values() if fmt.reads_dialogues for layout in fmt.layouts]


def format_named(name: str) -> Format:
    """The format called ``name`` or one of its aliases, in any case (``DuConv``); UnknownName else."""
    return FORMATS.get(name)


def goal_layout(fmt: Format, name: str | None) -> Layout:
    """The layout a goal-only export writes: ``name`` or the format's default, refused when its readers
    need a conversation (a goal has none, and those readers make no sample from an empty one)."""
    usable = [layout.name for layout in fmt.layouts if not layout.needs_conversation]
    if name is None:
        if fmt.goal_layout is None:
            raise KgforgeError(
                f"--format {fmt.name} has no layout for new goals: its readers make training "
                "samples from a conversation, which a goal does not have. "
                f"{_goal_alternatives()}"
            )
        name = fmt.goal_layout
    layout = fmt.layout(name)
    if layout.needs_conversation:
        hint = f"use --layout {' or '.join(usable)}, " if usable else ""
        raise KgforgeError(
            f"--format {fmt.name} --layout {layout.name} needs a conversation: its readers "
            f"({layout.kind}) make samples from the dialogue's utterances, and a goal has none, so "
            f"they would read nothing. For new goals {hint}or another format. {_goal_alternatives()}"
        )
    return layout


def _goal_alternatives() -> str:
    offered = [
        f"{fmt.name} --layout {layout.name}"
        for fmt in formats().values()
        for layout in fmt.layouts
        if not layout.needs_conversation
    ]
    return "Layouts for goals: " + "; ".join(offered) + "."


def dialogue_layouts(fmt: Format, source_fmt: Format, source_layout: Layout, name: str | None) -> Layout:
    """The layout real dialogues read as ``source_fmt``/``source_layout`` are written in: their own
    (the default), one cut from it (sessions → samples), or a generic format's."""
    if fmt.name != source_fmt.name:
        if fmt.reads_dialogues or not fmt.writes_dialogues:
            raise KgforgeError(
                f"the dialogues are {source_layout.kind}; --dialogues writes them as "
                f"{source_fmt.name}, jsonl or parquet, not as {fmt.name}"
                + ("" if fmt.writes_dialogues else f" ({fmt.name} is for new goals: {fmt.description})")
            )
        return fmt.layout(name or fmt.layouts[0].name)
    if name is None:
        return source_layout
    layout = fmt.layout(name)
    if not layout.made_from(source_layout.name):
        cut = [
            other.name
            for other in fmt.layouts
            if other.name != source_layout.name and other.made_from(source_layout.name)
        ]
        raise KgforgeError(
            f"--layout {layout.name} cannot be made from {source_layout.kind} dialogues: choose "
            f"{' or '.join([source_layout.name, *cut])}"
        )
    return layout


def detect_layout(path: Path, given: str | None = None) -> tuple[Format, Layout]:
    """The format and layout of a file of real dialogues: ``given`` (a kind such as ``durecdial-lic2020``),
    or what its first readable record looks like."""
    readers = [fmt for fmt in formats().values() if fmt.reads_dialogues]
    if given is not None:
        for fmt in readers:
            for layout in fmt.layouts:
                if layout.kind == given:
                    return fmt, layout
        raise KgforgeError(f"unknown --input-layout {given!r}: choose one of {', '.join(dialogue_kinds())}")
    first = _first_record(path)
    for fmt in readers:
        detected = fmt.detect(first.value)
        if detected is not None:
            return fmt, detected
    raise KgforgeError(
        f"{path}:{first.line}: not a dialogue layout kgforge reads ({', '.join(dialogue_kinds())}); "
        "if it is one, say which with --input-layout"
    )


def _first_record(path: Path) -> Record:
    with open(path, encoding="utf-8-sig", errors="replace") as handle:
        head = handle.read(1 << 16).lstrip()
    records = iter_json_container(path, list) if head.startswith("[") else iter_json_lines(path)
    unreadable = None
    for record in records:
        if not record.error:
            return record
        unreadable = unreadable or record
    where = f"{path}:{unreadable.line}: {unreadable.error}; " if unreadable else f"{path}: "
    raise InputError(f"{where}no readable record to tell its layout from")
