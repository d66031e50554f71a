"""`kgforge build`: sources → normalised quads (one named graph each) → a fresh store, swapped in.

A build is a transaction: the import phase writes ``quads/<graph>.nq`` per source into the staging
build folder (``builds/<id>/``), the load phase bulk-loads them into that folder's new store and checks
the per-graph counts, and only then is the whole folder — store, quads, checksums, manifest — published
by one atomic swap. Stages read the published build only, so a build that fails or is killed at any
moment leaves the previous one as it was, and is never read. Stages that add graphs (derive, link,
import, align --write, translate --apply) extend a copy of the published build the same way
(:func:`extend_build`), reading the build they extend under the write lock (:func:`extending`).
"""

from __future__ import annotations

import shlex
import shutil
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pyoxigraph as ox
from rich.progress import Progress

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.files import file_fingerprint, package_versions, sha256_file
from kgforge.core.progress import progress_bar
from kgforge.core.quads import QuadWriter
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record, json_key, omitted_when_none
from kgforge.core.schema import (
    Relation,
    Schema,
    SourceSpec,
    domain_schema_path,
    load_schema,
)
from kgforge.core.vocab import (
    DERIVED_GRAPHS,
    GRAPH,
    KIND,
    KIND_IRIS,
    RDF_PROPERTY,
    RDF_TYPE,
    RDFS_LABEL,
    RELATION,
    SCHEMA_GRAPH,
    graph_iri,
)
from kgforge.publish.inferred import infer_build_schema
from kgforge.publish.refresh import SourceDecision, decide, refresh_record, relations_from_records
from kgforge.sources.importer import ImportContext, importer_for, reads_file, source_licence
from kgforge.store.checksums import stamp
from kgforge.store.layout import (
    SCHEMA_COPY,
    DomainPaths,
    carry_quads,
    discard_build,
    domain_paths,
    keep_schema,
    leftovers,
    staged_build,
    swap_in,
    write_lock,
    writer_pid,
)
from kgforge.store.manifest import GraphEntry, Manifest, SchemaEntry
from kgforge.store.oxigraph import (
    bulk_load,
    check_counts,
    extend_store,
    graph_counts,
    require_counts_match,
)
from kgforge.store.snapshot import Snapshot
from kgforge.store.workdir import DEFAULT_WORKDIR

SCHEMA_QUADS = "quads/schema.nq"
INFERRED_SCHEMA = "schema.toml"  # in the build folder, for a domain that has no schema of its own


@dataclass
class SourceResult:
    kind: str
    path: str
    graph: str
    quads_file: str
    quads: int
    sha256: str
    input: dict[str, Any]
    counts: dict[str, int]
    quarantined: int
    quarantine_file: str | None
    seconds: float
    engine: dict[str, Any] | None = None  # the dump engine and each shard's producer (Wikidata dumps)
    licence: str | None = None  # the schema source's, else the one registered for its kind
    refresh: dict[str, Any] | None = None  # what a later build compares to keep the graph (build.refresh)

    def manifest_entry(self) -> GraphEntry:
        return GraphEntry.from_dict(self.as_dict())

    def as_dict(self) -> dict[str, Any]:
        """The manifest entry's keys (in the order manifests have always had them)."""
        return {
            k: v
            for k, v in self.__dict__.items()
            if k != "graph" and not (k in ("engine", "licence", "refresh") and v is None)
        }


@dataclass(frozen=True)
class DroppedGraph:
    """A graph of the published build that a rebuild leaves out, and the command that brings it back: a graph a
    stage added (derived, links), or a source graph that is not among the new build's sources."""

    graph: str
    kind: str
    quads: int
    restore: str  # the command that adds it again

    @property
    def source(self) -> bool:
        return self.kind not in _RESTORED_BY

    @property
    def message(self) -> str:
        if self.source:
            name = self.graph.removeprefix(GRAPH)
            return (
                f"dropped source graph {name} ({self.quads:,} quads): the previous build had it, this build's "
                f"sources do not; run `{self.restore}` to add it back"
            )
        return f"dropped {self.kind} graph {self.graph.rsplit('/', 1)[-1]} ({self.quads:,} quads); run `{self.restore}` to restore"


