"""``evaluate``: read the responses, compute every metric the inputs allow, correlate with human scores,
write the per-response file and return the report."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.output import OutputFile, output_dir, output_file
from kgforge.core.plots import figure_name
from kgforge.core.progress import tracked
from kgforge.core.records import Record, flattened, omitted_when_none
from kgforge.core.text import spreadsheet_cell
from kgforge.evaluation.batch import Batch
from kgforge.evaluation.caption import meteor_stages
from kgforge.evaluation.charts import correlation_heatmaps
from kgforge.evaluation.correlation import correlate, read_human
from kgforge.evaluation.embedding import WordVectors, coverage, read_vectors
from kgforge.evaluation.goal_metrics import GoalReport, goal_files, goal_layouts, judge_goals
from kgforge.evaluation.inputs import Responses, detect_layout, layout_names, load_responses
from kgforge.evaluation.knowledge import KnowledgeIndex, KnowledgeOptions
from kgforge.evaluation.metrics import OFFICIAL, official_lines
from kgforge.evaluation.registry import METRICS, Metric
from kgforge.evaluation.segmentation import SEGMENTATIONS, check_segmentation
from kgforge.store.snapshot import Snapshot

PER_RESPONSE_FORMATS = (".jsonl", ".csv", ".parquet")
ALL_METRICS = "all"  # --metrics all: every registered metric the inputs allow


@dataclass(frozen=True)
class EvalOptions:
    layout: str = "auto"  # of the predictions file (inputs.layout_names())
    segmentation: str = "auto"  # whitespace for segmented inputs, jieba otherwise
    metrics: tuple[str, ...] | None = None  # None: every registered metric the inputs allow
    columns: dict[str, str] = field(default_factory=dict)  # prediction/gold/id/dialogue column names
    knowledge: KnowledgeOptions = KnowledgeOptions()
    human_id_column: str | None = None
    vectors: Path | None = None  # word2vec file: the embedding metrics
    model_path: Path | None = None  # local model folder: BERTScore
    bleurt_path: Path | None = None  # local BLEURT checkpoint (PyTorch port): BLEURT
    goal_metrics: bool = False  # also judge whole dialogues (goal_metrics.judge_goals)

    def __post_init__(self) -> None:
        if self.layout not in layout_names():
            raise ArgumentError("layout", f"{self.layout!r} is not one of {', '.join(layout_names())}")
        if self.segmentation != "auto":
            check_segmentation(self.segmentation)
        for name in self.metrics or ():
            if name.lower() != ALL_METRICS:
                METRICS.metric(name)


@dataclass(frozen=True)
class KnowledgeScore(Record):
    """Knowledge precision and recall counts of ``kgforge eval --domain``: the fact mentions the responses make,
    how many the graph (or the dialogue's own knowledge) holds true, and the gold facts they express."""

    domain: str | None
    fact_mentions: int
    true: int  # mentions of facts that hold
    gold: int  # facts the gold responses state
    expressed: int  # of those, stated by the responses too
    hallucinations: int  # mentions the graph contradicts
    graph_only: bool  # true facts came from the graph alone, not also from the dialogue's knowledge


@dataclass(frozen=True)
class EvalReport(Record):
    """Responses scored (``kgforge eval``): corpus value of each metric as a fraction, what was left out and why,
    and, as the inputs allow, knowledge counts, human correlations, goal metrics and the official lines."""

    responses: int
    inputs: dict[str, dict[str, Any]]  # role (predictions, gold, dialogues) -> path, layout, skipped lines
    segmentation: str  # whitespace, jieba or char
    matched_unsegmented: bool  # the inputs came segmented, so entity names matched their unsegmented text
    metrics: dict[str, float | None]  # metric name -> corpus value (a fraction; None: undefined here)
    left_out: dict[str, str]  # metric name -> why it was not computed
    resources: dict[str, Any] = flattened()  # meteor_stages, vectors, model, bleurt: what the metrics used
    official: str | None = omitted_when_none()  # the official DuConv script's lines (with gold responses)
    knowledge: KnowledgeScore | None = omitted_when_none()
    human: dict[str, Any] | None = omitted_when_none()  # the human scores read: file, annotators, aspects
    correlations: tuple[dict[str, Any], ...] | None = omitted_when_none()  # metric x human aspect: Pearson, Spearman
    goals: dict[str, Any] | None = omitted_when_none()  # whole-dialogue metrics (``goal_metrics``)
    per_response: str | None = omitted_when_none()  # the per-response file written
    figures: tuple[str, ...] | None = omitted_when_none()  # the PNG files drawn (``plot``)
    seconds: dict[str, float] = field(default_factory=dict)  # read, graph, metrics, total


def evaluate(
    predictions: Path,
    *,
    gold: Path | None = None,
    dialogues: Path | None = None,
    snapshot: Snapshot | None = None,
    human: Path | None = None,
    out: Path | None = None,
    options: EvalOptions = EvalOptions(),
    index: KnowledgeIndex | None = None,
    plot: Path | None = None,
) -> EvalReport:
    """Score ``predictions``; with ``snapshot`` (a domain's build), knowledge precision and recall against its
    graph. The report's ``metrics`` are corpus values (fractions), ``per_response`` the file with one row per
    response (``out``, or none when ``out`` is None). ``index`` reuses a knowledge index built before (it must
    match the responses' segmentation). ``plot`` (a folder, with ``human``) receives the metric × human-score
    heatmap (:mod:`.charts`)."""
    if plot is not None and human is None:
        raise ArgumentError("--plot", "draws the correlations with human scores: give --human (or --system)")
    started = time.perf_counter()
    domain = snapshot.domain if snapshot is not None else None
    target = per_response_file(out, snapshot) if out is not None else None  # refused before the scoring
    responses = load_responses(Path(predictions), gold, dialogues, options.layout, options.columns)
    timings: dict[str, float] = {"read": time.perf_counter() - started}
    if snapshot is not None and index is None:
        mark = time.perf_counter()
        index = KnowledgeIndex.for_snapshot(snapshot, responses.segmented, options.knowledge)
        timings["graph"] = time.perf_counter() - mark
    mark = time.perf_counter()
    scored = score(responses, options, index)
    timings["metrics"] = time.perf_counter() - mark
    batch, chosen, values, corpus = scored.batch, scored.chosen, scored.values, scored.corpus
    official = official_lines(corpus)
    per_response = responses.frame.select("id", "prediction", "gold").with_columns(**values)
    knowledge = None
    if batch.has_knowledge and any("knowledge" in m.needs for m in chosen):
        per_response = per_response.with_columns(batch.knowledge)
        knowledge = knowledge_score(batch.knowledge, domain, options.knowledge.graph_only)
    described, correlations = None, None
    if human is not None:
        scores, described = read_human(Path(human), responses.frame["id"].to_list(), options.human_id_column)
        correlations = tuple(correlate(pl.DataFrame(values), scores))
    goals = None
    if options.goal_metrics:
        goals = goals_of(Path(predictions), gold, dialogues, options.layout).to_dict(per_dialogue=False)
    if target is not None:
        write_per_response(per_response, target)
    figures = None
    if plot is not None and correlations is not None:
        name = figure_name(gold or dialogues or Path(predictions), domain)
        figures = tuple(str(path) for path in correlation_heatmaps(correlations, output_dir(plot, what="--plot"), name))
    timings["total"] = time.perf_counter() - started
    return EvalReport(
        responses=batch.size,
        inputs=responses.sources,
        segmentation=scored.segmentation,
        matched_unsegmented=responses.segmented,
        metrics=corpus,
        left_out=scored.left_out,
        resources=_resources_used(batch, chosen),
        official=official,
        knowledge=knowledge,
        human=described,
        correlations=correlations,
        goals=goals,
        per_response=None if target is None else str(target),
        figures=figures,
        seconds={key: round(value, 3) for key, value in timings.items()},
    )


@dataclass(frozen=True)
class Scored:
    """One set of responses scored: the batch the metrics saw, those computed (in order) and those left out with
    the reason, each computed metric's per-response values and its corpus value."""

    batch: Batch
    segmentation: str
    chosen: tuple[Metric, ...]
    left_out: dict[str, str]
    values: dict[str, pl.Series]
    corpus: dict[str, float | None]


def score(responses: Responses, options: EvalOptions, index: KnowledgeIndex | None = None) -> Scored:
    """Every metric ``options`` asks for that the inputs allow, on ``responses``; with ``index`` (a domain's
    knowledge index) the knowledge metrics too. ``evaluate`` and the leaderboard both score through here, so
    a system scored in a leaderboard gets exactly what ``kgforge eval`` gives it alone."""
    segmentation = (
        options.segmentation if options.segmentation != "auto" else ("whitespace" if responses.segmented else "jieba")
    )
    check_segmentation(segmentation)
    batch = Batch(
        responses.frame.select("id", "prediction", "gold"),
        segmentation,
        responses.has_gold,
        _knowledge_judge(index, responses) if index is not None else None,
        vectors=_vectors(options.vectors) if options.vectors is not None else None,  # read once per file
        model_path=options.model_path,
        bleurt_path=options.bleurt_path,
    )
    chosen, left_out = choose_metrics(batch, options.metrics)
    values = metric_values(batch, chosen)
    corpus = {metric.name: metric.corpus_value(batch, values[metric.name]) for metric in chosen}
    return Scored(batch, segmentation, tuple(chosen), left_out, values, corpus)


def metric_values(batch: Batch, chosen: list[Metric]) -> dict[str, pl.Series]:
    """Each chosen metric's per-response values, a progress bar's step each (the first to need the tokens or the
    graph's judgement computes them for the others)."""
    values = {}
    with tracked("score responses", len(chosen)) as bar:
        for metric in chosen:
            bar.update(what=f"score responses: {metric.name}")
            values[metric.name] = metric.values(batch)
            bar.advance()
    return values


INTERVAL_CHUNK = 64  # resamples weighed at once: a (chunk × responses) matrix, bounded for 100k responses


def corpus_intervals(scored: Scored, bootstrap: int, seed: int = 0) -> dict[str, list[float] | None]:
    """Each computed metric's percentile bootstrap 95 % interval of its corpus value: ``bootstrap`` resamples of
    the responses (seeded), each metric's corpus value recomputed on each from the per-response counts
    (``Metric.resampled``). None for a metric that cannot be resampled (a plug-in with its own corpus value
    and no ``resample``) or when fewer than half the resamples give a value."""
    size = scored.batch.size
    if not bootstrap or size < 2:
        return {}
    rng = np.random.default_rng(seed)
    found: dict[str, list[np.ndarray]] = {metric.name: [] for metric in scored.chosen}
    for start in range(0, bootstrap, INTERVAL_CHUNK):
        draws = rng.integers(0, size, size=(min(INTERVAL_CHUNK, bootstrap - start), size))
        weights = np.stack([np.bincount(row, minlength=size) for row in draws]).astype(np.float64)
        for metric in scored.chosen:
            values = metric.resampled(scored.batch, scored.values[metric.name], weights)
            if values is None:
                found.pop(metric.name, None)
            elif metric.name in found:
                found[metric.name].append(values)
    intervals: dict[str, list[float] | None] = {metric.name: None for metric in scored.chosen}
    for name, parts in found.items():
        values = np.concatenate(parts)
        finite = values[np.isfinite(values)]
        if finite.size >= bootstrap / 2:
            low, high = np.percentile(finite, [2.5, 97.5])
            intervals[name] = [float(low), float(high)]
    return intervals


def knowledge_score(knowledge: pl.DataFrame, domain: str | None, graph_only: bool) -> KnowledgeScore:
    """The corpus counts of the per-response knowledge columns."""
    return KnowledgeScore(
        domain=domain,
        fact_mentions=int(knowledge["k_mentions"].sum()),
        true=int(knowledge["k_true"].sum()),
        gold=int(knowledge["k_gold"].sum()),
        expressed=int(knowledge["k_expressed"].sum()),
        hallucinations=int(knowledge["hallucinations"].list.len().sum()),
        graph_only=graph_only,
    )


def _knowledge_judge(index: KnowledgeIndex, responses: Responses) -> Callable[[], pl.DataFrame]:
    frame = responses.frame
    if not responses.dialogues:
        raise KgforgeError(
            "knowledge metrics need each response's dialogue: give --gold or --dialogues as a "
            "DuConv, KdConv, DuRecDial or kgforge export file (or topics/knowledge columns)"
        )
    if index.segmented != responses.segmented:
        raise KgforgeError(
            "the knowledge index was built for "
            f"{'segmented' if index.segmented else 'unsegmented'} text, these responses are not"
        )

    def judge() -> pl.DataFrame:
        row_gold = [
            None if triples is None else [tuple(t) for t in triples] for triples in frame["gold_knowledge"].to_list()
        ]
        return index.assess(
            frame["prediction"].to_list(),
            frame["gold"].to_list(),
            frame["dialogue"].to_list(),
            row_gold,
            responses.dialogues,
        )

    return judge


def goals_of(predictions: Path, gold: Path | None, dialogues: Path | None, layout: str = "auto") -> GoalReport:
    """Goal metrics of the dialogues the responses belong to: ``predictions`` itself when it is a dialogue file,
    else ``gold`` or ``dialogues`` (a dialogue file) with the predictions as its bot turns."""
    own = layout if layout != "auto" else detect_layout(predictions)
    if own in goal_layouts() and gold is None:
        return judge_goals(predictions, layout=own)
    for context in (gold, dialogues):
        if context is not None and detect_layout(Path(context)) in goal_layouts():
            return judge_goals(Path(context), predictions)
    raise KgforgeError(
        f"--goal-metrics judges whole dialogues: give a {goal_files()} dialogue file, "
        f"or predictions with --gold/--dialogues naming one ({predictions} is a {own} file)"
    )


@lru_cache(maxsize=2)
def _vectors(path: Path) -> WordVectors:
    return read_vectors(path)


def choose_metrics(batch: Batch, names: tuple[str, ...] | None) -> tuple[list[Metric], dict[str, str]]:
    """The metrics to compute, and those left out with the reason."""
    every = names is not None and any(name.lower() == ALL_METRICS for name in names)
    wanted = (
        list(_default_metrics(every=True))
        if every
        else ([METRICS.metric(name) for name in names] if names else list(_default_metrics()))
    )
    have = {
        "gold": batch.has_gold,
        "knowledge": batch.has_knowledge,
        "vectors": batch.has_vectors,
        "model": batch.has_model,
        "bleurt": batch.has_bleurt,
    }
    reasons = {
        "gold": "no gold responses (give --gold, or a file with a gold column)",
        "knowledge": "no domain graph (give --domain)",
        "vectors": "no word vectors (give --vectors FILE, word2vec text or binary)",
        "model": "no model (give --model-path DIR, a local transformers model; needs the extra kgforge[bertscore])",
        "bleurt": "no BLEURT checkpoint (give --bleurt-path DIR, a local PyTorch port of a BLEURT "
        "checkpoint; needs the extra kgforge[bleurt])",
    }
    chosen, left_out = [], {}
    for metric in wanted:
        missing = [need for need in metric.needs if not have[need]]
        if missing:
            left_out[metric.name] = reasons[missing[0]]
        else:
            chosen.append(metric)
    if names and not every and left_out:
        raise KgforgeError("; ".join(f"metric {name}: {why}" for name, why in left_out.items()))
    return chosen, left_out


def _default_metrics(every: bool = False) -> list[Metric]:
    """The registered metrics computed by default (``every``: all of them), the official five first (in the
    script's order), then by name."""
    official = [METRICS.metric(name) for name in OFFICIAL]
    return official + [entry.obj for entry in METRICS if entry.name not in OFFICIAL and (every or entry.obj.default)]


def _resources_used(batch: Batch, chosen: tuple[Metric, ...]) -> dict[str, Any]:
    """What the report must state about the metrics that need more than the texts."""
    names = {metric.name for metric in chosen}
    used: dict[str, Any] = {}
    if "meteor" in names:
        used["meteor_stages"] = meteor_stages()
    if batch.vectors is not None and names & {"embedding_average", "vector_extrema", "greedy_matching"}:
        predictions, golds = batch.token_lists
        known, total = coverage(batch.vectors, predictions + golds)
        used["vectors"] = {
            "path": str(batch.vectors.path),
            "words": len(batch.vectors.index),
            "dim": batch.vectors.dim,
            "tokens_known": known,
            "tokens": total,
        }
    if batch.model_path is not None and names & {"bertscore_p", "bertscore_r", "bertscore_f1"}:
        used["model"] = {"path": str(batch.model_path), **batch.bertscore.model.as_dict()}
    if batch.bleurt_path is not None and "bleurt" in names:
        used["bleurt"] = {"path": str(batch.bleurt_path), **batch.bleurt.model.as_dict()}
    return used


def per_response_file(out: Path | str | OutputFile, snapshot: Snapshot | None = None) -> OutputFile:
    """The per-response file ``out``, checked (a user's file, of a kind :func:`write_per_response` writes; never
    inside ``snapshot``'s domain)."""
    target = snapshot.paths.output(out) if snapshot is not None else output_file(out)
    if target.path.suffix.lower() not in PER_RESPONSE_FORMATS:
        raise ArgumentError("--out", f"{target.path.name!r} must end in {', '.join(PER_RESPONSE_FORMATS)}")
    return target


def write_per_response(frame: pl.DataFrame, out: Path | str | OutputFile) -> None:
    """One row per response: JSON lines (nested lists as they are), CSV (lists as JSON text) or Parquet;
    the file appears complete or not at all."""
    target = per_response_file(out)
    suffix = target.path.suffix.lower()
    with target.part() as tmp:
        if suffix == ".parquet":
            frame.write_parquet(tmp)
        elif suffix == ".csv":
            nested = [name for name, dtype in frame.schema.items() if isinstance(dtype, (pl.List, pl.Struct))]
            flat = frame.with_columns(
                pl.Series(name, [json.dumps(v, ensure_ascii=False) for v in frame[name].to_list()]) for name in nested
            )
            texts = [name for name, dtype in flat.schema.items() if dtype == pl.String]
            flat = flat.with_columns(
                pl.col(name).map_elements(spreadsheet_cell, return_dtype=pl.String) for name in texts
            )
            flat.write_csv(tmp)
        else:
            with open(tmp, "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row, ensure_ascii=False) + "\n" for row in frame.iter_rows(named=True))


__all__ = [
    "EvalOptions",
    "EvalReport",
    "KnowledgeScore",
    "SEGMENTATIONS",
    "Scored",
    "choose_metrics",
    "corpus_intervals",
    "evaluate",
    "goals_of",
    "score",
    "write_per_response",
]
