"""`kgforge goals`: conversation goals sampled from a built domain, and real goals checked against it.

Goal kinds, each defined by a query in ``queries/`` and sampled here column-wise with polars:

* ``one_step`` — DuConv ``[["START", A, B], [A, r, B]]`` (or ``[B, r, A]``): an entity-valued fact
  (``goal_one_step.rq``);
* ``two_step`` — DuConv ``[["START", A, B], [A, r, X], [B, r, X]]``: an associated pair from
  ``kgforge derive`` (``associated_pairs.rq``; by definition ``goal_two_step.rq``);
* ``path`` — KdConv-style transitions T1 -r1- T2 -r2- T3 over 1–3 hops (``transition_{k}hop.rq``);
* ``sequence`` — DuRecDial-style goal sequences 问答(star) → 关于明星的聊天(star) → 电影推荐(film) → 再见
  over topics a user profile likes.

Sampling is reproducible for a seed (the candidate frames are sorted before seeded random keys are
drawn), has no duplicate topic pair, never orders the whole graph at random in SPARQL, and is
stratified by relation: every relation gets an equal share, and what a small relation cannot fill
goes to the others.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pyoxigraph as ox

from kgforge import checks
from kgforge.derive import read_pairs
from kgforge.errors import InputError, KgforgeError
from kgforge.gc_pause import paused_gc
from kgforge.jsonio import iter_json_lines
from kgforge.quarantine import warn
from kgforge.query import QueryRunner
from kgforge.resources import query_text
from kgforge.schema import Schema, load_schema
from kgforge.store import DomainPaths, domain_paths, published_build, read_manifest
from kgforge.tables import GraphTables, read_tables
from kgforge.text import normalise_label
from kgforge.vocab import CLASS, ONTO, RELATION

GOAL_KINDS = ("one_step", "two_step", "path", "sequence")
MIN_TOPIC_FACTS = 3  # a goal topic takes part in this many facts or more (every topic of DuConv dev has 4 or more)
TRIPLE_SCHEMA = {"s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean}
# DuRecDial goal types (zh, as in all_goal_type.txt) and the English names DuRecDial 2.0 uses.
DIALOGUE_TYPES = {
    "寒暄": "Greetings", "问答": "Q&A", "关于明星的聊天": "Chat about stars", "电影推荐": "Movie recommendation",
    "音乐推荐": "Music recommendation", "兴趣点推荐": "POI recommendation", "美食推荐": "Food recommendation",
    "提问": "Ask questions", "再见": "Say goodbye",
}
RECOMMENDATION_BY_TYPE = {"film": "电影推荐", "song": "音乐推荐", "album": "音乐推荐", "attraction": "兴趣点推荐",
                          "poi": "兴趣点推荐", "food": "美食推荐"}
CHAT_BY_TYPE = {"star": "关于明星的聊天", "singer": "关于明星的聊天"}
_QUALIFIER = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")
_SPACES = re.compile(r"\s+")
LIKES_KEYS = ("喜欢的明星", "喜欢的电影", "喜欢的音乐", "喜欢的poi", "likes", "liked")


# ---------------------------------------------------------------- the graph as goal material


@dataclass
class GoalGraph:
    """What goal sampling and checking need from a domain, read once."""

    schema: Schema
    tables: GraphTables
    language: str
    labels: dict[str, str] = field(default_factory=dict)
    relation_kinds: dict[str, str] = field(default_factory=dict)
    topic_types: dict[str, str] = field(default_factory=dict)  # entity IRI -> schema type id
    class_iris: frozenset[str] = frozenset()  # nodes that name a class (电影, 歌手): never topics
    talked_about: frozenset[str] = frozenset()  # entities with MIN_TOPIC_FACTS facts or more
    build_id: str = ""  # of the published build the graph was read from

    @classmethod
    def load(cls, paths: DomainPaths, language: str | None = None, tables: GraphTables | None = None) -> "GoalGraph":
        build = published_build(paths)
        manifest = read_manifest(paths, build)
        schema = load_schema(manifest["schema"]["path"])
        tables = tables or read_tables(paths, include_derived=True, build=build)
        graph = cls(schema, tables, language or schema.language, build_id=manifest["build_id"])
        graph.labels = tables.label_map(graph.language)
        graph.relation_kinds = dict(zip(tables.relations["iri"].to_list(), tables.relations["kind"].to_list()))
        graph.topic_types = _topic_types(schema, tables)
        graph.class_iris = frozenset(class_nodes(schema, tables))
        graph.talked_about = frozenset(_entities_with_facts(graph.base_facts, MIN_TOPIC_FACTS))
        return graph

    @property
    def base_facts(self) -> pl.DataFrame:
        return self.tables.domain_facts()

    @property
    def stop_iris(self) -> set[str]:
        return {self.schema.relations[r].iri for r in self.schema.stop_relations}

    def entity_edges(self) -> pl.DataFrame:
        """Distinct entity-valued facts between two different entities, stop-listed relations left out."""
        entity_relations = [iri for iri, kind in self.relation_kinds.items() if kind == "entity"]
        return (
            self.base_facts.filter(pl.col("o_is_entity"), pl.col("p").is_in(entity_relations),
                                   ~pl.col("p").is_in(list(self.stop_iris)), pl.col("s") != pl.col("o"))
            .select("s", "p", "o").unique().sort("p", "s", "o")
        )

    def topic_edges(self) -> pl.DataFrame:
        """``entity_edges`` between two entities that may be topics (see ``may_be_topic``)."""
        return self.entity_edges().filter(self.may_be_topic("s"), self.may_be_topic("o"))

    def may_be_topic(self, column: str) -> pl.Expr:
        """Whether the entity in ``column`` may be a goal topic: never a class node; with facts to talk
        about (``MIN_TOPIC_FACTS``, as every DuConv goal topic has); typed whenever the schema declares
        types, so every topic's type fact (领域 电影 / 明星) can be in its knowledge."""
        allowed = ~pl.col(column).is_in(list(self.class_iris)) & pl.col(column).is_in(list(self.talked_about))
        if self.schema.types:
            allowed &= pl.col(column).is_in(list(self.topic_types))
        return allowed

    def label(self, iri: str) -> str:
        return self.labels.get(iri, iri)


