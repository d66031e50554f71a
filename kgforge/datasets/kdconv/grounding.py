"""KdConv's grounder: each message's facts found among the graph's candidates (the learned choice decides),
scored against the message's gold ``attrs``; the file is written back as the JSON array it came as."""

from __future__ import annotations

from kgforge.grounding.kdconv import KdconvGrounding, ground_kdconv, read_dialogues
from kgforge.grounding.registry import GroundCounts, Grounder, register


def _counts(result: KdconvGrounding) -> GroundCounts:
    return GroundCounts(
        result.messages,
        result.predicted,
        result.gold_messages,
        result.tally,
        result.claims,
        tuple(result.topics_not_in_graph),
    )


register(
    "kdconv",
    Grounder(
        read_dialogues,
        ground_kdconv,
        "dialogues",
        array=True,
        counts=_counts,
        uses_model=True,
        description="KdConv dialogues (a JSON array): each message's facts, scored against its attrs",
    ),
)
