"""The one workdir rule, and the words every "not found" message uses to show it.

The workdir is the folder holding one sub-folder per domain: ``--workdir`` if given, else
``$KGFORGE_WORKDIR``, else ``./kg``. A message that cannot find something names the rule and the
absolute folder it looked in, so a user in another directory sees at once where kgforge looked.
"""

from __future__ import annotations

import os
from pathlib import Path

from kgforge.core.errors import ArgumentError, StoreMissingError
from kgforge.core.registry import closest

ENV_VAR = "KGFORGE_WORKDIR"
DEFAULT_WORKDIR = Path("kg")
RULE = f"the workdir: --workdir, else ${ENV_VAR}, else ./{DEFAULT_WORKDIR}"


def resolve_workdir(workdir: Path | str | None = None) -> Path:
    """``workdir`` if given, else ``$KGFORGE_WORKDIR``, else ``./kg``; refused when it names a file."""
    chosen = Path(workdir) if workdir else Path(os.environ.get(ENV_VAR) or DEFAULT_WORKDIR)
    if chosen.exists() and not chosen.is_dir():
        raise ArgumentError("--workdir", f"{chosen.absolute()} is a file, not a folder ({RULE})")
    return chosen


def where(workdir: Path | str) -> str:
    """``/abs/kg (the workdir: --workdir, else $KGFORGE_WORKDIR, else ./kg)``."""
    return f"{Path(workdir).absolute()} ({RULE})"


def has_store(domain_root: Path) -> bool:
    """Whether a domain folder holds a published build (``store`` resolves to a finished build)."""
    build = (domain_root / "store").resolve()
    return (build / "oxigraph").is_dir() and not (build / ".incomplete").exists()


def built_domains(workdir: Path | str) -> list[str]:
    """The domains under ``workdir`` that have a published store, sorted."""
    root = Path(workdir)
    if not root.is_dir():
        return []
    return sorted(d.name for d in root.iterdir() if d.is_dir() and not d.name.startswith(".") and has_store(d))


def missing_store(workdir: Path | str, domain: str) -> StoreMissingError:
    """The error for a domain with no published store: where kgforge looked, the closest built domain
    ("did you mean"), and how to build one."""
    built = built_domains(workdir)
    close = closest(domain, built)
    if close:
        return StoreMissingError(
            f"no domain {domain!r} in {where(workdir)}; did you mean {close!r}? (built: {', '.join(built)})"
        )
    listing = f"built: {', '.join(built)}" if built else "no domain is built there yet"
    return StoreMissingError(
        f"no store for {domain!r} in {where(workdir)}; {listing}; run `kgforge build {domain}` to build it"
    )
