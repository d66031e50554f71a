"""The one way a file or folder a user names is written: checked, then written atomically.

Every path a command writes for a user — ``--out``, ``--out-dir``, a default name made from an input
(``PREDICTIONS.rejected.jsonl``), a sidecar beside either (``OUT.manifest.json``, ``OUT.ids.txt``) — is turned
into an :class:`OutputFile` (or an :class:`OutputDir`) by :func:`output_file` / :func:`output_dir`, and
written only through it. Both check the path first (:func:`safe_output_path`):

* a file is a new path or an existing regular file: a device (``/dev/full``), FIFO or socket would be
  replaced by a regular file when the written file is renamed over it, a symbolic link would be replaced
  (not its target), a directory cannot be; a folder is a new path or an existing directory (not a file,
  not a link);
* nothing inside a folder kgforge lays out itself — any domain's folder (one holding its ``store`` link or
  its write lock; in the workdir a command names, also one holding only ``kgforge init``'s schema), any
  build folder (its ``oxigraph/`` store beside its manifest, or its staging mark), wherever they are —
  except a domain's ``exports/``. The path is resolved first, so a path
  through a link into that layout is refused as well.

The write itself is :mod:`kgforge.core.files`' (a temporary file beside the target, renamed over it), and
the check runs again just before it: what is refused is never touched, and what is written appears whole
or not at all. An ``OutputFile`` hands out no path to write by hand: its sidecars are ``OutputFile`` s
of their own, checked the same way (``tests/test_trust_f29_output_guard.py`` walks every command and
writer of kgforge and fails on a user's path that reaches a raw write without this module).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import stat
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any

from kgforge.core.errors import OutputRefused
from kgforge.core.files import AtomicFile, atomic_path, atomic_write, fsync_dir, pid_alive

# The names of a domain's own layout (kgforge.store.layout uses these): a folder holding one of them is a domain's.
STORE_LINK = "store"
WRITE_LOCK = ".write.lock"
EXPORTS = "exports"  # the one place inside a domain's folder where a user's files may go
DOMAIN_SCHEMA = "schema.toml"  # `kgforge init`'s: a domain with no build yet, recognised in the workdir
BUILD_STORE = "oxigraph"  # a build folder's store, beside its manifest (published, or copied elsewhere)
MANIFEST = "manifest.json"
INCOMPLETE = ".incomplete"  # a staging build's mark
_STAGE = re.compile(r"(?:part|old)(\d+)")  # what OutputDir.staged leaves beside a folder, by the pid that made it


def safe_output_path(
    path: Path | str,
    *,
    managed: Path | None = None,
    allowed: Iterable[Path] = (),
    what: str = "--out",
    workdir: Path | str | None = None,
    folder: bool = False,
) -> Path:
    """``path`` if a user's file (``folder``: a user's folder) may be written there, else an ArgumentError
    naming it (module docstring). ``managed`` is the command's own domain folder (managed even before it
    holds anything), ``workdir`` the workdir the command reads; ``allowed`` are extra free paths inside them."""
    path = Path(path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:  # a parent that is a file, a path too long, …
        raise OutputRefused(what, f"{path}: {exc.strerror}") from None
    if mode is not None:
        _check_kind(path, mode, what, folder)
    inside = _managed_folder(path.resolve(), managed, workdir, [Path(free).resolve() for free in allowed])
    if inside is not None:
        raise OutputRefused(
            what,
            f"{path} is inside {inside}, whose files kgforge manages itself; write outside it "
            f"(or under a domain's {EXPORTS}/ folder)",
        )
    return path


def _check_kind(path: Path, mode: int, what: str, folder: bool) -> None:
    if stat.S_ISLNK(mode):
        raise OutputRefused(
            what, f"{path} is a symbolic link; give the {'folder' if folder else 'file'} itself or a new path"
        )
    if folder:
        if not stat.S_ISDIR(mode):
            kind = "a file" if stat.S_ISREG(mode) else "a device, FIFO or socket"
            raise OutputRefused(what, f"{path} is {kind}, not a folder; give a folder or a new path")
        return
    if stat.S_ISDIR(mode):
        raise OutputRefused(what, f"{path} is a directory; give a file name inside it")
    if not stat.S_ISREG(mode):
        raise OutputRefused(
            what, f"{path} is not a regular file (a device, FIFO or socket); give a new path or a regular file"
        )


def _managed_folder(target: Path, managed: Path | None, workdir: Path | str | None, allowed: list[Path]) -> Path | None:
    """The folder kgforge manages that ``target`` (resolved) is or lies in, None if none (or only a free one)."""
    if any(target == free or free in target.parents for free in allowed):
        return None
    own = managed.resolve() if managed is not None else None
    work = Path(workdir).resolve() if workdir is not None else None
    child = None  # the folder below ``folder`` on the way down to target
    for folder in (target, *target.parents):
        if folder == own or _is_build(folder) or _is_domain(folder, in_workdir=folder.parent == work):
            return None if child is not None and child.name == EXPORTS and not _is_build(folder) else folder
        child = folder
    return None


def _is_domain(folder: Path, *, in_workdir: bool) -> bool:
    """Whether ``folder`` is a domain's: its write lock or its build link (names of kgforge's own, where a
    ``builds/`` folder alone could be anyone's); in the workdir, a folder ``kgforge init`` made too."""
    if (folder / WRITE_LOCK).is_file() or (folder / STORE_LINK).is_symlink():
        return True
    return in_workdir and (folder / DOMAIN_SCHEMA).is_file()