def class_nodes(schema: Schema, tables: GraphTables) -> set[str]:
    """Nodes that stand for a class rather than a thing to talk about: the schema's type IRIs and any
    entity named like a type (an ``电影`` or ``歌手`` node that a source made from an attribute value)."""
    type_names = {normalise_label(name) for t in schema.types.values() for name in (t.zh, t.en)}
    spelled = pl.col("label").str.replace_all(r"\s+", "").str.strip_chars()
    named = tables.labels.filter(spelled.is_in(list(type_names)), ~pl.col("iri").str.starts_with(RELATION))
    return {t.iri for t in schema.types.values()} | set(named["iri"].to_list())


def _entities_with_facts(facts: pl.DataFrame, least: int) -> list[str]:
    """Entities taking part in ``least`` facts or more, as subject or as entity object: an author known only
    as the object of the books that name it still has those books to talk about."""
    as_object = facts.filter(pl.col("o_is_entity")).select(pl.col("o").alias("s"))
    counts = pl.concat([facts.select("s"), as_object]).group_by("s").len()
    return counts.filter(pl.col("len") >= least)["s"].to_list()


def _topic_types(schema: Schema, tables: GraphTables) -> dict[str, str]:
    """Entity IRI → schema type id: rdf:type first, else the schema's type relation (领域 电影/明星)."""
    by_class = {t.iri: t.id for t in schema.types.values()}
    types: dict[str, str] = {}
    if schema.type_relation:
        by_value = {normalise_label(t.zh): t.id for t in schema.types.values()} | {t.en: t.id for t in schema.types.values()}
        type_iri = schema.relations[schema.type_relation].iri
        typed = tables.facts.filter(pl.col("p") == type_iri).select("s", "o").unique().sort("s", "o")
        for s, o in typed.iter_rows():
            if o in by_value:
                types.setdefault(s, by_value[o])
    known = tables.types.filter(pl.col("class").is_in(list(by_class))).unique().sort("iri", "class")
    for iri, cls in known.iter_rows():
        types[iri] = by_class[cls]
    return types


# ---------------------------------------------------------------- records


