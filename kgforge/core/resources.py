"""Where the shipped schemas and queries live: the source checkout, or inside an installed wheel."""

from __future__ import annotations

import os
from pathlib import Path

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
    return _dirs("queries", "KGFORGE_QUERIES")


def query_text(name: str) -> str:
    """The text of a shipped query, ``name`` without ``.rq``."""
    for folder in query_dirs():
        candidate = folder / f"{name}.rq"
        if candidate.is_file():
            return candidate.read_text(encoding="utf-8")
    raise FileNotFoundError(f"no shipped query named {name}.rq in {[str(d) for d in query_dirs()]}")
