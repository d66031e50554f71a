"""`kgforge embed` and `kgforge related`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kgforge.api import Domain, check_embed_model, choices
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DEVICE,
    FOLDER,
    NON_NEGATIVE,
    NON_NEGATIVE_NUMBER,
    NOTHING_CHANGED,
    POSITIVE,
    POSITIVE_NUMBER,
    Checked,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    bars_wanted,
    console,
    emit_json,
    err_console,
    one_of,
    show_mapping,
    when_interrupted,
)

if TYPE_CHECKING:
    from kgforge.api import EmbedReport  # its module loads torch, which the command loads only when it trains

# Options of both `kgforge embed` and `kgforge related`.
ModelName = Annotated[str, typer.Option("--name", parser=FOLDER, help="Bundle folder under <domain>/models/.")]
DeviceOption = Annotated[str, typer.Option(parser=DEVICE, help="auto, cpu or cuda[:N].")]


def _embed_choice(option: str) -> Checked[str]:
    """A value among those EmbedConfig itself checks ``option`` against (read when the option is given: the
    list comes from kgforge.embed, which loads torch)."""
    return Checked(str, lambda value, what: one_of(choices(f"embed {option}")).check(value, what), "a choice")


PYKEEN_MODEL = Checked(str, check_embed_model, "a PyKEEN model")
PRECISION = _embed_choice("precision")
EVALUATION = _embed_choice("evaluation")
KEEP = _embed_choice("keep")


EMBED_HINT = "interrupted before this run's first checkpoint: the model bundle is unchanged; rerun the same command"


# The options of `kgforge embed`, in the order --help lists them (the command's signature keeps it).
PykeenModelOption = Annotated[
    str, typer.Option(parser=PYKEEN_MODEL, help="PyKEEN model: TransE, RotatE, ComplEx, DistMult, ...")
]
DimOption = Annotated[
    int, typer.Option(parser=POSITIVE, help="Embedding dimension (complex models: complex dimension).")
]
EpochsOption = Annotated[int, typer.Option(parser=POSITIVE, help="Training epochs.")]
BatchSizeOption = Annotated[
    int | None, typer.Option(parser=POSITIVE, help="Positive triples per step [CPU 512, GPU 8192].")
]
NegativesOption = Annotated[
    int | None,
    typer.Option(
        parser=POSITIVE, help="Negatives shared by a batch, per side [CPU 128, GPU 1024]; all entities when fewer."
    ),
]
LearningRateOption = Annotated[float, typer.Option("--lr", parser=POSITIVE_NUMBER, help="Adam learning rate.")]
EmbedSeedOption = Annotated[
    int, typer.Option(parser=NON_NEGATIVE, help="Seed of the split, the initialisation and the batches.")
]
PrecisionOption = Annotated[str, typer.Option(parser=PRECISION, help="auto (bf16 autocast on GPU), fp32 or bf16.")]
MaxTimeOption = Annotated[
    float | None, typer.Option(parser=POSITIVE_NUMBER, help="Stop training after this many seconds.")
]
PatienceOption = Annotated[
    int,
    typer.Option(
        parser=NON_NEGATIVE,
        help="Stop after this many epochs without a lower validation loss (0: train every epoch).",
    ),
]
KeepOption = Annotated[
    str, typer.Option(parser=KEEP, help="best (the epoch of lowest validation loss) or last: the weights kept.")
]
CheckpointEveryOption = Annotated[
    float, typer.Option(parser=NON_NEGATIVE_NUMBER, help="Seconds between checkpoints (0: after every step).")
]
ResumeTrainingOption = Annotated[bool, typer.Option("--resume", help="Continue from the last checkpoint.")]
IncludeLiteralsOption = Annotated[bool, typer.Option(help="Literal values become nodes.")]
IncludeDerivedOption = Annotated[bool, typer.Option(help="Train on derived (associated) triples too.")]
EvaluationOption = Annotated[str, typer.Option(parser=EVALUATION, help="auto, full, sampled or none.")]
EvalBatchSizeOption = Annotated[int | None, typer.Option(parser=POSITIVE, help="Triples ranked per evaluation batch.")]
ThreadsOption = Annotated[
    int | None,
    typer.Option(parser=POSITIVE, help="CPU threads for torch (default: the cores available to this process)."),
]
DevicesOption = Annotated[
    int,
    typer.Option(
        parser=POSITIVE,
        help="Training processes on this machine (GPUs, or CPU "
        "processes); above 1: data-parallel through PyTorch "
        "Lightning (pip install 'kgforge\\[lightning]').",
    ),
]
NodesOption = Annotated[
    int,
    typer.Option(
        parser=POSITIVE, help="Machines (run the command on each, with MASTER_ADDR, MASTER_PORT and NODE_RANK set)."
    ),
]


@app.command("embed")
@when_interrupted(EMBED_HINT)
def embed_command(
    domain: DomainArgument,
    model: PykeenModelOption = "RotatE",
    dim: DimOption = 128,
    epochs: EpochsOption = 100,
    batch_size: BatchSizeOption = None,
    negatives: NegativesOption = None,
    learning_rate: LearningRateOption = 0.02,
    seed: EmbedSeedOption = 42,
    device: DeviceOption = "auto",
    precision: PrecisionOption = "auto",
    max_time: MaxTimeOption = None,
    patience: PatienceOption = 10,
    keep: KeepOption = "best",
    checkpoint_every: CheckpointEveryOption = 300.0,
    resume: ResumeTrainingOption = False,
    include_literals: IncludeLiteralsOption = False,
    include_derived: IncludeDerivedOption = False,
    evaluation: EvaluationOption = "auto",
    eval_batch_size: EvalBatchSizeOption = None,
    threads: ThreadsOption = None,
    devices: DevicesOption = 1,
    nodes: NodesOption = 1,
    name: ModelName = "default",
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Train a KG embedding on the domain's store and write a model bundle (weights, tables, index, metrics)."""
    from kgforge.api import EmbedConfig  # lazy: torch and PyKEEN take seconds to load, not for --help

    config = EmbedConfig(
        model=model,
        dim=dim,
        epochs=epochs,
        batch_size=batch_size,
        num_negatives=negatives,
        learning_rate=learning_rate,
        seed=seed,
        device=device,
        precision=precision,
        max_time=max_time,
        patience=patience,
        keep=keep,
        checkpoint_seconds=checkpoint_every,
        include_literals=include_literals,
        include_derived=include_derived,
        evaluation=evaluation,
        eval_batch_size=eval_batch_size,
        threads=threads,
        devices=devices,
        nodes=nodes,
    )
    report = Domain(domain, workdir).embed(config, name=name, resume=resume, progress=bars_wanted(json_out))
    if json_out or report.bundle is None:  # a node other than 0 writes no bundle
        emit_json(report.as_dict())
        return
    _show_bundle(domain, report)