def goal_id(kind: str, topics: list[str], path: list[dict[str, Any]]) -> str:
    """Stable id of a goal: the same kind, topics and path give the same id on every run."""
    key = json.dumps([kind, topics, [[t["s"], t["p"], t["o"]] for t in path]], ensure_ascii=False)
    return "g-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _triple(graph: GoalGraph, s: str, p: str, o: str, o_is_entity: bool) -> dict[str, Any]:
    return {"s": s, "p": p, "o": o, "o_is_entity": o_is_entity,
            "labels": [graph.label(s), graph.label(p), graph.label(o) if o_is_entity else o]}


def make_goal(graph: GoalGraph, kind: str, topics: list[str], path: list[dict[str, Any]], seed: int,
              extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """One goal record: ids, topics with labels and types, the path as IRIs and as DuConv label triples."""
    record = {
        "goal_id": goal_id(kind, topics, path), "kind": kind, "seed": seed, "topics": topics,
        "topic_labels": [graph.label(t) for t in topics],
        "topic_types": [graph.topic_types.get(t) for t in topics],
        "path": path,
        "goal": [["START", *[graph.label(t) for t in topics]], *[t["labels"] for t in path]],
    }
    record.update(extra or {})
    return record


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


def sample_one_step(graph: GoalGraph, n: int, seed: int, taken: set[str]) -> list[dict[str, Any]]:
    edges = graph.topic_edges().with_columns(pair=_pair_key(pl.col("s"), pl.col("o")))
    edges = edges.filter(~pl.col("pair").is_in(list(taken))).unique("pair", keep="first", maintain_order=True)
    chosen = stratified_take(edges, n, "p", seed)
    flips = np.random.default_rng([seed, 1]).random(chosen.height) < 0.5
    goals = []
    for (s, p, o, pair), flip in zip(chosen.iter_rows(), flips):
        topics = [o, s] if flip else [s, o]
        goals.append(make_goal(graph, "one_step", topics, [_triple(graph, s, p, o, True)], seed))
        taken.add(pair)
    return goals


def sample_two_step(graph: GoalGraph, n: int, seed: int, taken: set[str]) -> list[dict[str, Any]]:
    pairs = read_pairs(graph.tables)
    if pairs.is_empty():
        raise KgforgeError("the store has no associated triples for two-step goals: run "
                           f"`kgforge derive {graph.schema.name}` first (or give --one-step-ratio 1)")
    pairs = pairs.filter(~pl.col("p").is_in(list(graph.stop_iris)), graph.may_be_topic("a"),
                         graph.may_be_topic("b")).sort("p", "o", "a", "b")
    rng = np.random.default_rng([seed, 2])
    pairs = (pairs.with_columns(pair=_pair_key(pl.col("a"), pl.col("b")), _k=pl.Series(rng.random(pairs.height)))
             .filter(~pl.col("pair").is_in(list(taken))).sort("_k").unique("pair", keep="first", maintain_order=True)
             .drop("_k").sort("p", "o", "a", "b"))
    chosen = stratified_take(pairs, n, "p", seed)
    flips = np.random.default_rng([seed, 3]).random(chosen.height) < 0.5
    goals = []
    for row, flip in zip(chosen.iter_rows(named=True), flips):
        a, b = (row["b"], row["a"]) if flip else (row["a"], row["b"])
        path = [_triple(graph, t, row["p"], row["o"], row["o_is_entity"]) for t in (a, b)]
        extra = {"shared": {"p": row["p"], "o": row["o"], "o_is_entity": row["o_is_entity"],
                            "o_lang": row["o_lang"]}}
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
    def build(cls, edges: pl.DataFrame) -> "Adjacency":
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


def sample_paths(graph: GoalGraph, n: int, hops: tuple[int, int], seed: int, taken: set[str]) -> list[dict[str, Any]]:
    """Topic transitions of 1..3 hops: start edges stratified by relation, then seeded random steps
    to a topic not yet on the path (a few tries per path, paths that cannot grow are dropped)."""
    edges = graph.topic_edges()
    if edges.is_empty():
        raise KgforgeError(f"domain {graph.schema.name!r} has no entity-valued facts between typed topics to walk "
                           "for --hops goals")
    adjacency = Adjacency.build(edges)
    counts = list(range(hops[0], hops[1] + 1))
    goals: list[dict[str, Any]] = []
    for i, k in enumerate(counts):
        want = n // len(counts) + (1 if i < n % len(counts) else 0)
        goals += _walks(graph, adjacency, k, want, seed + 7919 * k, taken)
    return goals


def _walks(graph: GoalGraph, adjacency: Adjacency, hops: int, want: int, seed: int,
           taken: set[str]) -> list[dict[str, Any]]:
    rng = np.random.default_rng(seed)
    starts = stratified_take(adjacency.edges.with_row_index("row"), min(adjacency.edges.height, want * 3), "p", seed)
    index = {iri: i for i, iri in enumerate(adjacency.nodes)}
    flip = rng.random(starts.height) < 0.5
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
        path = [_triple(graph, *rows.row(int(used[h][j]))[:3], True) for h in range(hops)]
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
        raise InputError(f"{path}: no usable profile; "
                         + "; ".join(f"line {u['line']}: {u['reason']}" for u in unreadable[:5]))
    return profiles, unreadable


def liked_names(profile: dict[str, Any]) -> list[str]:
    names = []
    for key in LIKES_KEYS:
        value = profile.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item.strip():
                names += [part.strip() for part in item.replace("；", ";").split(";") if part.strip()]
    return names


def sample_sequences(graph: GoalGraph, n: int, seed: int, taken: set[str],
                     profiles: list[dict[str, Any]] | None = None) -> list[dict[str, Any]]:
    """问答(T) → chat about T → recommend an item linked to T → 再见, T a topic the profile likes
    (or, without profiles, a seeded stratified sample of topics that have a recommendable neighbour)."""
    edges = graph.topic_edges()
    both = pl.concat([edges.with_columns(forward=pl.lit(True)),
                      edges.select(s="o", p="p", o="s", forward=pl.lit(False))]).with_columns(
        o_type=pl.col("o").replace_strict(graph.topic_types, default=None))
    items = both.filter(pl.col("o_type").is_in(list(RECOMMENDATION_BY_TYPE)))
    if items.is_empty():
        raise KgforgeError(f"domain {graph.schema.name!r} has no film/song/attraction linked to another topic; "
                           "DuRecDial-style recommendation sequences need one")
    index = EntityIndex.from_tables(graph.tables, segmented=True)
    if profiles:
        wanted = [(i, iri) for i, p in enumerate(profiles) for name in liked_names(p) for iri in index.lookup(name)]
        starts = items.join(pl.DataFrame({"profile": [w[0] for w in wanted], "s": [w[1] for w in wanted]},
                                         schema={"profile": pl.Int64, "s": pl.String}), on="s")
        if starts.is_empty():
            liked = sorted({name for p in profiles for name in liked_names(p)})
            raise KgforgeError(f"none of the topics the profiles like ({', '.join(liked[:10]) or 'none given'}) is in "
                               "the graph with a typed film/song/attraction linked to it")
    else:
        starts = items.with_columns(profile=pl.lit(None, dtype=pl.Int64))
    starts = starts.sort("s", "p", "o").with_columns(pair=_pair_key(pl.col("s"), pl.col("o")))
    starts = starts.filter(~pl.col("pair").is_in(list(taken))).unique("pair", keep="first", maintain_order=True)
    chosen = stratified_take(starts, n, "p", seed)
    goals = []
    for row in chosen.iter_rows(named=True):
        topic, item = row["s"], row["o"]
        head, tail = (topic, item) if row["forward"] else (item, topic)
        steps = _sequence_steps(graph, topic, item)
        extra = {"sequence": steps, "goal_string": goal_string(steps),
                 "profile": profiles[row["profile"]] if profiles and row["profile"] is not None else None}
        goals.append(make_goal(graph, "sequence", [topic, item], [_triple(graph, head, row["p"], tail, True)],
                               seed, extra))
        taken.add(row["pair"])
    return goals


def _sequence_steps(graph: GoalGraph, topic: str, item: str) -> list[dict[str, Any]]:
    chat = CHAT_BY_TYPE.get(graph.topic_types.get(topic) or "", "提问")
    recommend = RECOMMENDATION_BY_TYPE[graph.topic_types[item]]
    steps = [("问答", topic), (chat, topic), (recommend, item), ("再见", None)]
    return [{"type": kind, "type_en": DIALOGUE_TYPES[kind], "topic": iri,
             "topic_label": graph.label(iri) if iri else None} for kind, iri in steps]


def goal_string(steps: list[dict[str, Any]]) -> str:
    """DuRecDial's ``goal`` string: ``[1]问答(『周迅』)-->[2]…-->[4]再见``."""
    parts = []
    for i, step in enumerate(steps, start=1):
        topic = f"(『{step['topic_label']}』)" if step["topic_label"] else ""
        parts.append(f"[{i}]{step['type']}{topic}")
    return "-->".join(parts)


# ---------------------------------------------------------------- sampling entry point


STYLES = ("duconv", "kdconv", "durecdial")  # one-/two-step goals, 1-3 hop paths, goal sequences


@dataclass(frozen=True)
class GoalOptions:
    n: int
    seed: int = 0
    one_step_ratio: float = 0.5
    style: str = "duconv"  # duconv | kdconv | durecdial
    hops: tuple[int, int] = (1, 3)
    language: str | None = None

    def __post_init__(self) -> None:
        checks.whole(self.n, "--n", 1)
        checks.whole(self.seed, "--seed", 0)
        checks.number(self.one_step_ratio, "--one-step-ratio", maximum=1.0)
        checks.hop_range(self.hops, "--hops")
        checks.choice(self.style, "--style", STYLES)
        checks.optional(checks.language_tag, self.language, "--lang")


def parse_hops(text: str) -> tuple[int, int]:
    """``1..3`` or ``2`` → (low, high)."""
    return checks.hop_range(text, "--hops")


def sample_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None = None
                 ) -> list[dict[str, Any]]:
    taken: set[str] = set()
    if options.style == "kdconv":
        return sample_paths(graph, options.n, options.hops, options.seed, taken)
    if options.style == "durecdial":
        return sample_sequences(graph, options.n, options.seed, taken, profiles)
    n_one = round(options.n * options.one_step_ratio)
    goals = sample_one_step(graph, n_one, options.seed, taken)
    goals += sample_two_step(graph, options.n - len(goals), options.seed, taken) if options.n > len(goals) else []
    return goals


