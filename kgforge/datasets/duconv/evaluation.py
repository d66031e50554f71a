"""DuConv in ``kgforge eval``: sessions (every bot turn a response, as the official sample converter makes them)
or samples (``history`` and ``response``); the gold knowledge is the goal path. Word-segmented by definition."""

from __future__ import annotations

from typing import Any

from kgforge.evaluation.inputs import EvalLayout, read_duconv, register_layout


def is_duconv(record: dict[str, Any]) -> bool:
    """A DuConv session or sample: its knowledge beside a conversation or a history."""
    return "knowledge" in record and ("conversation" in record or "history" in record)


register_layout(
    "duconv",
    EvalLayout(read_duconv, is_duconv, segmented=True, priority=10, description="DuConv sessions or samples"),
)
