"""``kgforge export --lang zh,en``: one export in several languages at once, made by the format that has one.

A format offers a parallel export by naming it (:class:`kgforge.exports.registry.ParallelExport`: what it writes
and the module making it); the two entries here check what every parallel export needs (two different languages,
a format that has one) and hand the run to that module, imported by name, so no format's parallel export is
loaded before one is asked for and this stage names none. What a parallel export returns is one record for
all of them (:class:`ParallelExportReport`).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, cast

from kgforge.core.errors import KgforgeError
from kgforge.core.records import Record, flattened, json_key
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import format_named, formats
from kgforge.store.snapshot import Snapshot


@dataclass(frozen=True)
class ParallelExportReport(Record):
    """``export --lang zh,en``: the twins (one file per language), the task files cut from them and the manifest
    pairing them (``OUT.parallel.json``, whose other keys are in ``details``)."""

    domain: str
    languages: tuple[str, ...]
    twins: dict[str, Path]  # language -> its twin file
    tasks: dict[str, dict[str, Any]]  # task (zh-zh, en-en, zh-en, en-zh, multilingual) -> {"file", "samples"}
    records: int  # records in each twin (the same ids in each)
    triples: int  # triples in each twin (the same count per record in each)
    mixed_labels: dict[str, list[dict[str, str]]]  # language -> IRIs written without a label in it (--allow-mixed)
    out: Path
    manifest: Path = json_key("parallel_manifest")
    details: dict[str, Any] = flattened()


@dataclass(frozen=True)
class ParallelRequest:
    """One parallel export as asked for, handed whole to the module making it: the build, the new goals or the
    first language's file of real dialogues (``source``), the export's options, the languages (the first
    chooses the rows), where the twins go, and whether a label missing in a language may be the first one's."""

    snapshot: Snapshot
    source: Path
    options: ExportOptions
    languages: list[str]
    out: Path
    allow_mixed: bool = False


class Writer(Protocol):
    """The module a :class:`~kgforge.exports.registry.ParallelExport` names: the export of new goals and of
    real twins."""

    def export_parallel(self, asked: ParallelRequest) -> ParallelExportReport: ...

    def export_parallel_dialogues(self, asked: ParallelRequest) -> ParallelExportReport: ...


def export_parallel(
    snapshot: Snapshot,
    goals_file: Path,
    options: ExportOptions,
    languages: list[str],
    out: Path,
    allow_mixed: bool = False,
) -> ParallelExportReport:
    """The export of ``goals_file``'s new goals in every language of ``languages`` (two or more), by the
    parallel export of ``options``' format."""
    asked = ParallelRequest(snapshot, goals_file, options, languages, out, allow_mixed)
    return writer(options, languages).export_parallel(asked)


def export_parallel_dialogues(
    snapshot: Snapshot,
    dialogues_file: Path,
    options: ExportOptions,
    languages: list[str],
    out: Path,
    allow_mixed: bool = False,
) -> ParallelExportReport:
    """The export of real dialogues written in every language of ``languages`` (twin files, ``dialogues_file``
    the first language's), by the parallel export of ``options``' format."""
    asked = ParallelRequest(snapshot, dialogues_file, options, languages, out, allow_mixed)
    return writer(options, languages).export_parallel_dialogues(asked)


def writer(options: ExportOptions, languages: list[str]) -> Writer:
    """The module making the parallel export of ``options``' format, or why there is none (before anything is
    read): fewer than two languages, or a format without one (the message names those that have one)."""
    if len(set(languages)) < 2:
        raise KgforgeError(f"--lang {','.join(languages)}: a parallel export needs two different languages")
    parallel = format_named(options.fmt).parallel
    if parallel is None:
        offered = [(fmt.name, fmt.parallel) for fmt in formats().values() if fmt.parallel is not None]
        if not offered:
            raise KgforgeError(f"--lang {','.join(languages)}: no export format writes several languages at once")
        raise KgforgeError(
            f"--lang {','.join(languages)} writes {' or '.join(p.writes for _, p in offered)}: give --format "
            f"{' or '.join(name for name, _ in offered)}, not {options.fmt}"
        )
    return cast(Writer, importlib.import_module(parallel.module))