def write_goals(goals: Iterable[dict[str, Any]], out: Path) -> int:
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(out.name + ".tmp")
    count = 0
    with open(tmp, "w", encoding="utf-8") as handle:
        for goal in goals:
            handle.write(json.dumps(goal, ensure_ascii=False) + "\n")
            count += 1
    tmp.replace(out)
    return count


def generate(domain: str, options: GoalOptions, out: Path, workdir: Path | str | None = None,
             profiles_file: Path | None = None) -> dict[str, Any]:
    paths = domain_paths(domain, workdir)
    graph = GoalGraph.load(paths, options.language)
    profiles, unreadable = read_profiles(profiles_file) if profiles_file else (None, [])
    with paused_gc():
        goals = sample_goals(graph, options, profiles)
        written = write_goals(goals, out)
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    types: dict[str, int] = {}
    for goal in goals:
        kinds[goal["kind"]] = kinds.get(goal["kind"], 0) + 1
        rel = graph.label(goal["path"][0]["p"])
        relations[rel] = relations.get(rel, 0) + 1
        for t in goal["topic_types"]:
            types[str(t)] = types.get(str(t), 0) + 1
    return {"domain": domain, "out": str(out), "goals": written, "requested": options.n,
            "seed": options.seed, "style": options.style, "kinds": kinds,
            "relations": dict(sorted(relations.items(), key=lambda kv: -kv[1])), "topic_types": types,
            "build_id": graph.build_id} | (
            {"profiles": len(profiles), "profiles_unreadable": unreadable} if profiles is not None else {})


