"""KdConv grounding shared out over forked processes: the same bytes and figures as one process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.grounding import run
from tests.conftest import run_cli, shared_file


@pytest.fixture(scope="module")
def travel(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("travel")
    run_cli(
        "build",
        "travel",
        "--source",
        f"kdconv:{shared_file('kdconv/travel/kb_travel.json')}",
        "--workdir",
        str(workdir),
    )
    return workdir


def test_parts_grounded_in_worker_processes_give_what_one_process_gives(travel, tmp_path, monkeypatch):
    """The dev set's 150 dialogues in parts of 20 over two processes: the same file, byte for byte, and the same
    report (counts, scores against gold, claims) as one process grounding them all."""
    dev = shared_file("kdconv/travel/dev.json")
    monkeypatch.setattr(run, "PART_DIALOGUES", 20)
    one = Domain("travel", travel).ground(dev, tmp_path / "one.json", workers=1)
    two = Domain("travel", travel).ground(dev, tmp_path / "two.json", workers=2)
    assert (one.workers, two.workers) == (1, 2)
    assert (tmp_path / "one.json").read_bytes() == (tmp_path / "two.json").read_bytes()
    assert dataclasses.replace(one, out=two.out, workers=2) == two
    assert two.dialogues == 150 and two.micro is not None and two.micro.tp > 0 and two.claims["supported"] > 0


def test_a_small_file_is_grounded_in_this_process(travel, tmp_path):
    """Fewer dialogues than one part: no process is started, and the report says one worker."""
    report = Domain("travel", travel).ground(shared_file("kdconv/travel/dev.json"), tmp_path / "o.json", workers=4)
    assert report.workers == 1 and report.dialogues == 150


def test_the_cli_takes_a_number_of_workers_and_refuses_zero(travel, tmp_path):
    dev = str(shared_file("kdconv/travel/dev.json"))
    done = run_cli(
        "ground", "travel", "--dialogues", dev, "--out", str(tmp_path / "o.json"), "--workers", "2",
        "--workdir", str(travel), "--json",
    )  # fmt: skip
    assert '"workers": 1' in done.stdout  # 150 dialogues are fewer than one part each for two processes
    refused = run_cli(
        "ground", "travel", "--dialogues", dev, "--out", str(tmp_path / "z.json"), "--workers", "0",
        "--workdir", str(travel), check=False,
    )  # fmt: skip
    assert refused.returncode == 2 and "--workers" in refused.stderr and "Traceback" not in refused.stderr
    assert not (tmp_path / "z.json").exists()
