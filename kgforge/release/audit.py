"""A hand check of the graph's accuracy: ``kgforge audit sample`` writes a seeded sample of the domain's facts as a
rating sheet (stratified by relation if asked), raters mark each triple 1 (correct) or 0 (wrong), and
``kgforge audit import`` reads their sheets back: accuracy overall and per relation with Wilson 95% intervals,
and the raters' agreement (Fleiss' κ) when several marked it (docs/release.md, "KG accuracy audit").

An item is correct when most raters marked it 1 (a tie is not a majority: it counts as wrong). Every sheet must
be a copy of the same sample: the same items with the same triples, and the same ``sample`` column.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist
from typing import Any

import numpy as np
import polars as pl

from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.jsonio import JsonObject
from kgforge.core.output import output_file
from kgforge.core.records import Record
from kgforge.core.text import spreadsheet_text
from kgforge.evaluation.agreement import agreement
from kgforge.evaluation.inputs import table_records
from kgforge.evaluation.rating import SHEET_FORMATS, write_sheet
from kgforge.store.snapshot import Snapshot

SCALE = (0, 1)  # 0: the triple is wrong, 1: it is correct
MARK = "correct"
SHOWN = ("item", "subject", "relation", "object", "subject_iri", "predicate", "object_value", "source", "sample")
HEADER = [*SHOWN, MARK, "note"]
Z95 = NormalDist().inv_cdf(0.975)
AUDIT_MARK = "kgforge_audit"
INSTRUCTIONS = [
    "Mark each triple in the column 'correct': 1 when the subject really has this relation to the object "
    "(check the source if unsure), 0 when it does not. Leave no row empty; 'note' is free text.",
    "Give each rater their own copy of this sheet; `kgforge audit import` reads all the copies.",
]


def wilson(successes: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a proportion (95% by default); (0, 1) for an empty sample."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    # at 0 and n the interval ends exactly at 0 and 1 (rounding would leave the proportion just outside)
    return (0.0 if successes == 0 else max(0.0, centre - half)), (1.0 if successes == n else min(1.0, centre + half))


@dataclass(frozen=True)
class AuditSheet(Record):
    """The rating sheet ``kgforge audit sample`` wrote: how many facts it holds, drawn from how many."""

    domain: str
    build_id: str
    out: str
    items: int
    facts: int  # the domain's facts the sample was drawn from
    by: str | None
    seed: int
    per_relation: dict[str, int]  # items drawn from each relation


def allocate(sizes: dict[str, int], n: int) -> dict[str, int]:
    """``n`` items over the relations in proportion to their sizes (largest remainders, ties by name); each
    relation gets at least one when ``n`` allows, and none more than it has."""
    total = sum(sizes.values())
    n = min(n, total)
    if n >= len(sizes):
        base = dict.fromkeys(sizes, 1)
        left = n - len(sizes)
        spare = {r: s - 1 for r, s in sizes.items()}
    else:
        base, left, spare = dict.fromkeys(sizes, 0), n, dict(sizes)
    room = sum(spare.values())
    quotas = {r: left * s / room if room else 0 for r, s in spare.items()}
    got = {r: base[r] + int(q) for r, q in quotas.items()}
    order = sorted(sizes, key=lambda r: (-(quotas[r] - int(quotas[r])), r))
    for r in order[: n - sum(got.values())]:
        got[r] += 1
    return got


def audit_sample(
    snapshot: Snapshot,
    n: int,
    out: Path | str,
    *,
    by: str | None = None,
    seed: int = 0,
) -> AuditSheet:
    """Write a sample of ``n`` of the facts of ``snapshot``'s build as a rating sheet (CSV, TSV or XLSX by
    ``out``'s suffix)."""
    domain = snapshot.domain
    if by not in (None, "relation"):
        raise ArgumentError("--by", f"{by!r}: the sample is stratified by relation, or not at all")
    target = output_file(out)
    if target.path.suffix.lstrip(".") not in SHEET_FORMATS:
        raise ArgumentError("--out", f"{target.path.name}: a sheet is one of .{', .'.join(SHEET_FORMATS)}")
    tables = snapshot.tables()
    facts = tables.domain_facts().sort("p", "s", "o", "graph").unique(["s", "p", "o"], maintain_order=True)
    if facts.height == 0:
        raise InputError(f"domain {domain} has no facts to sample")
    labels = tables.label_map(snapshot.language)
    rng = random.Random(seed)
    if by == "relation":
        groups: dict[str, list[int]] = defaultdict(list)
        for i, p in enumerate(facts["p"].to_list()):
            groups[labels.get(p, p)].append(i)
        quota = allocate({r: len(rows) for r, rows in groups.items()}, n)
        chosen = sorted(i for r in sorted(groups) for i in rng.sample(groups[r], quota[r]))
    else:
        chosen = sorted(rng.sample(range(facts.height), min(n, facts.height)))
    rows = _sheet_rows(snapshot, facts[chosen], labels, f"{domain}@{snapshot.build_id} seed {seed} by {by or 'none'}")
    write_sheet(target, HEADER, rows, INSTRUCTIONS, "audit")
    drawn: dict[str, int] = defaultdict(int)
    for row in rows:
        drawn[row[2]] += 1
    return AuditSheet(
        domain, snapshot.build_id, str(target.path), len(rows), facts.height, by, seed, dict(sorted(drawn.items()))
    )


