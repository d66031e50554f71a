"""What a dialogue's goal is made of, and how a dialogue layout reads it: the part of ``kgforge eval
--goal-metrics`` a dataset's room gives (on its :class:`kgforge.evaluation.inputs.EvalLayout`, ``goals=``).

A layout that holds whole dialogues with goals says how one record of its file becomes a :class:`GoalContext`
(the topics a dialogue must reach, its knowledge, what it recommends and what the user's profile accepts or
rejects) and the dialogue's turns, each marked as the bot's or not, the bot's replaced by given texts in
order. :mod:`kgforge.evaluation.goal_metrics` judges every such layout the same way and names none of them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

Triple = tuple[str, str, str]


@dataclass(frozen=True)
class GoalContext:
    """What a dialogue's goal is made of, read from its record."""

    key: str
    layout: str
    knowledge: tuple[Triple, ...]
    goal_topics: tuple[str, ...] = ()  # the topics the dialogue's goal names (two, where ``completion`` is judged)
    target: str | None = None  # the final recommendation target
    recommended: tuple[str, ...] = ()  # topics of recommendation goals
    rejected: tuple[str, ...] = ()  # from the user profile
    accepted: tuple[str, ...] = ()
    completion: bool = False  # goal completion is judged: the dialogue must mention both of its two goal topics


Turns = list[tuple[bool, str]]  # a dialogue's turns: (is the bot's, text)


@dataclass(frozen=True)
class GoalReading:
    """How a layout's file gives goal metrics its dialogues. ``context(key, record)`` reads a record's goal;
    ``turns(record, bot)`` its turns, the bot's replaced by ``bot`` in order. ``title`` is what a refusal calls
    the layout's files (``a Title dialogue file``); ``completion``, for a layout whose dialogues name the two
    topics goal completion needs, says how its files state them (what a report says when a file has none).
    Records are the file's JSON lines, keyed by line, or its JSON array's items, keyed by place (a layout whose
    :class:`~kgforge.evaluation.inputs.EvalLayout` is ``array``)."""

    context: Callable[[str, dict[str, Any]], GoalContext]
    turns: Callable[[dict[str, Any], list[str]], Turns]
    title: str
    completion: str = ""


def goal_triples(value: Any) -> tuple[Triple, ...]:
    """Triples as lists, or as objects with ``name``, ``attrname`` and ``attrvalue``; anything else is left out
    (goal metrics read files :mod:`kgforge.evaluation.inputs` has checked already)."""
    if not isinstance(value, list):
        return ()
    rows = [[t.get("name"), t.get("attrname"), t.get("attrvalue")] if isinstance(t, dict) else t for t in value]
    return tuple((str(t[0]), str(t[1]), str(t[2])) for t in rows if isinstance(t, list) and len(t) >= 3)


def alternating(turns: Iterable[str], bot: list[str], first: int) -> Turns:
    """Turns that alternate between the two speakers, the bot's from turn ``first`` on (0 or 1), its texts
    replaced by ``bot`` in order."""
    replies = iter(bot)
    marked = []
    for j, text in enumerate(turns):
        is_bot = j % 2 == first % 2 and j >= first
        marked.append((is_bot, next(replies) if is_bot else text))
    return marked
