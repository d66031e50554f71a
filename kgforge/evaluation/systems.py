"""Many systems in one run (``kgforge eval --system NAME=FILE …`` or a folder of systems): every metric per
system and per task, a leaderboard written as JSON, CSV and a Markdown table, and — with human scores — the
agreement of the annotators and the correlation of every metric with every human aspect, at turn level
(responses of all systems pooled) and at system level (one point per system), per task: Pearson, Spearman and
Kendall with their p-values (scipy) and percentile bootstrap 95 % confidence intervals.

A system is named ``SYSTEM`` or ``TASK/SYSTEM``. A folder holds one file per system (its name without suffix
is the system's), or one sub-folder per task; a file called ``gold.*`` or ``reference.*`` in a folder is that
task's gold responses, not a system. Each system's file is read as ``kgforge eval`` reads predictions (any
layout), with ``--gold`` (or its task's gold) and ``--dialogues``.
"""

from __future__ import annotations

import csv
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.output import OutputDir, OutputFile, output_dir
from kgforge.core.plots import figure_name
from kgforge.core.progress import iterate
from kgforge.core.records import Record, omitted_when_none
from kgforge.core.text import spreadsheet_cell
from kgforge.evaluation.charts import correlation_heatmaps, leaderboard_figure
from kgforge.evaluation.figures import figure_text
from kgforge.evaluation.human import HumanScores, read_human_scores
from kgforge.evaluation.inputs import load_responses
from kgforge.evaluation.knowledge import KnowledgeIndex
from kgforge.evaluation.registry import in_percent
from kgforge.evaluation.report import EvalOptions, corpus_intervals, goals_of, score
from kgforge.store.snapshot import Snapshot

GOLD_NAMES = ("gold", "reference", "references", "ref")
SYSTEM_SUFFIXES = (".txt", ".tsv", ".jsonl", ".json", ".csv", ".xlsx", ".parquet")
ALL = "all"
MIN_PAIRS = 3


@dataclass(frozen=True)
class SystemScores:
    """One system's scores: its task and name, the file read, and each metric's corpus value."""

    task: str
    system: str
    path: str  # the system's responses file
    responses: int
    metrics: dict[str, float | None]  # metric name -> corpus value (a fraction; None: undefined here)
    values: pl.DataFrame = field(repr=False)  # ``id`` and one column per metric, one row per response
    intervals: dict[str, list[float] | None] = field(default_factory=dict)  # metric -> bootstrap 95 % (--plot)


@dataclass(frozen=True)
class Leaderboard(Record):
    """Many systems scored in one run (``kgforge eval --system``): each system's metrics, what was left out, and
    with human scores the annotators' agreement and every metric's correlation with every human aspect."""

    systems: tuple[SystemScores, ...]
    metrics: tuple[str, ...]  # the metrics computed, in the leaderboard's column order
    left_out: dict[str, str]  # metric name -> why it was not computed
    human: dict[str, Any] | None  # the human scores read: files, aspects, annotators, means (None: none given)
    agreement: dict[str, Any]  # human aspect -> the annotators' agreement
    correlations: tuple[dict[str, Any], ...]  # task x level x metric x aspect: Pearson, Spearman, Kendall
    files: dict[str, str]  # json, csv, markdown -> the leaderboard files written (empty: none)
    seconds: float
    figures: tuple[str, ...] = ()  # the PNG files drawn (``plot``)

    def table(self) -> pl.DataFrame:
        """One row per (task, system): every metric's corpus value, and the human aspects' means."""
        rows = [{"task": s.task, "system": s.system, "responses": s.responses, **s.metrics} for s in self.systems]
        frame = pl.DataFrame(
            rows,
            schema={
                "task": pl.String,
                "system": pl.String,
                "responses": pl.Int64,
                **{m: pl.Float64 for m in self.metrics},
            },
        )
        if self.human and self.human.get("means"):
            means = pl.DataFrame(self.human["means"])
            frame = frame.join(means, on=["task", "system"], how="left")
        return frame

    def as_dict(self) -> dict[str, Any]:
        """The JSON ``kgforge eval --system --json`` prints and leaderboard.json holds: the table as rows, each
        system without its per-response values."""
        return {
            "systems": [{k: v for k, v in asdict(s).items() if k != "values"} for s in self.systems],
            "metrics": list(self.metrics),
            "leaderboard": self.table().to_dicts(),
            "left_out": self.left_out,
            "human": self.human,
            "agreement": self.agreement,
            "correlations": list(self.correlations),
            "files": self.files,
            "figures": list(self.figures),
            "seconds": round(self.seconds, 3),
        }


