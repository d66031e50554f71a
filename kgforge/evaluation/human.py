"""Human scores in whatever shape they come, read into one long table.

A file (JSON lines, a JSON array, CSV, TSV or Excel) holds one record per rated response. Read from each:

* **scores**: every column whose non-empty cells are all numbers (flat columns: ``fluency``, ``coherence``); a
  nested object of them (MSDE's released shape, ``{"response": …, "scores": {"丰富度（Info.）": 0,
  "连贯性（Coh.）": 1, "知识准确性（Konw.）": 0}}``); a list of numbers per aspect (one per annotator); or a list
  of such objects (one per annotator);
* **who rated**: an ``annotator`` column (also ``rater``, ``worker``, ``judge``) or the list position;
* **what was rated**: ``system`` (also ``model``, ``sys``, ``bot``), ``task`` (also ``dataset``, ``competition``,
  ``skill``), ``id`` (also ``response_id``, ``item``); a record without an id is the n-th of its system and
  annotator (records are matched to responses in order). A folder of such files is read as one, each file's
  name (without suffix) being the system of records that name none, and a sub-folder's name their task.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import InputError
from kgforge.evaluation.agreement import Agreement, agreement
from kgforge.evaluation.inputs import table_records

SYSTEM_COLUMNS = ("system", "model", "sys", "bot", "system_name")
TASK_COLUMNS = ("task", "dataset", "competition", "skill")
ANNOTATOR_COLUMNS = ("annotator", "rater", "worker", "judge", "annotator_id")
ITEM_COLUMNS = ("id", "response_id", "item", "item_id")
HUMAN_SUFFIXES = (".jsonl", ".json", ".csv", ".tsv", ".xlsx", ".txt")
LONG_SCHEMA = {
    "task": pl.String,
    "system": pl.String,
    "item": pl.String,
    "annotator": pl.String,
    "aspect": pl.String,
    "score": pl.Float64,
}


@dataclass(frozen=True)
class HumanScores:
    """``ratings``: one row per (task, system, item, annotator, aspect) with its score; ``item`` is the record's
    id, or ``#N`` (its position among its system's records) when it has none."""

    paths: tuple[str, ...]
    ratings: pl.DataFrame
    aspects: tuple[str, ...]
    by_id: bool
    not_scores: tuple[str, ...]
    sources: dict[str, tuple[str, ...]] = field(default_factory=dict)  # system ("" when unnamed) -> its files

    def files_of(self, system: str | None) -> str:
        """The files that hold ``system``'s scores (a folder holds one per system), for messages."""
        found = self.sources.get(system or "") or self.sources.get("") or self.paths
        return ", ".join(found)

    @property
    def annotators(self) -> int:
        return self.ratings["annotator"].n_unique()

    def means(self) -> pl.DataFrame:
        """``task, system, item`` and one column per aspect: the mean over annotators."""
        mean = self.ratings.group_by("task", "system", "item", "aspect", maintain_order=True).agg(
            pl.col("score").mean()
        )
        return mean.pivot("aspect", index=["task", "system", "item"], values="score")

    def agreement(self, level: str = "ordinal") -> dict[str, Agreement]:
        """Per aspect, the annotators' agreement over the rated items (needs two annotators or more)."""
        found = {}
        for aspect in self.aspects:
            table = self.ratings.filter(pl.col("aspect") == aspect).pivot(
                "annotator", index=["task", "system", "item"], values="score", aggregate_function="mean"
            )
            raters = [c for c in table.columns if c not in ("task", "system", "item")]
            if len(raters) >= 2:
                found[aspect] = agreement(table.select(raters).to_numpy().astype(float), level)
        return found


