"""KdConv grounding shared out over forked processes: the same bytes and figures as one process."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.grounding import run
from tests.conftest import build_travel, run_cli, shared_file


@pytest.fixture(scope="module")
def travel(tmp_path_factory) -> Path:
    return build_travel(tmp_path_factory.mktemp("travel"))


# format -> (domain, source of its graph, dialogues grounded, dialogues a part)
CASES = {
    "kdconv": ("travel", "kdconv:{}", "kdconv/travel/kb_travel.json", "kdconv/travel/dev.json", 20),
    "duconv": ("duconv", "duconv:{}", "duconv/dev.head250.jsonl", "duconv/dev.head250.jsonl", 40),
    "durecdial": (
        "dr",
        "durecdial:{}",
        "durecdial/lic2020_baseline_resource_dev.txt",
        "durecdial/lic2020_baseline_resource_dev.txt",
        15,
    ),
}


@pytest.mark.parametrize(
    "fmt",
    [
        "kdconv",
        pytest.param("duconv", marks=pytest.mark.slow),  # the same code as KdConv's, each format's own reader
        pytest.param("durecdial", marks=pytest.mark.slow),
    ],
)
def test_parts_grounded_in_worker_processes_give_what_one_process_gives(fmt, travel, tmp_path, monkeypatch):
    """A shared dev file in small parts over two processes, each part grounded and encoded a few dialogues at a
    time: the same file, byte for byte, and the same report (counts, scores against gold, claims) as one
    process grounding each part at once."""
    domain, source, graph, dialogues, part = CASES[fmt]
    workdir = travel
    if fmt != "kdconv":
        workdir = tmp_path / "kg"
        run_cli("build", domain, "--source", source.format(shared_file(graph)), "--workdir", str(workdir))
    monkeypatch.setattr(run, "PART_DIALOGUES", part)
    path = shared_file(dialogues)
    monkeypatch.setattr(run, "ENCODED_AT_ONCE", 1 << 30)
    one = Domain(domain, workdir).ground(path, tmp_path / "one", fmt=fmt, workers=1)
    monkeypatch.setattr(run, "ENCODED_AT_ONCE", 3)
    two = Domain(domain, workdir).ground(path, tmp_path / "two", fmt=fmt, workers=2)
    assert (one.workers, two.workers) == (1, 2)
    assert (tmp_path / "one").read_bytes() == (tmp_path / "two").read_bytes()
    assert dataclasses.replace(one, out=two.out, workers=2) == two
    assert two.dialogues >= 100 and two.attrs_predicted > 0


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


@pytest.mark.slow  # grounds the dev set twice, in parts
def test_where_the_platform_cannot_fork_the_parts_are_grounded_here(travel, tmp_path, monkeypatch):
    """Windows and macOS (see ``can_fork``): the same output from the calling process, and the report says one."""
    from kgforge.core import processes

    dev = shared_file("kdconv/travel/dev.json")
    monkeypatch.setattr(run, "PART_DIALOGUES", 20)
    forked = Domain("travel", travel).ground(dev, tmp_path / "forked.json", workers=2)
    monkeypatch.setattr(processes.sys, "platform", "darwin")
    here = Domain("travel", travel).ground(dev, tmp_path / "here.json", workers=2)
    assert (forked.workers, here.workers) == (2, 1)
    assert (tmp_path / "forked.json").read_bytes() == (tmp_path / "here.json").read_bytes()
