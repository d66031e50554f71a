"""`kgforge eval`: score responses with the official DuConv metrics and knowledge P/R/F1 against a domain
graph; `kgforge metrics` lists the metrics."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any, Protocol, runtime_checkable

import typer
from rich.markup import escape
from rich.table import Table

from kgforge.api import (
    ArgumentError,
    EvalOptions,
    EvalReport,
    KgforgeError,
    KnowledgeOptions,
    Leaderboard,
    SelectionReport,
    choices,
    evaluate,
    evaluate_systems,
    figure_text,
    hits_at,
    in_percent,
    llm_judge,
    p_text,
    parse_system,
    perplexity,
    registry,
    score_selection,
    systems_in_folder,
)
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    OUT_DIR,
    OUT_FILE,
    POSITIVE,
    Checked,
    JsonOption,
    LlmKeyEnvOption,
    LlmModelOption,
    LlmUrlOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    long_running,
    one_of,
    reads_inputs,
    registered,
    show_mapping,
)
from kgforge.cli._pairing import DialoguesOption, GoldOption


@runtime_checkable
class _Metrics(Protocol):
    """What the command line asks of the metric registry beyond a registry's own (its metric's own error, the
    listing of `kgforge metrics`): ``registry("metric")`` is typed as any registry."""

    def metric(self, name: str) -> Any: ...

    def describe_metrics(self) -> list[dict[str, Any]]: ...


def _metric_registry() -> _Metrics:
    found = registry("metric")
    if not isinstance(found, _Metrics):
        raise TypeError(f"the metric registry is a {type(found).__name__}, without metric() and describe_metrics()")
    return found


EVAL_LAYOUTS = choices("eval layout")
METRICS = _metric_registry()
SEGMENTATIONS = choices("segmentation")
RUBRICS = registry("rating rubric")
_RUBRIC_NAME = registered(RUBRICS)


def _rubric(value: str, what: str) -> str:
    """A bundled rubric's name (any case or alias), or the path of one's own rubric file (.toml)."""
    return value if value.endswith(".toml") else _RUBRIC_NAME.check(value, what)


RUBRIC = Checked(str, _rubric, "a rubric name or a .toml file")


def _metric_names(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    for name in names:
        if name.lower() == "all":
            continue
        try:
            METRICS.metric(name)
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem) from None
    return names


# The options of `kgforge eval`, in the order --help lists them (the command's signature keeps it).
PredictionsArgument = Annotated[
    Path | None,
    typer.Argument(
        help="Responses to score: the official 'prediction<TAB>gold' "
        "file, one response per line, JSONL/CSV/Excel columns, or "
        "a DuConv / KdConv / DuRecDial file (or give --system)."
    ),
]
JudgingDomainOption = Annotated[
    str | None,
    typer.Option(parser=DOMAIN, help="Domain whose graph judges the knowledge (knowledge precision/recall/F1)."),
]
HumanOption = Annotated[
    Path | None,
    typer.Option(
        help="Human scores per response (number columns, MSDE's nested "
        "'scores', several annotators; with --system: a system column "
        "or one file per system): correlations with every metric."
    ),
]
HumanIdColumnOption = Annotated[
    str | None, typer.Option(help="Column of --human naming the response id (default: id, when present).")
]
PerResponseOutOption = Annotated[
    Path | None,
    typer.Option(
        "--out",
        "-o",
        callback=OUT_FILE,
        help="Per-response file (.jsonl, .csv or .parquet); none is written unless given.",
    ),
]
NoOutOption = Annotated[
    bool, typer.Option("--no-out", hidden=True, help="Kept for scripts: nothing is written without --out.")
]
MetricsOption = Annotated[
    str | None,
    typer.Option(
        help="Comma-separated metrics, or 'all' (default: the default ones the inputs allow; see `kgforge metrics`)."
    ),
]
EvalLayoutOption = Annotated[str, typer.Option(parser=one_of(EVAL_LAYOUTS), help="Layout of PREDICTIONS.")]
SegmentationOption = Annotated[
    str,
    typer.Option(
        parser=one_of(("auto", *SEGMENTATIONS)),
        help="How texts become tokens: whitespace (pre-segmented), jieba "
        "(as the exports segment) or char; auto: whitespace for "
        "segmented inputs, jieba otherwise.",
    ),
]
PredictionColumnOption = Annotated[str | None, typer.Option(help="Column holding the predictions.")]
GoldColumnOption = Annotated[str | None, typer.Option(help="Column holding the gold responses.")]
IdColumnOption = Annotated[str | None, typer.Option(help="Column holding response ids.")]
DialogueColumnOption = Annotated[str | None, typer.Option(help="Column holding dialogue ids (for --dialogues).")]
GraphOnlyOption = Annotated[
    bool,
    typer.Option(
        "--graph-only", help="True facts come from the graph only, not also from the dialogue's own knowledge."
    ),
]
MinCharsOption = Annotated[int, typer.Option(parser=POSITIVE, help="Shortest entity name matched.")]
TextOverlapOption = Annotated[
    int, typer.Option(parser=NON_NEGATIVE, help="Characters shared with a free-text fact to state it (0: never).")
]
VectorsOption = Annotated[
    Path | None,
    typer.Option(
        help="Word vectors (word2vec text or binary) for Embedding Average, Vector Extrema and Greedy Matching."
    ),
]
BertScoreModelOption = Annotated[
    Path | None,
    typer.Option(
        help="Local transformers model folder for BERTScore (extra kgforge\\[bertscore]; nothing is downloaded)."
    ),
]
BleurtOption = Annotated[
    Path | None,
    typer.Option(
        help="Local BLEURT checkpoint ported to PyTorch (one regression output) for BLEURT (extra kgforge\\[bleurt])."
    ),
]
CandidatesOption = Annotated[
    Path | None,
    typer.Option(help="A retrieval model's scored candidates per context (label + score): Hits@1 and Hits@3."),
]
GroupSizeOption = Annotated[
    int | None, typer.Option(parser=POSITIVE, help="Candidates per context in plain label<TAB>score lines.")
]
SelectedOption = Annotated[
    Path | None,
    typer.Option(
        help="Facts a system selected per turn, ranked (JSON lines {dialogue, turn, facts}, or a `kgforge ground` "
        "output), scored against --gold: R-Precision, Recall@k, P/R/F1, selection accuracy."
    ),
]
RecallKOption = Annotated[str, typer.Option("--k", help="The k of Recall@k with --selected, comma-separated.")]
GoalMetricsOption = Annotated[
    bool,
    typer.Option(
        "--goal-metrics",
        help="Also judge whole dialogues: DuConv goal "
        "completion, Info bands, DuRecDial LS/UTC, Rec (a dialogue file, or "
        "predictions with --gold/--dialogues naming one).",
    ),
]
SystemOption = Annotated[
    list[str] | None,
    typer.Option(
        "--system",
        help="A system to compare, NAME=FILE or "
        "TASK/NAME=FILE (repeat it), or a folder of system files "
        "(sub-folders: tasks; gold.* in one: its gold).",
    ),
]
LeaderboardOption = Annotated[
    Path | None,
    typer.Option(
        callback=OUT_DIR,
        metavar="DIR",
        help="Folder for the systems' leaderboard.json, .csv and .md (none is written unless given).",
    ),
]
BootstrapOption = Annotated[
    int, typer.Option(parser=NON_NEGATIVE, help="Bootstrap resamples for the correlations' 95% intervals (0: none).")
]
BootstrapSeedOption = Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Seed of the bootstrap.")]
OfficialOption = Annotated[bool, typer.Option("--official", help="Print only the official DuConv script's lines.")]
PlotOption = Annotated[
    Path | None,
    typer.Option(
        "--plot",
        metavar="DIR",
        help="Draw PNGs into DIR: the metric x human-score heatmap (turn and system level, with --human) and, "
        "with --system, the leaderboard with bootstrap 95% intervals; named after the domain and the file.",
    ),
]
LlmJudgeOption = Annotated[
    str | None,
    typer.Option(
        "--llm-judge",
        parser=RUBRIC,
        help="Score PREDICTIONS (or the items of --ratings) by an LLM on a rubric (see `kgforge rate rubrics`).",
    ),
]
RatingsOption = Annotated[
    Path | None,
    typer.Option(help="--llm-judge: a filled rating round (the folder `rate sheet` wrote): agreement with it."),
]
LogprobsOption = Annotated[
    Path | None,
    typer.Option(help="Perplexity from the token log-probabilities a model wrote (JSON lines; docs/evaluation.md)."),
]


@app.command("eval")
@reads_inputs
@long_running
def eval_command(
    predictions: PredictionsArgument = None,
    gold: GoldOption = None,
    dialogues: DialoguesOption = None,
    domain: JudgingDomainOption = None,
    human: HumanOption = None,
    human_id_column: HumanIdColumnOption = None,
    out: PerResponseOutOption = None,
    no_out: NoOutOption = False,
    metrics: MetricsOption = None,
    layout: EvalLayoutOption = "auto",
    segmentation: SegmentationOption = "auto",
    prediction_column: PredictionColumnOption = None,
    gold_column: GoldColumnOption = None,
    id_column: IdColumnOption = None,
    dialogue_column: DialogueColumnOption = None,
    graph_only: GraphOnlyOption = False,
    min_chars: MinCharsOption = 2,
    text_overlap: TextOverlapOption = 6,
    vectors: VectorsOption = None,
    model_path: BertScoreModelOption = None,
    bleurt_path: BleurtOption = None,
    candidates: CandidatesOption = None,
    group_size: GroupSizeOption = None,
    selected: SelectedOption = None,
    k: RecallKOption = "1,5",
    goal_metrics: GoalMetricsOption = False,
    system: SystemOption = None,
    leaderboard: LeaderboardOption = None,
    bootstrap: BootstrapOption = 1000,
    seed: BootstrapSeedOption = 0,
    official: OfficialOption = False,
    plot: PlotOption = None,
    llm_judge: LlmJudgeOption = None,
    ratings: RatingsOption = None,
    llm_url: LlmUrlOption = None,
    llm_model: LlmModelOption = None,
    llm_key_env: LlmKeyEnvOption = None,
    logprobs: LogprobsOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Score responses: official DuConv F1/BLEU/DISTINCT, BLEU-3/4, ROUGE-L, CIDEr-D, METEOR, embedding metrics,
    BERTScore, BLEURT, knowledge P/R/F1, hallucinations; many systems (--system), goal metrics, Hits@k."""
    options = EvalOptions(
        layout=layout,
        segmentation=segmentation,
        metrics=_metric_names(metrics) if metrics else None,
        columns=_columns(prediction=prediction_column, gold=gold_column, id=id_column, dialogue=dialogue_column),
        knowledge=KnowledgeOptions(min_chars, text_overlap, graph_only),
        human_id_column=human_id_column,
        vectors=vectors,
        model_path=model_path,
        bleurt_path=bleurt_path,
        goal_metrics=goal_metrics,
    )
    if logprobs is not None:
        return _show_perplexity(logprobs, json_out)
    if llm_judge is not None:
        return _judge(llm_judge, predictions, ratings, llm_url, llm_model, llm_key_env, out, json_out)
    if plot is not None and (selected is not None or candidates is not None):
        raise typer.BadParameter(
            "draws the human correlations and the leaderboard, not --selected or --candidates", param_hint="--plot"
        )
    per_response = None if no_out else out
    if selected is not None:
        return _score_selection(selected, predictions, system, gold, _ks(k), domain, workdir, per_response, json_out)
    if candidates is not None:
        return _show_hits(candidates, group_size, json_out)
    scoring = _Scoring(gold, dialogues, domain, workdir, human, options, plot)
    if system:
        return _score_systems(system, predictions, out, leaderboard, bootstrap, seed, scoring, json_out)
    _score_predictions(predictions, per_response, official, scoring, json_out)


