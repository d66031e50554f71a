"""A built domain as goal material: the GoalGraph (facts, labels, topic types), goal records and
stratified sampling."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core import checks
from kgforge.core.datasets import room_parts
from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.records import Record
from kgforge.core.registry import Entry, Registry
from kgforge.core.schema import Schema
from kgforge.core.text import normalise_label
from kgforge.core.vocab import CLASS, ONTO, RELATION
from kgforge.derive import ASSOCIATED_GRAPH
from kgforge.goals.record import Goal, GoalStep
from kgforge.store.languages import language_labels
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

GOAL_KINDS = ("one_step", "two_step", "path", "sequence")
MIN_TOPIC_FACTS = 3  # a goal topic takes part in this many facts or more (every topic of DuConv dev has 4 or more)
TRIPLE_SCHEMA = {"s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean}
_QUALIFIER = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")
_SPACES = re.compile(r"\s+")
SUGGESTION_POOL = 50_000  # names compared with an unknown --topic (difflib is quadratic in a name's length)


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
    derived: bool = False  # whether the build holds `kgforge derive`'s associated pairs graph
    domain: str = ""  # the domain's folder name, as the user typed it (hints name it, not the schema)
    workdir: Path = Path()
    lacking: frozenset[str] = frozenset()  # IRIs with no label in ``language`` (kgforge.store.languages)
    mixed: dict[str, str] = field(default_factory=dict)  # those a goal named anyway: IRI → the label written
    links: tuple[tuple[str, str], ...] = ()  # the build's owl:sameAs pairs, which lend labels

    def names_in(self, language: str) -> dict[str, str]:
        """A name for each IRI in ``language`` by the chain of :mod:`kgforge.store.languages` (the graph's
        ``labels`` are in ``self.language``), another language's where it has none."""
        chosen = language_labels(self.tables.labels, language, self.links)
        return {**self.tables.label_map(language), **chosen.labels}

    @classmethod
    def load(cls, snapshot: Snapshot, language: str | None = None) -> GoalGraph:
        """The goal material of the snapshot's build (its tables, derived graphs included)."""
        manifest, schema = snapshot.manifest, snapshot.schema
        tables = snapshot.tables(include_derived=True)
        graph = cls(
            schema,
            tables,
            language or schema.language,
            build_id=manifest.build_id,
            domain=snapshot.domain,
            workdir=snapshot.workdir,
            derived=ASSOCIATED_GRAPH in manifest.graphs,
        )
        graph.links = snapshot.same_as_pairs()
        chosen = language_labels(tables.labels, graph.language, graph.links)
        graph.labels = {**tables.label_map(graph.language), **chosen.labels}
        graph.lacking = chosen.lacking
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
            self.base_facts.filter(
                pl.col("o_is_entity"),
                pl.col("p").is_in(entity_relations),
                ~pl.col("p").is_in(list(self.stop_iris)),
                pl.col("s") != pl.col("o"),
            )
            .select("s", "p", "o")
            .unique()
            .sort("p", "s", "o")
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
        """The name of ``iri`` in the graph's language; one in another language where it has none (recorded
        in ``mixed``, which the goals report lists)."""
        if iri in self.lacking:
            self.mixed[iri] = self.labels.get(iri, iri)
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
    counts = facts_per_entity(facts)
    return counts.filter(pl.col("len") >= least)["s"].to_list()


def facts_per_entity(facts: pl.DataFrame) -> pl.DataFrame:
    """``s`` (an entity) and ``len`` (the facts it takes part in, as subject or as entity object)."""
    as_object = facts.filter(pl.col("o_is_entity")).select(pl.col("o").alias("s"))
    return pl.concat([facts.select("s"), as_object]).group_by("s").len()


def _topic_types(schema: Schema, tables: GraphTables) -> dict[str, str]:
    """Entity IRI → schema type id: rdf:type first, else the schema's type relation (领域 电影/明星)."""
    by_class = {t.iri: t.id for t in schema.types.values()}
    types: dict[str, str] = {}
    if schema.type_relation:
        by_value = {normalise_label(t.zh): t.id for t in schema.types.values()} | {
            t.en: t.id for t in schema.types.values()
        }
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


