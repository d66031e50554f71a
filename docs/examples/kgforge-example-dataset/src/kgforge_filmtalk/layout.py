"""What a FilmTalk dialogue is: the one check its reader, grounder and evaluation layout share."""

from __future__ import annotations

from typing import Any

KIND = "filmtalk"


def is_dialogue(record: Any) -> bool:
    return isinstance(record, dict) and isinstance(record.get("turns"), list) and "topic" in record


def problem(kind: str, record: Any) -> str | None:
    """Why ``record`` is not a FilmTalk dialogue, or None."""
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    if not isinstance(record.get("topic"), str):
        return "'topic' must be a string"
    turns = record.get("turns")
    if not (isinstance(turns, list) and turns):
        return "'turns' must be a non-empty list"
    for t, turn in enumerate(turns):
        if not (isinstance(turn, dict) and isinstance(turn.get("text"), str)):
            return f"turns[{t}] must be an object with a 'text' string"
        facts = turn.get("facts", [])
        if not (isinstance(facts, list) and all(is_triple(f) for f in facts)):
            return f"turns[{t}].facts must be a list of [head, relation, tail] strings"
    return None


def is_triple(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(x, str) for x in value)
