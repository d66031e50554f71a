"""Linking entities across sources: a dataset or crawled entity and its Wikidata / XLORE counterpart.

The one place where entities of different sources become one: by exact (normalised) match of
their zh and en labels and aliases, with a type check, written as ``owl:sameAs``. A label match
beats an alias match (a trailing disambiguation such as ``（1993年电影）`` is dropped as an
alias form); when more than one counterpart remains at the best level the entity is
reported as ambiguous with every candidate, and never linked by guess.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from kgforge.core.files import write_json_atomic
from kgforge.core.quads import QuadWriter
from kgforge.core.records import Record
from kgforge.core.vocab import (
    CLASS,
    ENTITY,
    OWL_SAME_AS,
    WIKIDATA_ENTITY,
    XLORE_INSTANCE,
    graph_iri,
)
from kgforge.publish.transaction import add_graphs, extending
from kgforge.sources.matching import Named, link
from kgforge.store.layout import (
    domain_paths,
    staged_build,
)
from kgforge.store.manifest import GraphEntry
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

EXTERNAL_PREFIXES = (WIKIDATA_ENTITY, XLORE_INSTANCE)
LINKS_GRAPH = graph_iri("derived", "links")
LINKS_QUADS = "quads/links.nq"


# --- linking inside a domain's store ---------------------------------------------------------


def _named_entities(tables: GraphTables, prefixes: tuple[str, ...], classes: dict[str, set[str]]) -> list[Named]:
    """One ``Named`` per IRI under ``prefixes``: rdfs:labels, skos:altLabels and kgforge class types."""
    labels = tables.labels.filter(
        pl.col("iri").str.starts_with(prefixes[0])
        if len(prefixes) == 1
        else pl.any_horizontal(*(pl.col("iri").str.starts_with(p) for p in prefixes))
    )
    grouped = labels.group_by("iri").agg(
        pl.col("label").filter(pl.col("preferred")).alias("labels"),
        pl.col("label").filter(~pl.col("preferred")).alias("aliases"),
    )
    return [
        Named(row["iri"], tuple(row["labels"]), tuple(row["aliases"]), frozenset(classes.get(row["iri"], ())))
        for row in grouped.iter_rows(named=True)
    ]


@dataclass(frozen=True)
class LinkSummary(Record):
    """Entities linked to their Wikidata / XLORE counterparts (``owl:sameAs``); the full report is ``report_file``."""

    linked: int
    ambiguous: int
    unmatched: int
    type_rejected: int
    ambiguous_examples: dict[str, list[str]]  # name -> candidate IRIs, never guessed between
    report_file: str


def link_domain(domain: str, workdir: Path | str | None = None) -> LinkSummary:
    """Link the domain's dataset/crawled entities to their Wikidata / XLORE counterparts.

    Writes ``owl:sameAs`` into the derived graph ``graph/derived/links`` (re-running replaces it)
    and the full report, ambiguous candidates included, to ``<domain>/links-report.json``.
    """
    paths = domain_paths(domain, workdir)
    with extending(paths) as current:  # a writer from start to end: the links are made from the build they join
        tables = current.tables()
        typed = tables.types.filter(pl.col("class").str.starts_with(CLASS))
        classes: dict[str, set[str]] = defaultdict(set)
        for iri, cls in typed.iter_rows():
            classes[iri].add(cls)
        report = link(_named_entities(tables, (ENTITY,), classes), _named_entities(tables, EXTERNAL_PREFIXES, classes))
        label = tables.label_map("zh")
        full = {
            "linked": {label.get(k, k): {"entity": k, "counterpart": v} for k, v in report.linked.items()},
            "ambiguous": {label.get(k, k): {"entity": k, "candidates": v} for k, v in report.ambiguous.items()},
            "unmatched": len(report.unmatched),
            "type_rejected": report.type_rejected,
        }
        write_json_atomic(paths.root / "links-report.json", full)
        counts = report.as_dict()
        summary = LinkSummary(
            linked=counts["linked"],
            ambiguous=counts["ambiguous"],
            unmatched=counts["unmatched"],
            type_rejected=counts["type_rejected"],
            ambiguous_examples=counts["ambiguous_examples"],
            report_file=str(paths.root / "links-report.json"),
        )
        with staged_build(paths) as staging:
            with QuadWriter(staging / LINKS_QUADS, LINKS_GRAPH) as writer:
                for entity, counterpart in sorted(report.linked.items()):
                    writer.iri(entity, OWL_SAME_AS, counterpart)
            add_graphs(
                current,
                staging,
                {LINKS_GRAPH: GraphEntry(kind="links", quads_file=LINKS_QUADS, quads=writer.count)},
                {"link": {k: v for k, v in summary.as_dict().items() if k != "ambiguous_examples"}},
                replace_kinds=("links",),
            )
    return summary


def start_entity_names(snapshot: Snapshot) -> dict[str, str | None]:
    """Names of the build's dataset entities that head facts (KdConv's start entities), each with its
    schema type id when it has one (for the type check); only the head type when the schema names one.
    These are the seeds a Wikidata / XLORE import starts from when asked to seed by label."""
    schema, tables = snapshot.schema, snapshot.tables()
    type_ids = {t.iri: t.id for t in schema.types.values()}
    typed = tables.types.filter(pl.col("class").is_in(list(type_ids)))
    heads = tables.facts.filter(pl.col("s").str.starts_with(ENTITY))["s"].unique()
    if schema.head_type:
        heads = typed.filter(pl.col("class") == schema.types[schema.head_type].iri)["iri"]
    names = tables.labels.filter(pl.col("preferred") & pl.col("iri").is_in(heads.to_list()))
    type_of = dict(zip(typed["iri"].to_list(), typed["class"].to_list()))
    return {
        row["label"]: type_ids.get(type_of.get(row["iri"], "")) for row in names.sort("label").iter_rows(named=True)
    }
