"""Where a domain's store lives on disk, who may write it, and how a build is staged and published.

Layout of ``<workdir>/<domain>/``::

    store -> builds/<id>      symlink, replaced atomically when a build passes its checks
    manifest.json -> store/manifest.json
    quads -> store/quads      the published build's N-Quads, one file per named graph
    builds/<id>/              one build: everything it produced, published together by the swap
        oxigraph/             an immutable RocksDB directory once swapped in
        quads/<graph>.nq      the quads it loaded (hard links to an earlier build's where unchanged)
        manifest.json         per-graph counts and sha256, inputs, schema, versions
        schema.json           the schema the build was made with (its file and the one it extends, merged)
        verified.json         which quads files were verified against those checksums (a cache)
        grounding-index.marshal  the grounding index, kept by the build's first grounding (a cache)
        .incomplete           present until the swap: the build is staging, no stage reads it
    quarantine/  raw/  models/  exports/
    .write.lock               held by the one writer (build, derive, link, import)

A writer stages everything in a fresh build folder and publishes it with one atomic symlink swap;
readers resolve ``store`` once and read that build only, so a failed or killed writer is never read.
The manifest's records are :mod:`kgforge.store.manifest`'s; the Oxigraph store inside a build is
:mod:`kgforge.store.oxigraph`'s.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import time
import warnings
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kgforge.core.checks import folder_name
from kgforge.core.errors import BuildError, KgforgeError, SchemaError, StoreLockedError
from kgforge.core.files import fsync_dir, replace_link, write_json_atomic
from kgforge.core.output import (
    EXPORTS,
    INCOMPLETE,
    STORE_LINK,
    WRITE_LOCK,
    OutputDir,
    OutputFile,
    output_dir,
    output_file,
)
from kgforge.core.schema import Schema, load_schema, schema_from_document
from kgforge.store.checksums import is_verified, record_verified
from kgforge.store.manifest import GraphEntry, Manifest
from kgforge.store.workdir import missing_store, resolve_workdir

_INCOMPLETE = INCOMPLETE  # the names the output guard recognises a domain and a build by (core.output)
# A build keeps its schema: stages read a build with the schema it was made with, even after the schema file
# is edited, moved or replaced by a newer kgforge's copy (the manifest names the file only for people to read).
SCHEMA_COPY = "schema.json"


@dataclass(frozen=True)
class DomainPaths:
    workdir: Path
    domain: str

    @property
    def root(self) -> Path:
        return Path(self.workdir) / self.domain

    @property
    def store_link(self) -> Path:
        return self.root / STORE_LINK

    @property
    def builds(self) -> Path:
        return self.root / "builds"

    @property
    def manifest(self) -> Path:
        return self.store_link / "manifest.json"

    @property
    def quads(self) -> Path:
        """The published build's quads folder (``quads -> store/quads``)."""
        return self.root / "quads"

    @property
    def quarantine(self) -> Path:
        return self.root / "quarantine"

    @property
    def raw(self) -> Path:
        return self.root / "raw"

    @property
    def models(self) -> Path:
        return self.root / "models"

    @property
    def exports(self) -> Path:
        return self.root / EXPORTS

    @property
    def lock(self) -> Path:
        return self.root / WRITE_LOCK

    def output(self, path: Path | str | OutputFile, *also: Path, what: str = "--out") -> OutputFile:
        """``path`` as a user's file a command of this domain may write (:func:`kgforge.core.output.output_file`):
        never inside this domain's layout, another domain's of the workdir or a build, but for an ``exports/``
        folder (and ``also``)."""
        return output_file(path, what=what, managed=self.root, workdir=self.workdir, allowed=also)

    def output_dir(self, path: Path | str | OutputDir, *, what: str = "--out") -> OutputDir:
        """``path`` as a user's folder a command of this domain may write (see :meth:`output`)."""
        return output_dir(path, what=what, managed=self.root, workdir=self.workdir)


def check_domain_name(name: str) -> str:
    """``name`` if it can only ever be one folder under the workdir (``travel``, ``film-2``), else an
    ArgumentError: never a path (``../x``, ``a/b``), never empty, hidden or ``..``."""
    return folder_name(name, "domain")


def domain_paths(domain: str, workdir: Path | str | None = None) -> DomainPaths:
    return DomainPaths(resolve_workdir(workdir), check_domain_name(domain))


def published_build(paths: DomainPaths) -> Path:
    """The folder of the published build, resolved once: a reader that keeps it reads one consistent build
    (its store, manifest and quads) even if another is published meanwhile."""
    build = paths.store_link.resolve()
    if not (build / "oxigraph").is_dir() or (build / _INCOMPLETE).exists():
        raise missing_store(paths.workdir, paths.domain)
    return build