def read_human_scores(path: Path) -> HumanScores:
    """A file or a folder of files (see the module docstring)."""
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in HUMAN_SUFFIXES)
        if not files:
            raise InputError(f"{path}: no human score files ({', '.join(HUMAN_SUFFIXES)}) in the folder")
        parts = [_read_file(f, system=f.stem, task=f.parent.name if f.parent != path else None) for f in files]
    elif path.is_file():
        files = [path]
        parts = [_read_file(path)]
    else:
        raise InputError(f"{path}: no such file or folder")
    sources: dict[str, tuple[str, ...]] = {}
    for file, (frame, _, _) in zip(files, parts, strict=True):
        for system in frame["system"].unique().to_list():
            sources[system or ""] = (*sources.get(system or "", ()), str(file))
    ratings = pl.concat([frame for frame, _, _ in parts])
    if ratings.height == 0:
        raise InputError(f"{path}: no scores (no column of numbers, nested 'scores' object or list of numbers)")
    aspects = tuple(dict.fromkeys(ratings["aspect"].to_list()))
    not_scores = tuple(dict.fromkeys(name for _, _, names in parts for name in names))
    by_id = all(has_id for _, has_id, _ in parts)
    return HumanScores(tuple(str(f) for f in files), ratings, aspects, by_id, not_scores, sources)


def _pick(record: dict[str, Any], names: tuple[str, ...]) -> str | None:
    for name in names:
        for key in record:
            if key.lower() == name:
                return key
    return None


def _read_file(path: Path, system: str | None = None, task: str | None = None) -> tuple[pl.DataFrame, bool, list[str]]:
    records = list(table_records(path))
    if not records:
        raise InputError(f"{path}: no rows")
    cells: list[
        tuple[int, dict[str, str | None], str, str | None, Any]
    ] = []  # line, who/what, aspect, annotator, value
    meta_keys: set[str] = set()
    counters: dict[tuple[Any, ...], int] = {}
    has_id = True
    for line, record in records:
        keys = {
            what: _pick(record, names)
            for what, names in (
                ("system", SYSTEM_COLUMNS),
                ("task", TASK_COLUMNS),
                ("annotator", ANNOTATOR_COLUMNS),
                ("item", ITEM_COLUMNS),
            )
        }
        meta_keys.update(k for k in keys.values() if k)
        where = {
            "system": _text(record, keys["system"], system),
            "task": _text(record, keys["task"], task),
            "annotator": _text(record, keys["annotator"], None),
        }
        item = _text(record, keys["item"], None)
        if item is None:
            has_id = False
            slot = (where["task"], where["system"], where["annotator"])
            counters[slot] = counters.get(slot, 0) + 1
            item = f"#{counters[slot]}"
        where["item"] = item
        for key, value in record.items():
            if key in keys.values():
                continue
            for aspect, annotator, cell in _score_cells(key, value):
                cells.append((line, where, aspect, annotator, cell))
    refused = {aspect for _, _, aspect, _, cell in cells if _number(cell) is False}
    rows = []
    for _line, where, aspect, annotator, cell in cells:
        if aspect in refused:
            continue
        number = _number(cell)
        if number is None:
            continue
        rows.append(
            {
                "task": where["task"] or "all",
                "system": where["system"],
                "item": where["item"],
                "annotator": annotator if annotator is not None else where["annotator"] or "1",
                "aspect": aspect,
                "score": number,
            }
        )
    return pl.DataFrame(rows, schema=LONG_SCHEMA), has_id, sorted(refused | meta_keys)


def _text(record: dict[str, Any], key: str | None, default: str | None) -> str | None:
    value = record.get(key) if key else None
    return default if value is None or str(value).strip() == "" else str(value)


def _score_cells(key: str, value: Any, annotator: str | None = None) -> list[tuple[str, str | None, Any]]:
    """(aspect, annotator, cell) for one field of a record: a nested object's keys are aspects, a list's
    positions annotators."""
    if isinstance(value, dict):
        return [cell for aspect, inner in value.items() for cell in _score_cells(aspect, inner, annotator)]
    if isinstance(value, list) and annotator is None:
        return [cell for i, inner in enumerate(value) for cell in _score_cells(key, inner, str(i + 1))]
    return [(key, annotator, value)]


def _number(cell: Any) -> float | None | bool:
    """The cell as a number, None when empty, False when it is not a number."""
    if cell is None or (isinstance(cell, str) and not cell.strip()):
        return None
    if isinstance(cell, bool):
        return False
    try:
        number = float(cell)
    except (TypeError, ValueError):
        return False
    return number if math.isfinite(number) else None
