"""kgforge's own layout, as JSON lines (``jsonl``) or Parquet (``parquet``): one record per dialogue with
``dialogue_id``, ``goal_id``, the build id, topics, goal path and subgraph triples as IRIs *and* labels,
each triple's role and source graph. A re-exported real dialogue also carries ``source``: its layout,
line and the record itself (as JSON text, so every row has the same columns)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.jsonio import JsonObject
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, TripleShape
from kgforge.exports.registry import Format, Layout, register

GENERIC_SCHEMA_VERSION = 2
GENERIC = "dialogue_id, goal_id, build_id, topics, goal, path and triples with IRIs and labels"
TRIPLE_KEYS = ("s", "p", "o", "o_is_entity", "s_label", "p_label", "o_label", "role", "graph")


def generic_record(dialogue: Dialogue, render: Render) -> JsonObject:
    def triple(t: dict[str, Any]) -> dict[str, Any]:
        return {k: t.get(k) for k in TRIPLE_KEYS}

    source = dialogue.source
    return {
        "dialogue_id": dialogue.dialogue_id,
        "goal_id": dialogue.goal_id,
        "kind": dialogue.kind,
        "seed": dialogue.seed,
        "build_id": render.build_id,
        "language": render.language,
        "schema_version": GENERIC_SCHEMA_VERSION,
        "topics": [
            {"iri": i, "label": label, "type": kind}
            for i, label, kind in zip(dialogue.topics, dialogue.topic_labels, dialogue.topic_types)
        ],
        "goal": [
            ["START", *dialogue.topic_labels],
            *[[t["s_label"], t["p_label"], t["o_label"]] for t in dialogue.path],
        ],
        "path": [triple(t) for t in dialogue.path],
        "triples": [triple(t) for t in dialogue.triples],
        "source": None
        if source is None
        else {"layout": source.layout, "line": source.line, "record": json.dumps(source.record, ensure_ascii=False)},
    }


class Generic(Format):
    goal_layout = "generic"
    shape = TripleShape(rows=True)

    def goal_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        return [generic_record(dialogue, render)]

    dialogue_records = goal_records

    def dataset_record(self, record: dict[str, Any]) -> JsonObject:
        return json.loads(record["source"]["record"])


@register
class JsonLines(Generic):
    name = "jsonl"
    aliases = ("json-lines", "ndjson")
    description = "kgforge's generic records (IRIs and labels), JSON lines; loads with polars and HF datasets"
    layouts = (Layout("generic", "jsonl", GENERIC, needs_conversation=False),)


@register
class Parquet(Generic):
    name = "parquet"
    description = "kgforge's generic records (IRIs and labels), Parquet"
    layouts = (Layout("generic", "parquet", GENERIC, needs_conversation=False),)

    def write(self, records: Iterable[dict[str, Any]], path: Path, layout: Layout) -> None:
        pl.DataFrame(records, infer_schema_length=None).write_parquet(path)