# Graph kinds that stages other than `build` add, by the first word of the kind, and the command that adds them.
_RESTORED_BY = {"derived": "derive", "links": "link"}
# Source kinds a build does not take as --source but `kgforge import KIND` adds to the published build.
_IMPORTED = ("wikidata", "xlore")


def dropped_graphs(
    domain: str,
    previous: Manifest | None,
    kept: set[str],
    sources: Sequence[SourceSpec] = (),
    schema_sources: bool = True,
) -> list[DroppedGraph]:
    """The graphs of the ``previous`` manifest's that are not in ``kept`` (the new build's), each with the
    command that brings it back. A rebuild is exactly its sources (so a build can be repeated from its
    command line); a source graph only the previous build had is named, never silently lost. ``sources``
    are the new build's --source specs, which the command that keeps a dropped source repeats."""
    dropped: list[DroppedGraph] = []
    lost_sources: list[tuple[str, str, GraphEntry]] = []  # (graph, kind, entry)
    for graph, entry in (previous.graphs if previous else {}).items():
        kind = (entry.kind or "").split("-")[0]
        if graph in kept or entry.kind == "schema":
            continue
        if stage := _RESTORED_BY.get(kind):
            dropped.append(DroppedGraph(graph, kind, entry.quads, f"kgforge {stage} {domain}"))
        elif entry.kind and "path" in entry.details:
            lost_sources.append((graph, entry.kind, entry))
    again = [_source_option(s.kind, s.path) for s in sources]
    again += [_source_option(k, e.details["path"]) for _, k, e in lost_sources if k not in _IMPORTED]
    rebuild = " ".join([f"kgforge build {domain}", *again, *([] if schema_sources else ["--no-schema-sources"])])
    for graph, kind, entry in lost_sources:
        # an import extends whichever build is published, so it comes back on top of this one
        restore = (
            f"kgforge import {kind} -d {domain} {_quoted(entry.details['path'])}" if kind in _IMPORTED else rebuild
        )
        dropped.append(DroppedGraph(graph, kind, entry.quads, restore))
    return dropped


def _quoted(word: str) -> str:
    return shlex.quote(str(word))


def _source_option(kind: str, path: str) -> str:
    return f"--source {_quoted(f'{kind}:{path}')}"


@dataclass
class BuildSummary:
    domain: str
    build_id: str
    store: str
    graphs: dict[str, int]
    sources: list[SourceResult] = field(default_factory=list)
    timings: dict[str, float | None] = field(default_factory=dict)  # a rate is None when a load took no time
    schema: dict[str, Any] = field(default_factory=dict)  # path, and whether it was inferred
    dropped: list[DroppedGraph] = field(default_factory=list)  # what the previous build had that this one lacks
    decisions: list[SourceDecision] = field(default_factory=list)  # each source: kept or imported, and why
    published: bool = True  # False when nothing changed and the published build stays

    @property
    def total_quads(self) -> int:
        return sum(self.graphs.values())

    def report(self) -> BuildReport:
        """The build as ``kgforge build`` reports it (``Domain.build``), made from these fields as they are."""
        return BuildReport(
            self.domain,
            self.build_id,
            self.published,
            self.store,
            self.schema,
            self.total_quads,
            self.graphs,
            self.timings,
            tuple(dict(s.as_dict(), graph=s.graph) for s in self.sources),
            sum(s.counts.get("records_ok", 0) for s in self.sources),
            sum(s.counts.get("records_bad", 0) for s in self.sources),
            tuple(self.dropped),
            tuple(self.decisions),
        )

    def as_dict(self) -> dict[str, Any]:
        return self.report().as_dict()


