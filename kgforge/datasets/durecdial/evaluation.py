"""DuRecDial in ``kgforge eval``: sessions in the LIC-2020 resource or competition layout, DuRecDial 2.0's, or
the ACL 2020 release's (``kg``, ``goals``); the bot turns are the responses (``label`` says who speaks first)."""

from __future__ import annotations

from typing import Any

from kgforge.evaluation.inputs import EvalLayout, read_durecdial, register_layout


def is_durecdial(record: dict[str, Any]) -> bool:
    """A DuRecDial session: the ACL 2020 release's keys, or a session whose goal is a string or which says who
    speaks first (``label``) or the user's situation: what a DuConv session never has."""
    if "kg" in record and "goals" in record and "conversation" in record:
        return True
    in_session = "knowledge" in record and ("conversation" in record or "history" in record)
    return in_session and ("label" in record or "situation" in record or isinstance(record.get("goal"), str))


register_layout(
    "durecdial",
    EvalLayout(read_durecdial, is_durecdial, segmented=True, priority=20, description="DuRecDial sessions"),
)
