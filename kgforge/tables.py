"""A domain's graph as polars tables, read once from the store: facts, labels, types, relations.

Stages that work on the whole graph (stats, derive, goals, embed, export) read these tables
instead of issuing one SPARQL query per entity.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyoxigraph as ox

from kgforge.store import DomainPaths, open_read_only, published_build
from kgforge.vocab import (
    CLASS, DERIVED_GRAPHS, KIND, is_fact, ONTO, RDF_TYPE, RDFS_LABEL, SCHEMA_GRAPH, SKOS_ALT_LABEL,
)

log = logging.getLogger(__name__)
FACT_SCHEMA = {"s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean,
               "o_lang": pl.String, "o_datatype": pl.String, "graph": pl.String}
LABEL_SCHEMA = {"iri": pl.String, "label": pl.String, "lang": pl.String, "preferred": pl.Boolean}


@dataclass
class GraphTables:
    facts: pl.DataFrame  # s, p, o, o_is_entity, o_lang, o_datatype, graph
    labels: pl.DataFrame  # iri, label, lang, preferred (rdfs:label) or not (skos:altLabel)
    types: pl.DataFrame  # iri, class
    relations: pl.DataFrame  # iri, zh, en, kind
    _domain_facts: pl.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    def domain_facts(self) -> pl.DataFrame:
        """Facts that dialogue stages (derive, goals, export) work with: outside derived graphs, and
        under a relation of the domain's vocabulary (declared in the schema graph, so it has labels
        and a kind). A source's own unmapped properties, such as Wikidata's wdt:P31, stay out.
        Filtered once (the tables never change) however many stages ask."""
        if self._domain_facts is None:
            self._domain_facts = self.facts.filter(~pl.col("graph").str.starts_with(DERIVED_GRAPHS),
                                                   pl.col("p").is_in(self.relations["iri"].implode()))
        return self._domain_facts

    def label_map(self, language: str = "zh") -> dict[str, str]:
        """One display label per IRI: a preferred label in ``language`` first, any label otherwise."""
        ranked = self.labels.with_columns(
            rank=pl.when(pl.col("preferred") & (pl.col("lang") == language)).then(0)
            .when(pl.col("preferred") & pl.col("lang").str.starts_with(language)).then(1)
            .when(pl.col("preferred")).then(2).otherwise(3)
        ).sort(["iri", "rank", "label"]).unique("iri", keep="first")
        mapping = dict(zip(ranked["iri"].to_list(), ranked["label"].to_list()))
        for row in self.relations.iter_rows(named=True):
            mapping[row["iri"]] = row["en"] if language.startswith("en") and row["en"] else row["zh"] or row["iri"]
        return mapping


def read_tables(paths: DomainPaths, include_derived: bool = False, build: Path | None = None) -> GraphTables:
    """The tables of ``build`` (default: the published build), parsed column-wise from its N-Quads files
    (seconds at DuConv scale) once their checksums are verified, or walked from its store when those
    files cannot stand in for it (see ``kgforge.quad_tables``)."""
    from kgforge.quad_tables import QuadFilesUnusable, tables_from_quads

    build = build or published_build(paths)
    try:
        return tables_from_quads(paths, include_derived, build)
    except QuadFilesUnusable as why:
        log.warning("reading the store quad by quad instead of the quads files (slower): %s", why)
        return read_tables_from_store(paths, include_derived, build)


def read_tables_from_store(paths: DomainPaths, include_derived: bool = False,
                           build: Path | None = None) -> GraphTables:
    """The tables walked quad by quad from the store (about a minute for 3.6M quads)."""
    store = open_read_only(paths, build)
    facts: dict[str, list] = {k: [] for k in FACT_SCHEMA}
    labels: dict[str, list] = {k: [] for k in LABEL_SCHEMA}
    types: dict[str, list] = {"iri": [], "class": []}
    relations: dict[str, dict] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        graph = quad.graph_name.value if not isinstance(quad.graph_name, ox.DefaultGraph) else ""
        s, p, o = quad.subject.value, quad.predicate.value, quad.object
        if graph == SCHEMA_GRAPH and not s.startswith(CLASS):
            _collect_relation(relations, s, p, o)
        elif p in (RDFS_LABEL, SKOS_ALT_LABEL) and isinstance(o, ox.Literal):
            for key, value in zip(LABEL_SCHEMA, (s, o.value, o.language or "", p == RDFS_LABEL)):
                labels[key].append(value)
        elif p == RDF_TYPE:
            types["iri"].append(s)
            types["class"].append(o.value)
        elif is_fact(s, p) and (include_derived or not graph.startswith(DERIVED_GRAPHS)):
            is_literal = isinstance(o, ox.Literal)
            row = (s, p, o.value, not is_literal, o.language if is_literal else None,
                   o.datatype.value if is_literal else None, graph)
            for key, value in zip(FACT_SCHEMA, row):
                facts[key].append(value)
    relation_rows = [{"iri": iri, "zh": r.get("zh", ""), "en": r.get("en", ""), "kind": r.get("kind", "")}
                     for iri, r in relations.items()]
    return GraphTables(
        facts=pl.DataFrame(facts, schema=FACT_SCHEMA),
        labels=pl.DataFrame(labels, schema=LABEL_SCHEMA),
        types=pl.DataFrame(types, schema={"iri": pl.String, "class": pl.String}),
        relations=pl.DataFrame(relation_rows, schema={"iri": pl.String, "zh": pl.String, "en": pl.String,
                                                      "kind": pl.String}),
    )


def _collect_relation(relations: dict[str, dict], s: str, p: str, o: ox.NamedNode | ox.Literal) -> None:
    if p == RDFS_LABEL and isinstance(o, ox.Literal):
        relations.setdefault(s, {})["en" if (o.language or "").startswith("en") else "zh"] = o.value
    elif p == KIND:
        relations.setdefault(s, {})["kind"] = o.value.removeprefix(ONTO).removesuffix("Valued").lower()
