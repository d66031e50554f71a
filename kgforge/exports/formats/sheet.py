"""A crowdsourcing sheet for new goals: one row per goal, for a crowd worker to write the dialogue from.

``tsv`` or ``csv`` (UTF-8, a header row, RFC 4180 quoting): ``dialogue_id``, the two topics with their
types, ``goal`` and ``knowledge`` as JSON (exact, for reading the sheet back), ``goal_text`` and
``knowledge_text`` as a worker reads them (one triple a line, ``head — relation — tail``), and an empty
``conversation`` column to fill. A cell a spreadsheet would run as a formula (a label starting with ``=``,
``+``, ``-``, ``@``) is written with a leading apostrophe (:func:`kgforge.core.text.spreadsheet_cell`), and
:func:`read_sheet` takes it off again.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgforge.core.text import spreadsheet_cell, spreadsheet_text
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.exports.registry import Format, Layout, register

COLUMNS = (
    "dialogue_id",
    "topic_a",
    "topic_a_type",
    "topic_b",
    "topic_b_type",
    "goal_text",
    "knowledge_text",
    "goal",
    "knowledge",
    "conversation",
)
TSV = Layout(
    "tsv",
    "sheet-tsv",
    "tab-separated sheet, one goal a row, an empty conversation column to fill",
    needs_conversation=False,
)
CSV = Layout(
    "csv",
    "sheet-csv",
    "comma-separated sheet, one goal a row, an empty conversation column to fill",
    needs_conversation=False,
)


@register
class Sheet(Format):
    name = "sheet"
    description = "a crowdsourcing sheet of new goals (TSV or CSV) for workers to write dialogues from"
    layouts = (TSV, CSV)
    goal_layout = "tsv"

    def goal_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        goal = [["START", *dialogue.topic_labels], *dialogue.goal_path]
        knowledge = dialogue.knowledge
        topics = list(zip(dialogue.topic_labels, dialogue.topic_types)) + [("", None)] * 2
        return [
            {
                "dialogue_id": dialogue.dialogue_id,
                "topic_a": topics[0][0],
                "topic_a_type": topics[0][1] or "",
                "topic_b": topics[1][0],
                "topic_b_type": topics[1][1] or "",
                "goal_text": " → ".join(dialogue.topic_labels) + "".join(f"\n{' — '.join(t)}" for t in goal[1:]),
                "knowledge_text": "\n".join(" — ".join(t) for t in knowledge),
                "goal": json.dumps(goal, ensure_ascii=False),
                "knowledge": json.dumps(knowledge, ensure_ascii=False),
                "conversation": "",
            }
        ]

    def write(self, records: Iterable[dict[str, Any]], path: Path, layout: Layout) -> None:
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(
                handle,
                fieldnames=COLUMNS,
                delimiter="\t" if layout is TSV else ",",
                quoting=csv.QUOTE_MINIMAL,
                lineterminator="\r\n",
            )
            writer.writeheader()
            writer.writerows(
                {column: spreadsheet_cell(str(value)) for column, value in record.items()} for record in records
            )


def read_sheet(path: Path, layout: Layout) -> list[dict[str, Any]]:
    """The rows of a sheet, ``goal`` and ``knowledge`` parsed back from their JSON."""
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t" if layout is TSV else ","))
    rows = [{column: spreadsheet_text(cell) for column, cell in row.items()} for row in rows]
    return [dict(row, goal=json.loads(row["goal"]), knowledge=json.loads(row["knowledge"])) for row in rows]
