"""Every process kgforge (or a Ray instance it starts) runs dies with its driver: SIGKILL the driver, and
within seconds nothing it started is left: the query worker, the dump-parsing pool and its forkserver,
processes that do not watch their parent at all (under the reaper), and a local Ray instance's agents."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.faults import TAG, orphans, reap, tagged_processes
from tests.test_entry_points import environment

pytestmark = pytest.mark.slow  # drivers killed and their process trees (a Ray instance too) waited for

GRACE = 8.0  # seconds the leftovers get to notice; the reaper polls every second, then TERM, then KILL


def start_driver(code: str, tag: str, cwd: Path) -> subprocess.Popen:
    """Run ``code`` in a fresh interpreter tagged ``tag``; return once it printed ``ready``."""
    env = {**environment(), TAG: tag}
    driver = subprocess.Popen(
        [sys.executable, "-c", textwrap.dedent(code)],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    for line in driver.stdout:
        if line.strip() == "ready":
            return driver
    driver.wait()
    raise AssertionError(f"the driver ended before it was ready (exit status {driver.returncode})")


def kill_and_count(driver: subprocess.Popen, tag: str) -> tuple[int, list[tuple[int, str]]]:
    started = len(tagged_processes(tag))
    os.kill(driver.pid, signal.SIGKILL)
    driver.wait()
    try:
        return started, orphans(tag, GRACE)
    finally:
        reap(tag)


def test_processes_that_ignore_their_parent_die_under_the_reaper(tmp_path):
    tag = "lifeline-reaper"
    driver = start_driver(
        """
        import subprocess, sys, time
        from kgforge.core.lifeline import reap_descendants_when_gone
        reap_descendants_when_gone()
        # a child that outlives its parent, and its own child in a session of its own
        subprocess.Popen([sys.executable, "-c", "import subprocess, time; "
                          "subprocess.Popen(['sleep', '300'], start_new_session=True); time.sleep(300)"])
        time.sleep(2.5)  # the reaper has looked at least twice
        print("ready", flush=True)
        time.sleep(300)
    """,
        tag,
        tmp_path,
    )
    started, left = kill_and_count(driver, tag)
    assert started >= 4  # the driver, the reaper, the child, the grandchild
    assert left == []


def test_query_worker_and_parsing_pool_die_with_their_driver(tmp_path):
    tag = "lifeline-workers"
    driver = start_driver(
        """
        import threading, time
        from pathlib import Path
        from kgforge import Domain
        from kgforge.publish.domain_import import import_into_domain
        from kgforge.publish.link import start_entity_names
        from kgforge.demo.wikidata_dump import write_demo_dump
        from kgforge.sources.wikidata import pipeline

        kg = Domain("demo", workdir="kg")
        kg.build()
        kg.query("ASK { ?s ?p ?o }")  # Domain.query closes its runner: keep one open below
        from kgforge.store.query import QueryRunner
        from kgforge.store.snapshot import Snapshot
        runner = QueryRunner(Snapshot.open("demo", Path("kg")))
        runner.query("ASK { ?s ?p ?o }")
        hold = threading.Event()
        def slow_results(original=pipeline._collect):
            def collect(future, ring):
                result = original(future, ring)
                print("ready", flush=True)  # the pool is up and working
                hold.wait()
                return result
            return collect
        pipeline._collect = slow_results()
        import_into_domain("demo", "wikidata", write_demo_dump("d.json"), {
            "seed_names": start_entity_names(Snapshot.open("demo", Path("kg"))), "hops": 1, "workers": 2, "batch_bytes": 512},
            Path("kg"), show_progress=False)
    """,
        tag,
        tmp_path,
    )
    started, left = kill_and_count(driver, tag)
    assert started >= 5  # the driver, the query worker, the forkserver, two parsing workers
    assert left == []


@pytest.mark.slow
def test_a_local_ray_instance_dies_with_its_driver(tmp_path):
    pytest.importorskip("ray")
    tag = "lifeline-ray"
    driver = start_driver(
        """
        import subprocess, time
        from kgforge.sources.wikidata.ray_engine import RayEngine
        subprocess.Popen(["sleep", "301"])  # the user's own: not Ray's, so left alone
        engine = RayEngine(2)
        engine.connect()
        import ray
        @ray.remote
        def echo(x):
            return x
        assert ray.get([echo.remote(i) for i in range(4)]) == [0, 1, 2, 3]
        time.sleep(2.5)  # the reaper has seen the raylet's agents
        print("ready", flush=True)
        time.sleep(300)
    """,
        tag,
        tmp_path,
    )
    started, left = kill_and_count(driver, tag)
    assert started >= 9  # driver, sleep, reaper, GCS, raylet, monitor, log monitor, agents, workers
    assert [command for _, command in left] == ["sleep 301"], left
