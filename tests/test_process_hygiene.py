"""Worker processes die with their parent: SIGKILL a real `kgforge import wikidata` (two parsing workers, a
bzip2 decompressor) at seeded random points; nothing of it stays alive or keeps a file of the run open, the
store stays whole, and the resumed import ends with what an uninterrupted one gives."""

from __future__ import annotations

import bz2
import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from kgforge.demo.wikidata_dump import write_demo_dump, write_dump
from tests.faults import (
    kill_at_random_point,
    open_files,
    orphans,
    reap,
    seconds_after_ready,
    tagged_processes,
)
from tests.test_wikidata_dump import many_entities

pytestmark = pytest.mark.slow  # real imports and queries killed at seeded random points, then /proc scanned for orphans

KILLS = 4
WORKERS = 2
# the kgforge process, its bzip2 and the pool: forkserver, resource tracker and at least one worker
POOL_UP = 4


def dump_file(tmp_path: Path, entities: int) -> Path:
    plain = write_dump(tmp_path / "dump.json", many_entities(entities))
    packed = tmp_path / "dump.json.bz2"
    packed.write_bytes(bz2.compress(plain.read_bytes(), compresslevel=1))
    plain.unlink()
    return packed


def store_quads(cli, workdir: Path, out: Path) -> list[str]:
    cli("export-rdf", "film", "--format", "nq", "--out", str(out), "--workdir", str(workdir))
    return sorted(out.read_text(encoding="utf-8").splitlines())


def test_killed_wikidata_imports_leave_nothing_running_and_resume_exactly(cli, tmp_path: Path) -> None:
    dump = dump_file(tmp_path, 16000)
    killed, fresh = tmp_path / "killed", tmp_path / "fresh"
    first = write_demo_dump(tmp_path / "demo.json")  # the store the killed imports must leave intact
    for workdir in (killed, fresh):
        cli("import", "wikidata", str(first), "--domain", "film", "--workdir", str(workdir), "--json")
    args = ["import", "wikidata", str(dump), "--domain", "film", "--workers", str(WORKERS), "--json"]
    env = {"KGFORGE_WIKIDATA_CHECKPOINT_SECONDS": "0.2"}
    # every kill lands within the first fifth of an uninterrupted import's working time, so the four
    # together (each resuming the last) cannot finish it, however fast the machine
    tag = uuid.uuid4().hex
    span = seconds_after_ready(
        [*args, "--workdir", str(fresh)], tag=tag, env=env, ready=lambda: len(tagged_processes(tag)) >= POOL_UP
    )
    landed = 0
    for seed in range(KILLS):
        tag = uuid.uuid4().hex
        try:
            run = kill_at_random_point(
                [*args, "--workdir", str(killed)],
                seed,
                (0.02 * span, 0.2 * span),
                tag=tag,
                ready=lambda: len(tagged_processes(tag)) >= POOL_UP,
                env=env,
            )
            left = orphans(tag, grace=5)
            assert not left, f"kill {seed} (after {run.delay:.2f} s): still running: {left}"
        finally:
            reap(tag)
        landed += run.killed
        assert not open_files(tmp_path), f"kill {seed}: files of the run still held open"
        cli("check", "film", "--workdir", str(killed))
    assert landed >= KILLS - 1, f"the import finished before most kills could land ({span:.2f} s of work)"
    resumed = json.loads(cli(*args, "--workdir", str(killed)).stdout)
    assert resumed["source"]["counts"]["entities"] == 16000
    cli("check", "film", "--workdir", str(killed))
    assert store_quads(cli, killed, tmp_path / "killed.nq") == store_quads(cli, fresh, tmp_path / "fresh.nq")
    assert not open_files(tmp_path)


def test_a_query_worker_dies_with_a_killed_query(cli, tmp_path: Path) -> None:
    """`kgforge query` runs each query in a worker process; killing the command mid-query ends the worker
    too, instead of leaving it to finish a query nobody waits for, holding the store open."""
    workdir = tmp_path / "kg"
    cli(
        "import",
        "wikidata",
        str(write_demo_dump(tmp_path / "demo.json")),
        "--domain",
        "film",
        "--workdir",
        str(workdir),
        "--json",
    )
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o }"
    tag = uuid.uuid4().hex
    try:
        run = kill_at_random_point(
            ["query", "film", endless, "--timeout", "600", "--workdir", str(workdir)],
            seed=0,
            window=(0.5, 1.0),
            tag=tag,
            ready=lambda: len(tagged_processes(tag)) >= 2,
        )
        assert run.killed, "the query finished before the kill: make it slower"
        assert not orphans(tag, grace=5)
    finally:
        reap(tag)
    assert not open_files(workdir)


WATCHER = """
import os, subprocess, sys, threading, time
from kgforge.core import lifeline
if sys.argv[1] == "poll":
    del os.pidfd_open  # as where there is no pidfd: the fallback watches by polling
    lifeline.POLL_SECONDS = 0.05
watched = subprocess.Popen(["sleep", sys.argv[2]])
threading.Thread(target=watched.wait, daemon=True).start()  # reaped at once, as a parent's parent does
if sys.argv[2] == "0":
    watched.wait()
lifeline.die_with(watched.pid)
time.sleep(60)
sys.exit(0)
"""


@pytest.mark.parametrize("how", ["pidfd", "poll"])
@pytest.mark.parametrize("lives", ["0", "0.3"])
def test_die_with_ends_this_process_once_the_watched_one_is_gone(how: str, lives: str) -> None:
    """Gone before the call, or while this process waits: it exits (status 1) instead of sleeping on."""
    result = subprocess.run([sys.executable, "-c", WATCHER, how, lives], timeout=30)
    assert result.returncode == 1