def kept_build(paths: DomainPaths, build_id: str) -> Path:
    """The folder of finished build ``build_id`` of the domain (the published one or the one kept before it)."""
    folder = paths.builds / build_id
    if (
        "/" in build_id
        or build_id.startswith(".")
        or not (folder / "manifest.json").is_file()
        or (folder / _INCOMPLETE).exists()
    ):
        kept = ", ".join(finished_builds(paths)) or "none"
        raise KgforgeError(
            f"domain {paths.domain!r} has no finished build {build_id!r} (it keeps the published "
            f"build and the one before it: {kept})"
        )
    return folder


def finished_builds(paths: DomainPaths) -> list[str]:
    """The finished builds, oldest first. A build id starts with its second, but two builds of the same
    second sort by their random tail: the order the manifests were written in decides."""
    finished = [b for b in paths.builds.iterdir() if (b / "manifest.json").is_file() and not (b / _INCOMPLETE).exists()]
    return [b.name for b in sorted(finished, key=lambda b: ((b / "manifest.json").stat().st_mtime_ns, b.name))]


@contextmanager
def write_lock(paths: DomainPaths) -> Iterator[None]:
    """Hold the domain's single-writer lock, or fail at once naming the lock and its holder."""
    paths.root.mkdir(parents=True, exist_ok=True)
    handle = open(paths.lock, "a+")
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.seek(0)
        holder = handle.read().strip() or "unknown"
        handle.close()
        raise StoreLockedError(
            f"the store of domain {paths.domain!r} is being written by another kgforge process "
            f"(pid {holder}; lock file {paths.lock}). Wait for it to finish; readers (query, stats, "
            "export) can run meanwhile."
        ) from None
    try:
        handle.seek(0)
        handle.truncate()
        handle.write(str(os.getpid()))
        handle.flush()
        yield
    finally:
        handle.seek(0)
        handle.truncate()
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def read_manifest(paths: DomainPaths, build: Path | None = None) -> Manifest:
    """The manifest of ``build`` (default: the published build)."""
    return Manifest.read((build or published_build(paths)) / "manifest.json")


# --- writing: stage, load, publish --------------------------------------------------------------


@contextmanager
def staged_build(paths: DomainPaths) -> Iterator[Path]:
    """A fresh build folder, marked incomplete until :func:`swap_in` publishes it, removed if the block
    fails. The caller holds the write lock, so any other incomplete build is a killed writer's: removed."""
    _adopt_legacy_quads(paths)
    for leftover in _dead_builds(paths):
        shutil.rmtree(leftover, ignore_errors=True)
    build_id = time.strftime("%Y%m%dT%H%M%S") + f"-{os.getpid()}-{os.urandom(3).hex()}"
    build = paths.builds / build_id
    (build / "quads").mkdir(parents=True)
    (build / _INCOMPLETE).touch()
    try:
        yield build
    except BaseException:
        discard_build(build)
        raise


def carry_quads(source: Path, target: Path, graphs: Mapping[str, GraphEntry]) -> None:
    """Hard-link the quads files of ``graphs`` (manifest entries) from build ``source`` into ``target``,
    each verified against its checksum first; a copy where the filesystem has no hard links."""
    for graph, entry in graphs.items():
        name = entry.quads_file
        if not quads_verified(source, entry):
            raise BuildError(
                f"graph {graph}: {source / name} is missing or differs from the published manifest (sha256), so "
                f"it cannot be carried into a new build; run `kgforge build {target.parent.parent.name}` to rebuild"
            )
        (target / name).parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(source / name, target / name)
        except OSError:
            shutil.copyfile(source / name, target / name)


def quads_verified(build: Path, entry: GraphEntry) -> bool:
    """Whether ``build``'s quads file of a manifest entry holds the bytes its checksum names."""
    return entry.sha256 is not None and is_verified(build, entry.quads_file, entry.sha256)


def swap_in(paths: DomainPaths, build: Path, manifest: Manifest) -> None:
    """Publish a staged build: write its manifest, then atomically point ``store`` at it; keep one previous
    build. Its quads' checksums are recorded as verified last, once pruning has touched their links."""
    manifest.write(build / "manifest.json")
    (build / _INCOMPLETE).unlink()
    fsync_dir(build)
    previous = paths.store_link.resolve() if paths.store_link.is_symlink() else None
    replace_link(paths.store_link, Path("builds") / build.name)
    fsync_dir(paths.root)
    for name, target in (("manifest.json", "store/manifest.json"), ("quads", "store/quads")):
        link = paths.root / name
        if not link.is_symlink():
            replace_link(link, Path(target))
    _prune_builds(paths, keep={build.resolve(), previous})
    record_verified(build, {e.quads_file: e.sha256 for e in manifest.graphs.values() if e.sha256})