def _sheet_rows(snapshot: Snapshot, facts: pl.DataFrame, labels: dict[str, str], sample: str) -> list[list[Any]]:
    """One row per fact: its labels, its terms, the source graph it came from and where that source was read."""
    sources = {}
    for name, entry in snapshot.manifest.graphs.items():
        path = entry.details.get("path")
        sources[name] = f"{name} ({entry.kind}: {Path(str(path)).name})" if path else name
    rows = []
    width = len(str(facts.height))
    for k, (s, p, o, is_entity, graph) in enumerate(facts.select("s", "p", "o", "o_is_entity", "graph").rows(), 1):
        source = sources.get(graph) or next((shown for name, shown in sources.items() if graph.endswith(name)), graph)
        rows.append(
            [
                f"t{k:0{width}d}",
                labels.get(s, s),
                labels.get(p, p),
                labels.get(o, o) if is_entity else o,
                s,
                p,
                o,
                source,
                sample,
                "",
                "",
            ]
        )
    return rows


@dataclass(frozen=True)
class Accuracy:
    """The share of items judged correct, with its Wilson 95% interval."""

    relation: str | None  # None: overall
    correct: int
    items: int
    accuracy: float | None
    low: float
    high: float


@dataclass(frozen=True)
class AuditReport(Record):
    """What ``kgforge audit import`` read from the raters' sheets and wrote to ``AUDIT.json``."""

    out: str
    sample: str
    raters: int
    sheets: tuple[str, ...]  # the sheets' file names
    accuracy: Accuracy
    per_relation: tuple[Accuracy, ...]
    per_rater: dict[str, float]  # each rater's own share of items marked correct
    fleiss_kappa: float | None
    krippendorff_alpha: float | None
    all_agree: float | None


