"""`kgforge export-rdf`: the store as N-Quads or TriG (graphs kept) or N-Triples or Turtle (union)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyoxigraph as ox

from kgforge.core.records import Record
from kgforge.core.registry import Registry
from kgforge.store.snapshot import Snapshot
from kgforge.store.sparql_text import PREFIXES


@dataclass(frozen=True)
class RdfSyntax:
    syntax: ox.RdfFormat
    keeps_graphs: bool  # quads (the named graphs as they are), else triples (their union, deduplicated)
    prefixes: bool  # written with the query prefixes (the syntaxes that abbreviate IRIs)


RDF_FORMATS: Registry[RdfSyntax] = Registry("RDF format")
RDF_FORMATS.register(
    "nq",
    RdfSyntax(ox.RdfFormat.N_QUADS, True, False),
    aliases=("nquads", "n-quads"),
    description="N-Quads: every named graph kept",
)
RDF_FORMATS.register("trig", RdfSyntax(ox.RdfFormat.TRIG, True, True), description="TriG: every named graph kept")
RDF_FORMATS.register(
    "nt",
    RdfSyntax(ox.RdfFormat.N_TRIPLES, False, False),
    aliases=("ntriples", "n-triples"),
    description="N-Triples: the union of the graphs",
)
RDF_FORMATS.register(
    "ttl",
    RdfSyntax(ox.RdfFormat.TURTLE, False, True),
    aliases=("turtle",),
    description="Turtle: the union of the graphs",
)


@dataclass(frozen=True)
class RdfExportReport(Record):
    """The published build written as one RDF file (``kgforge export-rdf``)."""

    domain: str
    format: str
    out: str
    statements: int  # quads (N-Quads, TriG) or distinct triples of the union (N-Triples, Turtle)


def export_rdf(snapshot: Snapshot, fmt: str, out: Path) -> RdfExportReport:
    """Write the snapshot's whole store to ``out`` in ``fmt`` (a name or alias of :data:`RDF_FORMATS`, any case);
    triple formats get the union of all graphs, deduplicated."""
    entry = RDF_FORMATS.entry(fmt)
    syntax = entry.obj
    target = snapshot.paths.output(out)
    store = snapshot.store()
    prefixes = PREFIXES if syntax.prefixes else None
    with target.part() as tmp:
        if syntax.keeps_graphs:
            store.dump(str(tmp), syntax.syntax, prefixes=prefixes)
            count = sum(1 for _ in store.quads_for_pattern(None, None, None, None))
        else:
            triples = _union_triples(store)
            ox.serialize(triples, str(tmp), syntax.syntax, prefixes=prefixes)
            count = len(triples)
    return RdfExportReport(domain=snapshot.domain, format=entry.name, out=str(target), statements=count)


def _union_triples(store: ox.Store) -> list[ox.Triple]:
    seen: dict[ox.Triple, None] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        seen.setdefault(quad.triple, None)
    return list(seen)
