"""KdConv in ``kgforge eval``: a dialogue file (a JSON array) whose every message after the first is a response,
its gold knowledge the message's ``attrs``. Goal metrics: the dialogue's topic is its ``name``, its knowledge
every message's ``attrs``."""

from __future__ import annotations

from typing import Any

from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, goal_triples
from kgforge.evaluation.inputs import EvalLayout, read_kdconv, register_layout


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
    ),
)