def _show_bundle(domain: str, report: EmbedReport) -> None:
    """The bundle written, how training went (and a resumed run's note), and the test split's ranking metrics."""
    summary = report.as_dict()
    training, evaluation_result = summary["training"], summary["evaluation"]
    if training.get("resume_note"):
        err_console.print(training["resume_note"], style="yellow", markup=False, soft_wrap=True)
    show_mapping(
        f"{domain}: {summary['model']} bundle at {summary['bundle']}",
        {
            "entities": summary["entities"],
            "relations": summary["relations"],
            "split train/valid/test": "/".join(str(v) for v in summary["split"]["counts"].values()),
            "actual ratios": " ".join(f"{v:.3f}" for v in summary["split"]["actual_ratios"].values()),
            "moved for coverage": summary["split"]["moved_to_train_for_coverage"],
            "epochs": f"{training['epochs_completed']}/{training['epochs_requested']}",
            "device": f"{training['device']} ({training['cpu_threads']} CPU threads, {training['precision']})",
            "triples/s": training["triples_per_second"],
            "seconds": training["seconds"],
            "stopped by": training["stopped_by"] or "-",
            "weights kept": training.get("kept_epoch") or "-",
            "metric": summary["metric"],
        },
    )
    if "mrr" in evaluation_result:
        show_mapping(
            f"evaluation ({evaluation_result['label']})",
            {key: f"{evaluation_result[key]:.4f}" for key in ("mrr", "hits_at_1", "hits_at_3", "hits_at_10")},
        )
    for figure in report.figures or ():
        console.print(f"wrote the loss and validation curves to {figure.absolute()}", markup=False, soft_wrap=True)


@app.command("related")
@when_interrupted(NOTHING_CHANGED)
def related_command(
    domain: DomainArgument,
    entity: Annotated[str, typer.Argument(help="Label or IRI (a label that looks like an IRI is a label too).")],
    k: Annotated[int, typer.Option("-k", parser=POSITIVE, help="How many entities.")] = 10,
    exclude_neighbours: Annotated[bool, typer.Option(help="Drop entities directly linked to ENTITY.")] = False,
    type_: Annotated[str | None, typer.Option("--type", help="Only entities of this type (IRI or id).")] = None,
    device: DeviceOption = "auto",
    name: ModelName = "default",
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Entities most similar to ENTITY in the trained model's own geometry (itself excluded)."""
    answer = (
        Domain(domain, workdir)
        .related(entity, k=k, model=name, exclude_neighbours=exclude_neighbours, type_=type_, device=device)
        .as_dict()
    )
    if json_out:
        emit_json(answer)
        return
    query = answer["query"]
    console.print(
        f"[bold]{query['label'] or query['iri']}[/] ({query['iri']}) — {answer['method']}, {answer['metric']}"
    )
    if answer["notice"]:
        console.print(f"[yellow]notice[/]: {answer['notice']}")
    for rank, row in enumerate(answer["results"], 1):
        score = "" if row["score"] is None else f"{row['score']:.4f}"
        console.print(f"  {rank:>3}. {score:>8}  {row['label'] or ''}  [dim]{row['iri']}[/]")