@dataclass(frozen=True)
class BuildReport(Record):
    """A build: what it imported, what it published (``published`` False: nothing changed, the published
    build stays), and what it dropped or kept of the build before."""

    domain: str
    build_id: str
    published: bool  # False when nothing changed, so the published build stays as it was
    store: str  # the build's Oxigraph folder
    schema: dict[str, Any]  # path, inferred
    total_quads: int
    graphs: dict[str, int]  # graph IRI -> quads
    timings: dict[str, float | None]  # import and load seconds, the load rate (None: no time measured)
    sources: tuple[dict[str, Any], ...]  # each source's manifest entry, with its graph
    records_ok: int
    records_bad: int  # quarantined records
    dropped: tuple[DroppedGraph, ...] = json_key("dropped_graphs", default=())  # graphs a stage had added
    decisions: tuple[SourceDecision, ...] = json_key("refresh", default=())  # each source: kept or imported, why

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()  # each dropped graph and decision with the sentence the CLI shows
        data["dropped_graphs"] = [dict(vars(d), message=d.message) for d in self.dropped]
        data["refresh"] = [dict(vars(d), message=d.message) for d in self.decisions]
        return data


@contextmanager
def extending(paths: DomainPaths) -> Iterator[Snapshot]:
    """The domain's write lock held, and the published build resolved under it: the build a writer reads and
    extends (derive, link, align --write, translate --apply), which no other writer can replace meanwhile.
    Writers open their snapshot here; readers take the one they are handed."""
    with write_lock(paths):
        yield Snapshot.open(paths)


def parse_source(spec: str) -> SourceSpec:
    """``KIND:PATH`` from the command line."""
    kind, sep, path = spec.partition(":")
    if not sep or not kind or not path:
        raise KgforgeError(f"--source expects KIND:PATH (e.g. kdconv:kb_travel.json), got {spec!r}")
    return SourceSpec(kind=kind, path=path)


def build(
    domain: str,
    extra_sources: list[SourceSpec] | None = None,
    workdir: Path | str | None = None,
    schema: Schema | None = None,
    show_progress: bool = True,
    use_schema_sources: bool = True,
    full: bool = False,
) -> BuildSummary:
    """Import the sources of the build that changed since the published one, then publish a new store.

    The schema is ``schema``, else the domain's own (``<workdir>/<domain>/schema.toml``, what `kgforge init`
    writes) or a shipped one; a domain with neither builds with a schema inferred from its sources, written
    into the build folder (``schema.toml``) and marked inferred.

    A source whose input, importer and options match what the published build recorded keeps its graph
    (:mod:`kgforge.publish.refresh`): the new store is a checkpoint of the published one with only the changed
    graphs dropped and loaded again, and graphs that stages derived from the others stay only while those
    did not change. When nothing changed the published build stays as it is. ``full`` imports and loads
    every source into a fresh store."""
    paths = domain_paths(domain, workdir)
    if schema is None and (found := domain_schema_path(domain, paths.workdir)) is not None:
        schema = load_schema(found)
    specs = [(s, schema.resolve_source_path(s)) for s in schema.sources] if schema and use_schema_sources else []
    specs += [(s, Path(s.path)) for s in extra_sources or []]
    if not specs:
        where = f"list sources in {schema.path}" if schema else f"domain {domain!r} has no schema to list them"
        raise KgforgeError(f"domain {domain!r} has no sources: give --source KIND:PATH or {where}")
    with write_lock(paths), progress_bar(show_progress) as progress, staged_build(paths) as staging:
        started = time.perf_counter()
        current = Snapshot.published(paths)
        published, previous = (current.build, current.manifest) if current else (None, None)
        footprints: list[str | None] = [None] * len(specs)
        observed = None
        if schema is None:
            earlier = current.build if current is not None and current.manifest.schema.inferred else None
            inferred = infer_build_schema(domain, specs, earlier, staging, INFERRED_SCHEMA)
            schema, footprints, observed = inferred.schema, list(inferred.footprints), inferred.observed_again
        schema_sha256 = sha256_file(schema.path)
        taken: set[str] = set()
        names = [_graph_name(spec.kind, path, taken) for spec, path in specs]  # as a full build names them
        decisions = _decisions(specs, names, footprints, current, schema_sha256, full)
        results, used = [], set()
        for (spec, path), name, decision, footprint in zip(specs, names, decisions, footprints):
            if decision.kept:
                assert previous is not None  # only a published build's graphs are kept
                result = _kept_source(previous, decision.graph)
            else:
                result, _ = import_source(
                    schema, paths, staging, spec, path, set(), progress, name=name, schema_footprint=footprint
                )
            results.append(result)
            assert result.refresh is not None  # a build's source records what a later build compares
            used |= relations_from_records(result.refresh["relations"])
        schema_writer = write_schema_graph(schema, used, staging / SCHEMA_QUADS)
        import_seconds = time.perf_counter() - started
        kept_graphs = previous.graphs if previous is not None else {}
        graphs = {r.graph: (kept_graphs[r.graph] if d.kept else r.manifest_entry()) for r, d in zip(results, decisions)}
        graphs[SCHEMA_GRAPH] = schema_entry(schema_writer, SCHEMA_QUADS)
        if any(d.kept for d in decisions):
            assert current is not None  # as above
            summary = _refresh(
                paths, staging, current, graphs, {d.graph for d in decisions if d.kept}, schema, schema_sha256
            )
        else:
            summary = load_graphs(paths, staging, graphs, schema, progress)
    kept = set(graphs) if summary.published else set(summary.graphs)
    summary.dropped = dropped_graphs(domain, previous, kept, list(extra_sources or []), use_schema_sources)
    summary.sources = results
    summary.decisions = decisions
    summary.timings["import_seconds"] = round(import_seconds, 3)
    summary.schema = {"path": str(schema.path), "inferred": schema.inferred}
    if observed is not None:  # sources imported into a scratch folder to infer the schema (the others were kept)
        summary.schema["sources_observed"] = observed
    return summary


