"""Where a release is written: a new folder or an earlier release, made in a folder beside it and renamed into
place at the end, so that a refused or killed release writes nothing where it was asked to.

The one place a release's output folder is checked (``kgforge.core.files`` checks a user's output *file*; the
output guard of issue 44 can take this over).
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import stat
from pathlib import Path

from kgforge.core.errors import ArgumentError
from kgforge.core.files import fsync_dir, pid_alive

MANIFEST = "release.json"
_LEFT = re.compile(r"(?:part|old)(\d+)")  # the folders a release makes beside its output, by the pid that made them
MARK = "kgforge_release"


def is_release(folder: Path) -> bool:
    try:
        return json.loads((folder / MANIFEST).read_text(encoding="utf-8")).get(MARK) == 1
    except (OSError, ValueError, AttributeError):
        return False


def check_out(out: Path, managed: Path | None = None) -> Path:
    """``out`` if a release may be written there: a new folder, or a folder holding an earlier release (it is
    replaced whole); never a file, a link, another folder, or inside a domain kgforge manages."""
    try:
        mode = os.lstat(out).st_mode
    except FileNotFoundError:
        mode = None
    except OSError as exc:
        raise ArgumentError("--out", f"{out}: {exc.strerror}") from None
    if mode is not None and stat.S_ISLNK(mode):
        raise ArgumentError("--out", f"{out} is a symbolic link; give the folder itself or a new one")
    if mode is not None and not stat.S_ISDIR(mode):
        raise ArgumentError("--out", f"{out} exists and is not a folder; give a new folder")
    if mode is not None and not is_release(out):
        raise ArgumentError(
            "--out",
            f"{out} exists and is not a kgforge release (no {MANIFEST}); give a new folder, nothing was written",
        )
    if managed is not None and (out.resolve() == managed.resolve() or managed.resolve() in out.resolve().parents):
        raise ArgumentError("--out", f"{out} is inside {managed}, whose files kgforge manages itself")
    return out


def staging(out: Path) -> Path:
    """The folder the release is made in: beside ``out`` (the same file system, so the rename is atomic)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    for left in out.parent.glob(f".{glob.escape(out.name)}.kgforge-*"):  # a killed release's folders
        owner = _LEFT.fullmatch(left.name.rpartition(".kgforge-")[2])
        if owner and not pid_alive(int(owner.group(1))):
            shutil.rmtree(left, ignore_errors=True)
    stage = out.parent / f".{out.name}.kgforge-part{os.getpid()}"
    shutil.rmtree(stage, ignore_errors=True)
    stage.mkdir()
    return stage


def publish(stage: Path, out: Path) -> bool:
    """Rename the finished release into place, replacing an earlier one; whether one was replaced."""
    old = None
    if out.exists():
        old = out.parent / f".{out.name}.kgforge-old{os.getpid()}"
        os.rename(out, old)
    os.rename(stage, out)
    fsync_dir(out.parent)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
    return old is not None
