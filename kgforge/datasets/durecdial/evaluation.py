"""DuRecDial in ``kgforge eval``: sessions in the LIC-2020 resource or competition layout, DuRecDial 2.0's, or
the ACL 2020 release's (``kg``, ``goals``); the bot turns are the responses (``label`` says who speaks first).
Goal metrics: the goal sequence's 『topics』, the last recommendation's first topic as the target (LS), and the
user profile's accepted and rejected topics (UTC, Rec)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kgforge.datasets.durecdial.layouts import NOT_A_DURECDIAL_SESSION, durecdial_session_kind
from kgforge.evaluation import inputs
from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, alternating, goal_triples
from kgforge.evaluation.inputs import Dialogue, EvalLayout, Slots, register_layout
from kgforge.evaluation.selection import (
    SelectionReading,
    Triple,
    fact_list,
    ground_session,
    register_selection,
    session_knowledge,
    triple,
)
from kgforge.sources.dialogue_layouts import utterance_knowledge

_QUOTED = re.compile(r"『\s*(.+?)\s*』")
_GOAL_MARKER = re.compile(r"^\s*\[\d+\]\s*")  # what opens the first turn of each goal: taken off


def is_durecdial(record: dict[str, Any]) -> bool:
    """A DuRecDial session: the ACL 2020 release's keys, or a session whose goal is a string or which says who
    speaks first (``label``) or the user's situation: what a DuConv session never has."""
    if "kg" in record and "goals" in record and "conversation" in record:
        return True
    in_session = "knowledge" in record and ("conversation" in record or "history" in record)
    return in_session and ("label" in record or "situation" in record or isinstance(record.get("goal"), str))


def read_durecdial(path: Path) -> Slots:
    """The bot turns of every session are its responses (as the baseline's ``convert_session_to_sample.py``
    makes samples), the ``[n]`` goal markers taken off; word-segmented unless the file is not (the ACL 2020
    release)."""
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    for line, record in inputs.json_objects(path):
        inputs.in_layout(path, line, durecdial_session_kind(record), record, NOT_A_DURECDIAL_SESSION)
        conversation = inputs.utterance_list(path, line, record.get("conversation"), "'conversation'")
        knowledge = inputs.checked_triples(path, line, _durecdial(record, "knowledge") or [], "knowledge")
        goal = _durecdial(record, "goal")
        goal_text = goal if isinstance(goal, str) else json.dumps(goal, ensure_ascii=False)
        topics = list(dict.fromkeys([*_QUOTED.findall(goal_text), *inputs.heads(knowledge)]))
        first = 0 if bot_first(record) else 1
        utterances = [_GOAL_MARKER.sub("", utterance) for utterance in conversation]
        for j in range(first, len(conversation), 2):
            rows.append(
                {
                    "id": f"{line}:{j}",
                    "line": line,
                    "text": utterances[j],
                    "gold": utterances[j],
                    "dialogue": len(dialogues),
                    "turn": j,
                }
            )
        dialogues.append(Dialogue(str(line), topics, knowledge, [], utterances))
    frame = inputs.response_frame(rows)
    return Slots(
        path, "durecdial", frame, dialogues, has_gold=True, unsegmented=not inputs.looks_segmented(frame, "text")
    )


def _durecdial(record: dict[str, Any], key: str) -> Any:
    """A DuRecDial session's ``knowledge`` or ``goal``, under the ACL 2020 release's names (``kg``, ``goals``)
    where the session has those."""
    return record.get(key, record.get({"knowledge": "kg", "goal": "goals"}[key]))


