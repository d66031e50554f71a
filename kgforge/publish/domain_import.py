"""Adding one knowledge-base source (Wikidata, XLORE) to a domain's store without rebuilding the rest.

The source is imported like any ``kgforge build`` source (its own named graph, quarantine and
counts) into a staging build; that build is a checkpoint of the current store with this graph (and
the schema graph, extended: every declaration it held is kept) added, so the other graphs are not re-loaded, and it is published by the
same atomic swap as a build. Importing the same file again replaces its graph. With no store yet,
the domain is created.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.core import checks
from kgforge.core.errors import ArgumentError, StoreMissingError
from kgforge.core.jsonio import JsonObject
from kgforge.core.progress import progress_bar
from kgforge.core.records import Record
from kgforge.core.schema import Relation, SourceSpec, load_schema
from kgforge.core.vocab import RDF_PROPERTY, RDF_TYPE, SCHEMA_GRAPH
from kgforge.publish.link import start_entity_names
from kgforge.publish.transaction import (
    SourceResult,
    extend_build,
    import_source,
    load_graphs,
    schema_entry,
    write_schema_graph,
)
from kgforge.sources.wikidata.framing import TURTLE_DIRECTIVES, DumpReader
from kgforge.store.layout import (
    domain_paths,
    staged_build,
    write_lock,
)
from kgforge.store.snapshot import Snapshot

SCHEMA_FILE = "quads/schema.imports.nq"


@dataclass(frozen=True)
class ImportReport(Record):
    """A Wikidata or XLORE source added to the published store: its manifest entry and the new build."""

    domain: str
    build_id: str
    total_quads: int
    source: dict[str, Any]  # kind, path, quads, counts, quarantine, graph
    graphs: dict[str, Any]


def import_into_domain(
    domain: str,
    kind: str,
    path: Path | str,
    options: dict[str, Any],
    workdir: Path | str | None = None,
    show_progress: bool = True,
) -> ImportReport:
    """Import ``kind:path`` into ``domain``'s store; returns the source's manifest entry and build id."""
    checks.selection_options(options)
    paths = domain_paths(domain, workdir)
    with write_lock(paths), progress_bar(show_progress) as progress, staged_build(paths) as staging:
        try:
            current: Snapshot | None = Snapshot.open(paths)
        except (StoreMissingError, FileNotFoundError):
            current = None
        manifest = current.manifest if current else None
        schema = current.schema if current else load_schema(domain)
        spec = SourceSpec(kind, str(path), options)
        result, used = import_source(schema, paths, staging, spec, Path(path), set(), progress)
        graphs = dict(manifest.graphs) if manifest else {}
        graphs[result.graph] = result.manifest_entry()
        earlier = _schema_graph(current) if current else []
        relations = used | _declared_in(earlier, schema.relations.values())
        writer = write_schema_graph(schema, relations, staging / SCHEMA_FILE, kept=earlier)
        graphs[SCHEMA_GRAPH] = schema_entry(writer, SCHEMA_FILE)
        if current is None:
            summary = load_graphs(paths, staging, graphs, schema, progress, {})
        else:
            added = {g: graphs[g] for g in (result.graph, SCHEMA_GRAPH)}
            summary = extend_build(paths, staging, current, current.store_dir, [], added, {})
    return ImportReport(
        domain=domain,
        build_id=summary.build_id,
        total_quads=summary.total_quads,
        source=dict(result.as_dict(), graph=result.graph),
        graphs=summary.graphs,
    )


def _schema_graph(published: Snapshot) -> list[ox.Quad]:
    """The published build's schema graph, which the new one extends (never shrinks)."""
    return list(published.store().quads_for_pattern(None, None, None, ox.NamedNode(SCHEMA_GRAPH)))


def _declared_in(schema_graph: Iterable[ox.Quad], relations: Iterable[Relation]) -> set[Relation]:
    """Schema relations ``schema_graph`` declares, written again from the schema file (its current labels)."""
    declared = {
        quad.subject.value
        for quad in schema_graph
        if quad.predicate.value == RDF_TYPE
        and not isinstance(quad.object, ox.Triple)
        and quad.object.value == RDF_PROPERTY
        and not isinstance(quad.subject, ox.Triple)
    }
    return {rel for rel in relations if rel.iri in declared}


__all__ = ["ImportReport", "SourceResult", "import_into_domain"]


def dump_selection(
    snapshot: Snapshot | None,
    *,
    seeds: Iterable[str] = (),
    seed_names: Iterable[str] = (),
    seed_labels: bool = False,
    seed_classes: Iterable[str] = (),
    hops: int | None = None,
    fanout_cap: int | None = None,
    workers: int | None = None,
    engine: str = "local",
    address: str | None = None,
    resume: bool = True,
    keep_deprecated: bool = False,
) -> JsonObject:
    """The source options of a dump import: which entities (seeds by id, exact label, the start entities of
    ``snapshot``'s build with ``seed_labels``, or class), how far from them, and how the dump passes run
    (:class:`~kgforge.sources.wikidata.passes.PassOptions`); only what was asked for, so the schema's own
    options fill in the rest."""
    options: dict[str, Any] = {}
    if seeds := list(seeds):
        options["seeds"] = seeds
    named: dict[str, str | None] = dict.fromkeys(seed_names)
    if seed_labels:
        if snapshot is None:
            raise ArgumentError("seed_labels", "seeding by the domain's own names needs its published build")
        named.update(start_entity_names(snapshot))
    if named:
        options["seed_names"] = named
    if hops is not None:
        options["hops"] = hops
    if fanout_cap is not None:
        options["fanout_cap"] = fanout_cap
    if classes := list(seed_classes):
        options["seed_classes"] = classes
    if workers is not None:
        options["workers"] = workers
    if engine != "local" or address:
        options.update(engine=engine, address=address)
    if not resume:
        options["resume"] = False
    if keep_deprecated:
        options["keep_deprecated"] = True
    return options


def wikidata_dump_kind(path: Path) -> str:
    """``wikidata-nt`` (truthy N-Triples), ``wikidata-ttl`` (full RDF, Turtle) or ``wikidata`` (JSON), by the
    first line that is not blank or a comment."""
    for _, _, raw in DumpReader(path, decompressor="python"):
        text = raw.strip()
        if text and not text.startswith(b"#"):
            if text.startswith(b"<"):
                return "wikidata-nt"
            return "wikidata-ttl" if text.startswith(TURTLE_DIRECTIVES) else "wikidata"
    return "wikidata"
