"""`kgforge synth` killed with SIGKILL at random points of a 200-dialogue run against the scripted model, then run
again to the end: the server is asked nothing it had already answered (but the requests in flight at a kill), and
the output is byte for byte the uninterrupted run's."""

from __future__ import annotations

import random
import signal
import time
from collections import Counter
from pathlib import Path

import pytest

from benchmarks.scripted_llm import Script, scripted_server
from tests.faults import orphans, reap, start
from tests.synth_support import build_seed

pytestmark = pytest.mark.slow  # a 200-dialogue run killed four times at random moments, then finished

GOALS = 200
CONCURRENCY = 4
LATENCY = 0.03


def run_args(seed, out: Path, url: str) -> list[str]:
    return [
        "synth", seed.domain, "--goals", str(seed.goals), "--out", str(out), "--style", "kdconv",
        "--llm-url", url, "--llm-model", "scripted", "--concurrency", str(CONCURRENCY), "--seed", "3",
        "--workdir", str(seed.workdir),
    ]  # fmt: skip


def test_killed_runs_resume_without_asking_again_and_write_the_same_bytes(tmp_path: Path, cli) -> None:
    reference = build_seed(tmp_path / "reference", "kdconv", n=GOALS)
    seed = build_seed(tmp_path / "killed", "kdconv", n=GOALS)
    assert reference.goals.read_bytes() == seed.goals.read_bytes()
    with scripted_server(Script("kdconv", latency=LATENCY)) as server:
        cli(*run_args(reference, tmp_path / "reference.json", server.url))
        expected = (tmp_path / "reference.json").read_bytes()
    script = Script("kdconv", latency=LATENCY)
    out = tmp_path / "out.json"
    kills: list[float] = []
    rng = random.Random(47)
    with scripted_server(script) as server:
        for _ in range(4):
            answered = len(script.log)
            process, tag = start(run_args(seed, out, server.url))
            while process.poll() is None and len(script.log) < answered + 5:  # until it is asking
                time.sleep(0.01)
            time.sleep(rng.uniform(0.0, 1.5))
            if process.poll() is None:
                process.send_signal(signal.SIGKILL)
                kills.append(time.monotonic())
            process.wait()
            try:
                assert not orphans(tag)
            finally:
                reap(tag)
        cli(*run_args(seed, out, server.url))
    assert len(kills) >= 3, "the run ended before it could be killed"
    assert out.read_bytes() == expected
    seen = Counter(entry["key"] for entry in script.log)
    twice = [entry for entry in script.log if seen[entry["key"]] > 1]
    first_answers = {}
    for entry in twice:
        first_answers.setdefault(entry["key"], entry["answered"])
    # a request asked again was in flight when its run was killed: answered just before its reply could be kept,
    # or after the kill (into a socket nobody read)
    late = [t for t in first_answers.values() if not any(abs(kill - t) <= 1.0 for kill in kills)]
    assert late == [] and len(first_answers) <= len(kills) * CONCURRENCY
    assert not list(tmp_path.glob("out.json.part*"))
