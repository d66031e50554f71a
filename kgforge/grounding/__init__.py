"""Which fact each utterance states: per-message knowledge annotation and claims checked against the graph.

``normalise`` (matching forms, value keys) <- ``facts`` (a fact, an entity's facts arranged for trying) <-
``index`` (names automaton, facts of each entity) <- ``choice`` (the learned choice's stages) <- ``model_file``
(a trained choice as a file, the shipped one) <- ``matching`` (focus, candidates, facts stated, claims) <-
``scoring`` (predicted facts against gold ones) <- ``messages`` (a dialogue's messages in the attrs shape) and
``sessions`` (a session against its own knowledge) <- ``registry`` (the grounders, each dataset's room registers
its own) <- ``run`` (``kgforge ground``) <- ``corruption`` (corrupted copies of annotated dialogues) <-
``learning`` (``kgforge ground train``).
"""

import importlib.machinery
import sys
from pathlib import Path

from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DialogueMatcher, MatchOptions
from kgforge.grounding.messages import MessagesGrounding, ground_messages
from kgforge.grounding.run import GroundOptions, GroundReport, ground_file
from kgforge.grounding.scoring import GroundScore, GroundScores, Tally

__all__ = [
    "DialogueMatcher",
    "GroundOptions",
    "GroundReport",
    "GroundScore",
    "GroundScores",
    "GroundingIndex",
    "MatchOptions",
    "MessagesGrounding",
    "Tally",
    "compiled_modules",
    "ground_file",
    "ground_messages",
    "not_compiled_reason",
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


def not_compiled_reason() -> str | None:
    """Why this install runs grounding's modules as pure Python although it is a regular install: the
    wheel was built where mypyc or the C compiler failed (``hatch_build.py`` falls back and records why).
    None in a compiled install, an editable one, or one built with ``KGFORGE_PURE_PYTHON=1``."""
    note = Path(__file__).with_name("_not_compiled.txt")
    try:
        return note.read_text(encoding="utf-8").strip() or None
    except OSError:
        return None