def _decisions(
    specs: list[tuple[SourceSpec, Path]],
    names: list[str],
    footprints: list[str | None],
    current: Snapshot | None,
    schema_sha256: str,
    full: bool,
) -> list[SourceDecision]:
    """For each source, in order: keep the published build's graph of it, or import it again (:func:`decide`)."""
    previous, published = (current.manifest, current.build) if current else (None, None)
    return [
        decide(
            previous,
            published,
            schema_sha256,
            spec.kind,
            path,
            dict(spec.options),
            graph_iri(*name.split("/")),
            full,
            footprint,
        )
        for (spec, path), name, footprint in zip(specs, names, footprints)
    ]


def _kept_source(previous: Manifest, graph: str) -> SourceResult:
    """The published build's record of a source whose graph a rebuild keeps."""
    entry = previous.graphs[graph].to_dict()
    fields = {name for name in SourceResult.__dataclass_fields__ if name != "graph"}
    return SourceResult(graph=graph, **{k: v for k, v in entry.items() if k in fields})


def _refresh(
    paths: DomainPaths,
    staging: Path,
    current: Snapshot,
    graphs: dict[str, GraphEntry],
    kept: set[str],
    schema: Schema,
    schema_sha256: str,
) -> BuildSummary:
    """Publish ``graphs`` as a checkpoint of the ``published`` store that keeps the graphs in ``kept`` (and the
    schema graph when its quads are the same), drops every other graph and loads only the imported ones. A
    graph a stage derived (derive, link) stays while every other graph of the build is unchanged, else it is
    dropped and the build names the command that makes it again. When nothing changed at all nothing is
    published, the staging build goes, and the summary names the published build."""
    published, previous = current.build, current.manifest
    if previous.graphs.get(SCHEMA_GRAPH, graphs[SCHEMA_GRAPH]).sha256 == graphs[SCHEMA_GRAPH].sha256:
        (staging / graphs[SCHEMA_GRAPH].quads_file).unlink()
        graphs[SCHEMA_GRAPH] = previous.graphs[SCHEMA_GRAPH]  # its quads file, whatever the earlier build named it
        kept = kept | {SCHEMA_GRAPH}
    derived = {g: e for g, e in previous.graphs.items() if _made_by_stage(e)}
    unchanged = kept == set(graphs) and set(previous.graphs) == kept | set(derived)  # nothing to drop or load
    if unchanged and current.schema.document == schema.document:
        discard_build(staging)
        return BuildSummary(
            paths.domain,
            previous.build_id,
            str(published / "oxigraph"),
            {g: e.quads for g, e in previous.graphs.items()},
            timings={"load_seconds": 0.0},
            published=False,
        )
    drop = [g for g in previous.graphs if g not in kept]  # derived graphs too: what they came from changed
    keep_schema(schema, staging)
    return extend_build(
        paths,
        staging,
        current,
        published / "oxigraph",
        drop,
        {g: e for g, e in graphs.items() if g not in kept},
        {},
        replace_stages=True,
        schema=_schema_record(schema, schema_sha256),
    )


