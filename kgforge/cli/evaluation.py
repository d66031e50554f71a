"""`kgforge eval`: score responses with the official DuConv metrics and knowledge P/R/F1 against a domain
graph; `kgforge metrics` lists the metrics."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    POSITIVE,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    one_of,
)
from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.evaluation import (
    LAYOUTS,
    METRICS,
    SEGMENTATIONS,
    EvalOptions,
    KnowledgeOptions,
    evaluate,
)


def _metric_names(text: str) -> tuple[str, ...]:
    names = tuple(name.strip() for name in text.split(",") if name.strip())
    for name in names:
        try:
            METRICS.get(name)
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem) from None
    return names


@app.command("eval")
def eval_command(
    predictions: Annotated[Path, typer.Argument(help="Responses to score: the official 'prediction<TAB>gold' file, "
                                                    "one response per line, JSONL/CSV/Excel columns, or a DuConv / "
                                                    "KdConv / DuRecDial file.")],
    gold: Annotated[Path | None, typer.Option(help="Gold responses, matched in order (any layout; a dataset file "
                                                   "also gives each response's dialogue).")] = None,
    dialogues: Annotated[Path | None, typer.Option(help="Dialogue context (DuConv, KdConv, DuRecDial or a "
                                                        "`kgforge export` file) when neither file gives it.")] = None,
    domain: Annotated[str | None, typer.Option(parser=DOMAIN, help="Domain whose graph judges the knowledge "
                                                                   "(knowledge precision/recall/F1).")] = None,
    human: Annotated[Path | None, typer.Option(help="Human scores per response (any number columns): Pearson and "
                                                    "Spearman of every metric with each.")] = None,
    human_id_column: Annotated[str | None, typer.Option(help="Column of --human naming the response id "
                                                             "(default: id, when present).")] = None,
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Per-response file (.jsonl, .csv or .parquet; "
                                                                 "default PREDICTIONS.eval.jsonl).")] = None,
    no_out: Annotated[bool, typer.Option("--no-out", help="Write no per-response file.")] = False,
    metrics: Annotated[str | None, typer.Option(help="Comma-separated metrics (default: all the inputs allow; "
                                                     "see `kgforge metrics`).")] = None,
    layout: Annotated[str, typer.Option(parser=one_of(LAYOUTS), help="Layout of PREDICTIONS.")] = "auto",
    segmentation: Annotated[str, typer.Option(parser=one_of(("auto", *SEGMENTATIONS)),
                                              help="How texts become tokens: whitespace (pre-segmented), jieba "
                                                   "(as the exports segment) or char; auto: whitespace for "
                                                   "segmented inputs, jieba otherwise.")] = "auto",
    prediction_column: Annotated[str | None, typer.Option(help="Column holding the predictions.")] = None,
    gold_column: Annotated[str | None, typer.Option(help="Column holding the gold responses.")] = None,
    id_column: Annotated[str | None, typer.Option(help="Column holding response ids.")] = None,
    dialogue_column: Annotated[str | None, typer.Option(help="Column holding dialogue ids (for --dialogues).")] = None,
    graph_only: Annotated[bool, typer.Option("--graph-only", help="True facts come from the graph only, not "
                                                                  "also from the dialogue's own knowledge.")] = False,
    min_chars: Annotated[int, typer.Option(parser=POSITIVE, help="Shortest entity name matched.")] = 2,
    text_overlap: Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Characters shared with a free-text fact "
                                                                        "to state it (0: never).")] = 6,
    official: Annotated[bool, typer.Option("--official", help="Print only the official DuConv script's lines.")] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Score responses: official DuConv F1/BLEU/DISTINCT, BLEU-3/4, ROUGE-L, knowledge P/R/F1, hallucinations."""
    columns = {key: value for key, value in (("prediction", prediction_column), ("gold", gold_column),
                                             ("id", id_column), ("dialogue", dialogue_column)) if value}
    options = EvalOptions(layout=layout, segmentation=segmentation,
                          metrics=_metric_names(metrics) if metrics else None, columns=columns,
                          knowledge=KnowledgeOptions(min_chars, text_overlap, graph_only),
                          human_id_column=human_id_column)
    target = None if no_out else (out or predictions.with_name(predictions.name + ".eval.jsonl"))
    report = evaluate(predictions, gold=gold, dialogues=dialogues, domain=domain, workdir=workdir, human=human,
                      out=target, options=options)
    if official:
        if "official" not in report:
            raise KgforgeError("--official: the official metrics need gold responses (give --gold)")
        sys.stdout.write(report["official"])
    elif json_out:
        emit_json(report)
    else:
        show_report(report)


def show_report(report: dict[str, Any]) -> None:
    inputs = ", ".join(f"{role} {escape(d['path'])} ({d['layout']})" for role, d in report["inputs"].items())
    console.print(f"[bold]{report['responses']:,} responses[/]  {inputs}  segmentation: {report['segmentation']}")
    table = Table("metric", "value (%)", "what it is", box=None, pad_edge=False)
    for name, value in report["metrics"].items():
        table.add_row(name, "-" if value is None else f"{value * 100:.2f}", METRICS.get(name).description)
    console.print(table)
    for name, why in report["left_out"].items():
        console.print(f"  [dim]{name}: left out, {why}[/]")
    for described in report["inputs"].values():
        for skipped in described.get("skipped", ())[:5]:
            console.print(f"[yellow]skipped[/] {escape(described['path'])} {escape(skipped)}")
    if "knowledge" in report:
        k = report["knowledge"]
        console.print(f"knowledge: {k['true']:,} of {k['fact_mentions']:,} fact mentions true in domain "
                      f"{k['domain']!r}, {k['hallucinations']:,} contradicted; {k['expressed']:,} of "
                      f"{k['gold']:,} gold facts expressed")
    if report.get("correlations"):
        corr = Table("metric", "human", "n", "Pearson", "p", "Spearman", "p", box=None, pad_edge=False)
        for row in report["correlations"]:
            cells = [_number(row[key]) for key in ("pearson", "pearson_p", "spearman", "spearman_p")]
            corr.add_row(row["metric"], escape(row["human"]), str(row["n"]), *cells)
        console.print(corr)
    if "per_response" in report:
        console.print(f"per response (scores, mentions, hallucinations): {escape(report['per_response'])}")


def _number(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


@app.command("metrics")
def metrics_command(json_out: JsonOption = False) -> None:
    """The metrics `kgforge eval` computes (the registry: built-in and registered ones)."""
    described = METRICS.describe()
    if json_out:
        emit_json(described)
        return
    table = Table("metric", "needs", "what it is", box=None, pad_edge=False)
    for metric in described:
        table.add_row(metric["name"], ", ".join(metric["needs"]) or "-", metric["description"])
    console.print(table)
