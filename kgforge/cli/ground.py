"""`kgforge ground`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge.api import Domain, choices
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    OUT_FILE,
    POSITIVE,
    DomainArgument,
    JsonOption,
    SkipInvalidOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    one_of,
    reads_inputs,
    show_mapping,
)

FORMATS = choices("ground format")


@app.command("ground")
@reads_inputs
def ground_command(
    domain: DomainArgument,
    dialogues: Annotated[
        Path,
        typer.Option(
            "--dialogues",
            help="Dialogues to ground: a KdConv JSON file, or DuConv or "
            "DuRecDial sessions (JSON lines) with --format duconv "
            "or durecdial.",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            callback=OUT_FILE,
            help="The grounded dialogues. KdConv: attrs (or predicted_attrs "
            "beside gold attrs) and claims on every message; DuConv: a "
            "grounding list parallel to the conversation (knowledge, topics, "
            "claims); DuRecDial: knowledge per utterance (or "
            "predicted_knowledge beside gold) and claims per utterance.",
        ),
    ],
    fmt: Annotated[
        str,
        typer.Option("--format", parser=one_of(FORMATS), help="The dialogues' format: kdconv, duconv or durecdial."),
    ] = "kdconv",
    workers: Annotated[
        int | None,
        typer.Option(
            "--workers",
            parser=POSITIVE,
            help="Processes grounding the dialogues (default: one per CPU; the output is the same).",
        ),
    ] = None,
    skip_invalid: SkipInvalidOption = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Which fact each message states, and its claims checked against the graph; scored against gold attrs
    (KdConv), or which knowledge triples each utterance states (DuConv; DuRecDial, scored against gold
    per-utterance knowledge)."""
    report = Domain(domain, workdir).ground(dialogues, out, fmt=fmt, workers=workers, skip_invalid=skip_invalid)
    if json_out:
        emit_json(report.as_dict())
        return
    data = report.as_dict()
    show_mapping(
        f"grounded {domain}",
        {k: v for k, v in data.items() if k not in ("scores", "claims", "rejected", "rejected_file")},
    )
    if report.rejected:
        console.print(
            f"records left out: {report.rejected:,} (not {fmt} dialogues), each listed with its line and reason "
            f"in {report.rejected_file}",
            markup=False,
            soft_wrap=True,
        )
    console.print("claims: " + (", ".join(f"{k} {v}" for k, v in data["claims"].items()) or "none"))
    if data["topics_not_in_graph"]:
        console.print(
            f"{len(data['topics_not_in_graph'])} dialogue topics are not in the graph (focus from "
            f"mentions only): " + ", ".join(data["topics_not_in_graph"][:5])
        )
    if report.micro is None:
        console.print("no gold annotations in the input: nothing scored")
        return
    console.print(
        f"[bold]against gold[/] ({report.gold_messages} messages): P {_pct(report.micro.precision)} "
        f"R {_pct(report.micro.recall)} F1 {_pct(report.micro.f1)}"
    )
    for relation, score in sorted(report.per_relation.items(), key=lambda kv: -(kv[1].tp + kv[1].fn)):
        console.print(
            f"  {relation:<12} P {_pct(score.precision)} R {_pct(score.recall)} F1 {_pct(score.f1)} "
            f"({score.tp + score.fn} gold)"
        )


def _pct(value: float | None) -> str:
    return "n/a" if value is None else f"{100 * value:.1f}%"
