"""The store itself: opening a build's Oxigraph store, bulk-loading and extending it, counting its graphs.

Everything here acts on one build folder's ``oxigraph/`` RocksDB directory; where builds live, how they are
staged and published, is :mod:`kgforge.store.layout`'s.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from pathlib import Path
from typing import cast

import pyoxigraph as ox

from kgforge.core.errors import BuildError, StoreDamagedError, is_disk_full
from kgforge.store.layout import DomainPaths, discard_build
from kgforge.store.manifest import Manifest


def read_only_store(folder: Path | str, paths: DomainPaths | None = None) -> ox.Store:
    """The store in ``folder``, opened read-only; StoreDamagedError (one line: what RocksDB found and the
    command that rebuilds the store) when its files are damaged or missing."""
    try:
        return ox.Store.read_only(str(folder))
    except (OSError, RuntimeError) as exc:
        if is_disk_full(exc):
            raise
        raise StoreDamagedError(damaged_store_message(folder, str(exc), paths)) from None


def damaged_store_message(folder: Path | str, problem: str, paths: DomainPaths | None = None) -> str:
    name = f" of domain {paths.domain!r}" if paths else ""
    first = problem.strip().split("  ")[0][:200]  # RocksDB appends more sentences after two spaces
    return (
        f"the store{name} is damaged and cannot be opened ({first}; in {folder}): "
        f"{rebuild_hint(paths, Path(folder).parent)}"
    )


def rebuild_hint(paths: DomainPaths | None, build: Path) -> str:
    """The command that builds the store again from its sources, as the manifest of the damaged store's own
    build lists them."""
    if paths is None:
        return "rebuild it with the `kgforge build` command that made it"
    try:
        graphs = Manifest.read(build / "manifest.json").graphs.values()
        sources = [
            f"--source {entry.kind}:{entry.details['path']}"
            for entry in graphs
            if entry.kind and entry.kind != "schema" and "input" in entry.details and "path" in entry.details
        ]
    except Exception:  # noqa: BLE001 - a damaged build may have lost its manifest too: the generic words then
        sources = []
    command = " ".join(["kgforge build", paths.domain, *sources])
    return f"rebuild it with `{command}`" + (
        " (its sources, from the manifest; add the stages you ran after it)"
        if sources
        else " and the sources it was built from"
    )


def bulk_load(build: Path, graph_files: dict[str, Path]) -> dict[str, int]:
    """Bulk-load one N-Quads file per named graph into ``build/oxigraph``; return distinct quads per graph.

    Each file holds the quads of its one graph (as ``QuadWriter`` writes them), so a graph's count is
    the growth of the store while its file loads. Files load smallest first, which makes the counting
    cost about one pass over the finished store, far less than a GROUP BY over all graphs.
    """
    store = ox.Store(str(build / "oxigraph"))
    counts: dict[str, int] = {}
    loaded = 0
    for graph, quad_file in sorted(graph_files.items(), key=lambda item: item[1].stat().st_size):
        if quad_file.stat().st_size:  # bulk_load rejects empty input on some versions
            store.bulk_load(path=str(quad_file), format=ox.RdfFormat.N_QUADS)
            total = len(store)
            counts[graph], loaded = total - loaded, total
    store.flush()
    del store
    return {graph: n for graph, n in counts.items() if n}


def extend_store(
    base: Path,
    build: Path,
    drop: list[str],
    files: dict[str, Path],
    keep_base_as: str | None = None,
    paths: DomainPaths | None = None,
    trusted: bool = False,
) -> dict[str, int]:
    """Make ``build/oxigraph`` a copy of the store at ``base`` (a RocksDB checkpoint: hard links, seconds
    at any size) without the graphs in ``drop``, plus the graphs in ``files`` (graph IRI → its N-Quads
    file); return those graphs' quad counts. With ``keep_base_as``, a checkpoint of the copy before the
    new graphs stays beside it, so a later re-run can extend it again instead of deleting a graph quad
    by quad. ``trusted`` files hold only terms that came out of a store and were written by kgforge's one
    escaping function (derive's pairs): the bulk loader reads them straight from disk without validating
    each IRI again."""
    source = read_only_store(base, paths)
    source.backup(str(build / "oxigraph"))
    store = ox.Store(str(build / "oxigraph"))
    for name in drop:
        store.remove_graph(ox.NamedNode(name))
    store.flush()
    if keep_base_as:
        (store if drop else source).backup(str(build / keep_base_as))
    del source
    for quad_file in files.values():
        if not quad_file.stat().st_size:
            continue
        if trusted:  # the bulk-load rate: no Python quad objects, no IRI checks (docs/benchmarks.md)
            _bulk_load_in_parts(store, quad_file)
        else:
            store.bulk_extend(ox.parse(path=str(quad_file), format=ox.RdfFormat.N_QUADS))
    store.flush()
    counts = {graph: _graph_size(store, graph) for graph in files}
    del store
    return counts


PART_BYTES = 8 << 20  # parts of at least this size (~50k quads): smaller ones gain nothing from a thread of their own


def _bulk_load_in_parts(store: ox.Store, quad_file: Path) -> None:
    """Bulk-load a trusted N-Quads file as one part per core, each on a thread of its own.

    The store's bulk loader gives each batch of a million quads a thread, so a derived graph of a few hundred
    thousand quads would be encoded, sorted and written by one thread while the build's multi-million-quad load
    uses them all; parts cut at line ends load side by side (the loader releases the GIL), each ingesting its
    own sorted files. Any part's failure is raised; the caller discards the staging copy it loaded into."""
    data = quad_file.read_bytes()
    count = max(1, min(os.cpu_count() or 1, len(data) // PART_BYTES))
    cuts = [0]
    for i in range(1, count):
        end = data.find(b"\n", max(cuts[-1], len(data) * i // count)) + 1
        if end > 0:
            cuts.append(end)
    cuts.append(len(data))
    parts = [data[a:b] for a, b in pairwise(cuts) if b > a]
    del data
    with ThreadPoolExecutor(len(parts)) as pool:
        for _ in pool.map(lambda part: store.bulk_load(input=part, format=ox.RdfFormat.N_QUADS, lenient=True), parts):
            pass


def _graph_size(store: ox.Store, graph: str) -> int:
    rows = cast(  # a SELECT: solutions
        ox.QuerySolutions,
        store.query(
            "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
            substitutions={ox.Variable("g"): ox.NamedNode(graph)},
        ),
    )
    return sum(int(row["n"].value) for row in rows)


def graph_counts(store: ox.Store) -> dict[str, int]:
    rows = cast(
        ox.QuerySolutions, store.query("SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g")
    )
    return {row["g"].value: int(row["n"].value) for row in rows}


def check_counts(expected: dict[str, int], actual: dict[str, int]) -> list[str]:
    """Differences between the counts a build wrote and those the store holds."""
    problems = []
    for graph in sorted(set(expected) | set(actual)):
        want, got = expected.get(graph, 0), actual.get(graph, 0)
        if want != got:
            problems.append(f"graph {graph}: expected {want} quads, store holds {got}")
    return problems


def require_counts_match(expected: dict[str, int], actual: dict[str, int], build: Path) -> None:
    problems = check_counts(expected, actual)
    if problems:
        discard_build(build)
        raise BuildError(
            "the new store failed its count check and was discarded; the previous store is "
            "unchanged: " + "; ".join(problems)
        )
