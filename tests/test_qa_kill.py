"""Killing `kgforge qa generate` at a random moment leaves the previous files whole; running it again
writes the same bytes and leaves no temporary file."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import shared_file
from tests.faults import kill_at_random_point, orphans, part_files, reap
from tests.qa_support import build_domain

pytestmark = pytest.mark.slow  # a real generation killed at a random moment, then run again


def test_a_killed_generation_never_touches_the_finished_files(tmp_path: Path, cli) -> None:
    workdir = tmp_path / "kg"
    build_domain(workdir, "travel", ("kdconv", shared_file("kdconv/travel/kb_travel.json")))
    out, cq = tmp_path / "out" / "qa.jsonl", tmp_path / "out" / "qa.cq.jsonl"
    args = [
        "qa",
        "generate",
        "travel",
        "--workdir",
        str(workdir),
        "--out",
        str(out),
        "--convquestions",
        str(cq),
        "--n",
        "400",
        "--seed",
        "9",
    ]
    cli(*args)
    finished = (out.read_bytes(), cq.read_bytes())
    killed = 0
    for seed in range(3):
        outcome = kill_at_random_point(args, seed, (0.0, 1.5), ready=lambda: bool(part_files(out.parent)))
        try:
            assert not orphans(outcome.tag)
        finally:
            reap(outcome.tag)
        killed += outcome.killed
        assert (out.read_bytes(), cq.read_bytes()) == finished
    assert killed >= 1
    cli(*args)
    assert (out.read_bytes(), cq.read_bytes()) == finished and not part_files(out.parent)
