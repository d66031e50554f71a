"""Dialogue records in each dataset's own field layout (``../shared/docs/formats.md`` §4–6), and the
generic JSONL/Parquet layout with IRIs and labels.

* DuConv: ``{"goal", "knowledge", "conversation"}`` (train/dev) or ``{"goal", "knowledge", "history",
  "response"}`` (test); triples are ``[head, relation, tail]`` label lists, goals ``[["START", A, B], …]``.
* KdConv: a JSON array of ``{"name", "messages": [{"message", "attrs": [{"name", "attrname",
  "attrvalue"}]}]}``; ``attrs`` is left out of a message that has none, as in the dataset.
* DuRecDial (LIC 2020 layout): ``{"goal": "[1]…-->[2]…", "knowledge", "user_profile", "situation",
  "conversation"}``.
* Generic: one record per dialogue with ``dialogue_id``, ``goal_id``, the build id, topics, goal path
  and subgraph triples as IRIs *and* labels, each triple's role and source graph.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.files import atomic_path
from kgforge.core.text import segment
from kgforge.goals.graph import CHAT_BY_TYPE, DIALOGUE_TYPES, RECOMMENDATION_BY_TYPE
from kgforge.goals.styles import goal_string

FORMATS = ("duconv", "kdconv", "durecdial", "jsonl", "parquet")
GENERIC_SCHEMA_VERSION = 1


@dataclass
class Dialogue:
    """One exported dialogue: its id, goal (or source dialogue) and labelled subgraph triples."""

    dialogue_id: str
    kind: str
    topics: list[str]
    topic_labels: list[str]
    topic_types: list[str | None]
    path: list[dict[str, Any]]
    triples: list[dict[str, Any]]
    goal_id: str | None = None
    seed: int | None = None
    sequence: list[dict[str, Any]] | None = None
    profile: dict[str, Any] | None = None
    messages: list[dict[str, Any]] | None = None  # KdConv dialogues: text and the topics each message names
    extra: dict[str, Any] = field(default_factory=dict)

    def goal_triples(self) -> list[list[str]]:
        return [["START", *self.topic_labels], *[[t["s_label"], t["p_label"], t["o_label"]] for t in self.path]]


def triple_list(triples: Iterable[dict[str, Any]]) -> list[list[str]]:
    return [[t["s_label"], t["p_label"], t["o_label"]] for t in triples]


def duconv_record(d: Dialogue, layout: str, segmented: bool = True) -> dict[str, Any]:
    """A DuConv line; ``segmented``: every string cut into words with single spaces, as in the real data."""
    goal, knowledge = d.goal_triples(), triple_list(d.triples)
    if segmented:
        goal = [goal[0][:1] + [segment(x) for x in goal[0][1:]], *([segment(x) for x in t] for t in goal[1:])]
        knowledge = [[segment(x) for x in t] for t in knowledge]
    record: dict[str, Any] = {"goal": goal, "knowledge": knowledge}
    if layout == "sample":
        record.update(history=[], response="")
    else:
        record["conversation"] = []
    return record


def kdconv_attr(t: dict[str, Any]) -> dict[str, str]:
    return {"name": t["s_label"], "attrname": t["p_label"], "attrvalue": t["o_label"]}


def kdconv_record(d: Dialogue) -> dict[str, Any]:
    """Each fact sits on the message that first names its topic (goal exports: one message per topic)."""
    if d.messages is not None:
        texts = [m["message"] for m in d.messages]
        first = {t: i for i, m in reversed(list(enumerate(d.messages))) for t in m["topics"]}
    else:
        texts = [""] * len(d.topics)
        first = {t: i for i, t in reversed(list(enumerate(d.topics)))}
    attrs: list[list[dict[str, str]]] = [[] for _ in texts]
    for t in d.triples:
        slot = first.get(t["s"], first.get(t["o"], 0))
        attrs[slot].append(kdconv_attr(t))
    messages = [{"message": text, **({"attrs": a} if a else {})} for text, a in zip(texts, attrs)]
    return {"name": d.topic_labels[0] if d.topic_labels else "", "messages": messages}


def sequence_steps(d: Dialogue) -> list[dict[str, Any]]:
    """The DuRecDial goal sequence of a dialogue: its own, or one made from its topics and their types."""
    if d.sequence:
        return [dict(step, topic_label=label_of(d, step["topic"])) for step in d.sequence]
    steps = [("问答", 0)]
    for i in range(1, len(d.topics)):
        kind = d.topic_types[i] or ""
        steps.append((RECOMMENDATION_BY_TYPE.get(kind) or CHAT_BY_TYPE.get(kind) or "提问", i))
    out = [{"type": t, "type_en": DIALOGUE_TYPES[t], "topic": d.topics[i], "topic_label": d.topic_labels[i]}
           for t, i in steps]
    return out + [{"type": "再见", "type_en": DIALOGUE_TYPES["再见"], "topic": None, "topic_label": None}]


def label_of(d: Dialogue, iri: str | None) -> str | None:
    if iri is None:
        return None
    return d.topic_labels[d.topics.index(iri)] if iri in d.topics else iri


def durecdial_record(d: Dialogue) -> dict[str, Any]:
    return {"goal": goal_string(sequence_steps(d)), "knowledge": triple_list(d.triples),
            "user_profile": d.profile or {}, "situation": "", "conversation": []}


def generic_record(d: Dialogue, build_id: str, language: str) -> dict[str, Any]:
    def triple(t: dict[str, Any]) -> dict[str, Any]:
        return {k: t.get(k) for k in ("s", "p", "o", "o_is_entity", "s_label", "p_label", "o_label", "role", "graph")}

    return {
        "dialogue_id": d.dialogue_id, "goal_id": d.goal_id, "kind": d.kind, "seed": d.seed,
        "build_id": build_id, "language": language, "schema_version": GENERIC_SCHEMA_VERSION,
        "topics": [{"iri": i, "label": label, "type": kind}
                   for i, label, kind in zip(d.topics, d.topic_labels, d.topic_types)],
        "goal": d.goal_triples(),
        "path": [triple(t) for t in d.path],
        "triples": [triple(t) for t in d.triples],
    }


def write_export(dialogues: list[Dialogue], fmt: str, out: Path, build_id: str, language: str,
                 layout: str = "conversation", segmented: bool = True) -> int:
    """Write ``dialogues`` to ``out`` in ``fmt``; the file appears complete or not at all."""
    if fmt not in FORMATS:
        raise KgforgeError(f"unknown --format {fmt!r}: choose one of {', '.join(FORMATS)}")
    if layout not in ("conversation", "sample"):
        raise KgforgeError(f"--layout must be conversation or sample, got {layout!r}")
    builders: dict[str, Callable[[Dialogue], dict[str, Any]]] = {
        "duconv": lambda d: duconv_record(d, layout, segmented), "kdconv": kdconv_record, "durecdial": durecdial_record,
        "jsonl": lambda d: generic_record(d, build_id, language),
        "parquet": lambda d: generic_record(d, build_id, language),
    }
    records = [builders[fmt](d) for d in dialogues]
    with atomic_path(out) as tmp:
        if fmt == "parquet":
            pl.DataFrame(records, infer_schema_length=None).write_parquet(tmp)
        elif fmt == "kdconv":
            tmp.write_text(json.dumps(records, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
        else:
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    return len(records)
