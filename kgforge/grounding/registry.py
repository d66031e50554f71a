"""The grounders ``kgforge ground --format`` chooses from, by dataset: how a dataset's dialogue file is read,
grounded against the graph, written and counted. Each dataset's room registers its own (its ``grounding`` part,
:mod:`kgforge.core.datasets`); a plug-in adds one through the entry-point group ``kgforge.grounders`` or its own
dataset room."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.registry import Registry, instances_of
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import MatchOptions
from kgforge.grounding.scoring import Tally
from kgforge.sources.dialogue_layouts import Checked


@dataclass(frozen=True)
class GroundCounts:
    """What a grounding found, as the report gives it: messages (utterances) read, facts they were found to
    state, messages whose gold was scored and the tally scoring them, claim statuses, the topics the graph lacks,
    and (session datasets) the utterances that state a fact of the session's knowledge."""

    messages: int
    stated: int
    gold: int
    tally: Tally | None
    claims: Counter[str]
    topics_not_in_graph: tuple[str, ...] = ()
    grounded_utterances: int | None = None


@dataclass(frozen=True)
class Grounder:
    """How one dataset's dialogues are read, grounded and written. ``ground`` returns a dataclass holding the
    grounded dialogues in its field ``records`` beside counts that :func:`kgforge.grounding.run.combined` adds up
    part by part; ``counts`` reads the report's figures off it. ``array``: the file is one JSON array (else JSON
    lines); ``uses_model``: the learned choice (``--model``) decides among its candidates."""

    read: Callable[[Path, bool], Checked]
    ground: Callable[[GroundingIndex, list[dict[str, Any]], MatchOptions], Any]
    records: str
    array: bool
    counts: Callable[[Any], GroundCounts]
    uses_model: bool = False
    description: str = ""


GROUNDERS: Registry[Grounder] = Registry(
    "ground format",
    modules=lambda: room_parts("grounding"),
    entry_point_group="kgforge.grounders",
    plugin=instances_of(Grounder),
)


def register(name: str, grounder: Grounder) -> Grounder:
    """Make ``grounder`` the way ``kgforge ground --format NAME`` reads and grounds a file."""
    GROUNDERS.register(name, grounder, description=grounder.description)
    return grounder
