"""KdConv in ``kgforge release``: a grounded dialogue's messages as turns, speakers A and B alternating; the facts
the gold ``attrs`` where the grounder kept them beside its prediction."""

from __future__ import annotations

from typing import Any

from kgforge.release.layouts import (
    ReleaseLayout,
    Turn,
    alternating,
    attr_triples,
    no_goal,
    register_layout,
)


def kdconv_turns(record: dict[str, Any]) -> list[Turn]:
    messages = record["messages"]
    gold = any("predicted_attrs" in m for m in messages)  # the grounder keeps gold attrs, predicts beside them
    speakers = alternating("A", "B", len(messages))
    return [
        Turn(
            speaker,
            m["message"],
            attr_triples(m.get("attrs")),
            "gold" if gold else "grounder",
            tuple(m.get("claims") or ()),
        )
        for speaker, m in zip(speakers, messages)
    ]


register_layout(
    ReleaseLayout(
        "kdconv", "kdconv", "kdconv", ".json", "kdconv", kdconv_turns, no_goal, "knowledge-grounded dialogue (KdConv)"
    )
)
