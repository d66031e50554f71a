"""Linking entities across sources: a dataset or crawled entity and its Wikidata / XLORE counterpart.

The one place where entities of different sources become one: by exact (normalised) match of
their zh and en labels and aliases, with a type check, written as ``owl:sameAs``. A label match
beats an alias match (a trailing disambiguation such as ``（1993年电影）`` is dropped as an
alias form); when more than one counterpart remains at the best level the entity is
reported as ambiguous with every candidate, and never linked by guess.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.build import add_graphs
from kgforge.quads import QuadWriter
from kgforge.schema import load_schema
from kgforge.store import domain_paths, read_manifest, staged_build, write_json_atomic, write_lock
from kgforge.tables import GraphTables, read_tables
from kgforge.text import normalise_label, to_simplified
from kgforge.vocab import CLASS, ENTITY, OWL_SAME_AS, graph_iri

WIKIDATA_ENTITY = "http://www.wikidata.org/entity/"
XLORE_INSTANCE = "http://xlore.org/instance/"
EXTERNAL_PREFIXES = (WIKIDATA_ENTITY, XLORE_INSTANCE)
LINKS_GRAPH = graph_iri("derived", "links")
LINKS_QUADS = "quads/links.nq"


_DISAMBIGUATION = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")


def name_key(text: str) -> str:
    """The form names are compared in: NFKC, DuConv's segmentation spaces removed, Traditional characters made
    Simplified (so 霧城之夜 links to its twin 雾城之夜), case-folded."""
    return to_simplified(normalise_label(unicodedata.normalize("NFKC", text))).casefold()


@dataclass(frozen=True)
class Named:
    """An entity to link or a candidate counterpart: its key, names and types (any type ids)."""

    key: str
    labels: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()


@dataclass
class LinkReport:
    linked: dict[str, str] = field(default_factory=dict)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    type_rejected: int = 0

    def as_dict(self, examples: int = 20) -> dict[str, Any]:
        return {"linked": len(self.linked), "ambiguous": len(self.ambiguous), "unmatched": len(self.unmatched),
                "type_rejected": self.type_rejected,
                "ambiguous_examples": dict(list(self.ambiguous.items())[:examples])}


def types_compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    """Unknown types never block a match; two known, disjoint type sets do."""
    return not a or not b or bool(a & b)


class Linker:
    """Collects candidates for a fixed set of entities, then decides: linked, ambiguous or unmatched."""

    def __init__(self, entities: Iterable[Named]) -> None:
        self.entities = {e.key: e for e in entities}
        self._by_name: dict[str, set[str]] = defaultdict(set)
        for entity in self.entities.values():
            for name in (*entity.labels, *entity.aliases):
                if name.strip():
                    self._by_name[name_key(name)].add(entity.key)
                    bare = _DISAMBIGUATION.sub("", name)
                    if bare.strip() and bare != name:  # "霸王别姬（1993年陈凯歌执导电影）" also as "霸王别姬"
                        self._by_name[name_key(bare)].add(entity.key)
        # entity key → level (0: label = label, 1: any other name match) → candidate keys
        self._found: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.type_rejected = 0

    def offer(self, candidate: Named) -> None:
        """Consider one counterpart (stream all of them through here)."""
        label_keys = {name_key(n) for n in candidate.labels}
        for name in label_keys | {name_key(n) for n in candidate.aliases}:
            for key in self._by_name.get(name, ()):
                entity = self.entities[key]
                if not types_compatible(entity.types, candidate.types):
                    self.type_rejected += 1
                    continue
                level = 0 if name in label_keys and name in {name_key(n) for n in entity.labels} else 1
                self._found[key][level].add(candidate.key)

    def report(self) -> LinkReport:
        report = LinkReport(type_rejected=self.type_rejected)
        for key in self.entities:
            levels = self._found.get(key)
            if not levels:
                report.unmatched.append(key)
                continue
            best = levels[min(levels)]
            if len(best) == 1:
                report.linked[key] = next(iter(best))
            else:
                report.ambiguous[key] = sorted(best)
        return report


def link(entities: Iterable[Named], candidates: Iterable[Named]) -> LinkReport:
    linker = Linker(entities)
    for candidate in candidates:
        linker.offer(candidate)
    return linker.report()


# --- linking inside a domain's store ---------------------------------------------------------

def _named_entities(tables: GraphTables, prefixes: tuple[str, ...], classes: dict[str, set[str]]) -> list[Named]:
    """One ``Named`` per IRI under ``prefixes``: rdfs:labels, skos:altLabels and kgforge class types."""
    labels = tables.labels.filter(pl.col("iri").str.starts_with(prefixes[0]) if len(prefixes) == 1 else
                                  pl.any_horizontal(*(pl.col("iri").str.starts_with(p) for p in prefixes)))
    grouped = labels.group_by("iri").agg(
        pl.col("label").filter(pl.col("preferred")).alias("labels"),
        pl.col("label").filter(~pl.col("preferred")).alias("aliases"),
    )
    return [Named(row["iri"], tuple(row["labels"]), tuple(row["aliases"]), frozenset(classes.get(row["iri"], ())))
            for row in grouped.iter_rows(named=True)]


def link_domain(domain: str, workdir: Path | str | None = None) -> dict[str, Any]:
    """Link the domain's dataset/crawled entities to their Wikidata / XLORE counterparts.

    Writes ``owl:sameAs`` into the derived graph ``graph/derived/links`` (re-running replaces it)
    and the full report, ambiguous candidates included, to ``<domain>/links-report.json``.
    """
    paths = domain_paths(domain, workdir)
    with write_lock(paths):  # a writer from start to end: the links are made from the build they join
        tables = read_tables(paths)
        typed = tables.types.filter(pl.col("class").str.starts_with(CLASS))
        classes: dict[str, set[str]] = defaultdict(set)
        for iri, cls in typed.iter_rows():
            classes[iri].add(cls)
        report = link(_named_entities(tables, (ENTITY,), classes),
                      _named_entities(tables, EXTERNAL_PREFIXES, classes))
        label = tables.label_map("zh")
        full = {"linked": {label.get(k, k): {"entity": k, "counterpart": v} for k, v in report.linked.items()},
                "ambiguous": {label.get(k, k): {"entity": k, "candidates": v} for k, v in report.ambiguous.items()},
                "unmatched": len(report.unmatched), "type_rejected": report.type_rejected}
        write_json_atomic(paths.root / "links-report.json", full)
        summary = report.as_dict()
        summary["report_file"] = str(paths.root / "links-report.json")
        with staged_build(paths) as staging:
            with QuadWriter(staging / LINKS_QUADS, LINKS_GRAPH) as writer:
                for entity, counterpart in sorted(report.linked.items()):
                    writer.iri(entity, OWL_SAME_AS, counterpart)
            add_graphs(paths, staging, {LINKS_GRAPH: {"kind": "links", "quads_file": LINKS_QUADS,
                                                      "quads": writer.count}},
                       {"link": {k: v for k, v in summary.items() if k != "ambiguous_examples"}},
                       replace_kinds=("links",))
    return summary


def start_entity_names(domain: str, workdir: Path | str | None = None) -> dict[str, str | None]:
    """Names of the domain's dataset entities that head facts (KdConv's start entities), each with its
    schema type id when it has one (for the type check); only the head type when the schema names one.
    These are the seeds a Wikidata / XLORE import starts from when asked to seed by label."""
    paths = domain_paths(domain, workdir)
    schema = load_schema(read_manifest(paths)["schema"]["path"])
    tables = read_tables(paths)
    type_ids = {t.iri: t.id for t in schema.types.values()}
    typed = tables.types.filter(pl.col("class").is_in(list(type_ids)))
    heads = tables.facts.filter(pl.col("s").str.starts_with(ENTITY))["s"].unique()
    if schema.head_type:
        heads = typed.filter(pl.col("class") == schema.types[schema.head_type].iri)["iri"]
    names = tables.labels.filter(pl.col("preferred") & pl.col("iri").is_in(heads.to_list()))
    type_of = dict(zip(typed["iri"].to_list(), typed["class"].to_list()))
    return {row["label"]: type_ids.get(type_of.get(row["iri"], ""))
            for row in names.sort("label").iter_rows(named=True)}
