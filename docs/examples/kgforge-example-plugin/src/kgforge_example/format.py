"""Export format ``triples-tsv``: each goal's subgraph as tab-separated label triples, one dialogue a line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge.exports import Format, Layout


class TriplesTsv(Format):
    name = "triples-tsv"
    aliases = ("ttsv",)
    description = "each dialogue's goal and knowledge as label triples, tab-separated (example plug-in)"
    layouts = (
        Layout("plain", "triples-tsv", "dialogue id, then subject|relation|object cells", needs_conversation=False),
    )
    goal_layout = "plain"

    def goal_records(self, dialogue: Any, layout: Layout, render: Any) -> list[dict[str, Any]]:
        return [{"id": dialogue.dialogue_id, "knowledge": [list(map(str, t)) for t in dialogue.knowledge]}]

    def write(self, records: list[dict[str, Any]], path: Path, layout: Layout) -> None:
        with open(path, "w", encoding="utf-8") as handle:
            for record in records:
                cells = ["|".join(triple) for triple in record["knowledge"]]
                handle.write("\t".join([record["id"], *cells]) + "\n")
