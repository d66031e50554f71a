"""Benchmark: `kgforge release` of 30k DuConv sessions on a DuConv-scale graph (target: <= 60 s on this machine).

    python benchmarks/bench_release.py                      # 144k entities, ~3.6M triples, 30k sessions
    python benchmarks/bench_release.py --small              # 10k entities, 250k triples, for a quick look
    python benchmarks/bench_release.py --keep DIR           # build into DIR and keep it, for --reuse
    python benchmarks/bench_release.py --reuse DIR --repeats 3

The sessions are bench_dialogue.py's: the synthetic KB of ``benchmarks/synthetic.py`` built as domain duconv,
derived, 30k goals sampled and exported as DuConv samples, each made into a session whose conversation asks about and
states its knowledge. Each repeat times, in a fresh ``kgforge`` process from outside, the whole release (reading
and checking the sessions, grounding them, the layout file, the turn table as JSON Lines and Parquet, kg/used.nt,
the card with its statistics, croissant.json, release.json) and then `kgforge release check --no-records`: wall
seconds, CPU seconds, peak RSS. Writes benchmarks/results/release.json (or --results).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_dialogue import (  # noqa: E402
    CLI,
    CPU_SECONDS,
    kgforge,
    machine,
    real_dialogues,
    run_measured,
    write_results,
)
from benchmarks.synthetic import cached_synthetic_kb  # noqa: E402

TARGET_SECONDS = 60.0
DEFAULT_RESULTS = Path(__file__).resolve().parent / "results" / "release.json"


def sessions_file(work: Path, kb: Path, goals: int, reuse: bool) -> tuple[Path, dict]:
    """The synthetic graph built as domain duconv in ``work`` (unless reused) and its 30k sessions."""
    w = ("--workdir", str(work))
    sessions = work / "sessions.txt"
    if reuse and sessions.exists():
        built = json.loads((work / "duconv" / "manifest.json").read_text(encoding="utf-8"))
        return sessions, {"quads": built["total_quads"], "reused_workdir": True}
    if not reuse:
        print("kgforge build ...", file=sys.stderr)
        built, seconds, _ = kgforge("build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources", *w)
    else:
        built, seconds = json.loads((work / "duconv" / "manifest.json").read_text(encoding="utf-8")), float("nan")
    print(f"kgforge derive, goals --n {goals}, export ...", file=sys.stderr)
    kgforge("derive", "duconv", *w)  # the two-step goals' associated triples
    kgforge("goals", "duconv", "--n", str(goals), "--seed", "0", "--out", str(work / "goals.jsonl"), *w)
    samples = work / "train.txt"
    kgforge("export", "duconv", "--goals", str(work / "goals.jsonl"), "--format", "duconv", "--out", str(samples), *w)
    sessions, _ = real_dialogues(samples, work)
    return sessions, {"quads": built["total_quads"], "build_seconds": round(seconds, 1), "reused_workdir": reuse}


def measure(work: Path, sessions: Path, repeats: int) -> dict:
    out = work / "release"
    release = [*CLI, "release", "duconv", "--dialogues", str(sessions), "--out", str(out), "--workdir", str(work)]
    runs, cpu, rss, checks = [], [], [], []
    report: dict = {}
    for repeat in range(repeats):
        print(f"kgforge release, run {repeat + 1}/{repeats} ...", file=sys.stderr)
        shutil.rmtree(out, ignore_errors=True)
        printed, seconds, peak = run_measured([*release, "--json"])
        report = json.loads(printed)
        runs.append(round(seconds, 2))
        cpu.append(CPU_SECONDS[-1])
        rss.append(peak)
        _, check_seconds, check_peak = run_measured([*CLI, "release", "check", str(out), "--no-records", "--json"])
        checks.append({"seconds": round(check_seconds, 2), "cpu_s": CPU_SECONDS[-1], "peak_rss_mib": check_peak})
    median = statistics.median(runs)
    return {
        "seconds_median": median,
        "runs_s": runs,
        "cpu_s": cpu,
        "peak_rss_mib": max(rss),
        "peak_rss_mib_per_run": rss,
        "target_s": TARGET_SECONDS,
        "within_target": median <= TARGET_SECONDS,
        "dialogues": report["dialogues"],
        "turns": report["turns"],
        "facts_stated": report["facts_stated"],
        "facts_in_graph": report["facts_in_graph"],
        "kg_statements": report["kg_statements"],
        "release_bytes": sum(p.stat().st_size for p in out.rglob("*") if p.is_file()),
        "check_no_records": checks,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--goals", type=int, default=30_000)
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument("--reuse", type=Path, help="a --workdir built before (with --keep) from the same KB")
    parser.add_argument("--keep", type=Path, help="build into this --workdir (new or empty) and keep it")
    args = parser.parse_args()
    kb = cached_synthetic_kb(args.out, args.small)
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty (give --reuse {args.keep} to measure on it)")
    work = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="kgforge-bench-release-"))
    sessions, graph = sessions_file(work, kb, args.goals, bool(args.reuse))
    graph["entities"] = 10_000 if args.small else 144_000
    result = {"graph": graph, "release": measure(work, sessions, args.repeats), "machine": machine()}
    write_results(args.results, result)
    if not (args.reuse or args.keep):
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
