"""KdConv in ``kgforge eval``: a dialogue file (a JSON array) whose every message after the first is a response,
its gold knowledge the message's ``attrs``. Goal metrics: the dialogue's topic is its ``name``, its knowledge
every message's ``attrs``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_container
from kgforge.datasets.kdconv.layouts import KDCONV
from kgforge.evaluation.goal_reading import GoalContext, GoalReading, Turns, goal_triples
from kgforge.evaluation.inputs import (
    Dialogue,
    EvalLayout,
    Slots,
    checked_triples,
    heads,
    register_layout,
    response_frame,
)
from kgforge.evaluation.selection import SelectionReading, Triple, attr_triples, register_selection
from kgforge.sources.dialogue_layouts import checked_records


def read_kdconv(path: Path) -> Slots:
    """Every message after a dialogue's first is a response, its gold knowledge the message's ``attrs``."""
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    for line, value in checked_records(path, iter_json_container(path, list), KDCONV).records:
        per_message = [checked_triples(path, line, m.get("attrs") or [], "attrs") for m in value["messages"]]
        knowledge = list(dict.fromkeys(t for attrs in per_message for t in attrs))
        name = value.get("name")
        topics = list(dict.fromkeys(([name] if isinstance(name, str) else []) + heads(knowledge)))
        key = str(len(dialogues))
        for j, message in enumerate(value["messages"][1:], start=1):
            rows.append(
                {
                    "id": f"{key}:{j}",
                    "line": line,
                    "text": message["message"],
                    "gold": message["message"],
                    "dialogue": len(dialogues),
                    "gold_knowledge": [list(t) for t in per_message[j]],
                    "turn": j,
                }
            )
        dialogues.append(Dialogue(key, topics, knowledge, knowledge, [m["message"] for m in value["messages"]]))
    if not dialogues:
        raise InputError(f"{path}: no dialogue in the file")
    return Slots(path, "kdconv", response_frame(rows), dialogues, has_gold=True)


def goal_context(key: str, record: dict[str, Any]) -> GoalContext:
    """A dialogue's topic (its ``name``) and the knowledge its messages are annotated with, each triple once."""
    messages = record.get("messages", [])
    attrs = [t for m in messages if isinstance(m, dict) for t in goal_triples(m.get("attrs") or [])]
    name = record.get("name")
    return GoalContext(key, "kdconv", tuple(dict.fromkeys(attrs)), (str(name),) if name else ())


def goal_turns(record: dict[str, Any], bot: list[str]) -> Turns:
    """The first message (the user's), then ``bot`` in the place of every message after it."""
    messages = [str(m.get("message", "")) for m in record.get("messages", []) if isinstance(m, dict)]
    return [(False, messages[0])] + [(True, text) for text in bot] if messages else []


register_layout(
    "kdconv",
    EvalLayout(
        read_kdconv,
        array=True,
        description="KdConv dialogues: every message after the first, gold attrs",
        goals=GoalReading(goal_context, goal_turns, "KdConv"),
        records=lambda path: checked_records(path, iter_json_container(path, list), KDCONV).records,
    ),
)


# ---------------------------------------------------------------- knowledge selection (`kgforge eval --selected`)


def selection_dialogues(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, dialogue)`` of each dialogue of a KdConv file (a gold file or a ``kgforge ground`` output)."""
    for record in iter_json_container(path, list):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        value = record.value
        messages = value.get("messages") if isinstance(value, dict) else None
        if not isinstance(messages, list) or not all(isinstance(m, dict) for m in messages):
            raise InputError(f"{path}:{record.line}: not a KdConv dialogue (an object with a 'messages' list)")
        yield record.line, value


def gold_attrs(path: Path, line: int, dialogue: dict[str, Any]) -> tuple[list[list[Triple]], None]:
    """Each message's gold facts: its ``attrs``; a KdConv dialogue has no knowledge list of its own."""
    return [attr_triples(path, line, m.get("attrs"), "attrs") for m in dialogue["messages"]], None


def chosen_attrs(path: Path, line: int, dialogue: dict[str, Any]) -> list[list[Triple]]:
    """What a ``kgforge ground`` output says each message states: ``predicted_attrs`` where the input was
    annotated (its ``attrs`` the gold then), else ``attrs``."""
    return [
        attr_triples(path, line, m["predicted_attrs"] if "predicted_attrs" in m else m.get("attrs"), "predicted_attrs")
        for m in dialogue["messages"]
    ]


register_selection(
    "kdconv",
    SelectionReading(gold_attrs, "kdconv attrs", chosen_attrs, "kdconv", dialogues=selection_dialogues),
)
