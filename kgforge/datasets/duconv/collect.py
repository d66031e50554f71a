"""DuConv in ``kgforge collect``: a leader with the goal and knowledge steers a follower who sees neither."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kgforge.collect.records import Collected, GoalView
from kgforge.collect.styles import (
    GOAL,
    KNOWLEDGE,
    STYLES,
    Layout,
    Role,
    Style,
    clicked,
    facts_of,
    meta,
)
from kgforge.core.jsonio import JsonObject
from kgforge.core.text import Segmenter, normalise_label
from kgforge.datasets.kdconv.collect import KDCONV
from kgforge.goals.record import Goal


def duconv_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """A DuConv test sample (``export --format duconv``): ``goal`` ``[["START", A, B], path…]`` and the
    segmented ``knowledge`` with both topics' 领域 type facts, as the leader sees and the export writes them."""
    lines = tuple(tuple(str(x) for x in line) for line in record["goal"])
    return GoalView(goal.goal_id, lines[0][1:], lines, facts_of(record["knowledge"]), record)


def duconv_segmenter(views: Sequence[GoalView]) -> Segmenter:
    """One segmenter for an export (making one copies jieba's dictionary), every goal's names in it."""
    names = {part for view in views for fact in view.knowledge for part in (fact.head, fact.tail)}
    return Segmenter(normalise_label(name) for name in names | {t for view in views for t in view.topics})


def duconv_session(view: GoalView, session: Collected, segment: Segmenter) -> JsonObject:
    """A DuConv train/dev session (``duconv-session``): the goal and knowledge as prepared, the conversation
    word-segmented as DuConv writes it (the knowledge's names kept whole), and ``knowledge_per_turn``: the
    facts the worker clicked for each turn (``[]`` for none), the per-turn gold knowledge."""
    return {
        "goal": view.record["goal"],
        "knowledge": view.record["knowledge"],
        "conversation": [segment(turn.text) for turn in session.turns],
        "knowledge_per_turn": [[list(f.triple) for f in clicked(view, turn.facts)] for turn in session.turns],
        "collected": meta(view, session),
    }


STYLES.register(
    "duconv",
    Style(
        "duconv",
        (Role("leader", frozenset({GOAL, KNOWLEDGE})), Role("follower", frozenset())),
        6,
        16,
        ("duconv", "sample"),
        duconv_view,
        {"duconv": Layout("duconv-session", "lines", duconv_session, duconv_segmenter), "kdconv": KDCONV},
        frozenset({"one_step", "two_step"}),
        segmented=True,
    ),
    description="DuConv: a leader with the goal and knowledge steers a follower who sees neither",
)