def read_goals(path: Path) -> Iterator[dict[str, Any]]:
    """Goals written by ``kgforge goals``; a malformed line is an error naming file and line."""
    for record in iter_json_lines(path):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        value = record.value
        if not isinstance(value, dict) or not {"goal_id", "kind", "topics", "path"} <= set(value):
            raise InputError(f"{path}:{record.line}: not a kgforge goal (needs goal_id, kind, topics, path); "
                             "make one with `kgforge goals DOMAIN --n N --out FILE`")
        yield value


# ---------------------------------------------------------------- names → IRIs


class EntityIndex:
    """Entity names (labels and alternative labels, normalised) → IRIs. Relations, classes and class
    nodes (``exclude``) are not entities one names in a dialogue and are left out."""

    def __init__(self, names: dict[str, list[str]], segmented: bool) -> None:
        self.names = names
        self.segmented = segmented
        self._folded: dict[str, list[str]] | None = None

    @classmethod
    def from_tables(cls, tables: GraphTables, segmented: bool = True, exclude: Iterable[str] = ()) -> "EntityIndex":
        labels = (tables.labels.filter(~pl.col("iri").str.starts_with(RELATION), ~pl.col("iri").str.starts_with(CLASS),
                                       ~pl.col("iri").str.starts_with(ONTO), ~pl.col("iri").is_in(list(exclude)))
                  .select("iri", "label").unique().sort("label", "iri"))
        odd = labels["label"].str.contains(r"\s") | (labels["label"] != labels["label"].str.normalize("NFC"))
        keys = [normalise_label(label, segmented) if needs else label  # most labels are their own key
                for label, needs in zip(labels["label"].to_list(), odd.to_list())]
        names: dict[str, list[str]] = {}
        for key, iri in zip(keys, labels["iri"].to_list()):
            bucket = names.setdefault(key, [])
            if iri not in bucket:
                bucket.append(iri)
        return cls(names, segmented)

    def lookup(self, name: str) -> list[str]:
        return self.names.get(normalise_label(name, self.segmented), [])

    def resolve(self, name: str) -> list[str]:
        """``lookup``, then the name without a trailing disambiguation (``李安（华人导演、编剧）`` → 李安),
        then ignoring case and spaces (``Play我呸`` → play 我呸): how a dialogue's topic names differ from labels."""
        for candidate in (name, strip_qualifier(name)):
            found = self.lookup(candidate) or self.lookup_folded(candidate)
            if found:
                return found
        return []

    def lookup_folded(self, name: str) -> list[str]:
        """The IRIs whose names equal ``name`` when case and whitespace are ignored."""
        if self._folded is None:
            self._folded = {}
            for label, iris in self.names.items():
                bucket = self._folded.setdefault(fold(label), [])
                bucket += [iri for iri in iris if iri not in bucket]
        return self._folded.get(fold(name), [])


