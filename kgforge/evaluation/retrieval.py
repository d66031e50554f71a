"""Hits@k of a retrieval model (``kgforge eval --candidates FILE``): for each context, its candidate responses
with the model's scores and which of them is the gold one (label 1), as the DuConv retrieval baseline lays them
out. Hits@k is the share of contexts whose gold candidate is among the k highest-scored; candidates with equal
scores keep their order in the file (a stable sort), so a tie does not favour the gold one by luck.

Layouts, by content:

* one record per context (JSON lines): ``candidates`` as a list of ``{"score", "label"}`` objects, or parallel
  ``scores`` and ``labels`` lists;
* one row per candidate (JSON lines, CSV, TSV or Excel) with ``score``, ``label`` and a context column (``id``,
  ``context_id``, ``session``, ``query``, ``context``): consecutive rows of one context form its group;
* plain ``label<TAB>score`` lines (the DuConv retrieval baseline's labels beside the model's score file) grouped by
  ``group_size`` consecutive lines.

A context without a gold candidate cannot be judged: it is counted and left out (the report says how many).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import ArgumentError, InputError
from kgforge.evaluation.inputs import table_records

GROUP_COLUMNS = ("id", "context_id", "session", "query", "context", "dialogue_id")
KS = (1, 3)


@dataclass(frozen=True)
class HitsReport:
    path: str
    contexts: int
    candidates: int
    without_gold: int
    hits: dict[str, float | None]  # "hits@1": share

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def read_candidates(path: Path, group_size: int | None = None) -> list[list[tuple[float, int]]]:
    """Per context, its candidates' (score, label) in file order."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    if group_size:
        return _fixed_groups(path, group_size)
    if path.suffix.lower() == ".txt":
        raise InputError(f"{path}: plain label<TAB>score lines need --group-size (the candidates per context)")
    groups: dict[str, list[tuple[float, int]]] = {}
    for line, record in table_records(path):
        if "candidates" in record or "scores" in record:
            groups[f"#{line}"] = _record_candidates(path, line, record)
            continue
        key = next((str(record[c]) for c in GROUP_COLUMNS if c in record), None)
        if key is None:
            raise InputError(
                f"{path}:{line}: no context column ({', '.join(GROUP_COLUMNS)}) and no 'candidates' "
                "list; plain label<TAB>score lines need --group-size"
            )
        groups.setdefault(key, []).append(
            (_score(path, line, record.get("score")), _label(path, line, record.get("label")))
        )
    return list(groups.values())


def _record_candidates(path: Path, line: int, record: dict[str, Any]) -> list[tuple[float, int]]:
    if "candidates" in record:
        items = record["candidates"]
        if not isinstance(items, list) or not all(isinstance(c, dict) for c in items):
            raise InputError(f"{path}:{line}: 'candidates' must be a list of {{score, label}} objects")
        return [(_score(path, line, c.get("score")), _label(path, line, c.get("label"))) for c in items]
    scores, labels = record.get("scores"), record.get("labels")
    if not isinstance(scores, list) or not isinstance(labels, list) or len(scores) != len(labels):
        raise InputError(f"{path}:{line}: 'scores' and 'labels' must be lists of the same length")
    return [(_score(path, line, s), _label(path, line, lab)) for s, lab in zip(scores, labels, strict=True)]


def _fixed_groups(path: Path, size: int) -> list[list[tuple[float, int]]]:
    rows = []
    with open(path, encoding="utf-8") as handle:
        for line, text in enumerate(handle, start=1):
            if not text.strip():
                continue
            fields = text.rstrip("\n").split("\t")
            if len(fields) < 2:
                raise InputError(f"{path}:{line}: expected label<TAB>score")
            rows.append((_score(path, line, fields[1]), _label(path, line, fields[0])))
    if len(rows) % size:
        raise InputError(f"{path}: {len(rows)} candidates is not a multiple of --group-size {size}")
    return [rows[i : i + size] for i in range(0, len(rows), size)]


def _score(path: Path, line: int, value: Any) -> float:
    try:
        score = float(value)
    except (TypeError, ValueError):
        raise InputError(f"{path}:{line}: score {value!r} is not a number") from None
    if not math.isfinite(score):
        raise InputError(f"{path}:{line}: score {value!r} is not finite")
    return score


def _label(path: Path, line: int, value: Any) -> int:
    if str(value).strip() in ("1", "1.0", "True", "true"):
        return 1
    if str(value).strip() in ("0", "0.0", "False", "false"):
        return 0
    raise InputError(f"{path}:{line}: label {value!r} is not 0 or 1")


def hits_at(path: Path, ks: tuple[int, ...] = KS, group_size: int | None = None) -> HitsReport:
    if any(k < 1 for k in ks):
        raise ArgumentError("k", "Hits@k needs k >= 1")
    groups = read_candidates(path, group_size)
    judged = [group for group in groups if any(label for _, label in group)]
    hits: dict[str, float | None] = {}
    for k in ks:
        found = 0
        for group in judged:
            ranked = sorted(range(len(group)), key=lambda i: -group[i][0])  # stable: ties keep file order
            found += any(group[i][1] for i in ranked[:k])
        hits[f"hits@{k}"] = found / len(judged) if judged else None
    return HitsReport(str(path), len(groups), sum(len(g) for g in groups), len(groups) - len(judged), hits)
