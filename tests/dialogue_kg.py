"""A store built (and derived) from the real DuConv sample, shared by the goal and export tests."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import run_cli, shared_file


def duconv_sample_kg(tmp_path_factory) -> tuple[Path, Path]:
    """(workdir, source): ``kgforge build duconv`` then ``kgforge derive duconv`` on dev.head250.jsonl."""
    source = shared_file("duconv/dev.head250.jsonl")
    workdir = tmp_path_factory.mktemp("kg")
    run_cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir), "--json")
    run_cli("derive", "duconv", "--workdir", str(workdir), "--json")
    return workdir, source
