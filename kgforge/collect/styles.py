"""Everything that differs between the datasets a collection imitates, behind one table (:data:`STYLES`).

A style says which two roles a session has and what each may see, how many turns a session takes, how each
goal's view is prepared (which ``kgforge export --goals`` format and layout gives its goal and knowledge in
the dataset's own spelling) and which layouts a finished session is exported in. Each style lives in its
dataset's room (``kgforge/datasets/<name>/collect.py``), registered in :data:`STYLES`; the rest of
:mod:`kgforge.collect` reads only that registry.

==========  ===================================  ========================================  ========  ==============
style       first role (speaks first, finishes)  second role                               turns     exports
==========  ===================================  ========================================  ========  ==============
duconv      leader: goal, knowledge              follower: nothing                         6 – 16    duconv, kdconv
kdconv      speaker1: goal, knowledge            speaker2: goal, knowledge                 8 – 30    kdconv
durecdial   recommender: goal sequence,          seeker: profile, situation                8 – 30    durecdial, kdconv
            knowledge, seeker's profile
==========  ===================================  ========================================  ========  ==============

The turn bounds are ours (the issue gives none): DuConv's dialogues have 9.1 utterances on average, KdConv's
19.0 and DuRecDial's 15.3; the minimum keeps a session a dialogue, the maximum keeps it from running on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgforge.collect.records import Collected, Fact, GoalView
from kgforge.core.datasets import room_parts
from kgforge.core.jsonio import JsonObject
from kgforge.core.registry import Registry, instances_of
from kgforge.core.text import normalise_label
from kgforge.goals.record import Goal

GOAL, KNOWLEDGE, PROFILE, SITUATION = "goal", "knowledge", "profile", "situation"


@dataclass(frozen=True)
class Role:
    name: str
    sees: frozenset[str]  # of GOAL, KNOWLEDGE, PROFILE, SITUATION


def _nothing(views: Sequence[GoalView]) -> None:
    return None


@dataclass(frozen=True)
class Layout:
    """A layout a collection exports: the reader kind (as ``shared/readers/run-readers`` names it), whether
    the file is JSON lines or one JSON array, the function that writes one finished session, and what that
    function needs made once per export (``tools``: DuConv's segmenter, with every goal's names)."""

    kind: str
    container: str  # lines | array
    record: Callable[[GoalView, Collected, Any], dict[str, Any]]
    tools: Callable[[Sequence[GoalView]], Any] = _nothing


@dataclass(frozen=True)
class Style:
    name: str
    roles: tuple[Role, Role]  # the first: the worker who waited longer; speaks first and ends the session
    min_turns: int
    max_turns: int
    goal_export: tuple[str, str]  # kgforge export --format, --layout giving each goal's view
    view: Callable[[Goal, Mapping[str, Any]], GoalView]
    exports: Mapping[str, Layout]  # collect export --format -> layout
    goal_kinds: frozenset[str]  # the kinds of goal (kgforge goals) a session of this style can be had on
    steps: bool = False  # turns carry the goal step they are in (DuRecDial's goal sequence)
    segmented: bool = False  # the goal export's labels are word-segmented (DuConv): shown to workers unsegmented

    def shown(self, text: str) -> str:
        """A label as a worker reads it (DuConv's word segmentation taken out; the export keeps it)."""
        return normalise_label(text) if self.segmented else text

    def role(self, name: str) -> Role:
        return next(role for role in self.roles if role.name == name)

    def speaker(self, turn: int) -> str:
        """The role whose turn ``turn`` (0-based) is: the first role opens, then they alternate."""
        return self.roles[turn % 2].name


def facts_of(triples: Iterable[Any]) -> tuple[Fact, ...]:
    """A goal's knowledge (``[head, relation, tail]`` lists) as facts with their session ids."""
    return tuple(Fact(f"f{i}", str(h), str(r), str(t)) for i, (h, r, t) in enumerate(triples))


def meta(view: GoalView, session: Collected) -> JsonObject:
    """What every exported session carries beside the dataset's own fields: who (pseudonymous worker ids),
    when (seconds from the session's start), the automatic checks and each turn's verdict."""
    return {
        "session": session.session,
        "goal_id": view.goal_id,
        "style": session.style,
        "workers": dict(session.workers),
        "speakers": [turn.role for turn in session.turns],
        "turn_workers": [turn.worker for turn in session.turns],
        "started": session.started,
        "finished": session.finished,
        "turn_seconds": [round(turn.time - session.started, 3) for turn in session.turns],
        "checks": session.checks.as_dict(),
        "verdicts": [turn.verdict.as_dict() for turn in session.turns],
    }


def clicked(view: GoalView, ids: Iterable[str]) -> list[Fact]:
    return [fact for fact in (view.fact(i) for i in ids) if fact is not None]


# each dataset's room registers its style (its collect part); a plug-in through kgforge.collection_styles
STYLES: Registry[Style] = Registry(
    "collection style",
    modules=lambda: room_parts("collect"),
    entry_point_group="kgforge.collection_styles",
    plugin=instances_of(Style, lambda name, style: f"collection in the {name} style"),
)
