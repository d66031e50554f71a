"""`kgforge ground`."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from kgforge.api import Domain, TrainingData, choices, train_grounding
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    OUT_FILE,
    POSITIVE,
    Checked,
    DomainArgument,
    JsonOption,
    SkipInvalidOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    in_words,
    long_running,
    one_of,
    reads_inputs,
    show_mapping,
)

if TYPE_CHECKING:  # typer's own copy of click (0.29 on), read by the type checker only (see _lazy)
    from typer._click import Command

FORMATS = choices("ground format")


def training_data(value: str | TrainingData) -> TrainingData:
    """``--data DOMAIN:FILE`` read, the domain's name checked: a bad one is refused before training starts."""
    if isinstance(value, TrainingData):
        return value
    domain, sep, path = value.partition(":")
    if not sep or not path:
        raise typer.BadParameter(f"{value!r} is not DOMAIN:FILE (a built domain and its annotated dialogues)")
    return TrainingData(DOMAIN(domain), Path(path))


def train_command(
    data: Annotated[
        list[TrainingData],
        typer.Option(
            "--data",
            parser=training_data,
            metavar="DOMAIN:FILE",
            help="DOMAIN:FILE — annotated KdConv dialogues (gold attrs) and the built domain that grounds them "
            "(repeatable: one model learns from several domains).",
        ),
    ],
    out: Annotated[
        Path, typer.Option("--out", callback=OUT_FILE, help="The model file to write (JSON; `kgforge ground --model`).")
    ],
    seed: Annotated[
        int, typer.Option("--seed", parser=NON_NEGATIVE, help="Seed of the folds the thresholds are chosen on.")
    ] = 0,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Train the grounding model on annotated dialogues: which candidate fact a message states, and how likely a
    value said against the graph is wrong (docs/grounding.md). The same data and seed give the same file."""
    report = train_grounding(data, out, workdir, seed)
    if json_out:
        emit_json(report.as_dict())
        return
    console.print(f"[bold]grounding model[/] written to {report.out} (seed {report.seed})")
    for trained in report.trained_on:
        console.print(
            f"  {trained.domain:<10} {trained.file}: {trained.dialogues} dialogues, {trained.gold} gold attrs"
        )
    console.print(
        f"candidates: values {report.candidates['values']:,}, texts {report.candidates['texts']:,}; "
        f"thresholds {report.thresholds}"
    )
    for name, figures in (("out of fold", report.out_of_fold), ("hand rules", report.rules)):
        console.print(
            f"  {name:<12} P {_pct(figures['precision'])} R {_pct(figures['recall'])} F1 {_pct(figures['f1'])}"
        )


def _model_choice(value: str, what: str) -> str:
    """``--model``: ``shipped``, ``rules`` or an existing file (what it holds is checked when it is read)."""
    if value in ("shipped", "rules") or Path(value).is_file():
        return value
    raise typer.BadParameter(f"{value!r} is neither shipped, rules nor a model file")


MODEL = Checked(str, _model_choice, "shipped, rules or a model file")

_TRAIN = typer.Typer(add_completion=False)
_TRAIN.command("train")(train_command)


class _GroundOrTrain(typer.core.TyperCommand):
    """`kgforge ground DOMAIN …` grounds; `kgforge ground train …` trains the model it grounds with (so a domain
    cannot be called ``train`` here: `kgforge ground` takes the word as the subcommand)."""

    subcommands: dict[str, Command] = {}

    def make_context(self, info_name: str | None, args: list[str], parent: Any = None, **extra: Any) -> Any:
        if args and args[0] in self.subcommands:  # click invokes the command of the context it gets
            name = f"{info_name} {args[0]}"  # its usage and errors read `kgforge ground train`
            return self.subcommands[args[0]].make_context(name, args[1:], parent=parent, **extra)
        return super().make_context(info_name, args, parent, **extra)


_GroundOrTrain.subcommands = {"train": typer.main.get_command(_TRAIN)}


# The options of `kgforge ground`, in the order --help lists them (the command's signature keeps it).
GroundDialoguesOption = Annotated[
    Path,
    typer.Option(
        "--dialogues",
        help="Dialogues to ground: a KdConv JSON file, or DuConv or "
        "DuRecDial sessions (JSON lines) with --format duconv "
        "or durecdial.",
    ),
]
GroundedOutOption = Annotated[
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
]
GroundFormatOption = Annotated[
    str,
    typer.Option("--format", parser=one_of(FORMATS), help=f"The dialogues' format: {in_words(FORMATS)}."),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers",
        parser=POSITIVE,
        help="Processes grounding the dialogues (default: one per CPU; the output is the same).",
    ),
]
GroundingModelOption = Annotated[
    str,
    typer.Option(
        "--model",
        parser=MODEL,
        help="Who chooses among the candidate facts (KdConv): a model file from `kgforge ground train`, "
        "`rules` for the hand rules alone, or `shipped` (the model kgforge ships).",
    ),
]


@app.command("ground", cls=_GroundOrTrain)
@reads_inputs
@long_running
def ground_command(
    domain: DomainArgument,
    dialogues: GroundDialoguesOption,
    out: GroundedOutOption,
    fmt: GroundFormatOption = "kdconv",
    workers: WorkersOption = None,
    skip_invalid: SkipInvalidOption = False,
    model: GroundingModelOption = "shipped",
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Which fact each message states, and its claims checked against the graph; scored against gold attrs
    (KdConv), or which knowledge triples each utterance states (DuConv; DuRecDial, scored against gold
    per-utterance knowledge).

    `kgforge ground train --data DOMAIN:FILE --out MODEL` trains the model that chooses among the candidate
    facts on annotated dialogues (see `kgforge ground train --help`)."""
    report = Domain(domain, workdir).ground(
        dialogues, out, fmt=fmt, workers=workers, skip_invalid=skip_invalid, model=model
    )
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
