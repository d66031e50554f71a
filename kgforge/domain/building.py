"""Making and extending builds: ``build``, ``check``, ``diff``, ``init_schema``, ``derive``, ``link`` and
``import_dump``. The writers open the build they extend under the write lock themselves (kgforge.publish)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.core.errors import KgforgeError
from kgforge.core.records import Record
from kgforge.core.schema import DOMAIN_SCHEMA_FILE, SourceSpec, load_schema
from kgforge.domain.base import DomainBase
from kgforge.publish.transaction import BuildReport, CheckReport, build, check_store, parse_source
from kgforge.sources.importer import sample_source
from kgforge.sources.schema_infer import infer_schema
from kgforge.store.diff import GraphDiff, diff_builds
from kgforge.store.layout import remove_leftovers

if TYPE_CHECKING:
    from kgforge.derive import DeriveReport
    from kgforge.publish.domain_import import ImportReport
    from kgforge.publish.link import LinkSummary


@dataclass(frozen=True)
class DiffReport(Record):
    """Facts added, removed and changed per graph between two builds (:mod:`kgforge.store.diff`)."""

    domain: str
    from_build: str
    to_build: str
    added: int
    removed: int
    changed: int
    graphs: tuple[GraphDiff, ...] = ()
    out: Path | None = None  # the RDF Patch of the differing quads, when asked for

    @property
    def changed_graphs(self) -> tuple[GraphDiff, ...]:
        return tuple(g for g in self.graphs if g.differs)


@dataclass(frozen=True)
class SchemaReport(Record):
    """The schema ``kgforge init`` inferred from sample data and wrote to ``schema``."""

    domain: str
    language: str
    records: int
    files: int
    relations: dict[str, dict[str, Any]]  # relation id -> kind, labels, datatype
    types: dict[str, str]
    type_relation: str | None
    settings: dict[str, dict[str, Any]]  # the [options.KIND] settings inferred per source kind
    schema: str
    samples: tuple[SourceSpec, ...] = field(default=(), repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()
        del data["samples"]
        return data


class BuildMethods(DomainBase):
    def build(
        self,
        sources: Iterable[str | SourceSpec] = (),
        *,
        schema: str | None = None,
        schema_sources: bool = True,
        progress: bool = False,
        full: bool = False,
    ) -> BuildReport:
        """Import the sources (``"kind:path"`` strings or SourceSpecs; plus the schema's own unless
        ``schema_sources=False``) into a fresh build and publish it atomically. ``schema`` defaults to the
        domain's own (``kgforge init``), else a shipped one, else one inferred from the sources. Sources
        that did not change since the published build keep their graphs (``full=True`` imports them all)."""
        specs = [s if isinstance(s, SourceSpec) else parse_source(s) for s in sources]
        return build(
            self.name,
            specs,
            self.workdir,
            schema=load_schema(schema) if schema else None,
            show_progress=progress,
            use_schema_sources=schema_sources,
            full=full,
        ).report()

    def check(self, *, clean: bool = False) -> CheckReport:
        """Compare the published store with its manifest (per-graph counts, each quads file's sha256) and list
        what killed or failed writers left behind; ``clean=True`` removes that first (under the write lock)."""
        removed = tuple(str(p) for p in remove_leftovers(self.paths)) if clean else None
        return replace(check_store(self.snapshot()), removed=removed)

    def diff(
        self, *, from_build: str | None = None, to_build: str | None = None, out: Path | str | None = None
    ) -> DiffReport:
        """What changed from build ``from_build`` (default: the one before the published build) to ``to_build``
        (default: the published build); with ``out``, the differing quads as an RDF Patch."""
        result = diff_builds(self.snapshot(), from_build, to_build, Path(out) if out else None)
        return DiffReport(
            self.name,
            result.from_build,
            result.to_build,
            result.added,
            result.removed,
            result.changed,
            tuple(result.graphs),
            Path(result.out) if result.out else None,
        )

    def init_schema(
        self,
        samples: Iterable[str | SourceSpec],
        *,
        out: Path | str | None = None,
        language: str | None = None,
        force: bool = False,
    ) -> SchemaReport:
        """Infer a schema for this (new) domain from sample data (``"KIND:FILE"``, or a FILE whose extension a
        source kind registers) and write it to ``out`` (default: the domain's own ``schema.toml``, which
        :meth:`build` reads); an existing file is kept unless ``force``."""
        own = self.paths.root / DOMAIN_SCHEMA_FILE  # the one file of a domain's folder `init` may write
        target = self.paths.output(out or own, own)
        if target.path.exists() and not force:
            raise KgforgeError(f"{target} exists already: edit it, or give --force to infer it again")
        specs = tuple(s if isinstance(s, SourceSpec) else sample_source(s) for s in samples)
        if not specs:
            raise KgforgeError("give sample data with --from FILE (a CSV, TSV, JSON Lines or RDF file)")
        inferred = infer_schema(self.name, list(specs), language)
        schema = inferred.write(target)
        return SchemaReport(**inferred.summary, schema=str(schema.path), samples=specs)

    def derive(
        self, *, max_group: int | None = None, max_pairs: int | None = None, seed: int | None = None
    ) -> DeriveReport:
        """Associated two-hop triples (entities sharing a predicate and object) into their own named graph."""
        from kgforge.derive import derive  # lazy: start-up

        return derive(self.name, self.workdir, max_group=max_group, seed=seed, max_pairs=max_pairs)

    def link(self) -> LinkSummary:
        """Link the dataset's and crawled entities to their Wikidata / XLORE counterparts (``owl:sameAs``, in a
        derived graph) by zh/en label and alias with type checks; ambiguous names are listed, never guessed."""
        from kgforge.publish.link import link_domain  # lazy: start-up

        return link_domain(self.name, self.workdir)

    def import_dump(
        self,
        dump: Path | str,
        *,
        kind: str = "wikidata",
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
        progress: bool = False,
    ) -> ImportReport:
        """Add a knowledge-base dump to the published store: ``kind`` ``wikidata`` (JSON, truthy N-Triples or
        full Turtle, told apart by the file's first line) or ``xlore``; optionally only the ``hops``
        neighbourhood of seeds (ids, exact labels, ``seed_labels``: the domain's own start entities, or the
        instances of ``seed_classes``). A killed import resumes from its last checkpoint unless ``resume=False``."""
        # lazy: start-up
        from kgforge.publish.domain_import import dump_selection, import_into_domain, wikidata_dump_kind

        options = dump_selection(
            self.snapshot() if seed_labels else None,
            seeds=seeds,
            seed_names=seed_names,
            seed_labels=seed_labels,
            seed_classes=seed_classes,
            hops=hops,
            fanout_cap=fanout_cap,
            workers=workers,
            engine=engine,
            address=address,
            resume=resume,
            keep_deprecated=keep_deprecated,
        )
        kind = wikidata_dump_kind(Path(dump)) if kind == "wikidata" else kind
        return import_into_domain(self.name, kind, Path(dump), options, self.workdir, show_progress=progress)
