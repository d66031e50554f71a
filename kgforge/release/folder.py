"""Where a release is written: a new folder or an earlier release, made in a folder beside it and renamed into
place at the end (the output guard's :meth:`~kgforge.core.output.OutputDir.staged`), so that a refused or killed
release writes nothing where it was asked to."""

from __future__ import annotations

import json
from pathlib import Path

from kgforge.core.errors import ArgumentError
from kgforge.core.output import OutputDir, output_dir

MANIFEST = "release.json"
MARK = "kgforge_release"


def is_release(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get(MARK) == 1
    except (OSError, ValueError, AttributeError):
        return False


def check_out(out: Path, managed: Path | None = None) -> OutputDir:
    """``out`` if a release may be written there: a new folder, or a folder holding an earlier release (it is
    replaced whole); never a file, a link, another folder, or inside a domain kgforge manages (the output guard,
    :mod:`kgforge.core.output`, which also writes it whole: :meth:`~kgforge.core.output.OutputDir.staged`)."""
    target = output_dir(out, managed=managed, what="--out")
    if out.exists() and not is_release(out):
        raise ArgumentError(
            "--out",
            f"{out} exists and is not a kgforge release (no {MANIFEST}); give a new folder, nothing was written",
        )
    return target
