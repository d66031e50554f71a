"""Where the shipped schemas and queries live: the source checkout, or inside an installed wheel.

Shipped queries are found by name from any directory (``QUERIES``, a :class:`Registry`: an unknown name
fails with the closest and the known ones); each ``.rq`` file's leading comment says what it does.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from kgforge.core.registry import Registry

_PACKAGE = Path(__file__).resolve().parent.parent  # kgforge/
_CHECKOUT = _PACKAGE.parent


def _dirs(name: str, env: str) -> list[Path]:
    dirs = [Path(p) for p in os.environ.get(env, "").split(os.pathsep) if p]
    for candidate in (_CHECKOUT / name, _PACKAGE / "_resources" / name):
        if candidate.is_dir():
            dirs.append(candidate)
    return dirs


def schema_dirs() -> list[Path]:
    """Folders searched for ``<domain>.toml``: ``$KGFORGE_SCHEMAS`` first, then the shipped ones."""
    return _dirs("schemas", "KGFORGE_SCHEMAS")


def query_dirs() -> list[Path]:
    """Folders searched for ``<name>.rq``: ``$KGFORGE_QUERIES`` first, then the shipped ones."""
    return _dirs("queries", "KGFORGE_QUERIES")


def _query_files() -> list[tuple[str, Path]]:
    return [(path.stem, path) for folder in query_dirs() for path in sorted(folder.glob("*.rq"))]


# Not cached across calls that change $KGFORGE_QUERIES: shipped_queries() builds a fresh one each time.
def shipped_queries() -> Registry[Path]:
    """The ``.rq`` files by name (the first folder of :func:`query_dirs` that has a name wins)."""
    return Registry("query", plural="queries", discover=_query_files)


def query_path(name: str) -> Path:
    """The file of the shipped query ``name`` (``.rq`` optional), or UnknownName with the closest names."""
    return shipped_queries().get(name.removesuffix(".rq"))


def query_text(name: str) -> str:
    """The text of a shipped query, ``name`` without ``.rq``."""
    return query_path(name).read_text(encoding="utf-8")


def query_description(path: Path) -> str:
    """The first sentence of a query file's leading comment: what it returns."""
    lines = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("#"):
            break
        lines.append(line.lstrip("# ").strip())
    text = " ".join(lines)
    first = re.split(r"(?<!e\.g)\. ", text)[0].split("Binds:")[0].strip().rstrip(".")
    return first
