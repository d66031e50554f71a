"""The goal samplers the styles are made of: DuConv one-/two-step goals, KdConv-style 1-3 hop paths (DuRecDial's
goal sequences are drawn in its room). Each style is registered in ``STYLES`` by its dataset's room (its ``goals``
part); a package of one's own adds a style through the entry-point group ``kgforge.goal_styles``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.quarantine import warn
from kgforge.derive import read_pairs
from kgforge.goals.graph import (
    MIN_TOPIC_FACTS,
    STYLES,
    GoalGraph,
    GoalOptions,
    _triple,
    facts_per_entity,
    make_goal,
    topic_first,
    touching,
)
from kgforge.goals.record import Goal
from kgforge.store.workdir import where

# ---------------------------------------------------------------- stratified sampling


def stratified_take(frame: pl.DataFrame, n: int, by: str, seed: int) -> pl.DataFrame:
    """``n`` rows (or all there are), an equal share per value of ``by``, leftovers to the others.

    ``frame`` must already be in a deterministic order; each row gets a seeded random key, so the
    same frame and seed give the same rows.
    """
    if n <= 0 or frame.is_empty():
        return frame.clear()
    rng = np.random.default_rng(seed)
    keyed = frame.with_columns(_key=pl.Series(rng.random(frame.height)))
    sizes = dict(keyed.group_by(by).len().sort(by).iter_rows())
    quota = _quotas(sizes, n)
    ranked = keyed.with_columns(_rank=pl.col("_key").rank("ordinal").over(by))
    chosen = ranked.filter(pl.col("_rank") <= pl.col(by).replace_strict(quota, return_dtype=pl.Int64))
    return chosen.sort("_key").drop("_key", "_rank")


def _quotas(sizes: dict[Any, int], n: int) -> dict[Any, int]:
    """Water-filling: each stratum gets min(size, level), the level chosen so the quotas sum to n."""
    quota = {k: 0 for k in sizes}
    left, open_strata = n, sorted(sizes, key=lambda k: (sizes[k], str(k)))
    while left > 0 and open_strata:
        share = max(1, left // len(open_strata))
        for k in list(open_strata):
            take = min(share, sizes[k] - quota[k], left)
            quota[k] += take
            left -= take
            if quota[k] == sizes[k]:
                open_strata.remove(k)
            if left == 0:
                break
    return quota


def _pair_key(a: pl.Expr, b: pl.Expr) -> pl.Expr:
    return pl.concat_str([pl.min_horizontal(a, b), pl.max_horizontal(a, b)], separator="\x1f")


def sample_one_step(graph: GoalGraph, n: int, seed: int, taken: set[str], asked: tuple[str, ...] = ()) -> list[Goal]:
    edges = graph.topic_edges().filter(touching(asked, "s", "o")).with_columns(pair=_pair_key(pl.col("s"), pl.col("o")))
    edges = edges.filter(~pl.col("pair").is_in(list(taken))).unique("pair", keep="first", maintain_order=True)
    chosen = stratified_take(edges, n, "p", seed)
    flips = np.random.default_rng([seed, 1]).random(chosen.height) < 0.5
    goals = []
    for (s, p, o, pair), flip in zip(chosen.iter_rows(), flips):
        topics = topic_first(asked, o, s) if flip else topic_first(asked, s, o)
        goals.append(make_goal(graph, "one_step", topics, [_triple(graph, s, p, o, True)], seed))
        taken.add(pair)
    return goals


def sample_two_step(graph: GoalGraph, n: int, seed: int, taken: set[str], asked: tuple[str, ...] = ()) -> list[Goal]:
    pairs = read_pairs(graph.tables)
    if not graph.derived:
        raise KgforgeError(
            f"no derived graph (associated triples) for {graph.domain!r} in {where(graph.workdir)}, "
            f"which two-step goals need: run `kgforge derive {graph.domain}` first "
            "(or give --one-step-ratio 1)"
        )
    pairs = pairs.filter(
        ~pl.col("p").is_in(list(graph.stop_iris)),
        graph.may_be_topic("a"),
        graph.may_be_topic("b"),
        touching(asked, "a", "b"),
    ).sort("p", "o", "a", "b")
    rng = np.random.default_rng([seed, 2])
    pairs = (
        pairs.with_columns(pair=_pair_key(pl.col("a"), pl.col("b")), _k=pl.Series(rng.random(pairs.height)))
        .filter(~pl.col("pair").is_in(list(taken)))
        .sort("_k")
        .unique("pair", keep="first", maintain_order=True)
        .drop("_k")
        .sort("p", "o", "a", "b")
    )
    chosen = stratified_take(pairs, n, "p", seed)
    flips = np.random.default_rng([seed, 3]).random(chosen.height) < 0.5
    goals = []
    for row, flip in zip(chosen.iter_rows(named=True), flips):
        a, b = topic_first(asked, row["b"], row["a"]) if flip else topic_first(asked, row["a"], row["b"])
        path = [_triple(graph, t, row["p"], row["o"], row["o_is_entity"]) for t in (a, b)]
        extra = {"shared": {"p": row["p"], "o": row["o"], "o_is_entity": row["o_is_entity"], "o_lang": row["o_lang"]}}
        goals.append(make_goal(graph, "two_step", [a, b], path, seed, extra))
        taken.add(row["pair"])
    return goals


# ---------------------------------------------------------------- KdConv-style paths


@dataclass
class Adjacency:
    """Entity edges in both directions as CSR arrays, for seeded random walks without joins."""

    nodes: list[str]
    offsets: np.ndarray
    targets: np.ndarray
    edge_rows: np.ndarray  # index into ``edges`` of each adjacency slot
    edges: pl.DataFrame

    @classmethod
    def build(cls, edges: pl.DataFrame) -> Adjacency:
        nodes = pl.concat([edges["s"], edges["o"]]).unique().sort()
        index = {iri: i for i, iri in enumerate(nodes.to_list())}
        s = edges["s"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
        o = edges["o"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
        rows = np.arange(edges.height)
        src, dst, via = np.concatenate([s, o]), np.concatenate([o, s]), np.concatenate([rows, rows])
        order = np.lexsort((dst, src))
        offsets = np.zeros(len(index) + 1, dtype=np.int64)
        np.add.at(offsets, src + 1, 1)
        return cls(nodes.to_list(), np.cumsum(offsets), dst[order], via[order], edges)

    def step(self, at: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
        """A random neighbour of each node in ``at`` and the edge used (−1 where a node has none)."""
        degree = self.offsets[at + 1] - self.offsets[at]
        pick = self.offsets[at] + (rng.random(len(at)) * np.maximum(degree, 1)).astype(np.int64)
        pick = np.minimum(pick, len(self.targets) - 1)
        has = degree > 0
        return np.where(has, self.targets[pick], -1), np.where(has, self.edge_rows[pick], -1)


def sample_paths(
    graph: GoalGraph, n: int, hops: tuple[int, int], seed: int, taken: set[str], asked: tuple[str, ...] = ()
) -> list[Goal]:
    """Topic transitions of 1..3 hops: start edges stratified by relation (each touching a topic ``asked`` for,
    which then opens the path), then seeded random steps to a topic not yet on the path (a few tries per path,
    paths that cannot grow are dropped)."""
    edges = graph.topic_edges()
    if edges.is_empty():
        raise KgforgeError(
            f"domain {graph.domain!r} has no entity-valued facts between typed topics to walk for --hops goals"
        )
    adjacency = Adjacency.build(edges)
    counts = list(range(hops[0], hops[1] + 1))
    goals: list[Goal] = []
    for i, k in enumerate(counts):
        want = n // len(counts) + (1 if i < n % len(counts) else 0)
        goals += _walks(graph, adjacency, k, want, seed + 7919 * k, taken, asked)
    return goals


def _walks(
    graph: GoalGraph, adjacency: Adjacency, hops: int, want: int, seed: int, taken: set[str], asked: tuple[str, ...]
) -> list[Goal]:
    rng = np.random.default_rng(seed)
    edges = adjacency.edges.with_row_index("row").filter(touching(asked, "s", "o"))
    starts = stratified_take(edges, min(edges.height, want * 3), "p", seed)
    index = {iri: i for i, iri in enumerate(adjacency.nodes)}
    flip = rng.random(starts.height) < 0.5
    if asked:  # the end of the start edge that --topic asked for opens the path
        ends = zip(starts["s"].to_list(), starts["o"].to_list(), flip.tolist())
        flip = np.array([topic_first(asked, *((o, s) if drawn else (s, o)))[0] == o for s, o, drawn in ends], bool)
    s = starts["s"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    o = starts["o"].replace_strict(index, return_dtype=pl.Int64).to_numpy()
    nodes = [np.where(flip, o, s), np.where(flip, s, o)]
    used = [starts["row"].to_numpy()]
    alive = np.ones(starts.height, dtype=bool)
    for _ in range(hops - 1):
        nxt, via = np.full(starts.height, -1), np.full(starts.height, -1)
        for _try in range(4):
            need = alive & (nxt < 0)
            cand, edge = adjacency.step(nodes[-1][need], rng)
            fresh = cand >= 0
            for earlier in nodes:
                fresh &= cand != earlier[need]
            slots = np.flatnonzero(need)[fresh]
            nxt[slots], via[slots] = cand[fresh], edge[fresh]
        alive &= nxt >= 0
        nodes.append(nxt)
        used.append(via)
    goals = []
    rows = adjacency.edges
    for j in np.flatnonzero(alive):
        topics = [adjacency.nodes[nodes[h][j]] for h in range(hops + 1)]
        key = "\x1f".join(topics)
        if key in taken or "\x1f".join(reversed(topics)) in taken:
            continue
        path = [_triple(graph, s, p, o, True) for s, p, o in (rows.row(int(used[h][j]))[:3] for h in range(hops))]
        goals.append(make_goal(graph, "path", topics, path, seed, {"hops": hops}))
        taken.add(key)
        if len(goals) == want:
            break
    return goals


# ---------------------------------------------------------------- DuRecDial-style sequences


def read_profiles(path: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """User profiles, one JSON object a line (a DuRecDial ``user_profile``, or a session holding one), and
    the lines that hold none (``{"line", "reason"}``, warned about): a bad line costs only itself. A file
    without a single usable profile is an error."""
    profiles, unreadable = [], []
    for record in iter_json_lines(path):
        value = record.value.get("user_profile", record.value) if isinstance(record.value, dict) else None
        if record.error or not isinstance(value, dict):
            reason = record.error or "expected a JSON object (a DuRecDial user_profile)"
            warn(str(path), f"line {record.line}", reason)
            unreadable.append({"line": record.line, "reason": reason})
            continue
        profiles.append(value)
    if not profiles:
        raise InputError(
            f"{path}: no usable profile; " + "; ".join(f"line {u['line']}: {u['reason']}" for u in unreadable[:5])
        )
    return profiles, unreadable


# ---------------------------------------------------------------- the styles


def require_topics(graph: GoalGraph) -> None:
    """Refuse a graph where no entity can be a goal topic, naming why (before any sampler blames derive)."""
    if len(graph.talked_about) >= 2:
        return
    counts = facts_per_entity(graph.base_facts)["len"].sort(descending=True).to_list()
    most = ", ".join(str(n) for n in counts[:2]) or "none"
    raise KgforgeError(
        f"a goal needs two topics, each taking part in {MIN_TOPIC_FACTS} facts or more (every DuConv "
        f"topic has 4 or more), and {len(graph.talked_about)} entity of {graph.domain!r} does (the two "
        f"best-connected take part in {most}): add sources with more facts per entity first"
    )


def shortfall(kinds: dict[str, int], options: GoalOptions, graph: GoalGraph) -> list[str]:
    """Why the goals sampled differ from what ``options`` asked for, one sentence each (empty when they do not)."""
    got = sum(kinds.values())
    if options.topics and got < options.n:
        named = ", ".join(graph.label(topic) for topic in options.topics)
        return [
            f"wrote {got:,} of the {options.n:,} goals asked for: the graph of {graph.domain!r} has no more distinct "
            f"{options.style} goals opening with {named} (--topic)"
        ]
    if options.style != "duconv":
        what = STYLES.entry(options.style).meta.get("distinct", "pair of topics")  # what no two goals share
        return (
            []
            if got >= options.n
            else [
                f"wrote {got:,} of the {options.n:,} goals asked for: the graph of {graph.domain!r} has no more distinct "
                f"{options.style} goals (topics with {MIN_TOPIC_FACTS}+ facts, each {what} used once)"
            ]
        )
    one, two = kinds.get("one_step", 0), kinds.get("two_step", 0)
    want_one = round(options.n * options.one_step_ratio)
    notes = []
    if one < want_one:
        filled = f", so {two:,} two-step goals fill the rest" if two > options.n - want_one else ""
        notes.append(
            f"{one:,} one-step goals where --one-step-ratio {options.one_step_ratio:g} asks for "
            f"{want_one:,}: the graph of {graph.domain!r} has only {one:,} distinct topic pairs linked by "
            f"an entity-valued fact (both topics with {MIN_TOPIC_FACTS}+ facts){filled}"
        )
    if got < options.n and options.one_step_ratio < 1:
        notes.append(
            f"{two:,} two-step goals where {options.n - one:,} were wanted: only {two:,} associated pairs "
            f"(`kgforge derive`) have two topics with {MIN_TOPIC_FACTS}+ facts outside the stop-list"
        )
    if got < options.n:
        notes.append(f"wrote {got:,} of the {options.n:,} goals asked for")
    return notes
