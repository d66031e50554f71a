"""What a release needs to know of each dataset layout, in one registry (:data:`LAYOUTS`): the grounder that
reads it (``kgforge ground --format``), its config and file names in the release, the seeds' reader that trains on
it (``run-readers KIND``), and how a grounded record becomes rows of the turn table.

Each dataset's room registers its layouts (its ``release`` part, :mod:`kgforge.core.datasets`); nothing about a
dataset is anywhere in :mod:`kgforge.release`.

A grounded record is what :func:`kgforge.grounding.ground_file` writes for the layout: KdConv messages with
``attrs`` (or ``predicted_attrs`` beside gold ``attrs``) and ``claims``; DuConv sessions with a ``grounding``
entry per utterance (the indices of the session's ``knowledge`` it states, and its claims); DuRecDial sessions
with ``stated_knowledge`` and ``claims`` per utterance (and gold per-utterance ``knowledge`` where the file has
it). A turn's ``facts`` are the gold annotation where the dialogue has one (``facts_from = "gold"``), else what
the grounder found (``"grounder"``).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple

from kgforge.core.datasets import room_parts
from kgforge.core.registry import Registry
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DEFAULT_OPTIONS
from kgforge.grounding.registry import GROUNDERS

Triple = tuple[str, str, str]


class Turn(NamedTuple):  # a tuple: made for every utterance, and sent back from the grounding processes
    """One utterance as the turn table has it, before its facts are resolved in the graph."""

    speaker: str
    text: str
    facts: tuple[Triple, ...]  # head, relation, tail: as the dialogue (or the grounder) writes them
    facts_from: str  # gold | grounder
    claims: tuple[dict[str, Any], ...]  # the grounder's claims: name, attrname, said, status


@dataclass(frozen=True)
class ReleaseLayout:
    kind: str  # the layout's kind as kgforge reads it (kgforge.exports.registry)
    config: str  # the release's folder and Hugging Face config of the layout's files
    grounder: str  # kgforge ground --format: the grounder below is that command's
    suffix: str  # the split files' extension: .json for one JSON array, .jsonl for lines
    readers: str | None  # the seeds' readers of the layout (run-readers KIND), None: none known
    turns: Callable[[dict[str, Any]], list[Turn]]  # a grounded record's utterances
    goal: Callable[[dict[str, Any]], str | None]  # the record's goal as JSON text, None: the layout has none
    task: str  # what the seeds train on it, for the card

    def ground(self, index: GroundingIndex, records: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]]:
        """``records`` grounded as ``kgforge ground --format`` grounds them, and the declared topics the graph
        does not name (KdConv's grounder counts them)."""
        grounder = GROUNDERS.get(self.grounder)
        result = grounder.ground(index, records, DEFAULT_OPTIONS)
        return getattr(result, grounder.records), list(grounder.counts(result).topics_not_in_graph)


def alternating(first: str, second: str, count: int, first_speaks: bool = True) -> list[str]:
    order = (first, second) if first_speaks else (second, first)
    return [order[i % 2] for i in range(count)]


def triples(items: Any) -> tuple[Triple, ...]:
    return tuple((str(t[0]), str(t[1]), str(t[2])) for t in items or () if isinstance(t, list | tuple) and len(t) == 3)


def attr_triples(attrs: Any) -> tuple[Triple, ...]:
    return tuple(
        (str(a.get("name", "")), str(a.get("attrname", "")), str(a.get("attrvalue", "")))
        for a in attrs or ()
        if isinstance(a, dict)
    )


def goal_field(record: dict[str, Any]) -> str | None:
    goal = record.get("goal")
    return None if goal is None else json.dumps(goal, ensure_ascii=False)


def no_goal(record: dict[str, Any]) -> str | None:
    return None


# each dataset's room registers its layouts, by kind (its release part)
LAYOUTS: Registry[ReleaseLayout] = Registry("release layout", modules=lambda: room_parts("release"))


def register_layout(layout: ReleaseLayout) -> ReleaseLayout:
    """Make ``layout`` a layout ``kgforge release`` takes (under its kind)."""
    LAYOUTS.register(layout.kind, layout, description=layout.task)
    return layout