def _prune_builds(paths: DomainPaths, keep: set[Path | None]) -> None:
    """Remove builds that are neither current nor previous (killed builds included)."""
    for build in paths.builds.iterdir():
        if build.resolve() not in keep:
            shutil.rmtree(build, ignore_errors=True)


def discard_build(build: Path) -> None:
    shutil.rmtree(build, ignore_errors=True)


def _adopt_legacy_quads(paths: DomainPaths) -> None:
    """A domain built before builds held their own quads has a real ``quads/`` folder beside ``store``:
    it moves into the published build (whose manifest names ``quads/<graph>.nq``; files that differ from
    its checksums are never trusted), and ``quads`` becomes the link to ``store/quads``."""
    legacy = paths.quads
    if not legacy.is_dir() or legacy.is_symlink():
        return
    current = paths.store_link.resolve() if paths.store_link.is_symlink() else None
    if current is not None and current.is_dir() and not (current / "quads").exists():
        os.replace(legacy, current / "quads")
    else:
        shutil.rmtree(legacy)
    replace_link(legacy, Path("store/quads"))


# --- what killed writers leave behind -----------------------------------------------------------


def _dead_builds(paths: DomainPaths) -> list[Path]:
    """Incomplete build folders; only dead while no writer holds the lock (the caller's concern)."""
    if not paths.builds.is_dir():
        return []
    return sorted(b for b in paths.builds.iterdir() if (b / _INCOMPLETE).exists())


def leftovers(paths: DomainPaths) -> list[Path]:
    """What killed or failed writers left: incomplete builds, and temporary files (``*.part*``, ``*.tmp``)
    in the domain's store folders. Empty while a writer runs (its staging build is not a leftover)."""
    return [] if writer_pid(paths) else _leftovers(paths)


def remove_leftovers(paths: DomainPaths) -> list[Path]:
    """Remove :func:`leftovers` under the write lock (refused at once while a writer runs); returns them.
    A ``quads/`` folder from before builds kept their own quads moves into the published build."""
    with write_lock(paths):
        _adopt_legacy_quads(paths)
        found = _leftovers(paths)
        for path in found:
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    return found


def _leftovers(paths: DomainPaths) -> list[Path]:
    dead = _dead_builds(paths)
    found = set(dead)
    places = [paths.builds] + ([paths.quads] if paths.quads.is_dir() and not paths.quads.is_symlink() else [])
    for place in (p for p in places if p.is_dir()):
        found.update(
            f
            for f in place.rglob("*")
            if (".part" in f.name or f.name.endswith(".tmp")) and not any(build in f.parents for build in dead)
        )
    found.update(f for f in paths.root.glob(".*.tmp"))  # a symlink being replaced
    found.update(f for f in paths.root.glob(".store.*") if f.is_symlink())  # the same, by earlier versions
    return sorted(found)


def writer_pid(paths: DomainPaths) -> str | None:
    """The pid of the live process holding the write lock, if any. Read from the lock file, where a
    writer leaves its pid while it holds the lock (a killed writer's pid remains, but it is not alive);
    the lock itself is never tried here, so this cannot make a starting writer fail."""
    try:
        pid = paths.lock.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not pid.isdigit():
        return None
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return pid


def keep_schema(schema: Schema, build: Path) -> None:
    """Keep ``schema`` inside ``build`` (a staging build), as the build's own."""
    write_json_atomic(build / SCHEMA_COPY, schema.document)


def build_schema(build: Path, recorded_path: str) -> Schema:
    """The schema ``build`` was made with: the copy it keeps, else (a build older than the copies) the file its
    manifest names. ``recorded_path`` names the schema in messages."""
    kept = build / SCHEMA_COPY
    if not kept.is_file():
        warnings.warn(
            f"{build}: made before builds kept their schema, so it is read with {recorded_path} as that file is "
            "now; rebuild the domain to keep the schema a build was made with",
            RuntimeWarning,
            stacklevel=3,
        )
        return load_schema(recorded_path)
    try:
        document = json.loads(kept.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise SchemaError(f"{kept}: the build's copy of its schema is damaged ({exc}); rebuild the domain") from None
    return schema_from_document(document, Path(recorded_path))