def _columns(**roles: str | None) -> dict[str, str]:
    """The columns named on the command line, by their role; a role not named is found in the file itself."""
    return {role: column for role, column in roles.items() if column}


def _show_perplexity(logprobs: Path, json_out: bool) -> None:
    found = perplexity(logprobs)
    emit_json(found.as_dict()) if json_out else show_mapping(f"perplexity of {logprobs}", found.as_dict())


def _score_selection(
    selected: Path,
    predictions: Path | None,
    system: list[str] | None,
    gold: Path | None,
    ks: tuple[int, ...],
    domain: str | None,
    workdir: Path,
    out: Path | None,
    json_out: bool,
) -> None:
    """``--selected``: the facts a system chose per turn, scored against the gold dialogues' own."""
    if predictions is not None or system:
        raise typer.BadParameter("--selected is scored on its own: give no PREDICTIONS or --system beside it")
    if gold is None:
        raise typer.BadParameter("--selected needs --gold (the dialogues whose turns it selected facts for)")
    report = score_selection(selected, gold, ks=ks, domain=domain, workdir=workdir, out=out)
    emit_json(report.as_dict()) if json_out else show_selection(report)


def _show_hits(candidates: Path, group_size: int | None, json_out: bool) -> None:
    """``--candidates``: Hits@k of a retrieval model's ranked candidates."""
    hits = hits_at(candidates, group_size=group_size)
    if json_out:
        emit_json(hits.to_dict())
        return
    shares = ", ".join(f"{name} {_number(value)}" for name, value in hits.hits.items())
    console.print(f"[bold]{hits.contexts:,} contexts[/], {hits.candidates:,} candidates: {shares}")
    if hits.without_gold:
        console.print(f"[yellow]{hits.without_gold:,} contexts have no gold candidate (label 1): left out[/]")