def strip_qualifier(name: str) -> str:
    """A name without its trailing disambiguation: ``李安（华人导演、编剧）`` → ``李安``."""
    return _QUALIFIER.sub("", name) or name


def fold(name: str) -> str:
    """A name with case and whitespace ignored."""
    return _SPACES.sub("", normalise_label(name, segmented=False)).casefold()


# ---------------------------------------------------------------- validating real goals


@dataclass
class ParsedGoal:
    line: int
    kind: str
    topics: tuple[str, str]
    triples: list[list[str]]


def parse_duconv_goal(goal: Any, line: int) -> ParsedGoal | str:
    """A DuConv ``goal`` list, or why it is not one."""
    if not isinstance(goal, list) or len(goal) < 2 or not all(isinstance(t, list) and len(t) == 3 for t in goal):
        return "goal must be a list of 3-item lists"
    if not all(isinstance(x, str) for t in goal for x in t):
        return "goal items must be strings"
    start, *path = goal
    if start[0] != "START":
        return "goal must begin with [\"START\", A, B]"
    if len(path) == 1:
        kind = "one_step"
    elif len(path) == 2 and path[0][1:] == path[1][1:]:
        kind = "two_step"
    else:
        kind = f"other ({len(path)} triples)"
    return ParsedGoal(line, kind, (start[1], start[2]), path)


