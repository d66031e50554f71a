"""The figures of ``kgforge eval --plot DIR``: what a person reads where the tables run to a hundred rows.

* ``<name>-correlations.png`` (``<name>-<task>-correlations.png`` per task): a heatmap of Spearman's ρ for every
  metric (rows) × human aspect (columns), at turn level and, with several systems, at system level side by side;
  ``*`` marks p < 0.05; a cell without a correlation (fewer than 3 pairs, a constant side) is grey.
* ``<name>-leaderboard.png`` (per task likewise): one panel per metric and human aspect, a dot per system with
  its percentile bootstrap 95 % interval as a bar (shares in percent, as the tables show them).

``<name>`` is :func:`kgforge.core.plots.figure_name` of the gold (or dialogue, or predictions) file and the
domain: ``travel-dev``, ``film-dev``, so that KdConv's three ``dev.json`` never draw over each other. Chinese
aspect names are drawn with the packaged CJK font (:mod:`kgforge.core.plots`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from kgforge.core.output import OutputDir
from kgforge.core.plots import Grid, Interval, heatmaps, interval_panels
from kgforge.evaluation.registry import in_percent

SIGNIFICANT = 0.05
COEFFICIENT = "spearman"  # rank correlation: human scores are ordinal (0/1/2, Likert)
LEVELS = ("turn", "system")


def _tasks(rows: Iterable[Mapping[str, Any]]) -> list[str]:
    return list(dict.fromkeys(str(row.get("task", "all")) for row in rows))


def _stem(name: str, task: str, tasks: Sequence[str]) -> str:
    return name if len(tasks) == 1 and task == "all" else f"{name}-{task}"


def correlation_grids(correlations: Sequence[Mapping[str, Any]]) -> dict[str, list[Grid]]:
    """Per task, a metric × aspect grid of Spearman's ρ per level that has correlations (see the module
    docstring)."""
    found: dict[str, list[Grid]] = {}
    for task in _tasks(correlations):
        mine = [row for row in correlations if str(row.get("task", "all")) == task]
        for level in LEVELS:
            cells = {(row["metric"], row["human"]): row for row in mine if row.get("level", "turn") == level}
            if not cells:
                continue
            metrics = tuple(dict.fromkeys(metric for metric, _ in cells))
            aspects = tuple(dict.fromkeys(aspect for _, aspect in cells))
            found.setdefault(task, []).append(
                Grid(
                    f"{level} level",
                    metrics,
                    aspects,
                    tuple(tuple(cells.get((m, a), {}).get(COEFFICIENT) for a in aspects) for m in metrics),
                    tuple(tuple(_mark(cells.get((m, a), {})) for a in aspects) for m in metrics),
                )
            )
    return found


def correlation_heatmaps(correlations: Sequence[Mapping[str, Any]], folder: OutputDir, name: str) -> list[Path]:
    """One figure per task: the grids of :func:`correlation_grids` side by side."""
    grids = correlation_grids(correlations)
    drawn = []
    for task, panels in grids.items():
        title = f"{name}{'' if task == 'all' else ' · ' + task}: Spearman ρ, metric × human score (* p < 0.05)"
        path = folder.file(f"{_stem(name, task, list(grids))}-correlations.png")
        drawn.append(heatmaps(panels, path, title=title, label="Spearman ρ", limits=(-1.0, 1.0)))
    return drawn


def _mark(row: Mapping[str, Any]) -> str:
    p = row.get(f"{COEFFICIENT}_p")
    return "*" if p is not None and p < SIGNIFICANT else ""


def leaderboard_panels(
    systems: Sequence[Any], human_means: Sequence[Mapping[str, Any]]
) -> dict[str, dict[str, list[Interval]]]:
    """Per task, a panel per metric (each system's corpus value with its interval: ``SystemScores``'s
    ``metrics`` and ``intervals``; shares in percent) and per human aspect (each system's mean with its
    interval)."""
    found: dict[str, dict[str, list[Interval]]] = {}
    for s in systems:
        panels = found.setdefault(s.task, {})
        for metric, value in s.metrics.items():
            scale = 100.0 if in_percent(metric) else 1.0
            low, high = s.intervals.get(metric) or (None, None)
            panels.setdefault(_title(metric), []).append(_point(s.system, value, low, high, scale))
    for row in human_means:
        low, high = row["interval"] or (None, None)
        found.setdefault(row["task"], {}).setdefault(f"human: {row['aspect']}", []).append(
            _point(row["system"], row["mean"], low, high)
        )
    return found


def leaderboard_figure(
    systems: Sequence[Any], human_means: Sequence[Mapping[str, Any]], folder: OutputDir, name: str
) -> list[Path]:
    """One figure per task: the panels of :func:`leaderboard_panels` as small multiples."""
    found = leaderboard_panels(systems, human_means)
    drawn = []
    for task, panels in found.items():
        title = f"{name}{'' if task == 'all' else ' · ' + task}: leaderboard, bootstrap 95 % intervals"
        path = folder.file(f"{_stem(name, task, list(found))}-leaderboard.png")
        drawn.append(interval_panels(panels, path, title=title))
    return drawn


def _title(metric: str) -> str:
    return f"{metric} (%)" if in_percent(metric) else metric


def _point(label: str, value: float | None, low: float | None, high: float | None, scale: float = 1.0) -> Interval:
    def scaled(x: float | None) -> float | None:
        return None if x is None else x * scale

    return Interval(label, scaled(value), scaled(low), scaled(high))
