"""DuConv in ``kgforge eval``: the official metric input (``duconv-eval``: ``prediction<TAB>gold`` per line, read
exactly as the official script reads it: a line with fewer than two fields after ``strip()`` is skipped by the
script, so here too, and reported with its line number); sessions (every bot turn a response, as the official
sample converter makes them) or samples (``history`` and ``response``); the gold knowledge is the goal path.
Word-segmented by definition. Goal metrics: the two topics of ``goal[0] = [START, a, b]`` are what a session
must reach (goal completion); the bot speaks first."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.datasets.duconv.layouts import DUCONV_SAMPLE, DUCONV_SESSION
from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, alternating, goal_triples
from kgforge.evaluation.inputs import (
    Dialogue,
    EvalLayout,
    Slots,
    checked_triples,
    heads,
    in_layout,
    json_objects,
    numbered_lines,
    register_layout,
    response_frame,
    utterance_list,
)
from kgforge.evaluation.selection import SelectionReading, Triple, ground_session, known_triples, register_selection


def is_duconv(record: dict[str, Any]) -> bool:
    """A DuConv session or sample: its knowledge beside a conversation or a history."""
    return "knowledge" in record and ("conversation" in record or "history" in record)


def read_official(path: Path) -> Slots:
    """The official eval input: ``line.strip().split("\\t")``, fields 0 and 1, as the official script reads it."""
    rows, skipped = [], []
    for lineno, line in numbered_lines(path):
        fields = line.strip().split("\t")
        if len(fields) < 2:
            skipped.append(f"line {lineno}: fewer than two tab-separated fields (the official script skips it)")
            continue
        rows.append({"id": str(lineno), "line": lineno, "text": fields[0], "gold": fields[1]})
    if not rows:
        raise InputError(f"{path}:1: no 'prediction<TAB>gold' line in the file")
    return Slots(path, "duconv-eval", response_frame(rows), [], has_gold=True, skipped=skipped)


def read_duconv(path: Path) -> Slots:
    """Sessions (every bot turn ``conversation[j]``, even ``j``, a response) or samples (``history`` and
    ``response``: one response each); the gold knowledge is the goal path after ``[START, a, b]``."""
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    for line, record in json_objects(path):
        in_layout(path, line, DUCONV_SESSION if "conversation" in record else DUCONV_SAMPLE, record, "")
        goal = record["goal"]
        knowledge = checked_triples(path, line, record.get("knowledge"), "knowledge")
        start, path_triples = (goal[0], goal[1:]) if goal[0][0] == "START" else ([], goal)
        dialogue = Dialogue(
            str(line),
            list(dict.fromkeys([*start[1:], *heads(knowledge)])),
            knowledge,
            [(a, b, c) for a, b, c in path_triples],
        )
        if "conversation" in record:
            dialogue.utterances = utterance_list(path, line, record["conversation"], "'conversation'")
            turns: list[tuple[str, str | None, int]] = [
                (f"{line}:{j}", dialogue.utterances[j], j) for j in range(0, len(dialogue.utterances), 2)
            ]
        else:
            dialogue.utterances = utterance_list(path, line, record.get("history"), "'history'")
            response = record.get("response")
            if response is not None and not isinstance(response, str):
                raise InputError(f"{path}:{line}: 'response' must be a string")
            turns = [(str(line), response, len(dialogue.utterances))]
        rows += [
            {"id": ident, "line": line, "text": text, "gold": text, "dialogue": len(dialogues), "turn": j}
            for ident, text, j in turns
        ]
        dialogues.append(dialogue)
    return Slots(path, "duconv", response_frame(rows), dialogues, has_gold=True)


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A session's knowledge, and its two goal topics (``goal[0] = [START, a, b]``) where it states them."""
    goal = record.get("goal") or []
    topics = tuple(goal[0][1:3]) if goal and goal[0] and goal[0][0] == "START" else ()
    return GoalContext(key, "duconv", goal_triples(record.get("knowledge")), topics, completion=True)


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The session's conversation, the bot's turns (even ones: it speaks first) replaced by ``bot``."""
    return alternating((str(t) for t in record.get("conversation") or []), bot, 0)


register_layout(
    "duconv-eval",
    EvalLayout(
        read_official,
        segmented=True,
        dialogues=False,
        tabbed=True,
        description="prediction<TAB>gold per line (DuConv's official metric input)",
    ),
)
register_layout(
    "duconv",
    EvalLayout(
        read_duconv,
        is_duconv,
        segmented=True,
        priority=10,
        description="DuConv sessions or samples",
        goals=GoalReading(
            goal_context,
            goal_turns,
            "DuConv",
            completion="DuConv sessions state two goal topics (goal[0] = START, a, b)",
        ),
    ),
)


# ---------------------------------------------------------------- knowledge selection (`kgforge eval --selected`)


def grounding_turns(path: Path, line: int, session: dict[str, Any]) -> tuple[list[list[Triple]], list[Triple]] | None:
    """A DuConv ``kgforge ground`` output's turns (the session triples its ``grounding`` entries index) and the
    session's triples; None for a session that is no such output."""
    if "grounding" not in session:
        return None
    given = session.get("knowledge", session.get("kg"))
    knowledge = known_triples(given) if isinstance(given, list) else None
    rows = session["grounding"]
    if not isinstance(rows, list) or len(rows) != len(session["conversation"]) or knowledge is None:
        raise InputError(f"{path}:{line}: 'grounding' must be one entry per utterance, beside a 'knowledge' list")
    turns = []
    for row in rows:
        indices = row.get("knowledge") if isinstance(row, dict) else None
        if not isinstance(indices, list) or not all(isinstance(i, int) and 0 <= i < len(knowledge) for i in indices):
            raise InputError(f"{path}:{line}: a 'grounding' entry's 'knowledge' must be indices into 'knowledge'")
        turns.append([knowledge[i] for i in indices])
    return turns, knowledge


def grounded_turns(index: Any, session: dict[str, Any], knowledge: list[Triple]) -> list[list[Triple]]:
    """Each utterance's silver gold: the session triples DuConv's grounder finds it states."""
    done = ground_session("duconv", index, session)
    return [[knowledge[i] for i in row["knowledge"]] for row in done["grounding"]]


register_selection(
    "duconv",
    SelectionReading(
        grounding_turns,
        "duconv grounding (a `kgforge ground` output)",
        lambda path, line, session: found[0] if (found := grounding_turns(path, line, session)) else None,
        "duconv",
        "grounding",
        silver=grounded_turns,
        title="DuConv",
    ),
)