def _made_by_stage(entry: GraphEntry) -> bool:
    return (entry.kind or "").split("-")[0] in _RESTORED_BY


def _schema_record(schema: Schema, sha256: str) -> SchemaEntry:
    return SchemaEntry(
        name=schema.name, version=schema.version, path=str(schema.path), sha256=sha256, inferred=schema.inferred
    )


def import_source(
    schema: Schema,
    paths: DomainPaths,
    staging: Path,
    spec: SourceSpec,
    path: Path,
    taken: set[str],
    progress: Progress,
    name: str | None = None,
    schema_footprint: str | None = None,
) -> tuple[SourceResult, set[Relation]]:
    """Import one source into its quads file in the staging build folder ``staging``, as graph ``name``
    (default: named after the source, unlike any in ``taken``); ``schema_footprint`` is recorded for the
    next build (:mod:`kgforge.publish.inferred`)."""
    importer = importer_for(spec.kind)
    if reads_file(spec.kind) and not path.exists():
        raise InputError(f"{path}: no such file (source {spec.kind}:{spec.path})")
    name = name or _graph_name(spec.kind, path, taken)
    quads_file = staging / "quads" / f"{name.replace('/', '__')}.nq"
    quarantine = Quarantine(paths.quarantine / f"{name.replace('/', '__')}.jsonl")
    quarantine.clear()  # an earlier import's; this one's appears with its first record
    task = progress.add_task(f"import {spec.kind}:{path.name}", total=None)
    started = time.perf_counter()
    # The input's fingerprint is taken before the import and must still hold after it: a record of bytes the
    # import did not read would let a later rebuild keep a graph that no longer matches its source.
    fingerprint, before = (file_fingerprint(path), stamp(path)) if path.is_file() else ({"path": str(path)}, None)
    with QuadWriter(quads_file, graph_iri(*name.split("/"))) as writer:
        ctx = ImportContext(
            schema=schema,
            path=path,
            writer=writer,
            quarantine=quarantine,
            options=dict(spec.options),
            workdir=paths.root,
            advance=lambda n: progress.advance(task, n),
        )
        try:
            importer(ctx)
        finally:
            quarantine.close()
    progress.update(task, completed=ctx.counts["records_ok"], total=ctx.counts["records_ok"])
    if before is not None and stamp(path) != before:
        raise InputError(
            f"{path}: changed while it was being imported (its size, modification time or inode "
            "differs from when the import began); nothing was published, run the build again"
        )
    result = SourceResult(
        kind=spec.kind,
        path=str(path),
        graph=writer.graph_iri,
        quads_file=str(quads_file.relative_to(staging)),
        quads=writer.count,
        sha256=writer.sha256,
        input=fingerprint,
        counts=dict(ctx.counts),
        quarantined=quarantine.count,
        quarantine_file=str(quarantine.path.relative_to(paths.root)) if quarantine.count else None,
        seconds=round(time.perf_counter() - started, 3),
        engine=ctx.engine,
        licence=spec.licence or source_licence(spec.kind),
        refresh=refresh_record(spec.options, path, ctx.relations_used, schema_footprint),
    )
    if ctx.counts["records_ok"] == 0 and writer.count == 0:
        where = f"quarantined {quarantine.count}; see {quarantine.path}" if quarantine.count else "nothing quarantined"
        raise InputError(f"{path}: no usable record ({where})")
    return result, ctx.relations_used


def _graph_name(kind: str, path: Path, taken: set[str]) -> str:
    base = f"{kind}/{path.stem or path.name or 'source'}"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}-{n}", n + 1
    taken.add(name)
    return name


