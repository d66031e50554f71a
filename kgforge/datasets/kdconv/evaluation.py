"""KdConv in ``kgforge eval``: a dialogue file (a JSON array) whose every message after the first is a response,
its gold knowledge the message's ``attrs``. Goal metrics: the dialogue's topic is its ``name``, its knowledge
every message's ``attrs``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_container
from kgforge.datasets.kdconv.layouts import KDCONV
from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, goal_triples
from kgforge.evaluation.inputs import (
    Dialogue,
    EvalLayout,
    Slots,
    checked_triples,
    heads,
    register_layout,
    response_frame,
)
from kgforge.sources.dialogue_layouts import checked_records


def read_kdconv(path: Path) -> Slots:
    """Every message after a dialogue's first is a response, its gold knowledge the message's ``attrs``."""
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    for line, value in checked_records(path, iter_json_container(path, list), KDCONV).records:
        per_message = [checked_triples(path, line, m.get("attrs") or [], "attrs") for m in value["messages"]]
        knowledge = list(dict.fromkeys(t for attrs in per_message for t in attrs))
        name = value.get("name")
        topics = list(dict.fromkeys(([name] if isinstance(name, str) else []) + heads(knowledge)))
        key = str(len(dialogues))
        for j, message in enumerate(value["messages"][1:], start=1):
            rows.append(
                {
                    "id": f"{key}:{j}",
                    "line": line,
                    "text": message["message"],
                    "gold": message["message"],
                    "dialogue": len(dialogues),
                    "gold_knowledge": [list(t) for t in per_message[j]],
                    "turn": j,
                }
            )
        dialogues.append(Dialogue(key, topics, knowledge, knowledge, [m["message"] for m in value["messages"]]))
    if not dialogues:
        raise InputError(f"{path}: no dialogue in the file")
    return Slots(path, "kdconv", response_frame(rows), dialogues, has_gold=True)


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A dialogue's topic (its ``name``) and the knowledge its messages are annotated with, each triple once."""
    messages = record.get("messages", [])
    attrs = [t for m in messages if isinstance(m, dict) for t in goal_triples(m.get("attrs") or [])]
    name = record.get("name")
    return GoalContext(key, "kdconv", tuple(dict.fromkeys(attrs)), (str(name),) if name else ())


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The first message (the user's), then ``bot`` in the place of every message after it."""
    messages = [str(m.get("message", "")) for m in record.get("messages", []) if isinstance(m, dict)]
    return [(False, messages[0])] + [(True, text) for text in bot] if messages else []


register_layout(
    "kdconv",
    EvalLayout(
        read_kdconv,
        array=True,
        description="KdConv dialogues: every message after the first, gold attrs",
        goals=GoalReading(goal_context, goal_turns, "KdConv"),
        records=lambda path: checked_records(path, iter_json_container(path, list), KDCONV).records,
    ),
)