def _is_build(folder: Path) -> bool:
    """A build folder: its store and manifest (published or copied elsewhere), or its staging mark."""
    if (folder / BUILD_STORE).is_dir() and (folder / MANIFEST).is_file():
        return True
    return (folder / INCOMPLETE).is_file()


@dataclass(frozen=True)
class _Guard:
    """What a path was checked against; its sidecars and a folder's files are checked against the same."""

    what: str = "--out"
    managed: Path | None = None
    workdir: Path | None = None
    allowed: tuple[Path, ...] = ()

    def check(self, path: Path, *, folder: bool = False) -> Path:
        return safe_output_path(
            path, managed=self.managed, allowed=self.allowed, what=self.what, workdir=self.workdir, folder=folder
        )


@dataclass(frozen=True)
class OutputFile:
    """A user's file, checked (:func:`output_file`): written only by its methods, each atomic."""

    path: Path  # to name it (reports, messages), never to write by hand
    guard: _Guard = field(default_factory=_Guard, repr=False)

    def __str__(self) -> str:
        return str(self.path)

    @contextmanager
    def open(self, mode: str = "w", *, encoding: str | None = "utf-8") -> Iterator[IO[Any]]:
        """``with out.open() as handle``: the file holds what was written once the block ends, its old
        bytes if it raises."""
        with atomic_write(self.guard.check(self.path), mode, encoding=None if "b" in mode else encoding) as handle:
            yield handle

    @contextmanager
    def part(self) -> Iterator[Path]:
        """For writers that take a file name (polars, a format's ``write``): they write the yielded temporary
        path, which then replaces the file."""
        with atomic_path(self.guard.check(self.path)) as part:
            yield part

    def stream(self, *, buffering: int = -1, errors: str | None = None) -> AtomicFile:
        """A file kept open across calls: published by ``commit()``, dropped by ``discard()``."""
        return AtomicFile(self.guard.check(self.path), buffering=buffering, errors=errors)

    def write_text(self, text: str) -> Path:
        with self.open() as handle:
            handle.write(text)
        return self.path

    def write_bytes(self, data: bytes) -> Path:
        with self.open("wb") as handle:
            handle.write(data)
        return self.path

    def write_json(self, data: Any, *, indent: int | None = 2) -> Path:
        with self.open() as handle:
            json.dump(data, handle, ensure_ascii=False, indent=indent)
        return self.path

    def sidecar(self, suffix: str) -> OutputFile:
        """The file beside this one named ``NAME<suffix>`` (``.manifest.json``), checked as this one was."""
        return self.beside(self.path.name + suffix)

    def beside(self, name: str) -> OutputFile:
        """The file ``name`` in this one's folder, checked as this one was."""
        return replace(self, path=self.guard.check(self.path.with_name(name)))

    def remove(self) -> None:
        """Remove the file (a stale sidecar of an earlier run), if it is there and a regular file."""
        self.guard.check(self.path).unlink(missing_ok=True)