def write_schema_graph(
    schema: Schema, relations: set[Relation], path: Path, kept: Iterable[ox.Quad] = ()
) -> QuadWriter:
    """Relation and type declarations (labels in zh and en, kind) for what the build uses, then the quads of
    ``kept`` (an earlier schema graph) about anything these do not declare: a stage that adds one source
    must not take away the declarations of relations the others use but the schema file does not name."""
    with QuadWriter(path, SCHEMA_GRAPH) as writer:
        for rel in sorted(relations, key=lambda r: (r.iri, r.zh, r.en or "", r.kind)):  # set order varies
            writer.iri(rel.iri, RDF_TYPE, RDF_PROPERTY)
            writer.literal(rel.iri, RDFS_LABEL, rel.zh, lang="zh")
            if rel.en:
                writer.literal(rel.iri, RDFS_LABEL, rel.en, lang="en")
            writer.iri(rel.iri, KIND, KIND_IRIS[rel.kind])
        for entity_type in schema.types.values():
            writer.literal(entity_type.iri, RDFS_LABEL, entity_type.zh, lang="zh")
            writer.literal(entity_type.iri, RDFS_LABEL, entity_type.en, lang="en")
        declared = {rel.iri for rel in relations} | {t.iri for t in schema.types.values()}
        for quad in kept:
            assert not isinstance(quad.subject, ox.Triple)  # kgforge writes no RDF-star
            if quad.subject.value not in declared:
                writer.term(quad.subject.value, quad.predicate.value, str(quad.object))
    return writer


def undeclared_relations(store: ox.Store) -> list[str]:
    """Relations that source facts use (kgforge relation IRIs) with no kind declared in the schema graph: their
    labels and kinds are gone, so queries that read them (entity_facts, goals, exports) miss their facts.
    Derived graphs are left out: their predicates (the associated pairs' vocabulary) are not relations."""
    rows = store.query(f"""SELECT DISTINCT ?p WHERE {{
      GRAPH ?g {{ ?s ?p ?o }}
      FILTER(?g != <{SCHEMA_GRAPH}> && !STRSTARTS(STR(?g), "{DERIVED_GRAPHS}") && STRSTARTS(STR(?p), "{RELATION}"))
      FILTER NOT EXISTS {{ GRAPH <{SCHEMA_GRAPH}> {{ ?p <{KIND}> ?kind }} }}
    }} ORDER BY ?p""")
    assert isinstance(rows, ox.QuerySolutions)  # a SELECT
    return [row["p"].value for row in rows]


def schema_entry(writer: QuadWriter, quads_file: str) -> GraphEntry:
    """The manifest entry of a schema graph that ``writer`` wrote to ``quads_file`` (relative to the build)."""
    return GraphEntry.from_dict(
        {"kind": "schema", "quads": writer.count, "sha256": writer.sha256, "quads_file": quads_file}
    )


def load_graphs(
    paths: DomainPaths,
    staging: Path,
    graphs: dict[str, GraphEntry],
    schema: Schema,
    progress: Progress | None = None,
    stages: dict[str, Any] | None = None,
) -> BuildSummary:
    """Load ``graphs`` (graph IRI → manifest entry with ``quads_file``, relative to the staging build folder,
    ``quads`` and ``sha256``) into the staging build's fresh store, check the counts, write the manifest
    and publish the build. The caller holds the write lock."""
    graphs = _with_checksums(staging, graphs)
    files = {graph: staging / entry.quads_file for graph, entry in graphs.items()}
    task = progress.add_task(f"load {sum(e.quads for e in graphs.values()):,} quads", total=None) if progress else None
    started = time.perf_counter()
    counts = bulk_load(staging, files)
    if progress is not None and task is not None:
        progress.update(task, total=1, completed=1)
    require_counts_match(_expected_counts(graphs), counts, staging)
    total = sum(counts.values())
    load_seconds = time.perf_counter() - started
    timings = {
        "load_seconds": round(load_seconds, 3),
        "load_quads_per_second": round(total / load_seconds) if load_seconds else None,
    }
    manifest = Manifest(
        domain=paths.domain,
        build_id=staging.name,
        created=_now(),
        schema=SchemaEntry(
            name=schema.name,
            version=schema.version,
            path=str(schema.path),
            sha256=sha256_file(schema.path),
            inferred=schema.inferred,
        ),
        graphs=graphs,
        total_quads=total,
        timings=timings,
        versions=package_versions(),
        stages=stages or {},
    )
    keep_schema(schema, staging)
    swap_in(paths, staging, manifest)
    return BuildSummary(paths.domain, staging.name, str(staging / "oxigraph"), counts, timings=timings)


