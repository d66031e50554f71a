"""Per-dialogue subgraphs, chosen column-wise for all dialogues at once.

A dialogue's subgraph is its goal path (always), the type fact of each topic (its 领域 fact, else its rdf:type, shown under the
schema's type relation when it has one: [梅昕, 领域, 明星]),
and up to ``budget`` facts per topic, informative ones first: one fact per relation before a second of
the same relation, entity-valued facts and rare values before common ones (a value shared by
thousands of subjects, like 国家 美国, says little), free text last. Ties break on the value, so the
choice is the same on every run.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from kgforge.core.schema import Schema
from kgforge.core.vocab import RDF_TYPE
from kgforge.store.tables import GraphTables

TRIPLE_COLUMNS = ["s", "p", "o", "o_is_entity"]
ROLE_ORDER = {"path": 0, "type": 1, "fact": 2, "related": 3}


@dataclass(frozen=True)
class SubgraphOptions:
    budget: int = 7  # facts per topic besides its type fact and the goal path (DuConv: 12–16 per session)
    include_text: bool = True
    language: str | None = None  # when set, facts whose entity value has no label in it are left out


def ranked_facts(tables: GraphTables, schema: Schema, subjects: pl.Series, language: str | None = None
                 ) -> pl.DataFrame:
    """The facts of ``subjects`` with a per-subject ``rank`` (0 = most informative) and a ``role``.
    With ``language``, a fact whose entity value cannot be named in it (an entity at the border of an
    imported neighbourhood, say) is not chosen: a dialogue cannot verbalise it."""
    kinds = dict(zip(tables.relations["iri"].to_list(), tables.relations["kind"].to_list()))
    type_iri = schema.relations[schema.type_relation].iri if schema.type_relation else None
    base = tables.domain_facts()
    if language is not None:
        named = tables.labels.filter(pl.col("lang").str.starts_with(language) | (pl.col("lang") == ""))["iri"]
        base = base.filter(~pl.col("o_is_entity") | pl.col("o").is_in(named.implode()))
    spread = base.group_by("p", "o").agg(spread=pl.col("s").n_unique())
    facts = (
        base.filter(pl.col("s").is_in(subjects.unique().implode()))
        .unique(["s", "p", "o", "o_is_entity"], keep="first")
        .join(spread, on=["p", "o"], how="left")
        .with_columns(kind=pl.col("p").replace_strict(kinds, default="literal"))
    )
    is_type = pl.col("p") == type_iri if type_iri else pl.lit(False)
    ordered = facts.with_columns(
        role=pl.when(is_type).then(pl.lit("type")).otherwise(pl.lit("fact")),
        kind_rank=pl.when(pl.col("kind") == "entity").then(0).when(pl.col("kind") == "text").then(2).otherwise(1),
    ).sort("s", "kind_rank", "spread", "p", "o")
    ordered = ordered.with_columns(within=pl.col("o").cum_count().over("s", "p"))
    return (
        ordered.sort("s", pl.col("role") != "type", "within", "kind_rank", "spread", "p", "o")
        .with_columns(rank=pl.int_range(pl.len()).over("s"))
        .select(*TRIPLE_COLUMNS, "o_lang", "graph", "role", "rank", "kind")
    )


def type_facts(tables: GraphTables, subjects: pl.Series) -> pl.DataFrame:
    """rdf:type facts of ``subjects`` (used when the schema has no 领域-style type relation)."""
    return (
        tables.types.filter(pl.col("iri").is_in(subjects.unique().implode()))
        .select(s="iri", p=pl.lit(RDF_TYPE), o="class", o_is_entity=pl.lit(True))
        .unique().sort("s", "o")
    )


def select_subgraphs(topics: pl.DataFrame, paths: pl.DataFrame, tables: GraphTables, schema: Schema,
                     options: SubgraphOptions) -> pl.DataFrame:
    """Triples of every dialogue: ``topics`` (dialogue, position, topic) and ``paths`` (dialogue, s, p, o,
    o_is_entity) in, one row per (dialogue, triple) out with its ``role`` and a stable ``order``."""
    ranked = ranked_facts(tables, schema, topics["topic"], options.language)
    if not options.include_text:
        ranked = ranked.filter(pl.col("kind") != "text")
    chosen = (
        topics.join(ranked, left_on="topic", right_on="s", how="inner")
        .filter((pl.col("role") == "type") | (pl.col("rank") < options.budget + 1))
        .with_columns(s=pl.col("topic"))
    )
    rows = [chosen.select("dialogue", "position", *TRIPLE_COLUMNS, "role", "rank")]
    has_type = chosen.filter(pl.col("role") == "type").select("dialogue", "topic").unique()
    untyped = topics.join(has_type, on=["dialogue", "topic"], how="anti")
    typed = untyped.join(type_facts(tables, untyped["topic"]), left_on="topic", right_on="s")
    rows.append(typed.with_columns(s=pl.col("topic"), role=pl.lit("type"), rank=pl.lit(-1, pl.Int64))
                .select("dialogue", "position", *TRIPLE_COLUMNS, "role", "rank"))
    rows.append(paths.with_columns(position=pl.lit(-1, pl.Int64), role=pl.lit("path"), rank=pl.lit(-1, pl.Int64))
                .select("dialogue", "position", *TRIPLE_COLUMNS, "role", "rank"))
    combined = pl.concat([r.cast({"position": pl.Int64, "rank": pl.Int64}) for r in rows], how="vertical")
    return (
        combined.with_columns(role_order=pl.col("role").replace_strict(ROLE_ORDER, return_dtype=pl.Int64))
        .sort("dialogue", "role_order", "position", "rank", "p", "o")
        .unique(["dialogue", "s", "p", "o"], keep="first", maintain_order=True)
        .with_columns(order=pl.int_range(pl.len()).over("dialogue"))
        .drop("role_order")
    )
