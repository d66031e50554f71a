"""``evaluate``: read the responses, compute every metric the inputs allow, correlate with human scores,
write the per-response file and return the report."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.files import atomic_path
from kgforge.evaluation._kgforge import (
    ArgumentError,
    KgforgeError,
    domain_paths,
    safe_output_path,
    spreadsheet_cell,
)
from kgforge.evaluation.batch import Batch
from kgforge.evaluation.correlation import correlate, read_human
from kgforge.evaluation.inputs import LAYOUTS, Responses, load_responses
from kgforge.evaluation.knowledge import KnowledgeIndex, KnowledgeOptions
from kgforge.evaluation.metrics import official_lines
from kgforge.evaluation.registry import METRICS, Metric
from kgforge.evaluation.segmentation import SEGMENTATIONS, check_segmentation

PER_RESPONSE_FORMATS = (".jsonl", ".csv", ".parquet")


@dataclass(frozen=True)
class EvalOptions:
    layout: str = "auto"  # of the predictions file (inputs.LAYOUTS)
    segmentation: str = "auto"  # whitespace for segmented inputs, jieba otherwise
    metrics: tuple[str, ...] | None = None  # None: every registered metric the inputs allow
    columns: dict[str, str] = field(default_factory=dict)  # prediction/gold/id/dialogue column names
    knowledge: KnowledgeOptions = KnowledgeOptions()
    human_id_column: str | None = None

    def __post_init__(self) -> None:
        if self.layout not in LAYOUTS:
            raise ArgumentError("layout", f"{self.layout!r} is not one of {', '.join(LAYOUTS)}")
        if self.segmentation != "auto":
            check_segmentation(self.segmentation)
        for name in self.metrics or ():
            METRICS.get(name)


def evaluate(predictions: Path, *, gold: Path | None = None, dialogues: Path | None = None,
             domain: str | None = None, workdir: Path | str | None = None, human: Path | None = None,
             out: Path | None = None, options: EvalOptions = EvalOptions(),
             index: KnowledgeIndex | None = None) -> dict[str, Any]:
    """Score ``predictions``; the report's ``metrics`` are corpus values (fractions), ``per_response`` the
    file with one row per response (``out``, or none when ``out`` is None). ``index`` reuses a knowledge index
    built before (it must match the responses' segmentation)."""
    started = time.perf_counter()
    if out is not None:  # refused before the scoring, not after it
        out = domain_paths(domain, workdir).output(out) if domain else safe_output_path(out)
    responses = load_responses(Path(predictions), gold, dialogues, options.layout, options.columns)
    segmentation = options.segmentation if options.segmentation != "auto" else (
        "whitespace" if responses.segmented else "jieba")
    timings: dict[str, float] = {"read": time.perf_counter() - started}
    if domain is not None and index is None:
        mark = time.perf_counter()
        index = KnowledgeIndex.for_domain(domain, workdir, responses.segmented, options.knowledge)
        timings["graph"] = time.perf_counter() - mark
    batch = Batch(responses.frame.select("id", "prediction", "gold"), segmentation, responses.has_gold,
                  _knowledge_judge(index, responses) if index is not None else None)
    chosen, left_out = _choose(batch, options.metrics)
    mark = time.perf_counter()
    values = {metric.name: metric.values(batch) for metric in chosen}
    corpus = {metric.name: metric.corpus_value(batch, values[metric.name]) for metric in chosen}
    timings["metrics"] = time.perf_counter() - mark
    report: dict[str, Any] = {
        "responses": batch.size, "inputs": responses.sources, "segmentation": segmentation,
        "matched_unsegmented": responses.segmented, "metrics": corpus, "left_out": left_out,
    }
    official = official_lines(corpus)
    if official is not None:
        report["official"] = official
    per_response = responses.frame.select("id", "prediction", "gold").with_columns(**values)
    if batch.has_knowledge and any("knowledge" in m.needs for m in chosen):
        knowledge = batch.knowledge
        per_response = per_response.with_columns(knowledge)
        report["knowledge"] = {"domain": domain, "fact_mentions": int(knowledge["k_mentions"].sum()),
                               "true": int(knowledge["k_true"].sum()), "gold": int(knowledge["k_gold"].sum()),
                               "expressed": int(knowledge["k_expressed"].sum()),
                               "hallucinations": int(knowledge["hallucinations"].list.len().sum()),
                               "graph_only": options.knowledge.graph_only}
    if human is not None:
        scores, described = read_human(Path(human), responses.frame["id"].to_list(), options.human_id_column)
        report["human"] = described
        report["correlations"] = correlate(pl.DataFrame(values), scores)
    if out is not None:
        write_per_response(per_response, Path(out))
        report["per_response"] = str(out)
    timings["total"] = time.perf_counter() - started
    report["seconds"] = {key: round(value, 3) for key, value in timings.items()}
    return report


def _knowledge_judge(index: KnowledgeIndex, responses: Responses) -> Callable[[], pl.DataFrame]:
    frame = responses.frame
    if not responses.dialogues:
        raise KgforgeError("knowledge metrics need each response's dialogue: give --gold or --dialogues as a "
                           "DuConv, KdConv, DuRecDial or kgforge export file (or topics/knowledge columns)")
    if index.segmented != responses.segmented:
        raise KgforgeError("the knowledge index was built for "
                           f"{'segmented' if index.segmented else 'unsegmented'} text, these responses are not")

    def judge() -> pl.DataFrame:
        row_gold = [None if triples is None else [tuple(t) for t in triples]
                    for triples in frame["gold_knowledge"].to_list()]
        return index.assess(frame["prediction"].to_list(), frame["gold"].to_list(), frame["dialogue"].to_list(),
                            row_gold, responses.dialogues)

    return judge


def _choose(batch: Batch, names: tuple[str, ...] | None) -> tuple[list[Metric], dict[str, str]]:
    """The metrics to compute, and those left out with the reason."""
    wanted = [METRICS.get(name) for name in names] if names else [METRICS.get(name) for name in METRICS.names()]
    have = {"gold": batch.has_gold, "knowledge": batch.has_knowledge}
    reasons = {"gold": "no gold responses (give --gold, or a file with a gold column)",
               "knowledge": "no domain graph (give --domain)"}
    chosen, left_out = [], {}
    for metric in wanted:
        missing = [need for need in metric.needs if not have[need]]
        if missing:
            left_out[metric.name] = reasons[missing[0]]
        else:
            chosen.append(metric)
    if names and left_out:
        raise KgforgeError("; ".join(f"metric {name}: {why}" for name, why in left_out.items()))
    return chosen, left_out


def write_per_response(frame: pl.DataFrame, out: Path) -> None:
    """One row per response: JSON lines (nested lists as they are), CSV (lists as JSON text) or Parquet;
    the file appears complete or not at all."""
    suffix = out.suffix.lower()
    if suffix not in PER_RESPONSE_FORMATS:
        raise ArgumentError("--out", f"{out.name!r} must end in {', '.join(PER_RESPONSE_FORMATS)}")
    with atomic_path(out) as tmp:
        if suffix == ".parquet":
            frame.write_parquet(tmp)
        elif suffix == ".csv":
            nested = [name for name, dtype in frame.schema.items() if isinstance(dtype, (pl.List, pl.Struct))]
            flat = frame.with_columns(pl.Series(name, [json.dumps(v, ensure_ascii=False) for v in frame[name].to_list()])
                                      for name in nested)
            texts = [name for name, dtype in flat.schema.items() if dtype == pl.String]
            flat = flat.with_columns(pl.col(name).map_elements(spreadsheet_cell, return_dtype=pl.String)
                                     for name in texts)
            flat.write_csv(tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in frame.iter_rows(named=True))


__all__ = ["EvalOptions", "SEGMENTATIONS", "evaluate", "write_per_response"]