def add_graphs(
    current: Snapshot,
    staging: Path,
    new_graphs: dict[str, GraphEntry],
    stages: dict[str, Any],
    replace_kinds: tuple[str, ...] = (),
) -> BuildSummary:
    """Publish the graphs of ``current`` (the published build, opened under the write lock) plus
    ``new_graphs`` (e.g. the links graph), whose quads files the caller wrote into ``staging`` (from
    :func:`kgforge.store.layout.staged_build`) while holding the write lock.

    Graphs of a kind in ``replace_kinds``, and earlier versions of the new graphs, are dropped first,
    so re-running a stage replaces its output. Only the new graphs are loaded (see :func:`extend_build`).
    """
    drop = current.manifest.graphs_of_kind(*replace_kinds)
    return extend_build(current.paths, staging, current, current.store_dir, drop, new_graphs, stages)


def extend_build(
    paths: DomainPaths,
    staging: Path,
    current: Snapshot,
    base: Path,
    drop: list[str],
    new_graphs: dict[str, GraphEntry],
    stages: dict[str, Any],
    keep_base_as: str | None = None,
    replace_stages: bool = False,
    schema: SchemaEntry | None = None,
    trusted: bool = False,
) -> BuildSummary:
    """Publish, as the staging build ``staging``, a copy of the store at ``base`` without the graphs in
    ``drop`` (nor the earlier versions of the new graphs), plus ``new_graphs``, whose quads files the
    caller wrote into ``staging``. The other graphs of the ``current`` build keep their quads files
    (hard-linked into the new build once their checksums are verified).

    The copy is a RocksDB checkpoint (hard links) and only the new graphs are bulk-loaded, so adding
    links or derived triples to a DuConv-sized store takes seconds, not a full re-load. The new
    graphs' counts are checked before the swap, as ``kgforge build`` does; ``stages`` are recorded
    in the manifest beside the earlier ones (instead of them with ``replace_stages``); ``schema`` replaces
    the published build's schema record; ``trusted`` new graphs are bulk-loaded without re-validating their
    terms (see :func:`extend_store`). The caller holds the write lock.
    """
    published, manifest = current.build, current.manifest
    new_graphs = _with_checksums(staging, new_graphs)
    drop = [*drop, *(g for g in new_graphs if g in manifest.graphs and g not in drop)]
    graphs = {g: e for g, e in manifest.graphs.items() if g not in drop and g not in new_graphs}
    carry_quads(published, staging, graphs)
    started = time.perf_counter()
    added = extend_store(
        base, staging, drop, {g: staging / e.quads_file for g, e in new_graphs.items()}, keep_base_as, paths, trusted
    )
    require_counts_match(_expected_counts(new_graphs), {g: n for g, n in added.items() if n}, staging)
    graphs.update(new_graphs)
    timings: dict[str, float | None] = {"load_seconds": round(time.perf_counter() - started, 3)}
    swap_in(
        paths,
        staging,
        replace(
            manifest,
            build_id=staging.name,
            created=_now(),
            schema=schema or _carry_schema(manifest.schema, published, staging),
            graphs=graphs,
            total_quads=sum(e.quads for e in graphs.values()),
            timings=timings,
            versions=package_versions(),
            stages=stages if replace_stages else {**manifest.stages, **stages},
        ),
    )
    return BuildSummary(
        paths.domain, staging.name, str(staging / "oxigraph"), {g: e.quads for g, e in graphs.items()}, timings=timings
    )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