# ---------------------------------------------------------------- which systems


def parse_system(spec: str) -> tuple[str, str, Path]:
    """``NAME=FILE`` or ``TASK/NAME=FILE`` → (task, system, path)."""
    name, sep, file = spec.partition("=")
    if not sep or not name.strip() or not file.strip():
        raise ArgumentError("--system", f"{spec!r} is not NAME=FILE (or TASK/NAME=FILE)")
    task, _, system = name.strip().rpartition("/")
    return task or ALL, system, Path(file)


def systems_in_folder(folder: Path) -> tuple[dict[tuple[str, str], Path], dict[str, Path]]:
    """The systems (``(task, system) -> file``) and the tasks' gold files of a folder."""
    systems: dict[tuple[str, str], Path] = {}
    golds: dict[str, Path] = {}
    places = [(ALL, folder)] + [(sub.name, sub) for sub in sorted(folder.iterdir()) if sub.is_dir()]
    for task, place in places:
        for file in sorted(p for p in place.iterdir() if p.is_file() and p.suffix.lower() in SYSTEM_SUFFIXES):
            if file.stem.lower() in GOLD_NAMES:
                golds[task] = file
            else:
                systems[task, file.stem] = file
    if not systems:
        raise InputError(f"{folder}: no system files ({', '.join(SYSTEM_SUFFIXES)}) in the folder or its sub-folders")
    return systems, golds


# ---------------------------------------------------------------- scoring


def evaluate_systems(
    systems: Mapping[tuple[str, str], Path],
    *,
    gold: Path | None = None,
    golds: Mapping[str, Path] | None = None,
    dialogues: Path | None = None,
    snapshot: Snapshot | None = None,
    options: EvalOptions = EvalOptions(),
    human: Path | None = None,
    out: Path | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    plot: Path | None = None,
) -> Leaderboard:
    """Score every system; with ``snapshot`` (a domain's build) the knowledge metrics against its graph (its index
    built once per segmentation); ``out`` (a folder) receives leaderboard.json, leaderboard.csv, leaderboard.md; ``plot`` (a
    folder) the leaderboard with each figure's bootstrap interval and, with ``human``, the correlation
    heatmaps (:mod:`.charts`)."""
    if not systems:
        raise ArgumentError("--system", "no system given")
    folder = output_dir(out, what="--leaderboard") if out is not None else None  # refused before the scoring
    drawing = output_dir(plot, what="--plot") if plot is not None else None
    started = time.perf_counter()
    scored: list[SystemScores] = []
    left_out: dict[str, str] = {}
    indexes: dict[bool, KnowledgeIndex] = {}  # one graph index per segmentation, shared by every system
    for (task, system), path in iterate(systems.items(), "score systems"):
        reference = (golds or {}).get(task, gold)
        responses = load_responses(Path(path), reference, dialogues, options.layout, options.columns)
        if snapshot is not None and responses.segmented not in indexes:
            indexes[responses.segmented] = KnowledgeIndex.for_snapshot(snapshot, responses.segmented, options.knowledge)
        found = score(responses, options, indexes.get(responses.segmented))
        intervals = corpus_intervals(found, bootstrap, seed) if plot is not None else {}
        left_out.update(found.left_out)
        corpus = dict(found.corpus)
        if options.goal_metrics:
            goals = goals_of(Path(path), reference, dialogues, options.layout)
            corpus.update(goal_figures(goals.summary))
            left_out.update({f"goal:{k}": v for k, v in goals.left_out.items()})
        scored.append(
            SystemScores(
                task,
                system,
                str(path),
                found.batch.size,
                corpus,
                responses.frame.select("id").with_columns(**found.values),
                intervals,
            )
        )
    names = tuple(dict.fromkeys(name for s in scored for name in s.metrics))
    human_report: dict[str, Any] | None = None
    agreement_report: dict[str, Any] = {}
    correlations: tuple[dict[str, Any], ...] = ()
    if human is not None:
        scores = read_human_scores(Path(human))
        human_report, agreement_report, correlations = _with_human(scored, names, scores, bootstrap, seed)
    board = Leaderboard(
        tuple(scored),
        names,
        {k: v for k, v in left_out.items() if k not in names},
        human_report,
        agreement_report,
        correlations,
        {},
        time.perf_counter() - started,
    )
    if drawing is not None:
        name = figure_name(gold or dialogues or next(iter(systems.values())), snapshot.domain if snapshot else None)
        drawn = correlation_heatmaps(board.correlations, drawing, name)
        drawn += leaderboard_figure(board.systems, (human_report or {}).get("mean_intervals", []), drawing, name)
        board = replace(board, figures=tuple(str(path) for path in drawn))
    if folder is not None:
        board = replace(board, files=write_leaderboard(board, folder))
    return board