@dataclass(frozen=True)
class _Scoring:
    """What responses are scored with, the same for one file of PREDICTIONS and for every --system."""

    gold: Path | None
    dialogues: Path | None
    domain: str | None
    workdir: Path
    human: Path | None
    options: EvalOptions
    plot: Path | None


def _score_systems(
    system: list[str],
    predictions: Path | None,
    out: Path | None,
    leaderboard: Path | None,
    bootstrap: int,
    seed: int,
    scoring: _Scoring,
    json_out: bool,
) -> None:
    """``--system``: every system scored alike, into a leaderboard."""
    if predictions is not None:
        raise typer.BadParameter("give the responses either as PREDICTIONS or as --system, not both")
    if out is not None:
        raise typer.BadParameter(
            "--out names one PREDICTIONS file's per-response file; the systems' leaderboard goes to --leaderboard DIR"
        )
    systems, golds = _systems(system)
    board = evaluate_systems(
        systems,
        gold=scoring.gold,
        golds=golds,
        dialogues=scoring.dialogues,
        domain=scoring.domain,
        workdir=scoring.workdir,
        options=scoring.options,
        human=scoring.human,
        out=leaderboard,
        bootstrap=bootstrap,
        seed=seed,
        plot=scoring.plot,
    )
    emit_json(board.as_dict()) if json_out else show_leaderboard(board)


