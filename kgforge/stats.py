"""`kgforge stats`: the columns of KdConv's and DuConv's Table 2 for a built domain."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kgforge.core import plots
from kgforge.core.schema import Schema
from kgforge.core.records import Record
from kgforge.core.text import jieba_module
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables


def token_count(text: str) -> int:
    """Number of jieba tokens (as the KdConv paper counts them: whitespace tokens included)."""
    return len(jieba_module().lcut(text))


@dataclass(frozen=True)
class DomainStats(Record):
    """The columns of KdConv's and DuConv's Table 2 for one build, over its distinct facts."""

    domain: str
    entities: int  # distinct fact subjects
    entity_nodes: int  # distinct subjects and entity objects
    relations: int  # distinct predicates used by facts
    triples: int  # distinct facts
    avg_triples_per_entity: float
    avg_tokens_per_triple: float  # jieba tokens of head + relation + tail labels
    avg_chars_per_triple: float
    entities_by_type: dict[str, int]  # per value of the schema's type relation (DuConv's 领域), else per class
    relations_by_count: dict[str, int]  # relation label -> facts, most first
    degree_histogram: dict[int, int]  # degree (facts an entity node is in) -> entity nodes
    build_id: str
    schema_inferred: bool  # True: the schema was inferred from the data, not written by a person


def domain_stats(snapshot: Snapshot) -> DomainStats:
    domain, manifest, schema, tables = snapshot.domain, snapshot.manifest, snapshot.schema, snapshot.tables()
    facts = tables.facts.unique(["s", "p", "o", "o_is_entity", "o_lang", "o_datatype"])
    labels = tables.label_map(schema.language)
    entities = facts["s"].n_unique()
    ends = pl.concat([facts["s"], facts.filter(pl.col("o_is_entity"))["o"]])
    entity_nodes = ends.n_unique()
    degrees = ends.value_counts(name="degree")["degree"].value_counts(name="entities").sort("degree")
    label = pl.col("o")
    texts = facts.select(
        head=pl.col("s").replace_strict(labels, default=pl.col("s")),
        rel=pl.col("p").replace_strict(labels, default=pl.col("p")),
        tail=pl.when(pl.col("o_is_entity")).then(label.replace_strict(labels, default=label)).otherwise(label),
    )
    chars = texts.select(pl.sum_horizontal(pl.all().str.len_chars())).to_series().sum()
    tokens = _token_total(texts)
    triples = facts.height
    return DomainStats(
        domain=domain,
        entities=entities,
        entity_nodes=entity_nodes,
        relations=facts["p"].n_unique(),
        triples=triples,
        avg_triples_per_entity=round(triples / entities, 1) if entities else 0.0,
        avg_tokens_per_triple=round(tokens / triples, 1) if triples else 0.0,
        avg_chars_per_triple=round(chars / triples, 1) if triples else 0.0,
        entities_by_type=_entities_by_type(tables, facts, schema, labels),
        relations_by_count=dict(
            facts.group_by("p").len().sort("len", descending=True)
            .select(pl.col("p").replace_strict(labels, default=pl.col("p")), "len").iter_rows()
        ),
        degree_histogram=dict(degrees.iter_rows()),
        build_id=manifest.build_id,
        schema_inferred=schema.inferred,
    )


def _token_total(texts: pl.DataFrame) -> int:
    """Tokens of head + relation + tail over all triples, each distinct label segmented once."""
    long = texts.unpivot().group_by("value").len()
    counts = long["value"].map_elements(token_count, return_dtype=pl.Int64)
    return int((counts * long["len"]).sum())


def _entities_by_type(tables: GraphTables, facts: pl.DataFrame, schema: Schema,
                      labels: dict[str, str]) -> dict[str, int]:
    """Entities per value of the schema's type relation (DuConv's 领域), else per rdf:type class."""
    if schema.type_relation:
        type_iri = schema.relations[schema.type_relation].iri
        typed = facts.filter(pl.col("p") == type_iri).unique(["s", "o"])
        if typed.height:
            return dict(typed.group_by("o").len().sort("len", descending=True).iter_rows())
    typed = tables.types.unique()
    return dict(
        typed.group_by("class").len().sort("len", descending=True)
        .select(pl.col("class").replace_strict(labels, default=pl.col("class")), "len").iter_rows()
    )


def plot_stats(stats: DomainStats, folder: Path | str) -> list[Path]:
    """The relation histogram and the degree distribution of a :func:`domain_stats` result, as PNG files
    ``<domain>-relations.png`` and ``<domain>-degrees.png`` in ``folder``."""
    folder, domain = Path(folder), stats.domain
    return [
        plots.relation_histogram(stats.relations_by_count, folder / f"{domain}-relations.png",
                                 title=f"{domain}: facts per relation"),
        plots.degree_distribution({int(d): n for d, n in stats.degree_histogram.items()},
                                  folder / f"{domain}-degrees.png", title=f"{domain}: degree distribution"),
    ]
