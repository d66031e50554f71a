"""Which fact each utterance states: per-message knowledge annotation and claims checked against the graph.

``normalise`` (matching forms, value keys) <- ``index`` (names automaton, facts) <- ``matching`` (focus,
facts stated, claims) <- ``kdconv`` (KdConv files, scores against gold attrs) <- ``run`` (``kgforge ground``).
"""

from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DialogueMatcher, MatchOptions
from kgforge.grounding.run import GroundOptions, GroundReport, GroundScore, ground_file

__all__ = [
    "DialogueMatcher",
    "GroundOptions",
    "GroundReport",
    "GroundScore",
    "GroundingIndex",
    "MatchOptions",
    "ground_file",
]
