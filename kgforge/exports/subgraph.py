"""Per-dialogue subgraphs, chosen column-wise for all dialogues at once, in the order DuConv writes them.

A dialogue's subgraph is its goal path (always), the type fact of each topic (its 领域 fact, else its
rdf:type, shown under the schema's type relation when it has one: [梅昕, 领域, 明星]) and up to a budget
of facts per topic, informative ones first: one fact per relation before a second of the same relation,
entity-valued facts and rare values before common ones (a value shared by thousands of subjects, like
国家 美国, says little), free text last. Ties break on the value, so the choice is the same on every run.
A topic that is only ever an object (a studio, a film nobody describes) brings the facts that point to it.

The order is the real data's (measured on DuConv dev): the first topic's block (a few of its facts, then
its type fact, then the goal triples it heads), the next topic's block likewise, then the first topic's
remaining facts. So the type fact and the goal path sit inside their topic's block and never open the
list, and the budgets (7 and 4 facts, a topic with fewer passing the rest to the other) give DuConv's
~14 triples a dialogue.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import cast

import polars as pl

from kgforge.core.schema import Schema
from kgforge.core.vocab import RDF_TYPE
from kgforge.store.languages import LanguageLabels, in_language
from kgforge.store.tables import GraphTables

TRIPLE_COLUMNS = ["s", "p", "o", "o_is_entity"]
ROLE_PRIORITY = {"path": 0, "type": 1, "fact": 2, "related": 3}
TAIL_BLOCK = 1 << 30


@dataclass(frozen=True)
class SubgraphOptions:
    budgets: tuple[int, ...] = (7, 4)  # facts of the first topic, the second, …; the last one repeats
    lead: int = 4  # facts of the first topic before the other topics' blocks; the rest close the list
    include_text: bool = True
    type_facts: bool = True  # each topic's type fact (DuConv's 领域); KdConv and DuRecDial have none
    incoming: bool = False  # a topic with no fact of its own brings the facts pointing to it

    def most(self, topics: int) -> int:
        """The most facts one topic of a dialogue with ``topics`` topics can bring: every budget, when the
        others have no facts to use theirs."""
        return sum(self.budgets[min(i, len(self.budgets) - 1)] for i in range(max(topics, 1)))

    def budget(self) -> pl.Expr:
        """Each row's budget from its ``position`` (the topic's place in the dialogue)."""
        expr = pl.lit(self.budgets[-1], pl.Int64)
        for position, budget in reversed(list(enumerate(self.budgets[:-1]))):
            expr = pl.when(pl.col("position") == position).then(pl.lit(budget, pl.Int64)).otherwise(expr)
        return expr


def in_its_language(facts: pl.DataFrame, language: str) -> pl.DataFrame:
    """``facts`` without the values in other languages of a subject's relation that has one in ``language``
    (a translated value stands beside its source: 爱情@zh and romance@en; an English export takes romance)."""
    tagged = ~pl.col("o_is_entity") & (pl.col("o_lang") != "")
    own = facts.filter(tagged & in_language(pl.col("o_lang"), language)).select("s", "p").unique()
    if own.is_empty():
        return facts
    others = facts.filter(tagged & ~in_language(pl.col("o_lang"), language)).join(own, on=["s", "p"], how="semi")
    return facts.join(others, on=facts.columns, how="anti", nulls_equal=True)


class FactRanker:
    """Ranks facts for subgraphs: read once per export (the domain's facts, how many subjects share each
    value, each relation's kind), then asked for the facts of some subjects or of what points to some
    objects. ``rank`` orders a subject's facts of each role (0 = most informative). With ``named`` (the labels
    the export writes: :class:`~kgforge.store.languages.LanguageLabels`, made by the snapshot's naming rule, so
    an entity named through ``owl:sameAs`` counts as named), a fact whose entity value has no label in that
    language is not chosen, and a value in another language stands back for one in it."""

    def __init__(self, tables: GraphTables, schema: Schema, named: LanguageLabels | None = None) -> None:
        self.tables = tables
        self.type_iri = schema.relations[schema.type_relation].iri if schema.type_relation else None
        base = tables.domain_facts()
        if named is not None:  # a fact whose entity value cannot be named in the language is not chosen
            nameable = pl.Series(list(named.labels), dtype=pl.String)
            base = base.filter(~pl.col("o_is_entity") | pl.col("o").is_in(nameable.implode()))
            base = in_its_language(base, named.language)
        self.base = base
        self.spread = base.group_by("p", "o").agg(spread=pl.col("s").n_unique())
        self.kinds = dict(zip(tables.relations["iri"].to_list(), tables.relations["kind"].to_list()))

    def of_subjects(self, subjects: pl.Series) -> pl.DataFrame:
        """The facts of ``subjects``, ranked per subject and role (``type`` or ``fact``)."""
        facts = self.base.filter(pl.col("s").is_in(subjects.unique().implode()))
        return self._rank(facts.unique(["s", "p", "o", "o_is_entity"], keep="first"), "s", self.type_iri)

    def pointing_to(self, objects: pl.Series) -> pl.DataFrame:
        """The entity-valued facts whose object is one of ``objects`` (in ``topic``), ranked per object:
        what the graph says about an entity that is never a subject."""
        facts = (
            self.base.filter(pl.col("o_is_entity"), pl.col("o").is_in(objects.unique().implode()))
            .unique(["s", "p", "o", "o_is_entity"], keep="first")
            .with_columns(topic=pl.col("o"))
        )
        return self._rank(facts, "topic", None)

    def _rank(self, facts: pl.DataFrame, by: str, type_iri: str | None) -> pl.DataFrame:
        is_type = pl.col("p") == type_iri if type_iri else pl.lit(False)
        ordered = (
            facts.join(self.spread, on=["p", "o"], how="left")
            .with_columns(kind=pl.col("p").replace_strict(self.kinds, default="literal"))
            .with_columns(
                role=pl.when(is_type).then(pl.lit("type")).otherwise(pl.lit("fact")),
                kind_rank=pl.when(pl.col("kind") == "entity")
                .then(0)
                .when(pl.col("kind") == "text")
                .then(2)
                .otherwise(1),
            )
            .sort(by, "kind_rank", "spread", "p", "o", "s")
            .with_columns(within=pl.col("o").cum_count().over(by, "p"))
            .sort(by, pl.col("role") != "type", "within", "kind_rank", "spread", "p", "o", "s")
        )
        columns = [*TRIPLE_COLUMNS, "o_lang", "graph", "role", "rank", "kind"] + (["topic"] if by != "s" else [])
        return ordered.with_columns(rank=pl.int_range(pl.len()).over(by, "role")).select(columns)


def type_facts(tables: GraphTables, subjects: pl.Series) -> pl.DataFrame:
    """rdf:type facts of ``subjects`` (used when the schema has no 领域-style type relation)."""
    return (
        tables.types.filter(pl.col("iri").is_in(subjects.unique().implode()))
        .select(s="iri", p=pl.lit(RDF_TYPE), o="class", o_is_entity=pl.lit(True))
        .unique()
        .sort("s", "o")
    )


def select_subgraphs(
    topics: pl.DataFrame,
    paths: pl.DataFrame,
    tables: GraphTables,
    schema: Schema,
    options: SubgraphOptions,
    named: LanguageLabels | None = None,
) -> pl.DataFrame:
    """Triples of every dialogue: ``topics`` (dialogue, position, topic) and ``paths`` (dialogue, s, p, o,
    o_is_entity) in, one row per (dialogue, triple) out with its ``role``, ``position`` and ``order``;
    ``named``: the labels the export writes (see :class:`FactRanker`)."""
    ranker = FactRanker(tables, schema, named)
    topics = topics.select("dialogue", "position", "topic")
    ranked = ranker.of_subjects(topics["topic"])
    if not options.include_text:
        ranked = ranked.filter(pl.col("kind") != "text")
    ranked = ranked.filter(
        pl.col("rank") < options.most(int(cast(int, topics["position"].max()) or 0) + 1)
    )  # positions: integers
    chosen = topics.join(
        ranked.select(*TRIPLE_COLUMNS, "graph", "role", "rank"), left_on="topic", right_on="s", how="inner"
    ).with_columns(s=pl.col("topic"))
    rows = [chosen.filter(pl.col("role") == "fact")]
    if options.type_facts:
        rows += _types(topics, chosen, ranked, tables)
    if options.incoming:
        rows.append(_incoming(topics, ranked, ranker, options))
    rows.append(_path_rows(topics, paths, ranker))
    columns = ["dialogue", "position", *TRIPLE_COLUMNS, "graph", "role", "rank"]
    combined = pl.concat(
        [r.select(columns).cast({"position": pl.Int64, "rank": pl.Int64}) for r in rows], how="vertical"
    )
    allowed = _allowances(combined, options)
    within_budget = (pl.col("role") != "fact") | (pl.col("rank") < pl.col("allowed"))
    return arrange(
        combined.join(allowed, on=["dialogue", "position"], how="left").filter(within_budget).drop("allowed"),
        options.lead,
    )


def _allowances(rows: pl.DataFrame, options: SubgraphOptions) -> pl.DataFrame:
    """Facts each topic may bring: its budget, plus what the topics before it left unused (a topic with
    fewer facts than its budget passes the rest on, in order), so a dialogue holds its budgets' worth of
    facts whenever its topics have them."""
    available = (
        rows.filter(pl.col("role") == "fact")
        .group_by("dialogue", "position")
        .agg(available=pl.len())
        .with_columns(budget=options.budget())
        .sort("dialogue", "position")
    )
    unused = (pl.col("budget") - pl.col("available")).clip(lower_bound=0).sum().over("dialogue")
    spare = (pl.col("available") - pl.col("budget")).clip(lower_bound=0)
    taken_before = spare.cum_sum().over("dialogue") - spare
    extra = (unused - taken_before).clip(lower_bound=0)
    return available.with_columns(allowed=pl.col("budget") + pl.min_horizontal(spare, extra)).select(
        "dialogue", "position", "allowed"
    )


def _types(topics: pl.DataFrame, chosen: pl.DataFrame, ranked: pl.DataFrame, tables: GraphTables) -> list[pl.DataFrame]:
    """Each topic's type fact: its type-relation fact, else its rdf:type."""
    own = chosen.filter(pl.col("role") == "type")
    untyped = topics.filter(~pl.col("topic").is_in(ranked.filter(pl.col("role") == "type")["s"].implode()))
    typed = untyped.join(type_facts(tables, untyped["topic"]), left_on="topic", right_on="s").with_columns(
        s=pl.col("topic"),
        role=pl.lit("type"),
        rank=pl.int_range(pl.len()).over("dialogue", "topic"),
        graph=pl.lit(None, pl.String),
    )
    return [own, typed]


