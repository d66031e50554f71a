"""docs/cli.md is the command line's own --help: regenerate it with scripts/cli_reference.py."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # renders every command's --help in a fresh interpreter
def test_cli_reference_matches_the_commands():
    done = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "cli_reference.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 0, done.stderr


def test_the_reference_names_every_command():
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    for command in ("build", "stats", "query", "derive", "goals", "export", "embed", "related", "demo", "crawl"):
        assert f"## kgforge {command}\n" in text
