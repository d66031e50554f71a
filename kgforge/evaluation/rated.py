"""What a rater sees of one unit: the text rated, its context and the knowledge behind it, in plain lines.

A **turn** is one response, paired with its dialogue exactly as ``kgforge eval`` pairs it
(:func:`kgforge.evaluation.inputs.load_responses`: the system's own file, ``--gold`` or ``--dialogues``); its
context is the file's own ``context``/``history`` column where a table has one, else the dialogue's utterances
before it (``A:``/``B:`` in turn from the dialogue's first), and its knowledge the dialogue's goal path and
knowledge triples, one ``head — relation — tail`` a line.

A **dialogue** is a whole conversation: a DuConv or DuRecDial session (``conversation``), a KdConv dialogue
(``messages``), or a conversation of ``kgforge qa generate``'s output (its question turns grouped by
``conversation_id``, each question with its answers; or a line of its ``--convquestions`` file). Its context is
the goal rendered as lines (DuConv's ``[START, a, b]`` and goal triples, DuRecDial's ``[1]…-->[2]…`` one goal a
line), the situation and the user profile; its knowledge the session's triples (KdConv: the messages' attrs; a
qa conversation: the facts asked, with their answers).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.limits import utterances_problem
from kgforge.evaluation.inputs import EVAL_LAYOUTS, Dialogue, detect_layout, json_objects, load_responses, table_records
from kgforge.sources.dialogue_layouts import dataset_kind, layout_problem

CONTEXT_COLUMNS = ("context", "history")
SPEAKERS = "AB"
GOAL_MARKER = re.compile(r"^\s*\[\d+\]\s*")  # DuRecDial's [n] that opens the first turn of each goal


@dataclass(frozen=True)
class Unit:
    """One thing a system produced for one input: a response (``turn``) or a conversation (``dialogue``), with
    what the rater reads beside it."""

    key: str
    text: str
    context: str = ""
    knowledge: str = ""


def system_units(
    path: Path,
    unit: str,
    gold: Path | None = None,
    dialogues: Path | None = None,
    layout: str = "auto",
    columns: dict[str, str] | None = None,
) -> list[Unit]:
    """The units of a system's file (see the module docstring); ``gold`` and ``dialogues`` as ``kgforge eval``
    takes them."""
    if unit == "dialogue":
        return conversations(Path(path))
    responses = load_responses(Path(path), gold, dialogues, layout, columns or {})
    own = _own_contexts(Path(path), responses.frame.height)
    units = []
    rows = responses.frame.select("id", "prediction", "dialogue", "turn").iter_rows()
    for i, (ident, text, place, turn) in enumerate(rows):
        dialogue = responses.dialogues[place] if place is not None else None
        history = dialogue.utterances[:turn] if dialogue is not None and turn is not None else []
        units.append(Unit(str(ident), text, own[i] or lines_of(history), knowledge_text(dialogue)))
    return units


def lines_of(utterances: Sequence[str]) -> str:
    """Utterances one a line, the speakers ``A:`` and ``B:`` in turn from the first."""
    return "\n".join(f"{SPEAKERS[j % 2]}: {utterance}" for j, utterance in enumerate(utterances))


def triple_lines(triples: Iterable[Sequence[str]]) -> str:
    """Knowledge triples one a line, ``head — relation — tail``, each once."""
    return "\n".join(" — ".join(t) for t in dict.fromkeys(tuple(str(x) for x in t) for t in triples))


def knowledge_text(dialogue: Dialogue | None) -> str:
    """A dialogue's goal path (DuConv) then its knowledge triples, as lines; empty without a dialogue."""
    return "" if dialogue is None else triple_lines([*dialogue.gold, *dialogue.knowledge])


def _own_contexts(path: Path, size: int) -> list[str]:
    """A table's own ``context``/``history`` column per response (a list: one utterance a line), else empty."""
    if path.suffix.lower() not in (".jsonl", ".csv", ".tsv", ".xlsx"):
        return [""] * size
    try:
        records = [record for _, record in table_records(path)]
    except InputError:
        return [""] * size
    if len(records) != size:
        return [""] * size
    found = []
    for record in records:
        value = next((record[c] for c in CONTEXT_COLUMNS if c in record), "")
        found.append("\n".join(map(str, value)) if isinstance(value, list) else str(value or ""))
    return found


# ---------------------------------------------------------------- whole conversations


def conversations(path: Path) -> list[Unit]:
    """The conversations of a dialogue file or of a ``kgforge qa generate`` output, in file order."""
    records = list(_dialogue_records(path))
    if records and _is_qa_turn(records[0][1]):
        return _qa_conversations(path, records)
    units = []
    for line, record in records:
        if isinstance(record, dict) and isinstance(record.get("questions"), list):  # qa generate --convquestions
            lines = _question_lines(record.get("questions"), record.get("answer_texts"))
            units.append(Unit(str(line), lines, str(record.get("seed_entity_text", record.get("seed_entity", "")))))
            continue
        if isinstance(record, dict) and isinstance(record.get("conversation"), list):
            turns = [GOAL_MARKER.sub("", str(t)) for t in record["conversation"]]
        elif isinstance(record, dict) and isinstance(record.get("messages"), list):
            turns = [str(m.get("message", "")) for m in record["messages"] if isinstance(m, dict)]
        else:
            raise InputError(
                f"{path}:{line}: a dialogue rubric rates whole conversations: each record needs a "
                "'conversation' list (DuConv, DuRecDial), 'messages' (KdConv), or is a turn of "
                "`kgforge qa generate` (conversation_id, question) or a line of its --convquestions file"
            )
        key = str(record.get("dialogue_id", record.get("id", line)))
        units.append(Unit(key, lines_of(turns), goal_text(record), triple_lines(_record_triples(record))))
    if not units:
        raise InputError(f"{path}: no conversation in the file")
    return units