@dataclass(frozen=True)
class OutputDir:
    """A user's folder, checked (:func:`output_dir`): its files are :class:`OutputFile` s, each checked."""

    path: Path
    guard: _Guard = field(default_factory=_Guard, repr=False)

    def __str__(self) -> str:
        return str(self.path)

    def file(self, name: str) -> OutputFile:
        """The file ``name`` inside the folder (the folder is made when the file is written)."""
        if Path(name).name != name or name in ("", ".", ".."):
            raise OutputRefused(self.guard.what, f"{name!r} is not a file name")
        self.make()
        return OutputFile(self.guard.check(self.path / name), self.guard)

    def make(self) -> Path:
        """Make the folder (and its parents), checked again first; returns it for a writer that names the files
        inside it itself (a cache: ``qa-eval --cache``)."""
        self.guard.check(self.path, folder=True).mkdir(parents=True, exist_ok=True)
        return self.path

    @contextmanager
    def staged(self) -> Iterator[Path]:
        """A folder written whole or not at all (a release): the block fills a new folder made beside this one
        (``.<name>.part<pid>``, on the same file system), which then replaces this one by a rename; if the block
        raises, or the process is killed, this folder keeps what it held (a killed run's leftovers are removed
        by the next). Yields the new folder for a writer that names the files inside it itself."""
        target = self.guard.check(self.path, folder=True)
        target.parent.mkdir(parents=True, exist_ok=True)
        _remove_dead_stages(target)
        stage = target.with_name(f".{target.name}.part{os.getpid()}")
        shutil.rmtree(stage, ignore_errors=True)
        stage.mkdir()
        try:
            yield stage
            self.guard.check(target, folder=True)  # still a folder of the user's, not a link made meanwhile
            old = target.with_name(f".{target.name}.old{os.getpid()}") if target.exists() else None
            if old is not None:
                os.rename(target, old)
            os.rename(stage, target)
            fsync_dir(target.parent)
        except BaseException:
            shutil.rmtree(stage, ignore_errors=True)
            raise
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)


def _remove_dead_stages(target: Path) -> None:
    """The folders a killed :meth:`OutputDir.staged` left beside ``target`` (their pid is gone)."""
    for left in target.parent.glob(f".{glob.escape(target.name)}.*"):
        found = _STAGE.fullmatch(left.name[len(target.name) + 2 :])
        if found and left.is_dir() and not left.is_symlink() and not pid_alive(int(found.group(1))):
            shutil.rmtree(left, ignore_errors=True)


def output_file(
    path: Path | str | OutputFile,
    *,
    what: str = "--out",
    managed: Path | None = None,
    workdir: Path | str | None = None,
    allowed: Iterable[Path] = (),
) -> OutputFile:
    """``path`` checked as a user's file (module docstring), ready to be written; an ArgumentError naming
    ``what`` (the option) if it may not be. An ``OutputFile`` given is returned as it is."""
    if isinstance(path, OutputFile):
        return path
    guard = _Guard(what, managed, Path(workdir) if workdir is not None else None, tuple(allowed))
    return OutputFile(guard.check(Path(path)), guard)


def output_dir(
    path: Path | str | OutputDir,
    *,
    what: str = "--out",
    managed: Path | None = None,
    workdir: Path | str | None = None,
) -> OutputDir:
    """``path`` checked as a user's folder (a new one, or an existing directory outside kgforge's layout)."""
    if isinstance(path, OutputDir):
        return path
    guard = _Guard(what, managed, Path(workdir) if workdir is not None else None)
    return OutputDir(guard.check(Path(path), folder=True), guard)
