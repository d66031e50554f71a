"""What every method of ``Domain`` stands on: the domain's name, workdir and paths, and its published build."""

from __future__ import annotations

from pathlib import Path

from kgforge.store.layout import DomainPaths, domain_paths
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables


class DomainBase:
    """One domain's knowledge graph under ``workdir`` (default: ``$KGFORGE_WORKDIR``, else ``./kg``), as the CLI
    sees it."""

    def __init__(self, name: str, workdir: Path | str | None = None) -> None:
        self.paths: DomainPaths = domain_paths(name, workdir)
        self.name = self.paths.domain
        self.workdir = self.paths.workdir

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r}, workdir={str(self.workdir)!r})"

    def snapshot(self) -> Snapshot:
        """The published build now, resolved once: its manifest, schema, language and (read on first use,
        then kept) its tables. Hold it to read one build across several calls while builds are published.
        Every reader method hands the stage it calls the snapshot opened here."""
        return Snapshot.open(self.paths)

    def _published(self) -> Snapshot | None:
        """The published build, as :meth:`snapshot`, or None where the domain has none yet."""
        return Snapshot.published(self.paths)

    def language(self) -> str:
        """The language of the domain's labels (its schema's ``language``)."""
        return self.snapshot().language

    def tables(self, *, include_derived: bool = False) -> GraphTables:
        """The graph as polars tables: ``facts``, ``labels``, ``types``, ``relations``."""
        return self.snapshot().tables(include_derived)


def open_snapshot(domain: str | None, workdir: Path | str | None = None) -> Snapshot | None:
    """The published build of ``domain`` for a top-level function of the API that takes a domain's name (None:
    no domain, no snapshot)."""
    return None if domain is None else DomainBase(domain, workdir).snapshot()