def goal_id(kind: str, topics: list[str], path: list[GoalStep]) -> str:
    """Stable id of a goal: the same kind, topics and path give the same id on every run."""
    key = json.dumps([kind, topics, [[t.s, t.p, t.o] for t in path]], ensure_ascii=False)
    return "g-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


def _triple(graph: GoalGraph, s: str, p: str, o: str, o_is_entity: bool) -> GoalStep:
    return GoalStep(s, p, o, o_is_entity, [graph.label(s), graph.label(p), graph.label(o) if o_is_entity else o])


def make_goal(
    graph: GoalGraph, kind: str, topics: list[str], path: list[GoalStep], seed: int, extra: dict[str, Any] | None = None
) -> Goal:
    """One goal: ids, topics with labels and types, the path as IRIs and as DuConv label triples."""
    return Goal(
        goal_id=goal_id(kind, topics, path),
        kind=kind,
        seed=seed,
        topics=topics,
        topic_labels=[graph.label(t) for t in topics],
        topic_types=[graph.topic_types.get(t) for t in topics],
        path=path,
        goal=[["START", *[graph.label(t) for t in topics]], *[t.labels for t in path if t.labels is not None]],
        extra=extra or {},
    )


# ---------------------------------------------------------------- names → IRIs


class EntityIndex:
    """Entity names (labels and alternative labels, normalised) → IRIs. Relations, classes and class
    nodes (``exclude``) are not entities one names in a dialogue and are left out."""

    def __init__(self, names: dict[str, list[str]], segmented: bool) -> None:
        self.names = names
        self.segmented = segmented
        self._folded: dict[str, list[str]] | None = None

    @classmethod
    def from_tables(cls, tables: GraphTables, segmented: bool = True, exclude: Iterable[str] = ()) -> EntityIndex:
        labels = (
            tables.labels.filter(
                ~pl.col("iri").str.starts_with(RELATION),
                ~pl.col("iri").str.starts_with(CLASS),
                ~pl.col("iri").str.starts_with(ONTO),
                ~pl.col("iri").is_in(list(exclude)),
            )
            .select("iri", "label")
            .unique()
            .sort("label", "iri")
        )
        odd = labels["label"].str.contains(r"\s") | (labels["label"] != labels["label"].str.normalize("NFC"))
        keys = [
            normalise_label(label, segmented) if needs else label  # most labels are their own key
            for label, needs in zip(labels["label"].to_list(), odd.to_list())
        ]
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

    def close_names(self, name: str, n: int = 5) -> list[str]:
        """Names of the index close to ``name`` (a typo, a partial name), among those sharing a character with it
        and of a similar length (a bounded pool: a graph has millions of names)."""
        wanted = set(normalise_label(name, self.segmented))
        pool = [
            key for key in self.names if len(name) // 2 <= len(key) <= 2 * len(name) + 1 and not wanted.isdisjoint(key)
        ][:SUGGESTION_POOL]
        return difflib.get_close_matches(normalise_label(name, self.segmented), pool, n=n, cutoff=0.4)

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


def resolve_topics(graph: GoalGraph, names: Iterable[str]) -> dict[str, str]:
    """``--topic`` names (a label, an alternative label or an IRI) → the entity each stands for, which must be
    able to open a goal (:meth:`GoalGraph.may_be_topic`'s rules); an unknown or ambiguous name, or one that
    cannot be a topic, is an ArgumentError of one line naming what to give instead."""
    index = EntityIndex.from_tables(graph.tables, segmented=True, exclude=graph.class_iris)
    topics = set(graph.topic_types) if graph.schema.types else None
    found: dict[str, str] = {}
    for name in names:
        iris = [name] if name in graph.labels else index.resolve(name)
        if not iris:
            near = index.close_names(name)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            raise ArgumentError("--topic", f"no entity of {graph.domain!r} is named {name!r}{hint}")
        usable = [iri for iri in iris if iri in graph.talked_about and (topics is None or iri in topics)]
        if len(usable) > 1:
            listed = ", ".join(f"{iri} ({graph.topic_types.get(iri) or 'untyped'})" for iri in usable[:5])
            raise ArgumentError("--topic", f"{name!r} names {len(usable)} entities: {listed}; give one by its IRI")
        if not usable:
            raise ArgumentError("--topic", f"{name!r} ({iris[0]}) cannot open a goal: {_why_no_topic(graph, iris[0])}")
        found[name] = usable[0]
    return found


