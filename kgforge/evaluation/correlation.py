"""Correlation of every metric with every human score column (Pearson and Spearman, scipy), as the
metric-evaluation studies (MSDE and others) tabulate them.

The human file (JSON lines, CSV or Excel) holds one row per response and any number of score columns; a
column counts as a score when every non-empty cell is a number. Rows are matched to responses by an id
column when the file has one whose values are the responses' ids, all of them or a rated sample of them
(``--human-id-column``, default ``id``), otherwise in order (then the counts must be equal). A pair where either value is missing is left out of
that correlation; ``n`` says how many pairs it used. A correlation is null when fewer than 3 pairs remain or
either side is constant (``reason`` says which).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import InputError
from kgforge.evaluation.human import read_human_scores
from kgforge.evaluation.inputs import table_records

MIN_PAIRS = 3


def read_human(path: Path, ids: list[str], id_column: str | None = None) -> tuple[pl.DataFrame, dict[str, Any]]:
    """The human scores aligned with the responses (one row per response id, in order), and what was read."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    records = list(table_records(path))
    if not records:
        raise InputError(f"{path}: no rows")
    names = list(dict.fromkeys(key for _, record in records for key in record))
    key = id_column or ("id" if "id" in names else None)
    if id_column and id_column not in names:
        raise InputError(f"{path}: no column {id_column!r} (columns: {', '.join(names)})")
    scores = {name: _numbers(records, name) for name in names if name != key}
    columns = {name: values for name, values in scores.items() if values is not None}
    if not columns:
        nested = _nested_human(path, ids)
        if nested is not None:
            return nested
        raise InputError(f"{path}: no column of numbers (columns: {', '.join(names)})")
    frame = pl.DataFrame(columns, schema={name: pl.Float64 for name in columns})
    matched_by = "order"
    if key is not None and _by_id({str(record.get(key)) for _, record in records}, ids):
        frame = frame.with_columns(id=pl.Series([str(record.get(key)) for _, record in records]))
        duplicated = frame.filter(pl.col("id").is_duplicated())
        if duplicated.height:
            raise InputError(f"{path}: id {duplicated['id'][0]!r} appears more than once in column {key!r}")
        frame = pl.DataFrame({"id": ids}).join(frame, on="id", how="left", maintain_order="left").drop("id")
        matched_by = f"column {key!r}"
    elif frame.height != len(ids):
        raise InputError(
            f"{path} has {frame.height} rows of scores for {len(ids)} responses and no id column "
            f"matching the responses' ids: rows are matched in order, so the counts must be equal"
        )
    ignored = [name for name, values in scores.items() if values is None]
    return frame, {"path": str(path), "columns": list(columns), "matched_by": matched_by, "not_scores": ignored}


def _nested_human(path: Path, ids: list[str]) -> tuple[pl.DataFrame, dict[str, Any]] | None:
    """Scores in a nested shape (MSDE's ``"scores": {aspect: value}``, lists per annotator): the annotators'
    mean per response, aligned by id or in order; None when the file has no such scores."""
    try:
        scores = read_human_scores(path)
    except InputError:
        return None
    if scores.ratings["system"].n_unique() > 1:
        raise InputError(f"{path}: human scores of several systems: score them with --system NAME=FILE, one per system")
    means = scores.means()
    aspects = [a for a in scores.aspects if a in means.columns]
    if scores.by_id and _by_id(set(means["item"].to_list()), ids):
        frame = pl.DataFrame({"item": ids}).join(means, on="item", how="left", maintain_order="left")
        matched_by = "id"
    elif means.height == len(ids):
        frame, matched_by = means, "order"
    else:
        raise InputError(
            f"{path} has {means.height} rated responses for {len(ids)} responses and no ids matching "
            "theirs: rows are matched in order, so the counts must be equal"
        )
    agreement = {aspect: found.to_dict() for aspect, found in scores.agreement().items()}
    return frame.select(aspects), {
        "path": str(path),
        "columns": aspects,
        "matched_by": matched_by,
        "not_scores": list(scores.not_scores),
        "annotators": scores.annotators,
        "agreement": agreement,
    }


def _by_id(rated: set[str], ids: list[str]) -> bool:
    """Whether the human file's ids name the responses: all of them, or a rated sample of them (a rating round
    rates a sample; the responses not rated have no human score and stay out of the correlations)."""
    return bool(rated) and (rated >= set(ids) or rated <= set(ids))


def _numbers(records: list[tuple[int, dict[str, Any]]], name: str) -> list[float | None] | None:
    """The column's cells as numbers (empty cells: None), or None when a cell is not a number."""
    values: list[float | None] = []
    for _, record in records:
        cell = record.get(name)
        if cell is None or (isinstance(cell, str) and not cell.strip()):
            values.append(None)
            continue
        if isinstance(cell, bool):
            return None
        try:
            number = float(cell)
        except (TypeError, ValueError):
            return None
        values.append(number if math.isfinite(number) else None)
    return values


def correlate(metrics: pl.DataFrame, human: pl.DataFrame) -> list[dict[str, Any]]:
    """Pearson and Spearman of every metric column against every human column (rows aligned)."""
    from scipy import (
        stats,  # imported here: it takes a second, and every kgforge command imports this module
    )

    table = []
    for metric in metrics.columns:
        for column in human.columns:
            pairs = pl.DataFrame({"m": metrics[metric], "h": human[column]}).drop_nulls()
            entry: dict[str, Any] = {
                "metric": metric,
                "human": column,
                "n": pairs.height,
                "pearson": None,
                "pearson_p": None,
                "spearman": None,
                "spearman_p": None,
            }
            if pairs.height < MIN_PAIRS:
                entry["reason"] = f"fewer than {MIN_PAIRS} responses with both values"
            elif pairs["m"].n_unique() < 2 or pairs["h"].n_unique() < 2:
                entry["reason"] = "constant " + ("metric" if pairs["m"].n_unique() < 2 else "human score")
            else:
                x, y = pairs["m"].to_numpy(), pairs["h"].to_numpy()
                pearson, spearman = stats.pearsonr(x, y), stats.spearmanr(x, y)
                entry.update(
                    pearson=float(pearson.statistic),
                    pearson_p=float(pearson.pvalue),
                    spearman=float(spearman.statistic),
                    spearman_p=float(spearman.pvalue),
                )
            table.append(entry)
    return table
