"""DuRecDial's grounder: each utterance's facts among the session's knowledge and the graph, scored against
the per-utterance knowledge where the file carries it (DuRecDial 2.0 dev and test)."""

from __future__ import annotations

from kgforge.grounding.durecdial import DurecdialGrounding, ground_durecdial, read_sessions
from kgforge.grounding.registry import GroundCounts, Grounder, register


def _counts(result: DurecdialGrounding) -> GroundCounts:
    return GroundCounts(
        result.utterances,
        result.triples_stated,
        result.gold_utterances,
        result.tally,
        result.claims,
        grounded_utterances=result.grounded_utterances,
    )


register(
    "durecdial",
    Grounder(
        read_sessions,
        ground_durecdial,
        "sessions",
        array=False,
        counts=_counts,
        description="DuRecDial sessions (JSON lines): each utterance's facts, scored against its own knowledge",
    ),
)
