"""DuConv in ``kgforge eval``: sessions (every bot turn a response, as the official sample converter makes them)
or samples (``history`` and ``response``); the gold knowledge is the goal path. Word-segmented by definition.
Goal metrics: the two topics of ``goal[0] = [START, a, b]`` are what a session must reach (goal completion);
the bot speaks first."""

from __future__ import annotations

from typing import Any

from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, alternating, goal_triples
from kgforge.evaluation.inputs import EvalLayout, read_duconv, register_layout


def is_duconv(record: dict[str, Any]) -> bool:
    """A DuConv session or sample: its knowledge beside a conversation or a history."""
    return "knowledge" in record and ("conversation" in record or "history" in record)


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A session's knowledge, and its two goal topics (``goal[0] = [START, a, b]``) where it states them."""
    goal = record.get("goal") or []
    topics = tuple(goal[0][1:3]) if goal and goal[0] and goal[0][0] == "START" else ()
    return GoalContext(key, "duconv", goal_triples(record.get("knowledge")), topics, completion=True)


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The session's conversation, the bot's turns (even ones: it speaks first) replaced by ``bot``."""
    return alternating((str(t) for t in record.get("conversation") or []), bot, 0)


register_layout(
    "duconv",
    EvalLayout(
        read_duconv,
        is_duconv,
        segmented=True,
        priority=10,
        description="DuConv sessions or samples",
        goals=GoalReading(
            goal_context,
            goal_turns,
            "DuConv",
            completion="DuConv sessions state two goal topics (goal[0] = START, a, b)",
        ),
    ),
)
