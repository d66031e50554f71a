"""Files that appear complete or not at all, their checksums, and the versions that wrote them.

One write policy for everything kgforge publishes: the bytes go to a temporary file beside the target
(``<name>.part<pid>.<thread>``, so a killed writer's leftovers are recognisable and its pid is readable),
are flushed and fsync'ed, and replace the target with one ``os.replace``. A reader sees the old file or
the new one, never half of one, and a power loss after the rename cannot leave an empty file in its place.
The next writer of the same file removes the temporary files that killed writers left beside it.
The one exception is a cache that can be fetched again (``durable=False``): it skips the fsync, which
would cost a disk flush per crawled page.
"""

from __future__ import annotations

import glob
import hashlib
import json
import os
import platform
import re
import threading
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from importlib import metadata
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any

from kgforge.core.version import __version__

if TYPE_CHECKING:  # the alias only: files stays below jsonio (and its text policy's opencc)
    from kgforge.core.jsonio import JsonObject

_PART = re.compile(r"\.part(\d+)\.\d+$")
CORE_PACKAGES = ("pyoxigraph", "polars", "rdflib", "jieba")


def part_path(path: Path) -> Path:
    """The temporary file a write of ``path`` goes to, unique to this process and thread."""
    return path.with_name(f"{path.name}.part{os.getpid()}.{threading.get_ident()}")


def part_owner(path: Path) -> int | None:
    """The pid that writes the temporary file ``path`` (a :func:`part_path`), or None if it is not one."""
    match = _PART.search(path.name)
    return int(match.group(1)) if match else None


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, another user's
        return True
    return True


def remove_dead_parts(path: Path) -> list[Path]:
    """Remove the temporary files that killed writers of ``path`` left beside it (their pid is gone)."""
    dead = [
        part
        for part in path.parent.glob(f"{glob.escape(path.name)}.part*")
        if (owner := part_owner(part)) is not None and not pid_alive(owner)
    ]
    for part in dead:
        part.unlink(missing_ok=True)
    return dead


class AtomicFile:
    """A file being written to its :func:`part_path`, published by :meth:`commit` or dropped by
    :meth:`discard`; for writers that keep a file open across calls (a quads writer, a JSONL stream).
    :func:`atomic_write` is the same as a ``with`` block."""

    def __init__(
        self,
        path: Path | str,
        mode: str = "w",
        *,
        durable: bool = True,
        encoding: str | None = "utf-8",
        buffering: int = -1,
        errors: str | None = None,
    ) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if durable:  # a cache sweeps its own folders (and would pay a directory listing per entry here)
            remove_dead_parts(self.path)
        self.part = part_path(self.path)
        self.durable = durable
        text = "b" not in mode
        self.handle: IO[Any] = open(
            self.part, mode, encoding=encoding if text else None, errors=errors if text else None, buffering=buffering
        )

    def commit(self) -> Path:
        """Publish the file; if that fails (the last buffered bytes meet a full disk), the temporary file
        is removed and the target keeps its old bytes."""
        try:
            self.handle.flush()
            if self.durable:
                os.fsync(self.handle.fileno())
            self.handle.close()
            os.replace(self.part, self.path)
        except BaseException:
            self.discard()
            raise
        return self.path

    def discard(self) -> None:
        try:
            self.handle.close()  # flushes what is buffered: fails again on a full disk
        except OSError:
            pass  # the file is dropped anyway; the error that made us drop it is the one to report
        finally:
            self.part.unlink(missing_ok=True)


@contextmanager
def atomic_write(
    path: Path | str, mode: str = "w", *, durable: bool = True, encoding: str | None = "utf-8"
) -> Iterator[IO[Any]]:
    """``with atomic_write(path) as out: out.write(...)``: ``path`` holds the new bytes once the block
    ends, the old ones if it raises (or the process dies inside it)."""
    target = AtomicFile(path, mode, durable=durable, encoding=encoding)
    try:
        yield target.handle
    except BaseException:
        target.discard()
        raise
    target.commit()


@contextmanager
def atomic_path(path: Path | str, *, durable: bool = True) -> Iterator[Path]:
    """For writers that take a file name (polars, pyoxigraph, torch): they write the yielded temporary
    path, which then replaces ``path`` under the same policy as :func:`atomic_write`."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    if durable:
        remove_dead_parts(path)
    part = part_path(path)
    try:
        yield part
        if durable:
            fsync_file(part)
        os.replace(part, path)
    finally:
        part.unlink(missing_ok=True)


def write_json_atomic(
    path: Path | str, data: Any, *, indent: int | None = 2, ensure_ascii: bool = False, durable: bool = True
) -> None:
    """Write JSON so that a reader sees the old file or the new one, never half of one."""
    with atomic_write(path, durable=durable) as out:
        json.dump(data, out, ensure_ascii=ensure_ascii, indent=indent)


def write_text_atomic(path: Path | str, text: str, *, durable: bool = True) -> None:
    with atomic_write(path, durable=durable) as out:
        out.write(text)


def write_bytes_atomic(path: Path | str, data: bytes, *, durable: bool = True) -> None:
    with atomic_write(path, "wb", durable=durable) as out:
        out.write(data)


def fsync_file(path: Path) -> None:
    with open(path, "rb") as handle:
        os.fsync(handle.fileno())


def fsync_dir(path: Path) -> None:
    """Make a rename or a new entry in ``path`` durable."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_link(link: Path, target: Path) -> None:
    """Point the symlink ``link`` at ``target`` atomically (a new link renamed over the old one)."""
    tmp_link = link.with_name(f".{link.name}.{os.getpid()}.tmp")
    tmp_link.unlink(missing_ok=True)
    tmp_link.symlink_to(target)
    os.replace(tmp_link, link)


def sha256_file(path: Path | str) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def file_fingerprint(path: Path) -> JsonObject:
    """What a manifest records of an input file: its path, size and sha256."""
    return {"path": str(path), "size": path.stat().st_size, "sha256": sha256_file(path)}


def package_versions(extra: Iterable[str] = ()) -> dict[str, str]:
    """Python's, kgforge's and the installed versions of the core packages plus ``extra`` (absent ones
    are left out), for the manifests of whatever kgforge writes."""
    versions = {"python": platform.python_version(), "kgforge": __version__}
    for package in (*CORE_PACKAGES, *extra):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            continue
    return versions