def _score_predictions(
    predictions: Path | None, out: Path | None, official: bool, scoring: _Scoring, json_out: bool
) -> None:
    """One file of responses scored, shown as the official script's lines (``--official``), JSON or a table."""
    if predictions is None:
        raise typer.BadParameter("give PREDICTIONS (a file of responses) or --system NAME=FILE")
    report = evaluate(
        predictions,
        gold=scoring.gold,
        dialogues=scoring.dialogues,
        domain=scoring.domain,
        workdir=scoring.workdir,
        human=scoring.human,
        out=out,
        options=scoring.options,
        plot=scoring.plot,
    )
    if official:
        if report.official is None:
            raise KgforgeError("--official: the official metrics need gold responses (give --gold)")
        sys.stdout.write(report.official)
    elif json_out:
        emit_json(report.as_dict())
    else:
        show_report(report)


def _ks(text: str) -> tuple[int, ...]:
    try:
        ks = tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        ks = ()
    if not ks or min(ks) < 1:
        raise typer.BadParameter(f"{text!r}: whole numbers of at least 1, comma-separated (1,5)", param_hint="--k")
    return ks


def show_selection(report: SelectionReport) -> None:
    console.print(
        f"[bold]{report.turns:,} turns[/] of {report.dialogues:,} dialogues scored ({report.turns_with_gold:,} with "
        f"{report.gold_facts:,} gold facts; {report.selected_facts:,} facts selected)  selected: "
        f"{escape(str(report.selected))} ({report.selected_layout})  gold: {escape(str(report.gold))} "
        f"({escape(report.gold_layout)})"
    )
    if report.turns_left_out:
        console.print(f"[yellow]{report.turns_left_out:,} turns of the gold have no --selected record: not scored[/]")
    table = Table("figure", "micro", "macro over turns", "macro over dialogues", box=None, pad_edge=False)
    levels = [report.micro.as_dict(), report.macro_turns.as_dict(), report.macro_dialogues.as_dict()]
    for name in levels[0]:
        table.add_row(name, *(_number(level[name]) for level in levels))
    console.print(table)
    if report.out is not None:
        console.print(f"per turn and per dialogue: {escape(str(report.out))}")


