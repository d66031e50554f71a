"""The published build of a domain, resolved once: the one way every reader opens a domain's graph.

    snap = Snapshot.open("travel", workdir="kg")
    snap.build, snap.manifest, snap.schema, snap.language
    snap.tables().facts                   # polars, read on first use and kept on the snapshot
    snap.domain_facts().facts             # only the facts under a relation, and the relations (what derive joins)
    snap.labels                           # the labels frame of the same build

``store`` is a symlink that a writer may swap at any moment (:mod:`kgforge.store.layout`). A reader that
resolved it twice — once for the manifest, once for the tables — could pair one build's manifest with the
next build's tables. A :class:`Snapshot` resolves it once, in :meth:`Snapshot.open`, and everything it hands
out (manifest, schema, language, tables, store) comes from that one build folder, however long the reader
holds it and however many builds are published meanwhile. Every stage, the explorer and the public API get
their snapshot here; no other module resolves the published build or reads its manifest (an architecture
test walks the package to keep it so).

A snapshot is *opened* in few places only: ``kgforge.api.Domain`` (``kg.snapshot()``), the endpoint and explorer
(``kgforge.serve``) and the build transaction with the writers that extend a build under the write lock
(``kgforge.publish``, derive). Every other stage takes the snapshot it is handed as an argument, so one call
reads one build however many stages it passes through (``tests/test_architecture.py`` walks the package).
Writers use :meth:`Snapshot.published` for "the build I am about to replace, if any"; a reader that needs an
earlier build of the same domain asks its snapshot (:meth:`Snapshot.kept`).

:meth:`Snapshot.same_as_pairs` is the one rule by which an entity borrows a name from another: the
``owl:sameAs`` pairs of the build's link graphs, which labels, the exports' fact ranker, grounding's names and
related-entity search all read.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import polars as pl
import pyoxigraph as ox

from kgforge.core.schema import Schema
from kgforge.core.vocab import OWL_SAME_AS
from kgforge.store.languages import LINK_KINDS
from kgforge.store.layout import DomainPaths, build_schema, domain_paths, kept_build, published_build, read_manifest
from kgforge.store.manifest import Manifest
from kgforge.store.oxigraph import read_only_store
from kgforge.store.tables import DomainFacts, GraphTables, read_domain_facts, read_tables
from kgforge.store.workdir import has_store


@dataclass(frozen=True, eq=False)
class Snapshot:
    """One build of one domain: its folder, manifest and (lazily, cached here) schema and tables.

    Frozen: the build it names never changes under it (builds are immutable once published), so what it
    caches stays true for as long as it is held."""

    paths: DomainPaths
    build: Path  # the resolved build folder, ``<domain>/builds/<id>``
    manifest: Manifest
    _tables: dict[bool, GraphTables] = field(default_factory=dict, init=False, repr=False)
    _same_as: dict[tuple[str, ...], tuple[tuple[str, str], ...]] = field(default_factory=dict, init=False, repr=False)

    @classmethod
    def open(
        cls,
        domain: str | DomainPaths,
        workdir: Path | str | None = None,
        *,
        reuse: Mapping[Path, Snapshot] | None = None,
    ) -> Snapshot:
        """The domain's published build, resolved now; StoreMissingError (naming the workdir and the
        closest built domain) when nothing is published. A snapshot in ``reuse`` (by build folder) of the
        build found is handed back as it is, so a long-running reader (the explorer) that asks on every
        request reads a build's manifest and tables once."""
        paths = domain if isinstance(domain, DomainPaths) else domain_paths(domain, workdir)
        build = published_build(paths)
        if reuse and build in reuse:
            return reuse[build]
        return cls(paths, build, read_manifest(paths, build))

    @classmethod
    def published(cls, paths: DomainPaths) -> Snapshot | None:
        """The published build, or None where the domain has none yet (a first build)."""
        return cls.open(paths) if has_store(paths.root) else None

    @classmethod
    def of_build(cls, paths: DomainPaths, build: Path) -> Snapshot:
        """A named, finished build of the domain (the one before the published one, for a diff)."""
        return cls(paths, build, read_manifest(paths, build))

    def kept(self, build_id: str) -> Snapshot:
        """Finished build ``build_id`` of the same domain: this one, or the build kept before the published one
        (KgforgeError, naming the builds the domain keeps, when it has no such build)."""
        return self if build_id == self.build_id else Snapshot.of_build(self.paths, kept_build(self.paths, build_id))

    def same_as_pairs(self, kinds: tuple[str, ...] = LINK_KINDS) -> tuple[tuple[str, str], ...]:
        """The ``owl:sameAs`` pairs of the build's graphs of kind ``links`` and ``aligned`` (what ``kgforge link``
        and ``kgforge align --write`` wrote), read from their quads files (small: one line per linked entity)
        once per snapshot: the one rule by which an entity borrows another's name, whoever names it."""
        if kinds not in self._same_as:
            pairs = []
            for entry in self.manifest.graphs.values():
                if entry.kind not in kinds or not (self.build / entry.quads_file).is_file():
                    continue
                for quad in ox.parse(path=str(self.build / entry.quads_file), format=ox.RdfFormat.N_QUADS):
                    if quad.predicate.value == OWL_SAME_AS and isinstance(quad.object, ox.NamedNode):
                        pairs.append((quad.subject.value, quad.object.value))
            self._same_as[kinds] = tuple(pairs)
        return self._same_as[kinds]

    @property
    def domain(self) -> str:
        return self.paths.domain

    @property
    def workdir(self) -> Path:
        return self.paths.workdir

    @property
    def build_id(self) -> str:
        return self.build.name

    @cached_property
    def schema(self) -> Schema:
        """The schema the build was made with: the copy the build keeps, whatever happened to the file since."""
        return build_schema(self.build, self.manifest.schema.path)

    @property
    def language(self) -> str:
        """The language of the domain's labels (its schema's ``language``)."""
        return self.schema.language

    def tables(self, include_derived: bool = False) -> GraphTables:
        """The build's graph as polars tables, read on first use and kept: facts outside the derived graphs
        unless ``include_derived``."""
        if include_derived not in self._tables:
            self._tables[include_derived] = read_tables(self.paths, self.manifest, self.build, include_derived)
        return self._tables[include_derived]

    def domain_facts(self) -> DomainFacts:
        """The facts dialogue stages work with and the relations, without the rest of the tables: from the tables
        when they were read already, else read on their own (:func:`kgforge.store.tables.read_domain_facts`:
        about a fifth less CPU than the whole tables at DuConv scale, and no labels or types held); not kept."""
        if (tables := self._tables.get(False)) is not None:
            return DomainFacts(tables.domain_facts(), tables.relations)
        return read_domain_facts(self.paths, self.manifest, self.build)

    @property
    def labels(self) -> pl.DataFrame:
        """``iri, label, lang, preferred`` of every labelled IRI (derived labels included)."""
        return (self._tables.get(True) or self.tables()).labels

    @property
    def store_dir(self) -> Path:
        """The build's Oxigraph (RocksDB) directory."""
        return self.build / "oxigraph"

    def store(self) -> ox.Store:
        """The build's Oxigraph store, opened read-only (StoreDamagedError, one line, when it cannot be)."""
        return read_only_store(self.store_dir, self.paths)