def _expected_counts(graphs: dict[str, GraphEntry]) -> dict[str, int]:
    return {graph: entry.quads for graph, entry in graphs.items() if entry.quads}


def _carry_schema(entry: SchemaEntry, published: Path, staging: Path) -> SchemaEntry:
    """The published build's schema goes into the new build with it: its kept copy, and the schema file itself
    when that lives inside the build (one inferred at build time), since the older build is removed in time."""
    if (published / SCHEMA_COPY).is_file():
        shutil.copyfile(published / SCHEMA_COPY, staging / SCHEMA_COPY)
    path = Path(entry.path)
    if path.parent != published:
        return entry
    shutil.copyfile(path, staging / path.name)
    return replace(entry, path=str(staging / path.name))


def _with_checksums(staging: Path, graphs: dict[str, GraphEntry]) -> dict[str, GraphEntry]:
    """``graphs`` with the sha256 of each graph's quads file, where its entry does not carry it yet."""
    return {
        graph: entry if entry.sha256 is not None else entry.with_sha256(sha256_file(staging / entry.quads_file))
        for graph, entry in graphs.items()
    }


@dataclass(frozen=True)
class CheckReport(Record):
    """The published store compared with its manifest, and what killed or failed writers left behind."""

    domain: str
    build_id: str
    ok: bool
    problems: tuple[str, ...]
    graphs: dict[str, int]  # graph IRI -> quads in the store
    total_quads: int
    leftovers: tuple[str, ...]  # paths no reader reads; `clean_command` removes them
    writer_pid: int | None  # a build running now
    clean_command: str | None
    removed: tuple[str, ...] | None = omitted_when_none()  # what ``check(clean=True)`` removed first


def check_store(snapshot: Snapshot) -> CheckReport:
    """Compare the snapshot's store with its manifest (per-graph counts, every quads file's sha256), and
    list what killed or failed writers left behind, with the command that removes it."""
    paths, published, manifest = snapshot.paths, snapshot.build, snapshot.manifest
    domain, workdir = paths.domain, paths.workdir
    store = snapshot.store()
    actual = graph_counts(store)
    problems = check_counts(_expected_counts(dict(manifest.graphs)), actual)
    if undeclared := undeclared_relations(store):
        shown = ", ".join(f"<{iri}>" for iri in undeclared[:3]) + (", …" if len(undeclared) > 3 else "")
        problems.append(
            f"graph {SCHEMA_GRAPH}: {len(undeclared):,} relation(s) that facts use have no kind or "
            f"label there ({shown}); {_restore_hint(paths, workdir, 'the schema graph')}"
        )
    for graph, entry in manifest.graphs.items():
        quads_file = published / entry.quads_file
        if not quads_file.is_file():
            problems.append(
                f"graph {graph}: {quads_file} is missing (stages read the store instead; "
                f"{_restore_hint(paths, workdir)})"
            )
        elif sha256_file(quads_file) != entry.sha256:
            problems.append(f"graph {graph}: {quads_file} changed since the build (sha256 differs)")
    found = leftovers(paths)
    writer = writer_pid(paths)  # the lock file's text: the record holds the pid as the int it declares
    return CheckReport(
        domain=domain,
        build_id=manifest.build_id,
        ok=not problems,
        problems=tuple(problems),
        graphs=actual,
        total_quads=sum(actual.values()),
        leftovers=tuple(str(p) for p in found),
        writer_pid=int(writer) if writer is not None else None,
        clean_command=clean_command(domain, workdir) if found else None,
    )


def _restore_hint(paths: DomainPaths, workdir: Path | str | None, what: str = "it") -> str:
    if what == "it" and paths.quads.is_dir() and not paths.quads.is_symlink():  # the layout of earlier versions
        return f"`{clean_command(paths.domain, workdir)}` moves it from {paths.quads} into the build"
    return f"`kgforge build {paths.domain}` writes {what} again"


def clean_command(domain: str, workdir: Path | str | None = None) -> str:
    where = f" --workdir {workdir}" if workdir and Path(workdir) != DEFAULT_WORKDIR else ""
    return f"kgforge check {domain} --clean{where}"
