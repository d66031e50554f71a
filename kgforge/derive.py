"""`kgforge derive`: associated two-hop triples (DuConv's second-order links) as a columnar join.

Two entities are *associated* when they share a predicate and its object: two films with the
same director, 类型 剧情 or 口碑 很好, two stars born on the same date. The facts are grouped on
``(p, o)`` with polars and each group is joined with itself; a SPARQL self-join does not finish on
DuConv-sized graphs. Relations on the schema's stop-list (性别, 领域, …) and free-text relations
are skipped. A group with more members than ``max_group`` (a hub object such as 国家 美国) gives a
seeded sample of as many pairs as a group at the cap has, so the relation still feeds goals without
exploding into millions of pairs; what the cap left out is counted per relation.

Each pair ``a < b`` is written into the named graph ``…/graph/derived/associated`` twice over:

* a reified node ``kge:assoc/<hash>`` with ``kg:left a``, ``kg:right b``, ``kg:sharedPredicate p``
  and ``kg:sharedObject o`` (an IRI or the literal itself), so the DuConv goal
  ``[["START", A, B], [A, r, X], [B, r, X]]`` can be written back exactly;
* a direct virtual edge ``a kgr:associated/<relation> b`` (labelled 同<relation> / same <relation>)
  for walks and embeddings.
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.build import BuildSummary, add_graphs
from kgforge.errors import KgforgeError
from kgforge.quads import QuadWriter
from kgforge.schema import Schema, load_schema
from kgforge.store import DomainPaths, domain_paths, read_manifest
from kgforge.tables import GraphTables, read_tables
from kgforge.vocab import DERIVED_GRAPHS, ENTITY, ONTO, RDFS_LABEL, RELATION, safe_segment

ASSOCIATED_KIND = "derived-associated"
ASSOCIATED_GRAPH = DERIVED_GRAPHS + "associated"
ASSOCIATED_QUADS = "quads/derived__associated.nq"
ASSOCIATED_RELATION = RELATION + "associated/"
PAIR_NODE = ENTITY + "assoc/"
LEFT = ONTO + "left"
RIGHT = ONTO + "right"
SHARED_PREDICATE = ONTO + "sharedPredicate"
SHARED_OBJECT = ONTO + "sharedObject"
DEFAULT_MAX_GROUP = 50
GROUP_KEY = ["p", "o", "o_is_entity", "o_lang", "o_datatype"]
PAIR_SCHEMA = {"a": pl.String, "b": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean,
               "o_lang": pl.String, "o_datatype": pl.String}


@dataclass(frozen=True)
class DeriveOptions:
    """How pairs are formed: the group-size cap, the sampling seed and the relations left out."""

    max_group: int = DEFAULT_MAX_GROUP
    seed: int = 0
    stop_relations: frozenset[str] = frozenset()  # relation IRIs
    skip_kinds: tuple[str, ...] = ("text",)

    def __post_init__(self) -> None:
        if self.max_group < 2:
            raise KgforgeError(f"--max-group must be at least 2 (a pair needs two members), got {self.max_group}")

    def as_dict(self) -> dict[str, Any]:
        return {"max_group": self.max_group, "seed": self.seed, "stop_relations": sorted(self.stop_relations),
                "skip_kinds": list(self.skip_kinds)}


@dataclass
class Associations:
    """The pairs (``a``, ``b``, shared ``p``/``o`` columns) and what each relation contributed."""

    pairs: pl.DataFrame
    per_relation: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # relation IRI -> why it was left out


def options_for(schema: Schema, max_group: int | None = None, seed: int | None = None) -> DeriveOptions:
    """Options from the schema (``stop_relations``, ``[options.derive]``) overridden by the caller."""
    configured = schema.options.get("derive", {}) if isinstance(schema.options.get("derive"), dict) else {}
    stop = frozenset(schema.relations[rid].iri for rid in schema.stop_relations)
    return DeriveOptions(
        max_group=int(max_group if max_group is not None else configured.get("max_group", DEFAULT_MAX_GROUP)),
        seed=int(seed if seed is not None else configured.get("seed", 0)),
        stop_relations=stop,
    )


def associate(facts: pl.DataFrame, relation_kinds: dict[str, str], options: DeriveOptions) -> Associations:
    """All associated pairs of ``facts`` (the ``tables.facts`` frame), hub groups sampled."""
    skipped = {p: "stop-list" for p in options.stop_relations}
    skipped.update({p: f"{kind} relation" for p, kind in relation_kinds.items() if kind in options.skip_kinds})
    usable = (
        facts.filter(~pl.col("p").is_in(list(skipped)))
        .filter(~(pl.col("o_is_entity") & (pl.col("o") == pl.col("s"))))
        .unique(["s", *GROUP_KEY])
    )
    groups = (
        usable.group_by(GROUP_KEY).agg(pl.col("s").sort().alias("members"))
        .with_columns(n=pl.col("members").list.len())
        .filter(pl.col("n") >= 2)
        .sort(GROUP_KEY, nulls_last=True)
        .with_row_index("gid")
    )
    small = groups.filter(pl.col("n") <= options.max_group)
    big = groups.filter(pl.col("n") > options.max_group)
    pairs = pl.concat([_all_pairs(small), _sampled_pairs(big, options)], how="vertical")
    pairs = pairs.sort(["p", "o", "a", "b"]).select(list(PAIR_SCHEMA))
    return Associations(pairs=pairs, per_relation=_report(groups, pairs, options.max_group),
                        skipped={p: why for p, why in skipped.items() if p in set(facts["p"].unique())})


def _all_pairs(groups: pl.DataFrame) -> pl.DataFrame:
    members = groups.select("gid", "members").explode("members").rename({"members": "a"})
    joined = members.join(members.rename({"a": "b"}), on="gid").filter(pl.col("a") < pl.col("b"))
    return joined.join(groups.drop("members", "n"), on="gid").select(list(PAIR_SCHEMA))


def _sampled_pairs(groups: pl.DataFrame, options: DeriveOptions) -> pl.DataFrame:
    """For each group above the cap, ``cap·(cap−1)/2`` distinct pairs drawn uniformly, seeded per group."""
    keep = options.max_group * (options.max_group - 1) // 2
    frames = []
    for row in groups.iter_rows(named=True):
        members = np.asarray(row["members"], dtype=object)
        n = len(members)
        rng = np.random.default_rng([options.seed, _stable_int(row["p"], row["o"])])
        index = rng.choice(n * (n - 1) // 2, size=keep, replace=False)
        left, right = _unrank_pairs(index.astype(np.int64))
        frames.append(pl.DataFrame({
            "a": members[left].tolist(), "b": members[right].tolist(),
            **{k: [row[k]] * keep for k in GROUP_KEY},
        }, schema=PAIR_SCHEMA))
    return pl.concat(frames) if frames else pl.DataFrame(schema=PAIR_SCHEMA)


def _unrank_pairs(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair index t → (i, j), i < j, for the enumeration t = j·(j−1)/2 + i."""
    j = ((1 + np.sqrt(1 + 8 * index.astype(np.float64))) // 2).astype(np.int64)
    j -= (j * (j - 1) // 2 > index)  # float rounding can overshoot by one
    j += ((j + 1) * j // 2 <= index)
    return index - j * (j - 1) // 2, j


def _stable_int(*parts: str | None) -> int:
    return int.from_bytes(hashlib.sha256("\x1f".join(p or "" for p in parts).encode()).digest()[:8], "big")


def _report(groups: pl.DataFrame, pairs: pl.DataFrame, cap: int) -> dict[str, dict[str, int]]:
    per_group = groups.with_columns(
        possible=(pl.col("n") * (pl.col("n") - 1) // 2),
        capped=pl.col("n") > cap,
    )
    summary = per_group.group_by("p").agg(
        groups=pl.len(),
        groups_capped=pl.col("capped").sum(),
        largest_group=pl.col("n").max(),
        pairs_possible=pl.col("possible").sum(),
    )
    written = pairs.group_by("p").agg(pairs=pl.len())
    joined = summary.join(written, on="p", how="left").with_columns(pl.col("pairs").fill_null(0))
    joined = joined.with_columns(pairs_left_out=pl.col("pairs_possible") - pl.col("pairs"))
    return {row.pop("p"): {k: int(v) for k, v in row.items()} for row in joined.sort("p").iter_rows(named=True)}


def pair_node(a: str, b: str, p: str, o: str) -> str:
    """The reified node of one associated pair: stable across runs for the same pair and share."""
    return PAIR_NODE + hashlib.sha256("\x1f".join((a, b, p, o)).encode("utf-8")).hexdigest()[:24]


def associated_relation(predicate: str) -> str:
    """The direct virtual edge's predicate for pairs sharing ``predicate``."""
    return ASSOCIATED_RELATION + safe_segment(predicate.removeprefix(RELATION))


def write_pairs(pairs: pl.DataFrame, relations: pl.DataFrame, path: Path) -> int:
    """Write the pairs as reified nodes plus direct virtual edges; returns the quads written."""
    names = {r["iri"]: r for r in relations.iter_rows(named=True)}
    with QuadWriter(path, ASSOCIATED_GRAPH) as writer:
        for p in pairs["p"].unique().sort().to_list():
            rel = names.get(p, {})
            edge = associated_relation(p)
            writer.literal(edge, RDFS_LABEL, "同" + (rel.get("zh") or p), lang="zh")
            writer.literal(edge, RDFS_LABEL, "same " + (rel.get("en") or rel.get("zh") or p), lang="en")
        for a, b, p, o, is_entity, lang, datatype in pairs.iter_rows():
            node = pair_node(a, b, p, o)
            writer.iri(node, LEFT, a)
            writer.iri(node, RIGHT, b)
            writer.iri(node, SHARED_PREDICATE, p)
            if is_entity:
                writer.iri(node, SHARED_OBJECT, o)
            else:
                writer.literal(node, SHARED_OBJECT, o, lang=lang or None, datatype=datatype)
            writer.iri(a, associated_relation(p), b)
    return writer.count


def derive(domain: str, workdir: Path | str | None = None, max_group: int | None = None,
           seed: int | None = None, tables: GraphTables | None = None) -> dict[str, Any]:
    """Compute, write and load the associated triples of ``domain``; re-running replaces them."""
    paths = domain_paths(domain, workdir)
    manifest = read_manifest(paths)
    schema = load_schema(manifest["schema"]["path"])
    options = options_for(schema, max_group, seed)
    timings: dict[str, float] = {}
    started = time.perf_counter()
    tables = tables or read_tables(paths)
    timings["read_seconds"] = _lap(started)
    started = time.perf_counter()
    kinds = dict(zip(tables.relations["iri"].to_list(), tables.relations["kind"].to_list()))
    result = associate(tables.facts, kinds, options)
    timings["join_seconds"] = _lap(started)
    started = time.perf_counter()
    quads = write_pairs(result.pairs, tables.relations, paths.root / ASSOCIATED_QUADS)
    timings["write_seconds"] = _lap(started)
    report = _summary(domain, result, options, tables, quads)
    started = time.perf_counter()
    summary = _load(paths, quads, report, workdir)
    timings["load_seconds"] = _lap(started)
    report.update(build_id=summary.build_id, timings=timings)
    return report


def _load(paths: DomainPaths, quads: int, report: dict[str, Any], workdir: Path | str | None) -> BuildSummary:
    entry = {"kind": ASSOCIATED_KIND, "quads_file": ASSOCIATED_QUADS, "quads": quads}
    stage = {k: v for k, v in report.items() if k != "relations"}
    return add_graphs(paths.domain, {ASSOCIATED_GRAPH: entry}, "derive", stage, workdir,
                      replace_kinds=(ASSOCIATED_KIND,))


def _summary(domain: str, result: Associations, options: DeriveOptions, tables: GraphTables,
             quads: int) -> dict[str, Any]:
    labels = tables.label_map("zh")
    per_relation = {labels.get(p, p): dict(counts, iri=p) for p, counts in result.per_relation.items()}
    left_out = sum(c["pairs_left_out"] for c in result.per_relation.values())
    return {
        "domain": domain, "graph": ASSOCIATED_GRAPH, "pairs": result.pairs.height, "quads": quads,
        "options": options.as_dict(),
        "groups_capped": sum(c["groups_capped"] for c in result.per_relation.values()),
        "pairs_left_out_by_cap": left_out,
        "relations": per_relation,
        "skipped_relations": {labels.get(p, p): why for p, why in sorted(result.skipped.items())},
    }


def _lap(started: float) -> float:
    return round(time.perf_counter() - started, 3)


def read_pairs(tables: GraphTables) -> pl.DataFrame:
    """The stored associated pairs, from tables read with ``include_derived=True``."""
    nodes = tables.facts.filter(pl.col("graph") == ASSOCIATED_GRAPH, pl.col("s").str.starts_with(PAIR_NODE))
    if nodes.is_empty():
        return pl.DataFrame(schema=PAIR_SCHEMA)
    wide = nodes.pivot(on="p", index="s", values="o", aggregate_function="first")
    shared = nodes.filter(pl.col("p") == SHARED_OBJECT).select("s", "o_is_entity", "o_lang", "o_datatype")
    return (
        wide.rename({LEFT: "a", RIGHT: "b", SHARED_PREDICATE: "p", SHARED_OBJECT: "o"})
        .join(shared, on="s").select(list(PAIR_SCHEMA))
    )