def _read_sheet(path: Path) -> dict[str, tuple[int, tuple[str, ...], int]]:
    """item -> (line, the shown cells, the mark); InputError naming the sheet and line of what is wrong."""
    if not path.is_file():
        raise InputError(f"{path}: no such sheet")
    found: dict[str, tuple[int, tuple[str, ...], int]] = {}
    for line, record in table_records(path):
        missing = [c for c in (*SHOWN, MARK) if c not in record]
        if missing:
            raise InputError(f"{path}:{line}: no column {missing[0]!r} (not a sheet of `kgforge audit sample`)")
        item = str(record["item"]).strip()
        cell = "" if record[MARK] is None else str(record[MARK]).strip()
        try:
            mark = float(cell)
        except ValueError:
            mark = math.nan
        if mark not in SCALE:
            raise InputError(
                f"{path}:{line}: {MARK} is {cell!r}, not one of {', '.join(map(str, SCALE))} (1: correct, 0: wrong)"
            )
        if item in found:
            raise InputError(f"{path}:{line}: item {item!r} appears twice")
        shown = tuple(spreadsheet_text(str(record[c] if record[c] is not None else "")) for c in SHOWN)
        found[item] = (line, shown, int(mark))
    if not found:
        raise InputError(f"{path}: no rows (not a filled sheet of `kgforge audit sample`)")
    return found


def audit_import(sheets: Iterable[Path | str], out: Path | str) -> AuditReport:
    """Read the raters' sheets (one each) and write ``out``: accuracy with Wilson intervals, agreement."""
    paths = [Path(p) for p in sheets]
    if not paths:
        raise ArgumentError("SHEET", "give at least one filled sheet")
    target = output_file(out)
    read = [_read_sheet(p) for p in paths]
    first, first_path = read[0], paths[0]
    for path, sheet in zip(paths[1:], read[1:]):
        for item, (line, shown, _) in sheet.items():
            if item not in first or first[item][1] != shown:
                raise InputError(f"{path}:{line}: item {item!r} is not the same triple as in {first_path.name}")
        if len(sheet) != len(first):
            absent = sorted(set(first) - set(sheet))[0]
            raise InputError(f"{path}: item {absent!r} of {first_path.name} is missing")
    items = sorted(first)
    marks = np.array([[sheet[item][2] for sheet in read] for item in items], dtype=float)
    relation_of = [first[item][1][2] for item in items]
    majority = (marks.sum(axis=1) * 2 > len(paths)).astype(int)
    overall = _accuracy(None, majority)
    per_relation = tuple(
        _accuracy(r, majority[[i for i, rel in enumerate(relation_of) if rel == r]]) for r in sorted(set(relation_of))
    )
    agreed = agreement(marks, level="nominal") if len(paths) >= 2 else None
    names = _rater_names(paths)
    report = AuditReport(
        str(target.path),
        first[items[0]][1][8],
        len(paths),
        tuple(p.name for p in paths),
        overall,
        per_relation,
        {name: float(marks[:, k].mean()) for k, name in enumerate(names)},
        agreed.fleiss_kappa if agreed else None,
        agreed.krippendorff_alpha if agreed else None,
        agreed.all_agree if agreed else None,
    )
    target.write_json(audit_json(report))
    return report


def _accuracy(relation: str | None, majority: np.ndarray) -> Accuracy:
    correct, n = int(majority.sum()), len(majority)
    low, high = wilson(correct, n)
    return Accuracy(relation, correct, n, correct / n if n else None, low, high)


def _rater_names(paths: list[Path]) -> list[str]:
    names = [p.stem for p in paths]
    return names if len(set(names)) == len(names) else [f"{p.stem}-{k}" for k, p in enumerate(paths, 1)]


def audit_json(report: AuditReport) -> JsonObject:
    """What ``AUDIT.json`` holds, and a release quotes: no path, only the sheets' names."""
    domain, _, rest = report.sample.partition("@")
    build_id, _, rest = rest.partition(" seed ")
    seed, _, by = rest.partition(" by ")
    data = report.as_dict()
    data.pop("out")
    accuracy = data.pop("accuracy")
    accuracy.pop("relation")
    return {
        AUDIT_MARK: 1,
        "domain": domain,
        "build_id": build_id,
        "seed": int(seed) if seed.isdigit() else seed,
        "by": None if by == "none" else by,
        "scale": {"1": "correct", "0": "wrong"},
        "majority": "an item is correct when more than half of the raters marked it 1",
        "accuracy": accuracy,
        **data,
    }
