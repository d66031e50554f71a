"""KdConv in ``kgforge eval``: a dialogue file (a JSON array) whose every message after the first is a response,
its gold knowledge the message's ``attrs``."""

from __future__ import annotations

from kgforge.evaluation.inputs import EvalLayout, read_kdconv, register_layout

register_layout(
    "kdconv",
    EvalLayout(read_kdconv, array=True, description="KdConv dialogues: every message after the first, gold attrs"),
)
