"""KdConv in ``kgforge collect``: two speakers chat about a topic, both with its knowledge; every style may
also export its sessions as KdConv dialogues (:data:`KDCONV`)."""

from __future__ import annotations

from collections.abc import Mapping
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
from kgforge.core.text import normalise_label
from kgforge.goals.record import Goal


def kdconv_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """kgforge's generic record (``export --format jsonl``): KdConv states knowledge as plain labels
    (``name``, ``attrname``, ``attrvalue``), which that record holds; the goal is the topic path."""
    triples = [(t["s_label"], t["p_label"], t["o_label"]) for t in record["triples"]]
    lines = tuple(tuple(str(x) for x in line) for line in record["goal"])
    return GoalView(goal.goal_id, tuple(t["label"] for t in record["topics"]), lines, facts_of(triples), record)


def kdconv_dialogue(view: GoalView, session: Collected, _: Any = None) -> JsonObject:
    """A KdConv dialogue (``kdconv``): ``name`` the first topic, one message a turn with the clicked facts as
    its gold ``attrs`` (left out on a message without any, as KdConv does). Labels lose DuConv's word
    segmentation, which KdConv's text does not have."""

    def message(turn: Any) -> dict[str, Any]:
        attrs = [
            {"name": normalise_label(f.head), "attrname": normalise_label(f.relation), "attrvalue": f.tail}
            for f in clicked(view, turn.facts)
        ]
        return {"message": turn.text, **({"attrs": attrs} if attrs else {})}

    return {
        "name": normalise_label(view.topics[0]) if view.topics else "",
        "messages": [message(turn) for turn in session.turns],
        "collected": meta(view, session),
    }


KDCONV = Layout("kdconv", "array", kdconv_dialogue)
STYLES.register(
    "kdconv",
    Style(
        "kdconv",
        (Role("speaker1", frozenset({GOAL, KNOWLEDGE})), Role("speaker2", frozenset({GOAL, KNOWLEDGE}))),
        8,
        30,
        ("jsonl", "generic"),
        kdconv_view,
        {"kdconv": KDCONV},
        frozenset({"path", "one_step", "two_step"}),
    ),
    description="KdConv: two speakers chat about a topic, both with its knowledge",
)
