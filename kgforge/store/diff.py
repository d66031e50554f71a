"""What changed between two builds of a domain: facts added, removed and changed, per named graph.

A build keeps its quads, one N-Quads file per graph, with their sha256 in its manifest; a domain keeps the
published build and the one before it. Graphs whose checksums agree are equal and are not read; for the
others the two quads files are compared line by line (both were written by the same writer, one quad a
line, so equal quads are equal lines). A *changed* fact is a subject and predicate of a graph that lost
values and gained others (a 门票 value edited); what only one side has is *added* or *removed*.

With ``out``, the differing quads are written as an RDF Patch (``D`` a removed quad, ``A`` an added one;
https://afs.github.io/rdf-patch/), graph by graph, each sorted, so applying it to the older build's quads
gives the newer's.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import nullcontext
from dataclasses import dataclass
from pathlib import Path

from kgforge.core.errors import KgforgeError
from kgforge.store.layout import DomainPaths, finished_builds, quads_verified
from kgforge.store.manifest import GraphEntry, Manifest
from kgforge.store.snapshot import Snapshot


@dataclass(frozen=True)
class GraphDiff:
    """One graph's differences: quads only the newer build has (``added``), only the older (``removed``),
    and the subject–predicate pairs whose values were replaced (``changed``; their quads are in neither)."""

    graph: str
    added: int
    removed: int
    changed: int
    status: str  # added (a new graph), removed (a graph gone), changed, unchanged

    @property
    def differs(self) -> bool:
        return self.status != "unchanged"


@dataclass(frozen=True)
class BuildDiff:
    domain: str
    from_build: str
    to_build: str
    graphs: tuple[GraphDiff, ...]
    out: str | None = None

    @property
    def added(self) -> int:
        return sum(g.added for g in self.graphs)

    @property
    def removed(self) -> int:
        return sum(g.removed for g in self.graphs)

    @property
    def changed(self) -> int:
        return sum(g.changed for g in self.graphs)


@dataclass(frozen=True)
class _Lines:
    """The quads only one side has, and the subject–predicate pairs where both sides have some."""

    removed: list[bytes]
    added: list[bytes]
    changed: set[tuple[bytes, bytes]]


def diff_builds(
    snapshot: Snapshot, from_build: str | None = None, to_build: str | None = None, out: Path | None = None
) -> BuildDiff:
    """Compare build ``from_build`` (default: the one before ``to_build``) with ``to_build`` (default: the
    snapshot's build) of the snapshot's domain; with ``out``, write the differing quads there."""
    paths = snapshot.paths
    target = paths.output(out) if out else None  # refused before the builds are read
    newer = snapshot.kept(to_build).build if to_build else snapshot.build
    older = snapshot.kept(from_build).build if from_build else _previous_build(paths, newer)
    before, after = Manifest.read(older / "manifest.json"), Manifest.read(newer / "manifest.json")
    graphs = []
    with target.open("wb") if target else nullcontext() as handle:
        for graph in sorted(set(before.graphs) | set(after.graphs)):
            old, new = before.graphs.get(graph), after.graphs.get(graph)
            if old is not None and new is not None and old.sha256 == new.sha256:
                graphs.append(GraphDiff(graph, 0, 0, 0, "unchanged"))
                continue
            lines = _compare(_lines(older, old), _lines(newer, new))
            status = "added" if old is None else "removed" if new is None else "changed"
            graphs.append(
                GraphDiff(
                    graph,
                    len(lines.added) - _touched(lines.added, lines.changed),
                    len(lines.removed) - _touched(lines.removed, lines.changed),
                    len(lines.changed),
                    status,
                )
            )
            if handle:
                handle.writelines(b"D " + line for line in lines.removed)
                handle.writelines(b"A " + line for line in lines.added)
    return BuildDiff(paths.domain, older.name, newer.name, tuple(graphs), str(target) if target else None)


def _lines(build: Path, entry: GraphEntry | None) -> set[bytes]:
    if entry is None:
        return set()
    if not quads_verified(build, entry):
        raise KgforgeError(
            f"{build / entry.quads_file}: missing or differs from its checksum in "
            f"{build / 'manifest.json'}, so the builds cannot be compared by it"
        )
    with open(build / entry.quads_file, "rb") as handle:
        return {line if line.endswith(b"\n") else line + b"\n" for line in handle if line.strip()}


def _compare(old: set[bytes], new: set[bytes]) -> _Lines:
    removed, added = sorted(old - new), sorted(new - old)
    changed = {_key(line) for line in removed} & {_key(line) for line in added}
    return _Lines(removed, added, changed)


def _key(line: bytes) -> tuple[bytes, bytes]:
    subject, predicate, _ = line.split(b" ", 2)
    return subject, predicate


def _touched(lines: list[bytes], changed: set[tuple[bytes, bytes]]) -> int:
    """How many of ``lines`` belong to a changed subject–predicate pair (counted as changed, not added or removed)."""
    return sum(_key(line) in changed for line in lines)


def _previous_build(paths: DomainPaths, newer: Path) -> Path:
    builds = finished_builds(paths)
    earlier = builds[: builds.index(newer.name)] if newer.name in builds else []
    if not earlier:
        raise KgforgeError(
            f"domain {paths.domain!r} keeps no build before {newer.name} to compare with; "
            "rebuild it (`kgforge build`) and compare the two, or name them with --from and --to"
        )
    return paths.builds / earlier[-1]


def patch_lines(patch: Path) -> Iterator[tuple[str, str]]:
    """``(op, quad)`` per line of an RDF Patch that :func:`diff_builds` wrote (``op`` is ``A`` or ``D``)."""
    with open(patch, encoding="utf-8") as handle:
        for line in handle:
            op, _, quad = line.rstrip("\n").partition(" ")
            yield op, quad
