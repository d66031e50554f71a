"""DuRecDial in ``kgforge collect``: a recommender with the goal sequence, knowledge and the seeker's profile; a
seeker with a profile and a situation."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgforge.collect.records import Collected, GoalView
from kgforge.collect.styles import (
    GOAL,
    KNOWLEDGE,
    PROFILE,
    SITUATION,
    STYLES,
    Layout,
    Role,
    Style,
    clicked,
    facts_of,
    meta,
)
from kgforge.core.jsonio import JsonObject
from kgforge.datasets.kdconv.collect import KDCONV
from kgforge.goals.record import Goal

NO_TOPIC = "NULL"  # what DuRecDial 2.0's goal_topic_list holds for a goal without a topic


def durecdial_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """A DuRecDial 2.0 record (``export --format durecdial --layout v2``): goal string, knowledge, profile and
    situation; the steps (goal type, topic) from the goal's own sequence."""
    steps = tuple(
        (str(step.get("type") or ""), str(step.get("topic_label") or "")) for step in goal.extra.get("sequence") or ()
    )
    lines = tuple((f"[{k}] {kind}", topic) if topic else (f"[{k}] {kind}",) for k, (kind, topic) in enumerate(steps, 1))
    topics = tuple(dict.fromkeys(topic for _, topic in steps if topic))
    profile = record.get("user_profile") if isinstance(record.get("user_profile"), dict) else None
    situation = record.get("situation") if isinstance(record.get("situation"), str) else None
    return GoalView(goal.goal_id, topics, lines, facts_of(record["knowledge"]), record, profile, situation, steps)


def durecdial_session(view: GoalView, session: Collected, _: Any = None) -> JsonObject:
    """A DuRecDial 2.0 session (``durecdial2``) with per-utterance knowledge: one entry per utterance, the
    list of triples clicked for it (``[]`` for none); ``goal_type_list`` and ``goal_topic_list`` per
    utterance; the utterance that opens goal step k starts with ``[k]``, as DuRecDial's conversations do."""
    opened: set[int] = set()
    conversation, types, topics = [], [], []
    for turn in session.turns:
        step = turn.step or 1
        kind, topic = view.steps[step - 1] if 0 < step <= len(view.steps) else ("", "")
        conversation.append(turn.text if step in opened else f"[{step}] {turn.text}")
        opened.add(step)
        types.append(kind)
        topics.append(topic or NO_TOPIC)
    return {
        "goal": view.record["goal"],
        "knowledge": [[list(f.triple) for f in clicked(view, turn.facts)] for turn in session.turns],
        "user_profile": view.profile or {},
        "situation": view.situation or "",
        "conversation": conversation,
        "goal_type_list": types,
        "goal_topic_list": topics,
        "collected": meta(view, session),
    }


STYLES.register(
    "durecdial",
    Style(
        "durecdial",
        (
            Role("recommender", frozenset({GOAL, KNOWLEDGE, PROFILE})),
            Role("seeker", frozenset({PROFILE, SITUATION})),
        ),
        8,
        30,
        ("durecdial", "v2"),
        durecdial_view,
        {"durecdial": Layout("durecdial2", "lines", durecdial_session), "kdconv": KDCONV},
        frozenset({"sequence"}),
        steps=True,
    ),
    description="DuRecDial: a recommender with the goal sequence, knowledge and profile; a seeker with a profile "
    "and situation",
)