def goal_figures(summary: Mapping[str, Any]) -> dict[str, float | None]:
    """The goal summary's numbers as leaderboard columns."""
    figures = {
        name: summary.get(name)
        for name in (
            "goal_completion",
            "triples_used",
            "properties_used",
            "leading_success",
            "user_topic_consistency",
            "recommendation_success",
        )
        if name in summary
    }
    for band, share in (summary.get("info_bands") or {}).items():
        figures[f"info_{band.replace('+', 'plus')}"] = share
    for grade, share in (summary.get("completion_distribution") or {}).items():
        figures[f"completion_{grade}"] = share
    return figures


# ---------------------------------------------------------------- human scores


def _with_human(
    scored: list[SystemScores], names: tuple[str, ...], scores: HumanScores, bootstrap: int, seed: int
) -> tuple[dict[str, Any], dict[str, Any], tuple[dict[str, Any], ...]]:
    means = scores.means()
    systems_only = {s.system for s in scored}
    if means["system"].null_count():
        if len(scored) != 1:
            raise InputError(
                f"{scores.paths[0]}: the human scores name no system (a 'system' column, or one "
                "file per system in a folder) and there are several systems"
            )
        means = means.with_columns(system=pl.lit(scored[0].system), task=pl.lit(scored[0].task))
    unknown = sorted(set(means["system"].unique().to_list()) - systems_only)
    if unknown:
        raise InputError(
            f"{scores.files_of(unknown[0])}: human scores for systems not evaluated: {', '.join(unknown)} "
            f"(systems: {', '.join(sorted(systems_only))})"
        )
    tasks_given = set(means["task"].unique().to_list()) != {ALL}
    unknown_tasks = sorted(set(means["task"].unique().to_list()) - {s.task for s in scored}) if tasks_given else []
    if unknown_tasks:
        raise InputError(
            f"{scores.paths[0]}: human scores for tasks not evaluated: {', '.join(unknown_tasks)} "
            f"(tasks: {', '.join(sorted({s.task for s in scored}))})"
        )
    if not tasks_given:  # the human file names no task: its systems are matched by name in every task
        means = means.drop("task").join(
            pl.DataFrame({"task": [s.task for s in scored], "system": [s.system for s in scored]}),
            on="system",
            how="inner",
        )
    rows = [row for row in (_rated(s, means, scores) for s in scored) if row is not None]
    turns = pl.concat(rows, how="diagonal") if rows else pl.DataFrame()
    aspects = [a for a in scores.aspects if a in turns.columns]
    system_means = (
        turns.group_by("task", "system", maintain_order=True).agg(pl.col(aspects).mean()) if rows else pl.DataFrame()
    )
    correlations = _correlations(scored, names, turns, system_means, aspects, bootstrap, seed) if rows else ()
    described = {
        "paths": list(scores.paths),
        "aspects": aspects,
        "annotators": scores.annotators,
        "matched_by": "id" if scores.by_id else "order",
        "not_scores": list(scores.not_scores),
        "rated_responses": turns.height if rows else 0,
        "means": system_means.to_dicts() if rows else [],
        "mean_intervals": _mean_intervals(turns, aspects, bootstrap, seed) if rows else [],
        "unrated_systems": sorted(
            f"{s.task}/{s.system}"
            for s in scored
            if not rows
            or (s.task, s.system) not in set(zip(turns["task"].to_list(), turns["system"].to_list(), strict=True))
        ),
    }
    agreement = {aspect: found.to_dict() for aspect, found in scores.agreement().items()}
    return described, agreement, tuple(correlations)


def _rated(s: SystemScores, means: pl.DataFrame, scores: HumanScores) -> pl.DataFrame | None:
    """One system's rated responses: its per-response metric values beside the annotators' mean per aspect
    (matched by id, else in order); None when the human scores rate none of its responses."""
    mine = means.filter((pl.col("task") == s.task) & (pl.col("system") == s.system))
    if mine.height == 0:
        return None
    items = s.values["id"] if scores.by_id else pl.Series([f"#{i + 1}" for i in range(s.responses)])
    if not scores.by_id and mine.height != s.responses:
        raise InputError(
            f"{scores.files_of(s.system)}: {mine.height} human-scored responses for system {s.system!r} "
            f"({s.task}) but {s.path} has {s.responses}, and the scores have no id column: they are "
            "matched in order, so the counts must be equal"
        )
    joined = s.values.with_columns(item=items).join(mine, on="item", how="inner")
    if scores.by_id and joined.height < mine.height:
        raise InputError(
            f"{scores.files_of(s.system)}: {mine.height - joined.height} human-scored ids of system "
            f"{s.system!r} are not among the ids of its responses ({s.path})"
        )
    return joined.with_columns(task=pl.lit(s.task), system=pl.lit(s.system))


