"""DuConv's grounder: each utterance's facts among the session's knowledge and the graph, the goal's topics
resolved to the graph's entities (those it lacks reported); sessions carry no per-utterance gold to score."""

from __future__ import annotations

from kgforge.grounding.duconv import DuconvGrounding, ground_duconv, read_sessions
from kgforge.grounding.registry import GroundCounts, Grounder, register


def _counts(result: DuconvGrounding) -> GroundCounts:
    return GroundCounts(
        result.utterances,
        result.triples_stated,
        0,
        None,
        result.claims,
        tuple(result.topics_not_in_graph),
        grounded_utterances=result.grounded_utterances,
    )


register(
    "duconv",
    Grounder(
        read_sessions,
        ground_duconv,
        "sessions",
        array=False,
        counts=_counts,
        description="DuConv sessions (JSON lines): each utterance's facts, the goal's topics in the graph",
    ),
)