def _judge(
    rubric: str,
    predictions: Path | None,
    ratings: Path | None,
    url: str | None,
    model: str | None,
    key_env: str | None,
    out: Path | None,
    json_out: bool,
) -> None:
    if not url or not model:
        raise typer.BadParameter("--llm-judge needs the endpoint and the model", param_hint="--llm-url/--llm-model")
    report = llm_judge(rubric, url=url, model=model, predictions=predictions, ratings=ratings, out=out, key_env=key_env)
    if json_out:
        emit_json(report.as_dict())
        return
    data = report.as_dict()
    show_mapping(
        f"LLM judge ({report.model}) on {report.rubric}", {k: v for k, v in data.items() if not isinstance(v, dict)}
    )
    show_mapping(
        "the judge's mean score per aspect", {k: "-" if v is None else f"{v:.3f}" for k, v in report.means.items()}
    )
    for aspect, found in (report.agreement or {}).items():
        shown = ", ".join(f"{k} {_number(v) if isinstance(v, float) or v is None else v}" for k, v in found.items())
        console.print(f"agreement with the annotators on {escape(aspect)}: {shown}")


def show_report(report: EvalReport) -> None:
    inputs = ", ".join(f"{role} {escape(d['path'])} ({d['layout']})" for role, d in report.inputs.items())
    console.print(f"[bold]{report.responses:,} responses[/]  {inputs}  segmentation: {report.segmentation}")
    table = Table("metric", "value", "what it is", box=None, pad_edge=False)
    for name, value in report.metrics.items():
        metric = METRICS.metric(name)
        table.add_row(name, metric.shown(value), escape(metric.description))
    console.print(table)
    show_left_out(report.left_out)
    for described in report.inputs.values():
        for skipped in described.get("skipped", ())[:5]:
            console.print(f"[yellow]skipped[/] {escape(described['path'])} {escape(skipped)}")
    if report.knowledge is not None:
        k = report.knowledge
        console.print(
            f"knowledge: {k.true:,} of {k.fact_mentions:,} fact mentions true in domain "
            f"{k.domain!r}, {k.hallucinations:,} contradicted; {k.expressed:,} of "
            f"{k.gold:,} gold facts expressed"
        )
    if report.correlations:
        corr = Table("metric", "human", "n", "Pearson", "p", "Spearman", "p", box=None, pad_edge=False)
        for row in report.correlations:
            cells = [_correlation_cell(row, key) for key in ("pearson", "pearson_p", "spearman", "spearman_p")]
            corr.add_row(row["metric"], escape(row["human"]), str(row["n"]), *cells)
        console.print(corr)
    if report.goals is not None:
        show_goals(report.goals)
    if report.per_response is not None:
        console.print(f"per response (scores, mentions, hallucinations): {escape(report.per_response)}")
    show_figures(report.figures or ())


def show_goals(goals: dict[str, Any]) -> None:
    summary = goals["summary"]
    console.print(
        f"[bold]goal metrics[/] over {summary['dialogues']:,} dialogues ({goals['layout']}; mentions by "
        f"{goals['matcher']}): triples used {_number(summary['triples_used'])}, properties used "
        f"{_number(summary['properties_used'])} per dialogue"
    )
    if "goal_completion" in summary:
        shares = ", ".join(
            f"{grade}: {share * 100:.1f}%" for grade, share in summary["completion_distribution"].items()
        )
        console.print(f"  goal completion {_number(summary['goal_completion'])} ({shares})")
    if "info_bands" in summary:
        bands = ", ".join(f"{band} facts: {share * 100:.1f}%" for band, share in summary["info_bands"].items())
        console.print(f"  Info bands of bot turns: {bands}")
    for name in ("leading_success", "user_topic_consistency", "recommendation_success"):
        if name in summary:
            console.print(f"  {name}: {_number(summary[name])} over {summary[name + '_dialogues']} dialogues")
    show_left_out(goals["left_out"])


