"""Which fact each utterance states: per-message knowledge annotation and claims checked against the graph.

``normalise`` (matching forms, value keys) <- ``facts`` (a fact, an entity's facts arranged for trying) <-
``index`` (names automaton, facts of each entity) <- ``choice`` (the learned choice's stages) <- ``model_file``
(a trained choice as a file, the shipped one) <- ``matching`` (focus, candidates, facts stated, claims) <-
``kdconv`` (KdConv files, scores against gold attrs) <- ``run`` (``kgforge ground``) <- ``corruption``
(corrupted copies of annotated dialogues) <- ``learning`` (``kgforge ground train``).
"""

import importlib.machinery
import sys

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
    "compiled_modules",
    "ground_file",
]


def compiled_modules() -> tuple[str, ...]:
    """The grounding modules this kgforge runs compiled: those ``hatch_build.py`` compiles with mypyc in a
    regular install; none in an editable install, which runs them as written (the same results, slower)."""
    suffixes = tuple(importlib.machinery.EXTENSION_SUFFIXES)
    return tuple(
        name
        for name, module in sorted(sys.modules.items())
        if name.startswith("kgforge.grounding.") and str(getattr(module, "__file__", "")).endswith(suffixes)
    )
