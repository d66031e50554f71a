"""`kgforge derive`: associated two-hop triples (DuConv's second-order links) as a columnar join.

Two entities are *associated* when they share a predicate and its object: two films with the
same director, 类型 剧情 or 口碑 很好, two stars born on the same date. The facts are grouped on
``(p, o)`` with polars and each group is joined with itself; a SPARQL self-join does not finish on
DuConv-sized graphs. Relations on the schema's stop-list (性别, 领域, …) and free-text relations
are skipped. A group with more members than ``max_group`` (a hub object such as 国家 美国) gives a
seeded sample of as many pairs as a group at the cap has, so the relation still feeds goals without
exploding into millions of pairs; and each relation keeps at most ``max_pairs`` pairs (a seeded
uniform sample), which bounds the graph at DuConv scale (1.4M pairs, 7M quads without it). What the
cap and the budget left out is counted per relation.

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
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.core import checks
from kgforge.core.errors import SchemaError
from kgforge.core.files import atomic_path
from kgforge.core.quads import check_iri, literal_term
from kgforge.core.records import Record
from kgforge.core.schema import Schema
from kgforge.core.vocab import (
    DERIVED_GRAPHS,
    ENTITY,
    ONTO,
    RDFS_LABEL,
    RELATION,
    safe_segment,
)
from kgforge.publish.transaction import extend_build, extending
from kgforge.sources.options import read_options
from kgforge.store.layout import (
    DomainPaths,
    domain_paths,
    staged_build,
)
from kgforge.store.manifest import GraphEntry, Manifest
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import DomainFacts, GraphTables

ASSOCIATED_KIND = "derived-associated"
ASSOCIATED_GRAPH = DERIVED_GRAPHS + "associated"
ASSOCIATED_QUADS = "quads/derived__associated.nq"
ASSOCIATED_RELATION = RELATION + "associated/"
PAIR_NODE = ENTITY + "assoc/"
LEFT = ONTO + "left"
RIGHT = ONTO + "right"
SHARED_PREDICATE = ONTO + "sharedPredicate"
SHARED_OBJECT = ONTO + "sharedObject"
DEFAULT_MAX_GROUP = 10
DEFAULT_MAX_PAIRS = 5000
GROUP_KEY = ["p", "o", "o_is_entity", "o_lang", "o_datatype"]
PAIR_SCHEMA = {
    "a": pl.String,
    "b": pl.String,
    "p": pl.String,
    "o": pl.String,
    "o_is_entity": pl.Boolean,
    "o_lang": pl.String,
    "o_datatype": pl.String,
}


@dataclass(frozen=True)
class DeriveOptions:
    """How pairs are formed: the group-size cap, the sampling seed and the relations left out."""

    max_group: int = DEFAULT_MAX_GROUP
    max_pairs: int = DEFAULT_MAX_PAIRS  # per relation
    seed: int = 0
    stop_relations: frozenset[str] = frozenset()  # relation IRIs
    skip_kinds: tuple[str, ...] = ("text",)

    def __post_init__(self) -> None:
        check_sizes(self, lambda key: "--" + key.replace("_", "-"))

    def as_dict(self) -> dict[str, Any]:
        return {
            "max_group": self.max_group,
            "max_pairs": self.max_pairs,
            "seed": self.seed,
            "stop_relations": sorted(self.stop_relations),
            "skip_kinds": list(self.skip_kinds),
        }


@dataclass
class Associations:
    """The pairs (``a``, ``b``, shared ``p``/``o`` columns) and what each relation contributed."""

    pairs: pl.DataFrame
    per_relation: dict[str, dict[str, int]] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # relation IRI -> why it was left out


@dataclass(frozen=True)
class DeriveSettings:
    """``[options.derive]`` of a schema: what ``kgforge derive`` uses where its flags are not given."""

    max_group: int = DEFAULT_MAX_GROUP
    """Groups larger than this give a seeded sample of pairs instead of all of them."""
    max_pairs: int = DEFAULT_MAX_PAIRS
    """At most this many pairs per relation (a seeded sample)."""
    seed: int = 0
    """The sampling seed."""
    stop_relations: tuple[str, ...] = ()
    """Relations (ids of the schema's) whose shared values pair no topics, beside the schema's own stop-list:
    values shared by administration or boilerplate (a hotline, 免费开放。) that other stages still score."""

    def __post_init__(self) -> None:
        check_sizes(self, str)


def check_sizes(options: DeriveOptions | DeriveSettings, spelled: Callable[[str], str]) -> None:
    """``max_group``, ``max_pairs`` and ``seed`` in range; errors name each as ``spelled(field name)``."""
    checks.whole(options.max_group, spelled("max_group"), 2)  # a pair needs two members
    checks.whole(options.max_pairs, spelled("max_pairs"), 1)
    checks.whole(options.seed, spelled("seed"), 0)  # NumPy takes no negative seed


def options_for(
    schema: Schema, max_group: int | None = None, seed: int | None = None, max_pairs: int | None = None
) -> DeriveOptions:
    """Options from the schema (``stop_relations``, ``[options.derive]``) overridden by the caller; a
    SchemaError naming the schema file for an unknown key or a value of the wrong type in the table."""
    configured = read_options(DeriveSettings, schema.path, "derive", schema.options.get("derive"))
    unknown = [rid for rid in configured.stop_relations if rid not in schema.relations]
    if unknown:
        raise SchemaError(
            f"{schema.path}: [options.derive] stop_relations names {', '.join(map(repr, unknown))}, not relations "
            f"of the schema ({', '.join(sorted(schema.relations))})"
        )
    stopped = (*schema.stop_relations, *configured.stop_relations)
    return DeriveOptions(
        max_group=configured.max_group if max_group is None else max_group,
        seed=configured.seed if seed is None else seed,
        max_pairs=configured.max_pairs if max_pairs is None else max_pairs,
        stop_relations=frozenset(schema.relations[rid].iri for rid in stopped),
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
        usable.group_by(GROUP_KEY)
        .agg(pl.col("s").sort().alias("members"))
        .with_columns(n=pl.col("members").list.len())
        .filter(pl.col("n") >= 2)
        .sort(GROUP_KEY, nulls_last=True)
        .with_row_index("gid")
    )
    small = groups.filter(pl.col("n") <= options.max_group)
    big = groups.filter(pl.col("n") > options.max_group)
    capped = pl.concat([_all_pairs(small), _sampled_pairs(big, options)], how="vertical")
    pairs = _relation_budget(capped, options).sort(["p", "o", "a", "b"]).select(list(PAIR_SCHEMA))
    return Associations(
        pairs=pairs,
        per_relation=_report(groups, capped, pairs, options.max_group),
        skipped={p: why for p, why in skipped.items() if p in set(facts["p"].unique())},
    )


def _all_pairs(groups: pl.DataFrame) -> pl.DataFrame:
    members = groups.select("gid", "members").explode("members").rename({"members": "a"})
    joined = members.join(members.rename({"a": "b"}), on="gid").filter(pl.col("a") < pl.col("b"))
    return joined.join(groups.drop("members", "n"), on="gid").select(list(PAIR_SCHEMA))


def _sampled_pairs(groups: pl.DataFrame, options: DeriveOptions) -> pl.DataFrame:
    """For each group above the cap, ``cap·(cap−1)/2`` distinct pairs drawn uniformly (seeded), all groups
    at once. Groups up to four times the cap enumerate their pairs and keep a random subset; larger
    ones draw pair indices with numpy (repeats dropped, redrawn until each group has its share)."""
    keep = options.max_group * (options.max_group - 1) // 2
    if groups.is_empty():
        return pl.DataFrame(schema=PAIR_SCHEMA)
    rng = np.random.default_rng([options.seed, 0x5EED])
    mid = groups.filter(pl.col("n") <= 4 * options.max_group)
    enumerated = _all_pairs(mid).sort(["p", "o", "a", "b"])
    enumerated = (
        enumerated.with_columns(_k=pl.Series(rng.random(enumerated.height)))
        .filter(pl.col("_k").rank("ordinal").over(GROUP_KEY) <= keep)
        .drop("_k")
    )
    hubs = groups.filter(pl.col("n") > 4 * options.max_group).drop("gid").with_row_index("row")
    n = hubs["n"].to_numpy().astype(np.int64)
    total = n * (n - 1) // 2
    drawn = pl.DataFrame(schema={"row": pl.Int64, "t": pl.Int64})
    for _ in range(20):
        have = drawn.group_by("row").len()
        counts = np.zeros(len(n), dtype=np.int64)
        counts[have["row"].to_numpy()] = have["len"].to_numpy()
        short = np.flatnonzero(counts < keep)
        if not len(short):
            break
        row = np.repeat(short, 2 * (keep - counts[short]) + 8)
        index = (rng.random(len(row)) * total[row]).astype(np.int64)
        drawn = pl.concat([drawn, pl.DataFrame({"row": row, "t": index})]).unique(maintain_order=True)
    drawn = drawn.filter(pl.int_range(pl.len()).over("row") < keep)
    left, right = _unrank_pairs(drawn["t"].to_numpy())
    members = hubs.select(pl.col("row").cast(pl.Int64), "members", *GROUP_KEY)
    sampled = (
        drawn.with_columns(i=pl.Series(left), j=pl.Series(right))
        .join(members, on="row")
        .select(
            pl.col("members").list.get(pl.col("i")).alias("a"),
            pl.col("members").list.get(pl.col("j")).alias("b"),
            *GROUP_KEY,
        )
    )
    return pl.concat([enumerated.select(list(PAIR_SCHEMA)), sampled.select(list(PAIR_SCHEMA))])


def _relation_budget(pairs: pl.DataFrame, options: DeriveOptions) -> pl.DataFrame:
    """At most ``max_pairs`` pairs per relation: a seeded uniform sample of the rest."""
    pairs = pairs.sort(["p", "o", "a", "b"])
    rng = np.random.default_rng([options.seed, 0xB0D6E7])
    keyed = pairs.with_columns(_k=pl.Series(rng.random(pairs.height)))
    return keyed.filter(pl.col("_k").rank("ordinal").over("p") <= options.max_pairs).drop("_k")


def _unrank_pairs(index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Pair index t → (i, j), i < j, for the enumeration t = j·(j−1)/2 + i."""
    j = ((1 + np.sqrt(1 + 8 * index.astype(np.float64))) // 2).astype(np.int64)
    j -= j * (j - 1) // 2 > index  # float rounding can overshoot by one
    j += (j + 1) * j // 2 <= index
    return index - j * (j - 1) // 2, j


def _report(groups: pl.DataFrame, capped: pl.DataFrame, pairs: pl.DataFrame, cap: int) -> dict[str, dict[str, int]]:
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
    after_cap = capped.group_by("p").agg(after_cap=pl.len())
    joined = (
        summary.join(written, on="p", how="left")
        .join(after_cap, on="p", how="left")
        .with_columns(pl.col("pairs", "after_cap").fill_null(0))
    )
    joined = joined.with_columns(
        pairs_left_out=pl.col("pairs_possible") - pl.col("pairs"),
        left_out_by_group_cap=pl.col("pairs_possible") - pl.col("after_cap"),
        left_out_by_relation_budget=pl.col("after_cap") - pl.col("pairs"),
    ).drop("after_cap")
    return {row.pop("p"): {k: int(v) for k, v in row.items()} for row in joined.sort("p").iter_rows(named=True)}


def pair_node(a: str, b: str, p: str, o: str) -> str:
    """The reified node of one associated pair: stable across runs for the same pair and share."""
    return PAIR_NODE + hashlib.sha256("\x1f".join((a, b, p, o)).encode("utf-8")).hexdigest()[:24]


def associated_relation(predicate: str) -> str:
    """The direct virtual edge's predicate for pairs sharing ``predicate``."""
    return ASSOCIATED_RELATION + safe_segment(predicate.removeprefix(RELATION))


def write_pairs(pairs: pl.DataFrame, relations: pl.DataFrame, path: Path) -> int:
    """Write the pairs as reified nodes plus direct virtual edges; returns the distinct quads written.

    Lines are put together column-wise (a per-quad writer spends ~25 s on 3.6M quads); every literal
    goes through ``quads.literal_term``, the one escaping function, once per distinct value.
    """
    graph = f"<{check_iri(ASSOCIATED_GRAPH)}>"
    names = {r["iri"]: r for r in relations.iter_rows(named=True)}
    shared = pairs.select("o", "o_is_entity", "o_lang", "o_datatype").unique()
    terms = [
        f"<{check_iri(o)}>" if is_entity else literal_term(o, lang or None, datatype)
        for o, is_entity, lang, datatype in shared.iter_rows()
    ]
    pairs = pairs.join(
        shared.with_columns(term=pl.Series(terms, dtype=pl.String)),
        on=["o", "o_is_entity", "o_lang", "o_datatype"],
        how="left",
        nulls_equal=True,
    )
    nodes = [pair_node(a, b, p, o) for a, b, p, o in pairs.select("a", "b", "p", "o").iter_rows()]
    pairs = pairs.with_columns(
        node=pl.Series(nodes, dtype=pl.String),
        edge=pl.col("p").map_elements(associated_relation, return_dtype=pl.String),
    )
    iri = lambda column: pl.concat_str([pl.lit("<"), pl.col(column), pl.lit(">")])  # noqa: E731
    tail = pl.lit(f" {graph} .")
    line = lambda subject, predicate, value: pl.concat_str([subject, pl.lit(f" {predicate} "), value, tail])  # noqa: E731
    # the node names (a, b, p, o-text): shares of "x"@en and "x"@zh are one node with two objects
    node_rows = pairs.unique(subset="node", maintain_order=True)
    lines = pl.concat(
        [
            node_rows.select(line=line(iri("node"), f"<{predicate}>", value))
            for predicate, value in ((LEFT, iri("a")), (RIGHT, iri("b")), (SHARED_PREDICATE, iri("p")))
        ]
        + [
            pairs.select(line=line(iri("node"), f"<{SHARED_OBJECT}>", pl.col("term"))),
            pairs.select(line=pl.concat_str([iri("a"), pl.lit(" "), iri("edge"), pl.lit(" "), iri("b"), tail])).unique(
                maintain_order=True
            ),
        ]
    )
    labels = []
    for p in pairs["p"].unique().sort().to_list():
        rel = names.get(p, {})
        edge = associated_relation(p)
        labels.append(f"<{edge}> <{RDFS_LABEL}> {literal_term('同' + (rel.get('zh') or p), 'zh')} {graph} .")
        labels.append(
            f"<{edge}> <{RDFS_LABEL}> {literal_term('same ' + (rel.get('en') or rel.get('zh') or p), 'en')} {graph} ."
        )
    lines = pl.concat([pl.DataFrame({"line": labels}, schema={"line": pl.String}), lines])
    with atomic_path(path) as tmp:
        lines.write_csv(tmp, include_header=False, quote_style="never", line_terminator="\n")
    return lines.height


@dataclass(frozen=True)
class DeriveReport(Record):
    """The associated pairs ``kgforge derive`` computed from one build and published in the next."""

    domain: str
    graph: str  # the named graph the pairs went into
    pairs: int
    quads: int  # quads written for them (pair nodes and their labels)
    options: dict[str, Any]  # the DeriveOptions used (caps, seed, stop relations, skipped kinds)
    groups_capped: int  # groups sharing a (p, o) larger than max_group, sampled down
    pairs_left_out_by_cap: int
    pairs_left_out_by_relation_budget: int
    pairs_left_out: int
    relations: dict[str, dict[str, Any]]  # relation label -> pairs, groups, capped groups, left out, iri
    skipped_relations: dict[str, str]  # relation label -> why no pairs were made for it
    build_id: str  # the build published with the pairs
    timings: dict[str, float]  # read, join, write and load: wall ``read_seconds``, CPU ``read_cpu_seconds``, …


def derive(
    domain: str,
    workdir: Path | str | None = None,
    max_group: int | None = None,
    seed: int | None = None,
    tables: GraphTables | None = None,
    max_pairs: int | None = None,
) -> DeriveReport:
    """Compute, write and load the associated triples of ``domain``; re-running replaces them.

    Derive is a writer from start to end: it holds the write lock, reads the published build, and
    publishes the build it stages, so the pairs always come from the build they are added to."""
    paths = domain_paths(domain, workdir)
    with extending(paths) as published:  # under the lock: the build the pairs come from and are added to
        options = options_for(published.schema, max_group, seed, max_pairs)
        timings: dict[str, float] = {}
        started = _clock()
        read = DomainFacts(tables.domain_facts(), tables.relations) if tables else published.domain_facts()
        started = _lap(timings, "read", started)
        kinds = dict(zip(read.relations["iri"].to_list(), read.relations["kind"].to_list()))
        result = associate(read.facts, kinds, options)
        started = _lap(timings, "join", started)
        with staged_build(paths) as staging:
            quads = write_pairs(result.pairs, read.relations, staging / ASSOCIATED_QUADS)
            report = _summary(domain, result, options, read.relations, quads)
            started = _lap(timings, "write", started)
            build_id = _load(paths, staging, published, quads, report)
            _lap(timings, "load", started)
    return DeriveReport(**report, build_id=build_id, timings=timings)


def _load(paths: DomainPaths, staging: Path, current: Snapshot, quads: int, report: dict[str, Any]) -> str:
    """Publish a store holding the current graphs plus the new associated graph; returns the build id.

    Re-loading all of a DuConv-sized store takes minutes, so the new build starts as a RocksDB
    checkpoint (hard links) of a build without associated triples — the current one, or the previous
    one when it is the current minus an older associated graph — and only the new graph is bulk-loaded.
    Its count is checked before the swap, as ``kgforge build`` does.
    """
    entry = GraphEntry(kind=ASSOCIATED_KIND, quads_file=ASSOCIATED_QUADS, quads=quads)
    stage = {k: v for k, v in report.items() if k != "relations"}
    published, manifest = current.build, current.manifest
    base, drop = _extension_base(paths, published, manifest)
    stage["base_graphs"] = _checksums_without_associated(manifest)
    return extend_build(
        paths,
        staging,
        current,
        base,
        drop,
        {ASSOCIATED_GRAPH: entry},
        {"derive": stage},
        keep_base_as=BASE_DIR,
        trusted=True,
    ).build_id


BASE_DIR = "base-oxigraph"  # inside a derived build: a checkpoint of the store it extended


def _checksums_without_associated(manifest: Manifest) -> dict[str, str | None]:
    """The sha256 of every graph but the associated one: the base a derive run extended."""
    return {g: e.sha256 for g, e in manifest.graphs.items() if e.kind != ASSOCIATED_KIND}


def _extension_base(paths: DomainPaths, published: Path, manifest: Manifest) -> tuple[Path, list[str]]:
    """The store to extend, and the graphs to remove from its copy first.

    A build made by derive keeps, beside its store, a hard-linked checkpoint of the store it extended
    (``base-oxigraph``); a re-run extends that again when the other graphs have not changed since, so
    the old associated graph never has to be deleted quad by quad."""
    current = published / "oxigraph"
    old = manifest.graphs_of_kind(ASSOCIATED_KIND)
    if not old:
        return current, []
    wanted = _checksums_without_associated(manifest)
    recorded = manifest.stages.get("derive", {}).get("base_graphs")
    if (current.parent / BASE_DIR).is_dir() and recorded == wanted:
        return current.parent / BASE_DIR, []
    for build in sorted(paths.builds.iterdir(), reverse=True):  # e.g. the build derive first extended
        marker = build / "manifest.json"
        if build.resolve() == current.parent or not marker.is_file() or (build / ".incomplete").exists():
            continue
        if Manifest.read(marker).checksums() == wanted:
            return build / "oxigraph", []
    return current, old


def _summary(
    domain: str, result: Associations, options: DeriveOptions, relations: pl.DataFrame, quads: int
) -> dict[str, Any]:
    # a relation's name is its zh label from the schema graph, else its IRI, as GraphTables.label_map gives it
    labels = {iri: zh or iri for iri, zh in zip(relations["iri"].to_list(), relations["zh"].to_list())}
    per_relation = {labels.get(p, p): dict(counts, iri=p) for p, counts in result.per_relation.items()}
    left_out = sum(c["pairs_left_out"] for c in result.per_relation.values())
    return {
        "domain": domain,
        "graph": ASSOCIATED_GRAPH,
        "pairs": result.pairs.height,
        "quads": quads,
        "options": options.as_dict(),
        "groups_capped": sum(c["groups_capped"] for c in result.per_relation.values()),
        "pairs_left_out_by_cap": sum(c["left_out_by_group_cap"] for c in result.per_relation.values()),
        "pairs_left_out_by_relation_budget": sum(
            c["left_out_by_relation_budget"] for c in result.per_relation.values()
        ),
        "pairs_left_out": left_out,
        "relations": per_relation,
        "skipped_relations": {labels.get(p, p): why for p, why in sorted(result.skipped.items())},
    }


def _clock() -> tuple[float, float]:
    return time.perf_counter(), time.process_time()


def _lap(timings: dict[str, float], phase: str, started: tuple[float, float]) -> tuple[float, float]:
    """Record the wall and CPU seconds (all threads) of ``phase`` since ``started``; return the time now. CPU
    seconds beside wall seconds: on a shared machine the wall time also holds what other processes took."""
    now = _clock()
    timings[f"{phase}_seconds"] = round(now[0] - started[0], 3)
    timings[f"{phase}_cpu_seconds"] = round(now[1] - started[1], 3)
    return now


def read_pairs(tables: GraphTables) -> pl.DataFrame:
    """The stored associated pairs, from tables read with ``include_derived=True``."""
    nodes = tables.facts.filter(pl.col("graph") == ASSOCIATED_GRAPH, pl.col("s").str.starts_with(PAIR_NODE))
    if nodes.is_empty():
        return pl.DataFrame(schema=PAIR_SCHEMA)
    wide = nodes.pivot(on="p", index="s", values="o", aggregate_function="first")
    shared = nodes.filter(pl.col("p") == SHARED_OBJECT).select("s", "o_is_entity", "o_lang", "o_datatype")
    return (
        wide.rename({LEFT: "a", RIGHT: "b", SHARED_PREDICATE: "p", SHARED_OBJECT: "o"})
        .join(shared, on="s")
        .select(list(PAIR_SCHEMA))
    )