def _correlations(
    scored: list[SystemScores],
    names: tuple[str, ...],
    turns: pl.DataFrame,
    system_means: pl.DataFrame,
    aspects: list[str],
    bootstrap: int,
    seed: int,
) -> tuple[dict[str, Any], ...]:
    """Per task, every metric × aspect at turn level (the rated responses of all systems) and at system level
    (each system's corpus value against its mean human score)."""
    correlations = []
    for task in dict.fromkeys(s.task for s in scored):
        at_turns = turns.filter(pl.col("task") == task)
        corpus = pl.DataFrame([{"system": s.system, **s.metrics} for s in scored if s.task == task])
        at_systems = corpus.join(system_means.filter(pl.col("task") == task), on="system", how="inner")
        for metric in names:
            for aspect in aspects:
                levels = (("turn", at_turns), ("system", at_systems))
                correlations += [
                    {
                        "task": task,
                        "level": level,
                        "metric": metric,
                        "human": aspect,
                        **correlate(frame[metric], frame[aspect], bootstrap, seed).as_dict(),
                    }
                    for level, frame in levels
                    if frame.height and metric in frame.columns
                ]
    return tuple(correlations)


def _mean_intervals(turns: pl.DataFrame, aspects: list[str], bootstrap: int, seed: int) -> list[dict[str, Any]]:
    """Each system's mean human score per aspect with its percentile bootstrap 95 % interval over its rated
    responses (each response's score the annotators' mean)."""
    found = []
    rng = np.random.default_rng(seed)
    for (task, system), rows in turns.group_by("task", "system", maintain_order=True):
        for aspect in aspects:
            values = rows[aspect].drop_nulls().to_numpy().astype(np.float64)
            interval = None
            if bootstrap and values.size >= MIN_PAIRS:
                means = values[rng.integers(0, values.size, size=(bootstrap, values.size))].mean(axis=1)
                interval = [float(v) for v in np.percentile(means, [2.5, 97.5])]
            mean = float(values.mean()) if values.size else None
            found.append({"task": task, "system": system, "aspect": aspect, "mean": mean, "interval": interval})
    return found


@dataclass(frozen=True)
class Correlation(Record):
    """One metric against one human aspect: Pearson, Spearman and Kendall of the pairs where both are known,
    each with its p-value and percentile bootstrap 95 % interval (None where undefined: ``reason`` says why)."""

    n: int  # pairs with both values
    pearson: float | None = None
    pearson_p: float | None = None
    pearson_ci: list[float] | None = None
    spearman: float | None = None
    spearman_p: float | None = None
    spearman_ci: list[float] | None = None
    kendall: float | None = None
    kendall_p: float | None = None
    kendall_ci: list[float] | None = None
    reason: str | None = omitted_when_none()  # why no statistic was computed


def correlate(x: pl.Series, y: pl.Series, bootstrap: int = 1000, seed: int = 0) -> Correlation:
    """Pearson, Spearman and Kendall of the pairs where both are known, with p-values and percentile bootstrap
    95 % intervals (``bootstrap`` resamples of the pairs, seeded)."""
    from scipy import stats

    pairs = pl.DataFrame({"x": x.cast(pl.Float64), "y": y.cast(pl.Float64)}).drop_nulls().drop_nans()
    if pairs.height < MIN_PAIRS:
        return Correlation(pairs.height, reason=f"fewer than {MIN_PAIRS} pairs with both values")
    a, b = pairs["x"].to_numpy(), pairs["y"].to_numpy()
    if np.unique(a).size < 2 or np.unique(b).size < 2:
        return Correlation(pairs.height, reason="constant " + ("metric" if np.unique(a).size < 2 else "human score"))
    functions = {"pearson": stats.pearsonr, "spearman": stats.spearmanr, "kendall": stats.kendalltau}
    rng = np.random.default_rng(seed)
    draws = rng.integers(0, len(a), size=(bootstrap, len(a))) if bootstrap else None
    found: dict[str, Any] = {}
    for name, function in functions.items():
        result = function(a, b)
        found[name], found[f"{name}_p"] = float(result.statistic), float(result.pvalue)
        if draws is not None:
            found[f"{name}_ci"] = _interval(function, a, b, draws)
    return Correlation(pairs.height, **found)


