"""A built domain as goal material: the GoalGraph (facts, labels, topic types), goal records and
stratified sampling."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from kgforge.core import checks
from kgforge.core.registry import Registry
from kgforge.core.schema import Schema, load_schema
from kgforge.core.text import normalise_label
from kgforge.store.layout import (
    DomainPaths,
    published_build,
    read_manifest,
)
from kgforge.store.tables import GraphTables, read_tables

GOAL_KINDS = ("one_step", "two_step", "path", "sequence")
TRIPLE_SCHEMA = {"s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean}
# DuRecDial goal types (zh, as in all_goal_type.txt) and the English names DuRecDial 2.0 uses.
DIALOGUE_TYPES = {
    "寒暄": "Greetings", "问答": "Q&A", "关于明星的聊天": "Chat about stars", "电影推荐": "Movie recommendation",
    "音乐推荐": "Music recommendation", "兴趣点推荐": "POI recommendation", "美食推荐": "Food recommendation",
    "提问": "Ask questions", "再见": "Say goodbye",
}
RECOMMENDATION_BY_TYPE = {"film": "电影推荐", "song": "音乐推荐", "album": "音乐推荐", "attraction": "兴趣点推荐"}
CHAT_BY_TYPE = {"star": "关于明星的聊天", "singer": "关于明星的聊天"}
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

    def label(self, iri: str) -> str:
        return self.labels.get(iri, iri)


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


# ---------------------------------------------------------------- names → IRIs


class EntityIndex:
    """Entity names (labels and alternative labels, normalised) → IRIs."""

    def __init__(self, names: dict[str, list[str]], segmented: bool) -> None:
        self.names = names
        self.segmented = segmented

    @classmethod
    def from_tables(cls, tables: GraphTables, segmented: bool = True) -> "EntityIndex":
        labels = tables.labels.select("iri", "label").unique().sort("label", "iri")
        names: dict[str, list[str]] = {}
        for iri, label in labels.iter_rows():
            bucket = names.setdefault(normalise_label(label, segmented), [])
            if iri not in bucket:
                bucket.append(iri)
        return cls(names, segmented)

    def lookup(self, name: str) -> list[str]:
        return self.names.get(normalise_label(name, self.segmented), [])


# ---------------------------------------------------------------- options and the styles registry


GoalStyle = Callable[["GoalGraph", "GoalOptions", "list[dict[str, Any]] | None"], "list[dict[str, Any]]"]
STYLES: Registry[GoalStyle] = Registry("goal style", modules=("kgforge.goals.styles",),
                                       entry_point_group="kgforge.goal_styles")


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
        checks.choice(self.style, "--style", STYLES.names())
        checks.optional(checks.language_tag, self.language, "--lang")


def parse_hops(text: str) -> tuple[int, int]:
    """``1..3`` or ``2`` → (low, high)."""
    return checks.hop_range(text, "--hops")
