"""A collection's finished sessions in a dataset's layout (``kgforge collect export``, and the admin view's
live export): the layouts and what each record holds are the style's (:mod:`kgforge.collect.styles`).

The folder is read, never written: the journal as it stands (a line being written by a running server is
left for the next export), the goal views made when the collection was. Sessions not yet finished are not
written, and counted. The output appears complete or not at all.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from kgforge.collect.collection import Collection
from kgforge.collect.folder import JOURNAL, Folder
from kgforge.collect.journal import read_journal
from kgforge.collect.records import Collected, CollectError, CollectExportReport, GoalView
from kgforge.collect.styles import STYLES, Layout, Style
from kgforge.core.output import output_file


def layout_for(style: Style, fmt: str) -> Layout:
    layout = style.exports.get(fmt.lower())
    if layout is None:
        raise CollectError(
            f"--format {fmt}: a {style.name} collection is exported as {' or '.join(style.exports)} "
            f"(each needs what its sessions hold)"
        )
    return layout


def session_records(style: Style, fmt: str, finished: Sequence[tuple[GoalView, Collected]]) -> list[dict[str, Any]]:
    layout = layout_for(style, fmt)
    tools = layout.tools([view for view, _ in finished])
    return [layout.record(view, session, tools) for view, session in finished]


def encoded(layout: Layout, records: Sequence[dict[str, Any]]) -> bytes:
    """The file's bytes: JSON lines, or one JSON array with a record a line (KdConv's files)."""
    lines = [json.dumps(record, ensure_ascii=False) for record in records]
    if layout.container == "array":
        return ("[\n" + ",\n".join(lines) + "\n]\n").encode("utf-8")
    return "".join(line + "\n" for line in lines).encode("utf-8")


def read_collection(folder: Folder) -> Collection:
    """The collection as its journal stands now (no judge: nothing is grounded again)."""
    settings = folder.settings()
    collection = Collection(STYLES.get(settings.style), folder.views(), settings.per_goal, None, _no_judge)
    for event in read_journal(folder.file(JOURNAL), repair=False):
        try:
            collection.apply(event)
        except (KeyError, TypeError, ValueError) as exc:
            raise CollectError(
                f"{folder.file(JOURNAL)}:{event['_line']}: not an event of this collection ({exc})"
            ) from None
    return collection


def _no_judge(goal: GoalView) -> Any:
    raise CollectError("an export grounds nothing")


def export_collection(folder: Path | str, fmt: str, out: Path | str) -> CollectExportReport:
    """Write the finished sessions of the collection in ``folder`` as ``fmt`` (a layout of its style) to ``out``."""
    place = Folder(folder)
    target = output_file(out)
    collection = read_collection(place)
    layout = layout_for(collection.style, fmt)
    finished = collection.collected()
    still_open = sum(1 for s in collection.sessions.values() if s.finished is None)
    if not finished:
        raise CollectError(
            f"{place.path}: no finished session to export yet ({still_open} under way); nothing was written"
        )
    records = session_records(collection.style, fmt, finished)
    target.write_bytes(encoded(layout, records))
    return CollectExportReport(
        target.path,
        fmt.lower(),
        layout.kind,
        len(records),
        sum(len(s.turns) for _, s in finished),
        sum(s.checks.facts_clicked for _, s in finished),
        sum(1 for _, s in finished if s.checks.passed),
        still_open,
    )