def _systems(specs: list[str]) -> tuple[dict[tuple[str, str], Path], dict[str, Path]]:
    """``--system`` values: NAME=FILE pairs, or one folder of systems."""
    if len(specs) == 1 and "=" not in specs[0]:
        folder = Path(specs[0])
        if not folder.is_dir():
            raise typer.BadParameter(
                f"{specs[0]!r} is neither NAME=FILE nor a folder of systems", param_hint="--system"
            )
        return systems_in_folder(folder)
    systems: dict[tuple[str, str], Path] = {}
    for spec in specs:
        try:
            task, name, path = parse_system(spec)
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem, param_hint="--system") from None
        if (task, name) in systems:
            raise typer.BadParameter(f"system {name!r} given twice", param_hint="--system")
        systems[task, name] = path
    return systems, {}


def show_leaderboard(board: Leaderboard) -> None:
    table = board.table()
    console.print(f"[bold]{len(board.systems)} systems[/], {sum(s.responses for s in board.systems):,} responses")
    for task in dict.fromkeys(table["task"].to_list()):
        rows = table.filter(table["task"] == task)
        shown = Table(
            "system",
            *[c for c in rows.columns if c not in ("task", "system")],
            box=None,
            pad_edge=False,
            title=None if task == "all" else f"task {task}",
        )
        for row in rows.iter_rows(named=True):
            shown.add_row(
                escape(row["system"]),
                *[
                    str(v) if isinstance(v, int) else figure_text(v, in_percent(k))
                    for k, v in row.items()
                    if k not in ("task", "system")
                ],
            )
        console.print(shown)
    show_left_out(board.left_out)
    for aspect, found in board.agreement.items():
        console.print(
            f"agreement on {escape(aspect)}: Fleiss' kappa {_number(found['fleiss_kappa'])}, "
            f"Krippendorff's alpha {_number(found['krippendorff_alpha'])} ({found['raters']} annotators)"
        )
    if board.correlations:
        corr = Table(
            "task",
            "level",
            "metric",
            "human",
            "n",
            "Pearson",
            "p",
            "Spearman",
            "p",
            "Kendall",
            "p",
            box=None,
            pad_edge=False,
        )
        for row in board.correlations:
            cells = [
                _correlation_cell(row, key)
                for key in ("pearson", "pearson_p", "spearman", "spearman_p", "kendall", "kendall_p")
            ]
            corr.add_row(row["task"], row["level"], row["metric"], escape(row["human"]), str(row["n"]), *cells)
        console.print(corr)
    if board.human and board.human["unrated_systems"]:
        console.print(f"[yellow]no human scores for[/] {', '.join(board.human['unrated_systems'])}")
    if board.files:
        console.print(f"leaderboard: {', '.join(escape(path) for path in board.files.values())}")
    else:
        console.print("[dim]no file written: --leaderboard DIR writes leaderboard.json, .csv and .md[/]")
    show_figures(board.figures)


def show_figures(figures: tuple[str, ...]) -> None:
    if figures:
        console.print(f"figures: {', '.join(escape(path) for path in figures)}")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def _correlation_cell(row: dict[str, Any], key: str) -> str:
    """A correlation coefficient with three decimals, or its p-value (``2.4e-07`` below 0.001)."""
    return p_text(row[key]) if key.endswith("_p") else _number(row[key])


def show_left_out(left_out: dict[str, str]) -> None:
    """What was not computed and why, one dim line each (escaped: a reason names ``kgforge[bertscore]``)."""
    for name, why in left_out.items():
        console.print(f"  [dim]{escape(name)}: left out, {escape(why)}[/]")


@app.command("metrics")
def metrics_command(json_out: JsonOption = False) -> None:
    """The metrics `kgforge eval` computes (the registry: built-in and registered ones)."""
    described = METRICS.describe_metrics()
    if json_out:
        emit_json(described)
        return
    table = Table("metric", "needs", "default", "what it is", box=None, pad_edge=False)
    for metric in described:
        table.add_row(
            metric["name"],
            ", ".join(metric["needs"]) or "-",
            "yes" if metric["default"] else "-",
            metric["description"],
        )
    console.print(table)
