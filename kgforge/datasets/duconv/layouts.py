"""DuConv's dialogue layouts (``duconv-session``: ``goal``, ``knowledge``, ``conversation``; ``duconv-sample``:
``history`` and a ``response``), registered on :data:`kgforge.sources.dialogue_layouts.DIALOGUE_LAYOUTS` (the
room's ``source`` part imports this module)."""

from __future__ import annotations

from typing import Any

from kgforge.sources.dialogue_layouts import (
    DIALOGUE_LAYOUTS,
    DialogueLayout,
    is_triples,
    strings_problem,
    triples_problem,
)

DUCONV_SESSION = "duconv-session"
DUCONV_SAMPLE = "duconv-sample"


def duconv_problem(record: dict[str, Any], sample: bool) -> str | None:
    """DuConv: ``goal`` (``[["START", A, B], path triples…]``), ``knowledge`` triples and ``conversation``
    (a session) or ``history`` and, where present, a ``response`` string (a sample)."""
    goal = record.get("goal")
    if not (is_triples(goal) and goal and goal[0][0] == "START"):
        return "'goal' must be [[\"START\", A, B], [head, relation, tail], …]"
    problem = triples_problem(record, "knowledge") or strings_problem(record, "history" if sample else "conversation")
    if problem is None and sample and "response" in record and not isinstance(record["response"], str):
        problem = "'response' must be a string"
    return problem


def duconv_kind(record: Any) -> str | None:
    """``duconv-session`` or ``duconv-sample`` for a record shaped as one (a goal opening ``["START", …]``)."""
    if not isinstance(record, dict) or not isinstance(record.get("goal"), list) or "knowledge" not in record:
        return None
    first = record["goal"][0] if record["goal"] else None
    if not (isinstance(first, list) and first[:1] == ["START"]):
        return None
    return DUCONV_SESSION if "conversation" in record else DUCONV_SAMPLE if "history" in record else None


DIALOGUE_LAYOUTS.register(
    DUCONV_SESSION,
    DialogueLayout(lambda record: duconv_problem(record, False), recognise=duconv_kind),
    description="DuConv sessions",
)
DIALOGUE_LAYOUTS.register(
    DUCONV_SAMPLE,
    DialogueLayout(lambda record: duconv_problem(record, True), recognise=duconv_kind),
    description="DuConv samples",
)