def _why_no_topic(graph: GoalGraph, iri: str) -> str:
    if iri in graph.talked_about:
        return f"it has none of the schema's types ({', '.join(graph.schema.types)})"
    facts = facts_per_entity(graph.base_facts).filter(pl.col("s") == iri)["len"].sum()
    return f"it takes part in {facts} facts, and a topic takes part in {MIN_TOPIC_FACTS} or more"


def topic_first(asked: Iterable[str], a: str, b: str) -> list[str]:
    """The topics of a goal between ``a`` and ``b`` in the order drawn (``a`` first), unless ``--topic`` asked for
    ``b`` and not ``a``: then ``b`` opens it."""
    wanted = set(asked)
    return [b, a] if b in wanted and a not in wanted else [a, b]


def touching(asked: Iterable[str], *columns: str) -> pl.Expr:
    """Rows naming a topic ``--topic`` asked for in one of ``columns`` (every row when none was asked for)."""
    wanted = list(asked)
    if not wanted:
        return pl.lit(True)
    return pl.any_horizontal(*(pl.col(column).is_in(wanted) for column in columns))


# ---------------------------------------------------------------- options and the styles registry


GoalStyle = Callable[["GoalGraph", "GoalOptions", "list[dict[str, Any]] | None"], "list[Goal]"]
# What a style says of the goals it drew (the goal types it used, what it could not draw), its fields written at
# the goals report's level: registered with the style as ``summary=`` (the entry's meta); a style without one adds
# nothing to the report. ``distinct=`` says what no two of its goals share, for the report's shortfall ("pair of
# topics" when not given).
StyleSummary = Callable[["GoalGraph", "GoalOptions", "list[Goal]"], Record]
STYLE_ATTRIBUTES = ("summary", "distinct")  # what a style registers beside itself (a plug-in: as its attributes)


def _plugin_style(name: str, style: Any) -> Entry[GoalStyle]:
    """A goal style of the entry-point group ``kgforge.goal_styles``: a function (graph, options, profiles) ->
    goals, with what it registers beside itself (``summary``, ``distinct``) as its attributes where it has them."""
    if not callable(style):
        raise KgforgeError(f"it is a {type(style).__name__}, not a function (graph, options, profiles) -> goals")
    meta = {key: getattr(style, key) for key in STYLE_ATTRIBUTES if hasattr(style, key)}
    return Entry(name, style, str(getattr(style, "description", "")), meta=meta)


STYLES: Registry[GoalStyle] = Registry(  # each dataset's room registers its style (its goals part)
    "goal style", modules=lambda: room_parts("goals"), entry_point_group="kgforge.goal_styles", plugin=_plugin_style
)


def style_summary(graph: GoalGraph, options: GoalOptions, goals: list[Goal]) -> Record | None:
    """What the style of ``options`` says of ``goals`` (its registered ``summary``), None when it says nothing."""
    summary: StyleSummary | None = STYLES.entry(options.style).meta.get("summary")
    return summary(graph, options, goals) if summary is not None else None


@dataclass(frozen=True)
class GoalOptions:
    n: int
    seed: int = 0
    one_step_ratio: float = 0.5
    style: str = "duconv"  # duconv | kdconv | durecdial
    hops: tuple[int, int] = (1, 3)
    language: str | None = None
    transitions: Path | None = (
        None  # durecdial: a goal transition table (.tsv) or sessions (default: the shipped table)
    )
    profile_template: Path | None = None  # durecdial: the profile and situation template (default: the shipped one)
    topics: tuple[str, ...] = ()  # --topic: the entities a goal must open with (IRIs once resolved); (): any

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