class GoalChecker:
    """Checks DuConv goals against a store: are their triples in it, and do the goal queries find them."""

    def __init__(self, graph: GoalGraph, runner: QueryRunner, timeout: float = 30.0) -> None:
        self.graph = graph
        self.runner = runner
        self.timeout = timeout
        self.index = EntityIndex.from_tables(graph.tables, segmented=True)
        facts = graph.base_facts
        self.facts = set(zip(facts["s"].to_list(), facts["p"].to_list(), facts["o"].to_list()))
        pairs = read_pairs(graph.tables)
        self.materialised = set(zip(pairs["a"].to_list(), pairs["b"].to_list(), pairs["p"].to_list(),
                                    pairs["o"].to_list()))

    def resolve(self, triple: list[str]) -> tuple[str, str, str, bool] | None:
        """The stored fact a goal triple names, as (s, p, o, o_is_entity), or None."""
        head, relation, tail = triple
        p = self.graph.schema.relation_for(relation).iri
        for s in self.index.lookup(head):
            for o in self.index.lookup(tail):
                if (s, p, o) in self.facts:
                    return s, p, o, True
            value = normalise_label(tail)
            if (s, p, value) in self.facts:
                return s, p, value, False
            if (s, p, tail) in self.facts:
                return s, p, tail, False
        return None

    def check(self, parsed: ParsedGoal) -> dict[str, Any]:
        resolved = [self.resolve(t) for t in parsed.triples]
        result = {"line": parsed.line, "kind": parsed.kind, "in_graph": all(resolved), "found": False,
                  "materialised": False}
        if not result["in_graph"]:
            result["reason"] = "goal triple(s) absent from the graph: " + "; ".join(
                " ".join(t) for t, r in zip(parsed.triples, resolved) if r is None)
            return result
        topics = [r[0] for r in resolved] if parsed.kind == "two_step" else None
        if parsed.kind == "one_step":
            result["found"] = self._one_step(resolved[0])
        elif parsed.kind == "two_step" and topics:
            result["found"], result["materialised"] = self._two_step(topics[0], topics[1], resolved[0])
        if not result["found"]:
            result["reason"] = "no goal query produces this goal"
        return result

    def _one_step(self, fact: tuple[str, str, str, bool]) -> bool:
        s, p, o, _ = fact
        rows = self.runner.query(query_text("goal_one_step"), {"a": ox.NamedNode(s), "b": ox.NamedNode(o)},
                                 timeout=self.timeout).rows
        return any(r["head"].value == s and r["r"].value == p and r["tail"].value == o for r in rows)

    def _two_step(self, a: str, b: str, fact: tuple[str, str, str, bool]) -> tuple[bool, bool]:
        _, p, x, _ = fact
        if p in self.graph.stop_iris:
            return False, False
        rows = self.runner.query(query_text("goal_two_step"), {"a": ox.NamedNode(a), "b": ox.NamedNode(b)},
                                 timeout=self.timeout).rows
        found = any(r["r"].value == p and r["x"].value == x for r in rows)
        left, right = sorted((a, b))
        return found, (left, right, p, x) in self.materialised


def validate(domain: str, sessions: Path, workdir: Path | str | None = None) -> dict[str, Any]:
    """Check each DuConv session's goal against the domain's graph (see ``GoalChecker``)."""
    paths = domain_paths(domain, workdir)
    graph = GoalGraph.load(paths)
    goals, bad = read_session_goals(sessions)
    with QueryRunner(paths) as runner:
        checker = GoalChecker(graph, runner)
        results = [checker.check(goal) for goal in goals]
    return _validation_report(domain, sessions, results, bad)


def read_session_goals(sessions: Path) -> tuple[list[ParsedGoal], list[dict[str, Any]]]:
    """The goal of each DuConv session in ``sessions`` (JSON lines), and the lines without a usable one
    (``{"line", "reason"}``): a damaged line costs only itself."""
    goals, bad = [], []
    for record in iter_json_lines(sessions):
        goal = record.value.get("goal") if isinstance(record.value, dict) else None
        parsed = record.error or parse_duconv_goal(goal, record.line)
        if isinstance(parsed, str):
            bad.append({"line": record.line, "reason": parsed})
        else:
            goals.append(parsed)
    return goals, bad


def _validation_report(domain: str, sessions: Path, results: list[dict[str, Any]],
                       bad: list[dict[str, Any]]) -> dict[str, Any]:
    in_graph = [r for r in results if r["in_graph"]]
    found = [r for r in in_graph if r["found"]]
    by_kind: dict[str, dict[str, int]] = {}
    for r in results:
        counts = by_kind.setdefault(r["kind"], {"goals": 0, "goals_in_graph": 0, "found": 0, "materialised": 0})
        counts["goals"] += 1
        counts["goals_in_graph"] += r["in_graph"]
        counts["found"] += r["found"]
        counts["materialised"] += r["materialised"]
    return {
        "domain": domain, "file": str(sessions),
        "goals": len(results), "goals_in_graph": len(in_graph), "goals_not_in_graph": len(results) - len(in_graph),
        "found": len(found), "recall": round(len(found) / len(in_graph), 4) if in_graph else None,
        "two_step_materialised": by_kind.get("two_step", {}).get("materialised", 0),
        "by_kind": by_kind, "unreadable": bad,
        "misses": [r for r in in_graph if not r["found"]][:50],
        "not_in_graph_examples": [r for r in results if not r["in_graph"]][:10],
    }