def _dialogue_records(path: Path) -> Iterable[tuple[int, Any]]:
    """The dialogues of a system's file: those its layout reads as records (a JSON array of dialogues), or JSON
    lines, each a dataset's record (checked against its layout, as every reader of dialogue files checks it) or
    any other object (qa's outputs)."""
    records = EVAL_LAYOUTS.get(detect_layout(path)).records
    if records is not None:
        yield from records(path)
        return
    for line, record in json_objects(path):
        kind = dataset_kind(record)
        problem = layout_problem(kind, record) if kind else None
        if problem:
            raise InputError(f"{path}:{line}: not a {kind} dialogue: {problem}")
        turns = record.get("conversation", record.get("messages")) if isinstance(record, dict) else None
        if isinstance(turns, list) and (count := utterances_problem(len(turns))):
            raise InputError(f"{path}:{line}: {count}")
        yield line, record


def goal_text(record: dict[str, Any]) -> str:
    """A session's goal, situation and user profile as lines a rater reads (KdConv: its topic)."""
    parts = []
    goal = record.get("goal", record.get("goals"))
    if isinstance(goal, str) and goal.strip():
        parts.append("goal:\n" + "\n".join(f"  {step.strip()}" for step in goal.split("-->") if step.strip()))
    elif isinstance(goal, list) and goal:  # DuConv's goal, or the LIC-2020 resource files' goal of every turn
        steps = [_goal_step(step) for step in goal]
        merged = [step for i, step in enumerate(steps) if step and (i == 0 or step != steps[i - 1])]
        parts.append("goal:\n" + "\n".join(f"  {step}" for step in merged))
    if isinstance(record.get("name"), str):  # KdConv: the dialogue's topic; LIC-2020 resource files: the user
        parts.append(f"{'topic' if 'messages' in record else 'user'}: {record['name']}")
    if isinstance(record.get("situation"), str) and record["situation"].strip():
        parts.append(f"situation: {record['situation'].strip()}")
    profile = record.get("user_profile")
    if isinstance(profile, dict) and profile:
        parts.append("user profile:\n" + "\n".join(f"  {k}: {_plain(v)}" for k, v in profile.items()))
    return "\n".join(parts)


def _goal_step(step: Any) -> str:
    """One goal: DuConv's ``[START, a, b]`` as ``START → a → b``, a triple as ``a — relation — b``, a goal
    type with its topics (``[" 电影 推荐 ", "", ""]``) as its words."""
    if isinstance(step, list) and len(step) == 3 and all(isinstance(x, str) for x in step):
        parts = [x.strip() for x in step]
        if not all(parts):
            return " ".join(dict.fromkeys(x for x in parts if x))
        return " → ".join(parts) if parts[0] == "START" else " — ".join(parts)
    return _plain(step)


def _plain(value: Any) -> str:
    if isinstance(value, list):
        return "、".join(_plain(v) for v in value)
    return str(value).strip() if not isinstance(value, dict) else json.dumps(value, ensure_ascii=False)


def _record_triples(record: dict[str, Any]) -> list[tuple[str, ...]]:
    """A session's knowledge triples (``knowledge``, the ACL 2020 ``kg``; per-utterance lists flattened), or a
    KdConv dialogue's messages' attrs."""
    found: list[tuple[str, ...]] = []

    def take(item: Any) -> None:
        if isinstance(item, dict) and {"name", "attrname", "attrvalue"} <= set(item):
            found.append((str(item["name"]), str(item["attrname"]), str(item["attrvalue"])))
        elif isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item):
            found.append(tuple(item))
        elif isinstance(item, list):
            for inner in item:
                take(inner)

    take(record.get("knowledge", record.get("kg")) or [])
    for message in record.get("messages") or []:
        if isinstance(message, dict):
            take(message.get("attrs") or [])
    return found


# ---------------------------------------------------------------- kgforge qa generate


def _is_qa_turn(record: Any) -> bool:
    return isinstance(record, dict) and "conversation_id" in record and "question" in record


def _qa_conversations(path: Path, records: list[tuple[int, Any]]) -> list[Unit]:
    """``qa generate --out``: question turns grouped by ``conversation_id`` (in order of the turns)."""
    grouped: dict[str, list[dict[str, Any]]] = {}
    for line, record in records:
        if not _is_qa_turn(record):
            raise InputError(f"{path}:{line}: not a turn of `kgforge qa generate` (needs conversation_id, question)")
        grouped.setdefault(str(record["conversation_id"]), []).append(record)
    units = []
    for key, turns in grouped.items():
        turns.sort(key=lambda t: t.get("turn", 0))
        fact = turns[0].get("fact") or {}
        context = f"{fact.get('subject_label', '')} ({fact.get('type', '')}), {turns[0].get('config', '')}"
        facts = [
            (
                str((t.get("fact") or {}).get("subject_label", "")),
                "、".join((t.get("fact") or {}).get("predicate_labels") or []),
                "; ".join(t.get("answer_texts") or []),
            )
            for t in turns
        ]
        text = _question_lines([t["question"] for t in turns], ["; ".join(t.get("answer_texts") or []) for t in turns])
        units.append(Unit(key, text, context, triple_lines(facts)))
    return units


def _question_lines(questions: Any, answers: Any) -> str:
    """``Q1: …`` / ``A1: …`` for each question and its answer."""
    answers = answers if isinstance(answers, list) else []
    lines = []
    for i, question in enumerate(questions if isinstance(questions, list) else [], start=1):
        lines.append(f"Q{i}: {question}")
        if i <= len(answers):
            lines.append(f"A{i}: {answers[i - 1]}")
    return "\n".join(lines)