def _incoming(topics: pl.DataFrame, ranked: pl.DataFrame, ranker: FactRanker, options: SubgraphOptions) -> pl.DataFrame:
    """Facts pointing to the topics that have no fact of their own."""
    bare = topics.filter(~pl.col("topic").is_in(ranked.filter(pl.col("role") == "fact")["s"].implode()))
    incoming = ranker.pointing_to(bare["topic"])
    if not options.include_text:
        incoming = incoming.filter(pl.col("kind") != "text")
    return bare.join(incoming, on="topic", how="inner")


def _path_rows(topics: pl.DataFrame, paths: pl.DataFrame, ranker: FactRanker) -> pl.DataFrame:
    """The goal path, each triple in the block of the topic it is about: its subject, else its object."""
    places = topics.group_by("dialogue", "topic").agg(pl.col("position").min())
    by_subject = places.rename({"topic": "s", "position": "at_s"})
    by_object = places.rename({"topic": "o", "position": "at_o"})
    graphs = (
        ranker.base.join(paths.select("s", "p", "o").unique(), on=["s", "p", "o"], how="semi")
        .unique(["s", "p", "o"], keep="first")
        .select("s", "p", "o", "graph")
    )
    return (
        paths.join(graphs, on=["s", "p", "o"], how="left")
        .join(by_subject, on=["dialogue", "s"], how="left")
        .join(by_object, on=["dialogue", "o"], how="left")
        .with_columns(
            position=pl.coalesce("at_s", "at_o", pl.lit(0, pl.Int64)),
            role=pl.lit("path"),
            rank=pl.int_range(pl.len()).over("dialogue"),
        )
    )


def arrange(rows: pl.DataFrame, lead: int) -> pl.DataFrame:
    """One row per (dialogue, triple), in DuConv's order (see the module docstring), with ``order``. Within a
    dialogue (role, position, rank) is unique, so integer keys alone order every row the same on every run."""
    role = pl.col("role")
    block = (
        pl.when((pl.col("position") == 0) & (role == "fact") & (pl.col("rank") >= lead))
        .then(pl.lit(TAIL_BLOCK, pl.Int64))
        .otherwise(pl.col("position"))
    )
    slot = pl.when(role == "fact").then(0).when(role == "type").then(1).when(role == "path").then(2).otherwise(3)
    return (
        rows.with_columns(priority=role.replace_strict(ROLE_PRIORITY, return_dtype=pl.Int64))
        .sort("dialogue", "priority", "position", "rank")
        .unique(["dialogue", "s", "p", "o"], keep="first", maintain_order=True)
        .with_columns(block=block, slot=slot)
        .sort("dialogue", "block", "slot", "rank")
        .with_columns(order=pl.int_range(pl.len()).over("dialogue"))
        .drop("priority", "block", "slot")
    )