def _interval(function: Any, a: np.ndarray, b: np.ndarray, draws: np.ndarray) -> list[float] | None:
    """The 2.5th and 97.5th percentiles of the statistic over the resampled pairs. Pearson and Spearman are
    computed for all resamples at once (Spearman: Pearson of the average ranks); Kendall one resample at a time."""
    from scipy import stats

    x, y = a[draws], b[draws]
    if function is stats.pearsonr or function is stats.spearmanr:
        if function is stats.spearmanr:
            x, y = stats.rankdata(x, axis=1), stats.rankdata(y, axis=1)
        x, y = x - x.mean(axis=1, keepdims=True), y - y.mean(axis=1, keepdims=True)
        scale = np.sqrt((x * x).sum(axis=1) * (y * y).sum(axis=1))
        values = np.divide((x * y).sum(axis=1), scale, out=np.full(len(x), np.nan), where=scale > 0)
    else:
        values = np.array(
            [
                function(u, v).statistic if u.min() != u.max() and v.min() != v.max() else np.nan
                for u, v in zip(x, y, strict=True)
            ]
        )
    finite = values[np.isfinite(values)]  # a resample with one distinct value has no correlation
    if finite.size < len(draws) // 2:
        return None  # too few pairs to resample (a handful of systems): no interval rather than a false one
    low, high = np.percentile(finite, [2.5, 97.5])
    return [float(low), float(high)]


# ---------------------------------------------------------------- files


def write_leaderboard(board: Leaderboard, folder: Path | OutputDir) -> dict[str, str]:
    folder = output_dir(folder, what="--leaderboard")
    table = board.table()
    files = {
        "json": folder.file("leaderboard.json"),
        "csv": folder.file("leaderboard.csv"),
        "markdown": folder.file("leaderboard.md"),
    }
    files["json"].write_text(json.dumps(_portable(board, folder.path, files), ensure_ascii=False, indent=2))
    with files["csv"].part() as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["task", "system", "metric", "value"])
        for row in table.iter_rows(named=True):
            for column, value in row.items():
                if column not in ("task", "system", "responses"):
                    writer.writerow(
                        [
                            spreadsheet_cell(str(row["task"])),
                            spreadsheet_cell(str(row["system"])),
                            spreadsheet_cell(str(column)),
                            "" if value is None else repr(float(value)),
                        ]
                    )
    files["markdown"].write_text(markdown(table))
    return {kind: str(path) for kind, path in files.items()}


def _portable(board: Leaderboard, folder: Path, files: Mapping[str, OutputFile]) -> dict[str, Any]:
    """leaderboard.json's record: every path in it relative to the leaderboard's folder (its own files by name),
    so the folder holds no path of the machine it was made on (``/tmp/…``) and can move with its inputs."""
    data = board.as_dict()
    data["systems"] = [{**system, "path": relative_to(system["path"], folder)} for system in data["systems"]]
    if data["human"] is not None:
        data["human"] = {**data["human"], "paths": [relative_to(path, folder) for path in data["human"]["paths"]]}
    return data | {"files": {kind: file.path.name for kind, file in files.items()}}


def relative_to(path: str | Path, folder: Path) -> str:
    """``path`` as seen from ``folder`` (its name alone where no relative path leads there: another drive)."""
    try:
        return Path(os.path.relpath(Path(path).absolute(), folder.absolute())).as_posix()
    except ValueError:
        return Path(path).name


def markdown(table: pl.DataFrame) -> str:
    """One Markdown table per task: a row per system, a column per metric (and human aspect), best in bold; shares
    in percent, other figures on their own scale (:mod:`.figures`)."""
    parts = []
    for task in dict.fromkeys(table["task"].to_list()):
        rows = table.filter(pl.col("task") == task)
        columns = [c for c in rows.columns if c not in ("task", "system", "responses")]
        best = {c: rows[c].max() for c in columns}
        lines = [f"### {task}\n", "| system | " + " | ".join(columns) + " |", "|---|" + "---:|" * len(columns)]
        for row in rows.iter_rows(named=True):
            cells = [
                f"**{figure_text(row[c], in_percent(c))}**"
                if row[c] is not None and row[c] == best[c] and rows.height > 1
                else figure_text(row[c], in_percent(c))
                for c in columns
            ]
            lines.append(f"| {_escape_md(row['system'])} | " + " | ".join(cells) + " |")
        parts.append("\n".join(lines) + "\n")
    return "\n".join(parts)


def _escape_md(text: str) -> str:
    return text.replace("|", "\\|")