def bot_first(record: dict[str, Any]) -> bool:
    """Whether the bot speaks first: the session's ``label``, else when its first goal is 寒暄 (a greeting)."""
    if "label" in record:
        return bool(record["label"] == "bot")
    goal = _durecdial(record, "goal")
    first = goal[0] if isinstance(goal, list) and goal else goal if isinstance(goal, str) else ""
    return "寒暄" in (first if isinstance(first, str) else json.dumps(first, ensure_ascii=False))[:16]


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A session's goal topics (quoted in its goal sequence), what its recommendation goals recommend (the last
    one's first topic the target), and the topics its user profile accepts (``接受的…``, ``同意的…``) and
    rejects (``拒绝``, ``没有接受的…``)."""
    goal = record.get("goals", record.get("goal"))
    steps = goal.split("-->") if isinstance(goal, str) else []
    topics = tuple(dict.fromkeys(t for step in steps for t in _QUOTED.findall(step)))
    recommending = [step for step in steps if "推荐" in step.split("(")[0]]
    recommended = tuple(dict.fromkeys(t for step in recommending for t in _QUOTED.findall(step)[:1]))
    target = recommended[-1] if recommended else None
    given = record.get("user_profile")
    profile: dict[str, Any] = given if isinstance(given, dict) else {}

    def values(keep: Callable[[str], bool]) -> tuple[str, ...]:
        found = []
        for name, value in profile.items():
            if keep(name):
                found += [str(v).strip() for v in (value if isinstance(value, list) else [value]) if str(v).strip()]
        return tuple(found)

    rejected = values(lambda name: name == "拒绝" or name.startswith(("没有接受", "拒绝")))
    accepted = values(lambda name: name.startswith(("接受", "同意")))
    knowledge = goal_triples(record.get("knowledge", record.get("kg")))
    return GoalContext(key, "durecdial", knowledge, topics, target, recommended, rejected, accepted)


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The session's conversation, the bot's turns replaced by ``bot`` (who speaks first: ``label``, else the
    bot when the first goal is 寒暄)."""
    return alternating((str(t) for t in record.get("conversation") or []), bot, 0 if bot_first(record) else 1)


register_layout(
    "durecdial",
    EvalLayout(
        read_durecdial,
        is_durecdial,
        segmented=True,
        priority=20,
        description="DuRecDial sessions",
        goals=GoalReading(goal_context, goal_turns, "DuRecDial"),
    ),
)


# ---------------------------------------------------------------- knowledge selection (`kgforge eval --selected`)


def utterance_gold(
    path: Path, line: int, session: dict[str, Any]
) -> tuple[list[list[Triple]], list[Triple] | None] | None:
    """The triples each utterance states where the session's knowledge is per utterance (DuRecDial 2.0 dev and
    test), and the session's triples; None where its knowledge is the session's list."""
    per = utterance_knowledge(session)
    if per is None:
        return None
    return [[triple(path, line, t) for t in ts] for ts in per], session_knowledge(session)


def stated_turns(path: Path, line: int, session: dict[str, Any]) -> list[list[Triple]] | None:
    """A DuRecDial ``kgforge ground`` output's turns: its ``stated_knowledge``; None for any other session."""
    stated = session.get("stated_knowledge")
    if not isinstance(stated, list):
        return None
    return [[triple(path, line, t) for t in fact_list(path, line, s, "'stated_knowledge' entry")] for s in stated]


def grounded_turns(index: Any, session: dict[str, Any], knowledge: list[Triple]) -> list[list[Triple]]:
    """Each utterance's silver gold: the session triples DuRecDial's grounder finds it states."""
    return [
        [(t[0], t[1], t[2]) for t in stated]
        for stated in ground_session("durecdial", index, session)["stated_knowledge"]
    ]


def grounded_here(session: dict[str, Any]) -> bool:
    """A session DuRecDial's grounder grounds: a goal string, a situation or a label, or ``kg`` or ``goals``."""
    return any(key in session for key in ("label", "situation", "kg", "goals")) or isinstance(session.get("goal"), str)


register_selection(
    "durecdial",
    SelectionReading(
        utterance_gold,
        "durecdial per-utterance knowledge",
        stated_turns,
        "durecdial",
        "stated_knowledge",
        silver=grounded_turns,
        grounds=grounded_here,
        title="DuRecDial",
        order=1,
    ),
)
