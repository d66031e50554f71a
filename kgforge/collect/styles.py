"""Everything that differs between the datasets a collection imitates, behind one table (:data:`STYLES`).

A style says which two roles a session has and what each may see, how many turns a session takes, how each
goal's view is prepared (which ``kgforge export --goals`` format and layout gives its goal and knowledge in
the dataset's own spelling) and which layouts a finished session is exported in. The rest of
:mod:`kgforge.collect` reads only this table, so a style can move into a dataset's own package unchanged.

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
from kgforge.core.registry import Registry
from kgforge.core.text import Segmenter, normalise_label
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


def meta(view: GoalView, session: Collected) -> dict[str, Any]:
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


# ---------------------------------------------------------------- DuConv


def duconv_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """A DuConv test sample (``export --format duconv``): ``goal`` ``[["START", A, B], path…]`` and the
    segmented ``knowledge`` with both topics' 领域 type facts, as the leader sees and the export writes them."""
    lines = tuple(tuple(str(x) for x in line) for line in record["goal"])
    return GoalView(goal.goal_id, lines[0][1:], lines, facts_of(record["knowledge"]), record)


def duconv_segmenter(views: Sequence[GoalView]) -> Segmenter:
    """One segmenter for an export (making one copies jieba's dictionary), every goal's names in it."""
    names = {part for view in views for fact in view.knowledge for part in (fact.head, fact.tail)}
    return Segmenter(normalise_label(name) for name in names | {t for view in views for t in view.topics})


def duconv_session(view: GoalView, session: Collected, segment: Segmenter) -> dict[str, Any]:
    """A DuConv train/dev session (``duconv-session``): the goal and knowledge as prepared, the conversation
    word-segmented as DuConv writes it (the knowledge's names kept whole), and ``knowledge_per_turn``: the
    facts the worker clicked for each turn (``[]`` for none), the per-turn gold knowledge."""
    return {
        "goal": view.record["goal"],
        "knowledge": view.record["knowledge"],
        "conversation": [segment(turn.text) for turn in session.turns],
        "knowledge_per_turn": [[list(f.triple) for f in clicked(view, turn.facts)] for turn in session.turns],
        "collected": meta(view, session),
    }


# ---------------------------------------------------------------- KdConv


def kdconv_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """kgforge's generic record (``export --format jsonl``): KdConv states knowledge as plain labels
    (``name``, ``attrname``, ``attrvalue``), which that record holds; the goal is the topic path."""
    triples = [(t["s_label"], t["p_label"], t["o_label"]) for t in record["triples"]]
    lines = tuple(tuple(str(x) for x in line) for line in record["goal"])
    return GoalView(goal.goal_id, tuple(t["label"] for t in record["topics"]), lines, facts_of(triples), record)


def kdconv_dialogue(view: GoalView, session: Collected, _: Any = None) -> dict[str, Any]:
    """A KdConv dialogue (``kdconv``): ``name`` the first topic, one message a turn with the clicked facts as
    its gold ``attrs`` (left out on a message without any, as KdConv does). Labels lose DuConv's word
    segmentation, which KdConv's text does not have."""

    def message(turn: Any) -> dict[str, Any]:
        attrs = [
            {"name": normalise_label(f.head), "attrname": normalise_label(f.relation), "attrvalue": f.tail}
            for f in clicked(view, turn.facts)
        ]
        return {"message": turn.text, **({"attrs": attrs} if attrs else {})}

    return {
        "name": normalise_label(view.topics[0]) if view.topics else "",
        "messages": [message(turn) for turn in session.turns],
        "collected": meta(view, session),
    }


# ---------------------------------------------------------------- DuRecDial

NO_TOPIC = "NULL"  # what DuRecDial 2.0's goal_topic_list holds for a goal without a topic


def durecdial_view(goal: Goal, record: Mapping[str, Any]) -> GoalView:
    """A DuRecDial 2.0 record (``export --format durecdial --layout v2``): goal string, knowledge, profile and
    situation; the steps (goal type, topic) from the goal's own sequence."""
    steps = tuple(
        (str(step.get("type") or ""), str(step.get("topic_label") or "")) for step in goal.extra.get("sequence") or ()
    )
    lines = tuple((f"[{k}] {kind}", topic) if topic else (f"[{k}] {kind}",) for k, (kind, topic) in enumerate(steps, 1))
    topics = tuple(dict.fromkeys(topic for _, topic in steps if topic))
    profile = record.get("user_profile") if isinstance(record.get("user_profile"), dict) else None
    situation = record.get("situation") if isinstance(record.get("situation"), str) else None
    return GoalView(goal.goal_id, topics, lines, facts_of(record["knowledge"]), record, profile, situation, steps)


def durecdial_session(view: GoalView, session: Collected, _: Any = None) -> dict[str, Any]:
    """A DuRecDial 2.0 session (``durecdial2``) with per-utterance knowledge: one entry per utterance, the
    list of triples clicked for it (``[]`` for none); ``goal_type_list`` and ``goal_topic_list`` per
    utterance; the utterance that opens goal step k starts with ``[k]``, as DuRecDial's conversations do."""
    opened: set[int] = set()
    conversation, types, topics = [], [], []
    for turn in session.turns:
        step = turn.step or 1
        kind, topic = view.steps[step - 1] if 0 < step <= len(view.steps) else ("", "")
        conversation.append(turn.text if step in opened else f"[{step}] {turn.text}")
        opened.add(step)
        types.append(kind)
        topics.append(topic or NO_TOPIC)
    return {
        "goal": view.record["goal"],
        "knowledge": [[list(f.triple) for f in clicked(view, turn.facts)] for turn in session.turns],
        "user_profile": view.profile or {},
        "situation": view.situation or "",
        "conversation": conversation,
        "goal_type_list": types,
        "goal_topic_list": topics,
        "collected": meta(view, session),
    }


KDCONV = Layout("kdconv", "array", kdconv_dialogue)
STYLES: Registry[Style] = Registry("collection style")
STYLES.register(
    "duconv",
    Style(
        "duconv",
        (Role("leader", frozenset({GOAL, KNOWLEDGE})), Role("follower", frozenset())),
        6,
        16,
        ("duconv", "sample"),
        duconv_view,
        {"duconv": Layout("duconv-session", "lines", duconv_session, duconv_segmenter), "kdconv": KDCONV},
        frozenset({"one_step", "two_step"}),
        segmented=True,
    ),
    description="DuConv: a leader with the goal and knowledge steers a follower who sees neither",
)
STYLES.register(
    "kdconv",
    Style(
        "kdconv",
        (Role("speaker1", frozenset({GOAL, KNOWLEDGE})), Role("speaker2", frozenset({GOAL, KNOWLEDGE}))),
        8,
        30,
        ("jsonl", "generic"),
        kdconv_view,
        {"kdconv": KDCONV},
        frozenset({"path", "one_step", "two_step"}),
    ),
    description="KdConv: two speakers chat about a topic, both with its knowledge",
)
STYLES.register(
    "durecdial",
    Style(
        "durecdial",
        (
            Role("recommender", frozenset({GOAL, KNOWLEDGE, PROFILE})),
            Role("seeker", frozenset({PROFILE, SITUATION})),
        ),
        8,
        30,
        ("durecdial", "v2"),
        durecdial_view,
        {"durecdial": Layout("durecdial2", "lines", durecdial_session), "kdconv": KDCONV},
        frozenset({"sequence"}),
        steps=True,
    ),
    description="DuRecDial: a recommender with the goal sequence, knowledge and profile; a seeker with a profile "
    "and situation",
)
