"""Shared fixtures: the real sample data in ../shared/data, and running the CLI for real."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("KGFORGE_SHARED_DATA", REPO.parent / "shared" / "data"))
REQUIRE_SHARED = os.environ.get("KGFORGE_REQUIRE_SHARED") == "1"


def shared_file(relative: str) -> Path:
    """A file under ../shared/data: skipped with a reason when absent, a failure under CI."""
    path = SHARED_DATA / relative
    if not path.exists():
        message = f"shared sample {path} is absent"
        if REQUIRE_SHARED:
            pytest.fail(message + " and KGFORGE_REQUIRE_SHARED=1 requires it")
        pytest.skip(message + " (set KGFORGE_SHARED_DATA or place ../shared beside the checkout)")
    return path


@pytest.fixture
def shared():
    """``shared("kdconv/travel/kb_travel.json")`` → the path, or skip/fail as above."""
    return shared_file


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "kg"
    folder.mkdir()
    return folder


def run_cli(*args: str, cwd: Path | None = None, check: bool = True, timeout: float = 600,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``kgforge ARGS`` in a fresh process, as a user would."""
    result = subprocess.run(
        [sys.executable, "-c", "from kgforge.cli import main; main()", *args],
        cwd=cwd, capture_output=True, text=True, timeout=timeout, env={**os.environ, **(env or {})},
    )
    if check and result.returncode != 0:
        raise AssertionError(f"kgforge {' '.join(args)} exited {result.returncode}\n"
                             f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}")
    return result


@pytest.fixture
def cli():
    return run_cli
