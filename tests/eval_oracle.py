"""The official DuConv metric script (baidu/knowledge-driven-dialogue ``generative_pt/tools/eval.py``), loaded
from a git mirror at test time as the oracle for kgforge's lexical metrics. It is third-party code: it is never
copied into the project; the tests take it out of the mirror into a temporary folder.

The mirror is found under ``$READERS_MIRRORS`` or ``/work/.mirror`` (the folder holding
``baidu+knowledge-driven-dialogue/repo``, as ``../shared/readers/run-readers`` expects); without it the
oracle tests skip, saying where to fetch it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import os
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

COMMIT = "ba85518a1ac2a57988188fc5f2b8fe42e1facf64"
SCRIPT = "generative_pt/tools/eval.py"
MIRROR = "baidu+knowledge-driven-dialogue/repo"
FETCH_HINT = (
    "the official DuConv eval.py comes from a git mirror of baidu/knowledge-driven-dialogue: fetch "
    "github:baidu/knowledge-driven-dialogue and set READERS_MIRRORS to the folder holding "
    f"{MIRROR} (see ../shared/readers/README.md)"
)


def mirror() -> Path | None:
    for root in (os.environ.get("READERS_MIRRORS"), "/work/.mirror"):
        if root and (Path(root) / MIRROR).exists():
            return Path(root) / MIRROR
    return None


def official_script(folder: Path) -> Path:
    """The script at COMMIT, written into ``folder``; skips the test when the mirror is absent."""
    repo = mirror()
    if repo is None:
        pytest.skip(FETCH_HINT)
    shown = subprocess.run(["git", "-C", str(repo), "show", f"{COMMIT}:{SCRIPT}"], capture_output=True)
    if shown.returncode != 0:
        pytest.skip(f"{repo} lacks {COMMIT}:{SCRIPT} ({shown.stderr.decode(errors='replace').strip()}); " + FETCH_HINT)
    path = folder / "official_eval.py"
    path.write_bytes(shown.stdout)
    return path


def load_official(folder: Path) -> ModuleType:
    """The script as a module, so its own calc_f1, calc_bleu, calc_distinct, calc_bp and calc_cover_rate can be
    called. It scores ``sys.argv[1]`` when imported, so it is given a small file of its own first."""
    script = official_script(folder)
    sample = folder / "official_import_input.txt"
    sample.write_text("a b c\ta b c\n", encoding="utf-8")
    spec = importlib.util.spec_from_file_location("duconv_official_eval", script)
    module = importlib.util.module_from_spec(spec)
    argv = sys.argv
    sys.argv = [str(script), str(sample)]
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            spec.loader.exec_module(module)
    finally:
        sys.argv = argv
    return module


def run_official(folder: Path, eval_file: Path) -> str:
    """What the script prints for ``eval_file``, run as its own process (UTF-8, as run-readers runs it)."""
    script = official_script(folder)
    done = subprocess.run(
        [sys.executable, str(script), str(eval_file)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env={**os.environ, "PYTHONUTF8": "1"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout
