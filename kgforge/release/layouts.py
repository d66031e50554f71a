"""What a release needs to know of each dataset layout, in one table (:data:`LAYOUTS`): the grounder that reads
it (``kgforge ground --format``), its config and file names in the release, the seeds' reader that trains on it
(``run-readers KIND``), and how a grounded record becomes rows of the turn table.

One entry per layout, nothing about a dataset anywhere else in :mod:`kgforge.release`, so that each entry can
move into its dataset's own folder later.

A grounded record is what :func:`kgforge.grounding.ground_file` writes for the layout: KdConv messages with
``attrs`` (or ``predicted_attrs`` beside gold ``attrs``) and ``claims``; DuConv sessions with a ``grounding``
entry per utterance (the indices of the session's ``knowledge`` it states, and its claims); DuRecDial sessions
with ``stated_knowledge`` and ``claims`` per utterance (and gold per-utterance ``knowledge`` where the file has
it). A turn's ``facts`` are the gold annotation where the dialogue has one (``facts_from = "gold"``), else what
the grounder found (``"grounder"``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, NamedTuple, TypedDict

from kgforge.grounding.duconv import ground_duconv
from kgforge.grounding.durecdial import ground_durecdial
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kdconv import ground_kdconv
from kgforge.grounding.matching import DEFAULT_OPTIONS
from kgforge.sources.durecdial import utterance_knowledge

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
        ground, field = GROUNDERS[self.grounder]
        result = ground(index, records, DEFAULT_OPTIONS)
        return getattr(result, field), list(getattr(result, "topics_not_in_graph", ()))


def _alternating(first: str, second: str, count: int, first_speaks: bool = True) -> list[str]:
    order = (first, second) if first_speaks else (second, first)
    return [order[i % 2] for i in range(count)]


def _triples(items: Any) -> tuple[Triple, ...]:
    return tuple((str(t[0]), str(t[1]), str(t[2])) for t in items or () if isinstance(t, list | tuple) and len(t) == 3)


def _attr_triples(attrs: Any) -> tuple[Triple, ...]:
    return tuple(
        (str(a.get("name", "")), str(a.get("attrname", "")), str(a.get("attrvalue", "")))
        for a in attrs or ()
        if isinstance(a, dict)
    )


def _kdconv_turns(record: dict[str, Any]) -> list[Turn]:
    messages = record["messages"]
    gold = any("predicted_attrs" in m for m in messages)  # the grounder keeps gold attrs, predicts beside them
    speakers = _alternating("A", "B", len(messages))
    return [
        Turn(
            speaker,
            m["message"],
            _attr_triples(m.get("attrs")),
            "gold" if gold else "grounder",
            tuple(m.get("claims") or ()),
        )
        for speaker, m in zip(speakers, messages)
    ]


def _duconv_turns(record: dict[str, Any]) -> list[Turn]:
    """DuConv's leader (the bot, who is given the goal) speaks first: the baselines' samples are its turns."""
    knowledge = record.get("knowledge") or []
    rows = record.get("grounding") or []
    texts = record["conversation"]
    speakers = _alternating("bot", "user", len(texts))
    turns = []
    for i, (speaker, text) in enumerate(zip(speakers, texts)):
        row = rows[i] if i < len(rows) else {}
        stated = _triples(knowledge[k] for k in row.get("knowledge", ()) if 0 <= k < len(knowledge))
        turns.append(Turn(speaker, str(text), stated, "grounder", tuple(row.get("claims") or ())))
    return turns


_FIRST = re.compile(r"(User|Bot)\s*主动", re.IGNORECASE)


def _durecdial_turns(record: dict[str, Any]) -> list[Turn]:
    """Who speaks first: the resource layouts' ``label``; the competition layouts' first goal (``User 主动``)."""
    texts = record["conversation"]
    goal = record.get("goal")
    first = record.get("label")
    if first is None and isinstance(goal, str) and (found := _FIRST.search(goal.replace(" ", ""))):
        first = found.group(1).lower()
    speakers = _alternating("bot", "user", len(texts), first != "user") if first else _alternating("A", "B", len(texts))
    # the grounder predicts beside gold per-utterance knowledge (predicted_knowledge); without gold it writes its
    # prediction as the record's knowledge: gold only where it kept the dataset's own
    gold = utterance_knowledge(record) if "predicted_knowledge" in record else None
    stated = record.get("stated_knowledge") or []
    claims = record.get("claims") or []
    turns = []
    for i, (speaker, text) in enumerate(zip(speakers, texts)):
        if gold is not None:
            entry: list[Any] = gold[i] if i < len(gold) else []  # one triple, or a list of them
            facts = _triples(entry if entry and isinstance(entry[0], list) else [entry] if entry else [])
        else:
            facts = _triples(stated[i] if i < len(stated) else [])
        said = claims[i] if i < len(claims) and isinstance(claims[i], list) else []
        turns.append(Turn(speaker, str(text), facts, "gold" if gold is not None else "grounder", tuple(said)))
    return turns


def _goal_field(record: dict[str, Any]) -> str | None:
    goal = record.get("goal")
    return None if goal is None else json.dumps(goal, ensure_ascii=False)


def _no_goal(record: dict[str, Any]) -> str | None:
    return None


# kgforge ground --format -> the grounder and the field of its result holding the grounded records
GROUNDERS: dict[str, tuple[Callable[..., Any], str]] = {
    "kdconv": (ground_kdconv, "dialogues"),
    "duconv": (ground_duconv, "sessions"),
    "durecdial": (ground_durecdial, "sessions"),
}


class _Common(TypedDict):
    """ReleaseLayout's fields that DuRecDial's layouts share."""

    config: str
    grounder: str
    suffix: str
    turns: Callable[[dict[str, Any]], list[Turn]]


_DURECDIAL: _Common = {"config": "durecdial", "grounder": "durecdial", "suffix": ".jsonl", "turns": _durecdial_turns}
_DURECDIAL_TASK = "goal-driven conversational recommendation (DuRecDial)"
LAYOUTS: dict[str, ReleaseLayout] = {
    layout.kind: layout
    for layout in (
        ReleaseLayout(
            "kdconv",
            "kdconv",
            "kdconv",
            ".json",
            "kdconv",
            _kdconv_turns,
            _no_goal,
            "knowledge-grounded dialogue (KdConv)",
        ),
        ReleaseLayout(
            "duconv-session",
            "duconv",
            "duconv",
            ".jsonl",
            "duconv-session",
            _duconv_turns,
            _goal_field,
            "proactive goal-driven dialogue (DuConv)",
        ),
        ReleaseLayout(
            "durecdial-resource", readers="durecdial-resource", goal=_goal_field, task=_DURECDIAL_TASK, **_DURECDIAL
        ),
        ReleaseLayout(
            "durecdial-lic2020", readers="durecdial-lic2020", goal=_goal_field, task=_DURECDIAL_TASK, **_DURECDIAL
        ),
        ReleaseLayout("durecdial2", readers=None, goal=_goal_field, task=_DURECDIAL_TASK, **_DURECDIAL),
    )
}
