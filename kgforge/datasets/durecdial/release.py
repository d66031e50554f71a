"""DuRecDial in ``kgforge release``: its session layouts, each utterance a turn; who speaks first from the
resource layouts' ``label`` or the competition layouts' first goal; gold per-utterance knowledge where kept."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, TypedDict

from kgforge.release.layouts import (
    ReleaseLayout,
    Turn,
    alternating,
    goal_field,
    register_layout,
    triples,
)
from kgforge.sources.dialogue_layouts import utterance_knowledge

_FIRST = re.compile(r"(User|Bot)\s*主动", re.IGNORECASE)


def _durecdial_turns(record: dict[str, Any]) -> list[Turn]:
    """Who speaks first: the resource layouts' ``label``; the competition layouts' first goal (``User 主动``)."""
    texts = record["conversation"]
    goal = record.get("goal")
    first = record.get("label")
    if first is None and isinstance(goal, str) and (found := _FIRST.search(goal.replace(" ", ""))):
        first = found.group(1).lower()
    speakers = alternating("bot", "user", len(texts), first != "user") if first else alternating("A", "B", len(texts))
    # the grounder predicts beside gold per-utterance knowledge (predicted_knowledge); without gold it writes its
    # prediction as the record's knowledge: gold only where it kept the dataset's own
    gold = utterance_knowledge(record) if "predicted_knowledge" in record else None
    stated = record.get("stated_knowledge") or []
    claims = record.get("claims") or []
    turns = []
    for i, (speaker, text) in enumerate(zip(speakers, texts)):
        if gold is not None:
            entry: list[Any] = gold[i] if i < len(gold) else []  # one triple, or a list of them
            facts = triples(entry if entry and isinstance(entry[0], list) else [entry] if entry else [])
        else:
            facts = triples(stated[i] if i < len(stated) else [])
        said = claims[i] if i < len(claims) and isinstance(claims[i], list) else []
        turns.append(Turn(speaker, str(text), facts, "gold" if gold is not None else "grounder", tuple(said)))
    return turns


class _Common(TypedDict):
    """ReleaseLayout's fields that DuRecDial's layouts share."""

    config: str
    grounder: str
    suffix: str
    turns: Callable[[dict[str, Any]], list[Turn]]


_DURECDIAL: _Common = {"config": "durecdial", "grounder": "durecdial", "suffix": ".jsonl", "turns": _durecdial_turns}
_DURECDIAL_TASK = "goal-driven conversational recommendation (DuRecDial)"
for kind, readers in (
    ("durecdial-resource", "durecdial-resource"),
    ("durecdial-lic2020", "durecdial-lic2020"),
    ("durecdial2", None),  # no seed reads DuRecDial 2.0's own layout
):
    register_layout(ReleaseLayout(kind, readers=readers, goal=goal_field, task=_DURECDIAL_TASK, **_DURECDIAL))
