"""``release.json``: what marks a folder as a kgforge release, the release's figures, and the sha256 and size of
every other file in it. Its own integrity: ``self_sha256`` is the sha256 of the file with that value written
as 64 zeros, so a changed byte anywhere in it is found too.

Before it is written, every text file of the release is searched for the paths of the machine that made it (the
workdir, the home folder, the working folder, the dialogue files' folders, the output's folder) and the files
kgforge writes itself (the card, croissant.json, kg/about.json, audit.json) for the user's and the host's
names: a release names none of them.
"""

from __future__ import annotations

import getpass
import hashlib
import json
import re
import socket
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.files import sha256_file, write_text_atomic
from kgforge.core.version import __version__
from kgforge.release.folder import MANIFEST, MARK

ZEROS = "0" * 64
TEXT_SUFFIXES = {".json", ".jsonl", ".md", ".nt", ".nq", ".txt"}
OWN_FILES = {"README.md", "croissant.json", "kg/about.json", "audit.json"}


def release_files(folder: Path) -> dict[str, dict[str, Any]]:
    """Every file of the release but release.json: its path inside the release -> sha256 and bytes."""
    return {
        str(p.relative_to(folder)): {"sha256": sha256_file(p), "bytes": p.stat().st_size}
        for p in sorted(folder.rglob("*"))
        if p.is_file() and p.name != MANIFEST
    }


def manifest_text(data: dict[str, Any]) -> str:
    """``data`` as release.json's text, its ``self_sha256`` filled in."""
    text = json.dumps({**data, "self_sha256": ZEROS}, ensure_ascii=False, indent=2) + "\n"
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return text.replace(f'"self_sha256": "{ZEROS}"', f'"self_sha256": "{digest}"')


def self_digest_ok(raw: bytes) -> bool:
    """Whether release.json's bytes hash to the ``self_sha256`` they hold."""
    found = re.search(rb'"self_sha256": "([0-9a-f]{64})"', raw)
    if found is None:
        return False
    blank = raw[: found.start(1)] + ZEROS.encode() + raw[found.end(1) :]
    return hashlib.sha256(blank).hexdigest().encode() == found.group(1)


def write_manifest(folder: Path, summary: dict[str, Any], private: tuple[str, ...]) -> int:
    """Search the release for ``private`` paths and the user's and host's names, then write release.json;
    the number of files the release holds."""
    _search(folder, private)
    files = release_files(folder)
    data = {MARK: 1, "kgforge": __version__, **summary, "files": files}
    write_text_atomic(folder / MANIFEST, manifest_text(data))
    return len(files) + 1


def _names() -> list[str]:
    found = []
    for get in (getpass.getuser, socket.gethostname):
        try:
            name = get()
        except (OSError, KeyError):
            continue
        if name:
            found.append(name)
    return found


def _search(folder: Path, private: tuple[str, ...]) -> None:
    paths = [p.encode("utf-8") for p in dict.fromkeys(private) if len(p) > 1]
    names = [re.compile(rb"(?<![\w.-])" + re.escape(n.encode("utf-8")) + rb"(?![\w-])") for n in _names()]
    for path in sorted(folder.rglob("*")):
        if not path.is_file() or path.suffix not in TEXT_SUFFIXES:
            continue
        data = path.read_bytes()
        inside = str(path.relative_to(folder))
        for private_path in paths:
            if private_path in data:
                raise KgforgeError(
                    f"{inside}: would name a path of this machine ({private_path.decode()}); nothing was written"
                )
        if inside in OWN_FILES:
            for name in names:
                if name.search(data):
                    raise KgforgeError(f"{inside}: would name this machine's user or host; nothing was written")
