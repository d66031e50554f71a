"""File checksums, and a build's record of which of its files were verified against them.

Hashing every quads file before each stage would cost seconds at DuConv scale, so a build keeps
``verified.json``: for each file, the sha256 it was checked against and the file's stamp at that moment
(device, inode, size, mtime and ctime in nanoseconds). Writing to a file, replacing it or resetting its
mtime all change its ctime, which no user can set, so a file whose stamp still matches holds the bytes
that were verified; any other file is hashed again.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from kgforge.core.files import sha256_file, write_json_atomic

VERIFIED = "verified.json"


def stamp(path: Path) -> list[int]:
    info = os.stat(path)
    return [info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns]


def record_verified(folder: Path, checksums: dict[str, str]) -> None:
    """Note that the files ``folder/<relative path>`` hold the given checksums as of now."""
    _write(folder, {name: {"sha256": digest, "stamp": stamp(folder / name)} for name, digest in checksums.items()})


def is_verified(folder: Path, name: str, sha256: str) -> bool:
    """Whether ``folder/name`` holds exactly the bytes whose checksum is ``sha256``: by its recorded stamp
    when unchanged since it was verified, else by hashing it (and recording the result for next time)."""
    path = folder / name
    if not path.is_file():
        return False
    known = _read(folder)
    entry = known.get(name)
    if entry and entry.get("sha256") == sha256 and entry.get("stamp") == stamp(path):
        return True
    before = stamp(path)
    if sha256_file(path) != sha256:
        return False
    if stamp(path) == before:
        known[name] = {"sha256": sha256, "stamp": before}
        try:
            _write(folder, known)
        except OSError:  # a read-only workdir: verified again next time
            pass
    return True


def _read(folder: Path) -> dict[str, Any]:
    try:
        data = json.loads((folder / VERIFIED).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(folder: Path, data: dict[str, Any]) -> None:
    write_json_atomic(folder / VERIFIED, data, indent=1, ensure_ascii=True, durable=False)
