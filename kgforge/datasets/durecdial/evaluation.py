"""DuRecDial in ``kgforge eval``: sessions in the LIC-2020 resource or competition layout, DuRecDial 2.0's, or
the ACL 2020 release's (``kg``, ``goals``); the bot turns are the responses (``label`` says who speaks first).
Goal metrics: the goal sequence's 『topics』, the last recommendation's first topic as the target (LS), and the
user profile's accepted and rejected topics (UTC, Rec)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, alternating, goal_triples
from kgforge.evaluation.inputs import EvalLayout, _bot_first, read_durecdial, register_layout

_QUOTED = re.compile(r"『\s*(.+?)\s*』")


def is_durecdial(record: dict[str, Any]) -> bool:
    """A DuRecDial session: the ACL 2020 release's keys, or a session whose goal is a string or which says who
    speaks first (``label``) or the user's situation: what a DuConv session never has."""
    if "kg" in record and "goals" in record and "conversation" in record:
        return True
    in_session = "knowledge" in record and ("conversation" in record or "history" in record)
    return in_session and ("label" in record or "situation" in record or isinstance(record.get("goal"), str))


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A session's goal topics (quoted in its goal sequence), what its recommendation goals recommend (the last
    one's first topic the target), and the topics its user profile accepts (``接受的…``, ``同意的…``) and
    rejects (``拒绝``, ``没有接受的…``)."""
    goal = record.get("goals", record.get("goal"))
    steps = goal.split("-->") if isinstance(goal, str) else []
    topics = tuple(dict.fromkeys(t for step in steps for t in _QUOTED.findall(step)))
    recommending = [step for step in steps if "推荐" in step.split("(")[0]]
    recommended = tuple(dict.fromkeys(t for step in recommending for t in _QUOTED.findall(step)[:1]))
    target = recommended[-1] if recommended else None
    given = record.get("user_profile")
    profile: dict[str, Any] = given if isinstance(given, dict) else {}

    def values(keep: Callable[[str], bool]) -> tuple[str, ...]:
        found = []
        for name, value in profile.items():
            if keep(name):
                found += [str(v).strip() for v in (value if isinstance(value, list) else [value]) if str(v).strip()]
        return tuple(found)

    rejected = values(lambda name: name == "拒绝" or name.startswith(("没有接受", "拒绝")))
    accepted = values(lambda name: name.startswith(("接受", "同意")))
    knowledge = goal_triples(record.get("knowledge", record.get("kg")))
    return GoalContext(key, "durecdial", knowledge, topics, target, recommended, rejected, accepted)


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The session's conversation, the bot's turns replaced by ``bot`` (who speaks first: ``label``, else the
    bot when the first goal is 寒暄)."""
    return alternating((str(t) for t in record.get("conversation") or []), bot, 0 if _bot_first(record) else 1)


register_layout(
    "durecdial",
    EvalLayout(
        read_durecdial,
        is_durecdial,
        segmented=True,
        priority=20,
        description="DuRecDial sessions",
        goals=GoalReading(goal_context, goal_turns, "DuRecDial"),
    ),
)
