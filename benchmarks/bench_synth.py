"""Benchmark: `kgforge synth` — 1,000 dialogues against the scripted model (benchmarks/scripted_llm.py) answering
each request after 200 ms, at --concurrency 16.

    python benchmarks/bench_synth.py                # builds the KdConv travel domain from ../shared/data, 1,000 goals
    python benchmarks/bench_synth.py --goals 200    # a shorter run

The scripted server runs in its own process (as a model's endpoint would: its threads never hold this process's
GIL) and plants wrong values in 30% of the knowledge turns, rewriting 80% of them right when asked to repair, so
the run sends drafts and repairs as a real one does. The lower bound on the wall time is the requests sent
times 200 ms over 16 requests in flight; the target is bound / wall >= 0.8: kgforge's own work (reading the goals,
verifying every turn, writing) hides behind the model. Reported beside it: verification CPU per turn checked
(every check of every draft and rewrite) and the process's peak memory. Writes benchmarks/results/synth.json.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kgforge import Domain  # noqa: E402

SHARED = Path(__file__).resolve().parent.parent.parent / "shared" / "data"
LATENCY = 0.2
CONCURRENCY = 16
TARGET = 0.8


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--goals", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "results" / "synth.json")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-synth-") as folder:
        workdir = Path(folder) / "kg"
        kg = Domain("travel", workdir)
        kg.build(sources=[f"kdconv:{SHARED / 'kdconv' / 'travel' / 'kb_travel.json'}"])
        goals = Path(folder) / "goals.jsonl"
        kg.goals(n=args.goals, out=goals, style="kdconv", seed=0)
        server = subprocess.Popen(
            [
                sys.executable,
                str(Path(__file__).parent / "scripted_llm.py"),
                "--style",
                "kdconv",
                "--latency",
                str(LATENCY),
            ],
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            url = server.stdout.readline().strip()
            shutil.rmtree(workdir / "travel" / "raw" / "llm-cache", ignore_errors=True)
            started = time.perf_counter()
            report = kg.synth(
                goals,
                Path(folder) / "out.json",
                style="kdconv",
                llm_url=url,
                llm_model="scripted",
                concurrency=CONCURRENCY,
            )
            wall = time.perf_counter() - started
        finally:
            server.terminate()
            server.wait()
    bound = report.sent * LATENCY / CONCURRENCY
    result = {
        "goals": report.goals,
        "dialogues": report.dialogues,
        "dropped": report.dropped,
        "requests_sent": report.sent,
        "repairs": report.repairs,
        "latency_s": LATENCY,
        "concurrency": CONCURRENCY,
        "bound_s": round(bound, 2),
        "wall_s": round(wall, 2),
        "bound_over_wall": round(bound / wall, 3),
        "target": TARGET,
        "turns_verified": report.turns_verified,
        "verification_cpu_s": report.verification_cpu_seconds,
        "verification_cpu_ms_per_turn": round(
            1000 * report.verification_cpu_seconds / max(report.turns_verified, 1), 3
        ),
        "peak_rss_mib": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
        "verified_share": report.verified_share,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    if result["bound_over_wall"] < TARGET:
        print(f"below the target: bound/wall {result['bound_over_wall']} < {TARGET}", file=sys.stderr)


if __name__ == "__main__":
    main()
