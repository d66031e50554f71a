"""The options that pair responses with their gold and their dialogues, shared by `kgforge eval` and `kgforge rate
sheet`: both pass them to the same pairing (``kgforge.evaluation.inputs.load_responses``), so a rating sheet shows
each response beside the dialogue `eval` scores it in."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

GoldOption = Annotated[
    Path | None,
    typer.Option(
        "--gold",
        help="Gold responses, matched in order (any layout); a DuConv/KdConv/DuRecDial file also gives each "
        "response's dialogue (its history and knowledge).",
    ),
]
DialoguesOption = Annotated[
    Path | None,
    typer.Option(
        "--dialogues",
        help="Dialogue context (DuConv, KdConv, DuRecDial or a `kgforge export` file) when neither file gives it: "
        "by a dialogue_id column, else in order.",
    ),
]
