"""Benchmark: derive, goal sampling and per-dialogue export on a DuConv-scale graph, each beside its naive way.

    python benchmarks/bench_dialogue.py            # 144k entities, ~3.6M triples (DuConv Table 2 scale)
    python benchmarks/bench_dialogue.py --small    # 10k entities, 250k triples, for a quick look
    python benchmarks/bench_dialogue.py --keep DIR ...            # build into DIR and keep it for --reuse
    python benchmarks/bench_dialogue.py --reuse DIR --repeats 3   # re-measure on a store built before
    python benchmarks/bench_dialogue.py --small --derive-only --repeats 3   # derive against bulk loads only

Builds the synthetic KB of ``benchmarks/synthetic.py`` (cached in bench-out/), then, every stage a
fresh ``kgforge`` process timed from outside (wall seconds, as a user waits):

* ``kgforge derive duconv`` (polars join, stop-list, cap 50; includes reading the store and re-loading it
  with the new graph) — beside the SPARQL self-join ``queries/associated_self_join.rq`` under a timeout
  (reported as "did not finish in N s" when it runs out);
* derive's phases (read, join, write, load) against, alternating in each repeat, a bulk load into a fresh store
  of the very quads derive loaded and of the build's own quads files: derive's load phase in quads/s against
  both, derive against its own join + write (targets: load >= 0.8x the build's bulk load, derive <= 1.5x join
  + write; ``--derive-only`` stops there);
* ``kgforge goals duconv --n 30000`` (half one-step, half two-step) — beside ``goal_one_step.rq`` with
  ``ORDER BY RAND() LIMIT 15000`` over the whole graph, under the same timeout;
* ``kgforge export duconv --format duconv`` of those 30k goals — beside one SPARQL query per dialogue
  (``queries/dialogue_subgraph.rq``), run on a sample of dialogues and extrapolated (labelled so);
* ``kgforge export duconv --dialogues`` of 30k real-layout DuConv sessions and of 30k KdConv dialogues
  (made from those goals: the same topics and knowledge, a conversation that names them, KdConv attrs
  on the messages that state a fact), each as a ratio to the goal export of the same run.

Medians of --repeats for the kgforge stages; every measured process's peak RSS and CPU seconds beside its wall
seconds. Writes benchmarks/results/dialogue.json (or --results).
Targets: derive <= 30 s, 30k goals <= 60 s, 30k DuConv subgraphs <= 60 s on 2 cores; 30k DuConv
real-dialogue exports and 30k KdConv re-groundings within 1.5x of the goal export.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.synthetic import cached_synthetic_kb  # noqa: E402

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
TARGETS = {"derive": 30.0, "goals": 60.0, "export": 60.0}
DEFAULT_RESULTS = Path(__file__).resolve().parent / "results" / "dialogue.json"
RATIO_TARGET = 1.5  # real-dialogue exports against the goal export of the same run
CPU_SECONDS: list[float] = []
BASELINE_QUERY = """
import json, sys, time
import pyoxigraph as ox
from kgforge.store.snapshot import Snapshot
from kgforge.core.errors import QueryTimeout
from kgforge.store.query import QueryRunner
from kgforge.core.resources import query_text
from kgforge.store.layout import domain_paths

def main():
    workdir, name, suffix, timeout = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
    with QueryRunner(Snapshot.open("duconv", workdir)) as runner:
        runner.query("ASK { ?s ?p ?o }")  # start the worker outside the clock
        started = time.perf_counter()
        try:
            rows = len(runner.query(query_text(name) + suffix, timeout=timeout).rows)
            print(json.dumps({"seconds": time.perf_counter() - started, "rows": rows, "finished": True}))
        except QueryTimeout:
            print(json.dumps({"seconds": timeout, "rows": None, "finished": False}))

if __name__ == "__main__":
    main()
"""
PER_DIALOGUE = """
import json, sys, time
import pyoxigraph as ox
from kgforge.store.query import QueryRunner
from kgforge.core.resources import query_text
from kgforge.store.layout import domain_paths

def main():
    workdir, goals_file, sample = sys.argv[1], sys.argv[2], int(sys.argv[3])
    goals = [json.loads(line) for line in open(goals_file, encoding="utf-8")][:sample]
    text = query_text("dialogue_subgraph")
    with QueryRunner(Snapshot.open("duconv", workdir)) as runner:
        runner.query("ASK { ?s ?p ?o }")
        started = time.perf_counter()
        triples = 0
        for goal in goals:
            a, b = (ox.NamedNode(t) for t in goal["topics"][:2])
            triples += len(runner.query(text, {"a": a, "b": b}, timeout=60).rows)
        print(json.dumps({"seconds": time.perf_counter() - started, "dialogues": len(goals), "triples": triples}))

if __name__ == "__main__":
    main()
"""


RAW_BULK_LOAD = """
import json, sys, time
import pyoxigraph as ox
store = ox.Store(sys.argv[1])
started, cpu = time.perf_counter(), time.process_time()
for path in sys.argv[2:]:
    store.bulk_load(path=path, format=ox.RdfFormat.N_QUADS)
store.flush()
seconds, cpu = time.perf_counter() - started, time.process_time() - cpu
print(json.dumps({"seconds": seconds, "cpu_s": cpu, "quads": len(store)}))
"""


def run_measured(args: list[str]) -> tuple[str, float, int]:
    """Run a command; return its stdout, wall seconds and peak RSS in MiB (of that process).
    Its CPU seconds (user + system) go to ``CPU_SECONDS[-1]``: wall time on a shared 2-core machine
    also holds the time other processes took, CPU time does not."""
    started = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err:
        process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=err, text=True)
        out = process.stdout.read()
        _, status, usage = os.wait4(process.pid, 0)
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"command failed: {' '.join(args)}\n{err.read()[-3000:]}")
    CPU_SECONDS.append(round(usage.ru_utime + usage.ru_stime, 2))
    return out, time.perf_counter() - started, usage.ru_maxrss // 1024


def kgforge(*args: str) -> tuple[dict, float, int]:
    out, seconds, rss = run_measured([*CLI, *args, "--json"])
    return json.loads(out), seconds, rss


def median_runs(repeats: int, label: str, *args: str) -> tuple[dict, list[float], int, list[float]]:
    runs, cpu, report, rss = [], [], {}, 0
    for repeat in range(repeats):
        print(f"{label}, run {repeat + 1}/{repeats} ...", file=sys.stderr)
        report, seconds, rss = kgforge(*args)
        runs.append(seconds)
        cpu.append(CPU_SECONDS[-1])
    return report, runs, rss, cpu


def raw_bulk_load(files: list[Path]) -> dict:
    """``pyoxigraph.Store.bulk_load`` of ``files`` into a fresh store, in a process of its own: seconds and CPU
    seconds of the load alone, quads per second, and the process's peak RSS."""
    with tempfile.TemporaryDirectory(prefix="raw-load-") as folder:
        out, _, rss = run_measured([sys.executable, "-c", RAW_BULK_LOAD, folder, *map(str, files)])
    result = json.loads(out)
    return {**result, "quads_per_s": round(result["quads"] / result["seconds"]), "peak_rss_mib": rss}


def derive_against_bulk_load(work: Path, repeats: int) -> tuple[dict, list[float], int, list[float], dict]:
    """``kgforge derive`` (its phases from its report) and, alternating with it in each repeat so both meet the
    same load, a bulk load into a fresh store of the very quads derive loaded and of the build's own quads
    files (the full build's bulk load). Returns derive's last report, wall seconds, peak RSS and CPU seconds,
    and the comparison: derive's load phase against both bulk loads, derive against its own join + write."""
    w = ("--workdir", str(work))
    report, runs, cpu, rss, compared = {}, [], [], 0, []
    for repeat in range(repeats):
        print(f"kgforge derive, run {repeat + 1}/{repeats} ...", file=sys.stderr)
        report, seconds, rss = kgforge("derive", "duconv", *w)
        runs.append(seconds)
        cpu.append(CPU_SECONDS[-1])
        build = (work / "duconv" / "store").resolve()
        manifest = json.loads((build / "manifest.json").read_text(encoding="utf-8"))
        derived = [build / e["quads_file"] for e in manifest["graphs"].values() if e["kind"] == "derived-associated"]
        sources = [build / e["quads_file"] for e in manifest["graphs"].values() if not e["kind"].startswith("derived")]
        print("bulk loads of the same quads ...", file=sys.stderr)
        same, full = raw_bulk_load(derived), raw_bulk_load(sources)
        phases = report["timings"]
        load_rate = report["quads"] / phases["load_seconds"]
        compared.append(
            {
                "derive_phases_s": phases,
                "derive_command_s": round(seconds, 2),
                "derive_cpu_s": cpu[-1],
                "derive_peak_rss_mib": rss,
                "derive_load_quads_per_s": round(load_rate),
                "bulk_load_same_quads": same,
                "bulk_load_build_quads": full,
                "load_vs_bulk_load_same_quads": round(load_rate / same["quads_per_s"], 2),
                "load_vs_bulk_load_build_quads": round(load_rate / full["quads_per_s"], 2),
                "derive_over_join_plus_write": _over_join_plus_write(phases, "seconds"),
                "derive_cpu_over_join_plus_write_cpu": _over_join_plus_write(phases, "cpu_seconds"),
            }
        )
    keys = (
        "load_vs_bulk_load_same_quads",
        "load_vs_bulk_load_build_quads",
        "derive_over_join_plus_write",
        "derive_cpu_over_join_plus_write_cpu",
    )
    summary = {f"{k}_median": statistics.median(c[k] for c in compared) for k in keys}
    summary.update(
        targets={"load_vs_bulk_load_build_quads": ">= 0.8", "derive_over_join_plus_write": "<= 1.5"}, runs=compared
    )
    return report, runs, rss, cpu, summary


def _over_join_plus_write(phases: dict[str, float], unit: str) -> float | None:
    """Derive's four phases together against its join + write, in wall ``seconds`` or ``cpu_seconds``."""
    times = {phase: phases.get(f"{phase}_{unit}") for phase in ("read", "join", "write", "load")}
    if None in times.values():
        return None  # a kgforge that does not report this unit
    return round(sum(times.values()) / (times["join"] + times["write"]), 2)


def real_dialogues(samples: Path, work: Path) -> tuple[Path, Path]:
    """DuConv sessions and KdConv dialogues made from the goal export's samples (same topics, same
    knowledge): a conversation that asks about and states the knowledge, as a crowd worker writes one;
    the KdConv messages that state a fact carry it as gold ``attrs``, as the real data does."""
    from kgforge.core.text import normalise_label

    sessions, kdconv = work / "sessions.txt", work / "kdconv.json"
    dialogues = []
    with open(samples, encoding="utf-8") as source, open(sessions, "w", encoding="utf-8") as out:
        for line in source:
            record = json.loads(line)
            facts = [t for t in record["knowledge"] if t[1] != "领域"][:8]
            conversation = [text for s, p, o in facts for text in (f"{s} 的 {p} 是 什么 ？", f"{s} 的 {p} 是 {o} 。")]
            out.write(
                json.dumps(
                    {"goal": record["goal"], "knowledge": record["knowledge"], "conversation": conversation},
                    ensure_ascii=False,
                )
                + "\n"
            )
            messages = []
            for s, p, o in ([normalise_label(x) for x in t] for t in facts):
                messages += [
                    {"message": f"{s}的{p}是什么？"},
                    {"message": f"{s}的{p}是{o}。", "attrs": [{"name": s, "attrname": p, "attrvalue": o}]},
                ]
            dialogues.append({"name": normalise_label(record["goal"][0][1]), "messages": messages})
    kdconv.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    return sessions, kdconv


def baseline(work: Path, name: str, suffix: str, timeout: float) -> dict:
    out, _, rss = run_measured([sys.executable, "-c", BASELINE_QUERY, str(work), name, suffix, str(timeout)])
    result = {**json.loads(out), "peak_rss_mib": rss, "cpu_s": CPU_SECONDS[-1]}
    if not result["finished"]:
        result["note"] = f"did not finish in {timeout:g} s"
    return result


def _real_stage(
    report: dict, runs: list[float], cpu: list[float], rss: int, goal_runs: list[float], goal_cpu: list[float]
) -> dict:
    """A real-dialogue export beside the goal export: wall and CPU ratios of each repeat (the two ran
    one after the other) and their medians."""
    ratios = [round(r / g, 2) for r, g in zip(runs, goal_runs)]
    cpu_ratios = [round(r / g, 2) for r, g in zip(cpu, goal_cpu)]
    return {
        "seconds_median": round(statistics.median(runs), 2),
        "runs_s": [round(x, 2) for x in runs],
        "cpu_s": cpu,
        "peak_rss_mib": rss,
        "dialogues": report["dialogues"],
        "records": report["records"],
        "retrieved_per_dialogue": report["retrieved_per_dialogue"],
        "attr_coverage": report["attr_coverage"],
        "gold_kept_exactly": report["gold_kept_exactly"],
        "ratio_to_goal_export": statistics.median(ratios),
        "ratios_per_repeat": ratios,
        "cpu_ratio_to_goal_export": statistics.median(cpu_ratios),
        "cpu_ratios_per_repeat": cpu_ratios,
        "target_ratio": RATIO_TARGET,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--goals", type=int, default=30_000)
    parser.add_argument("--baseline-timeout", type=float, default=120.0)
    parser.add_argument("--baseline-sample", type=int, default=300, help="dialogues queried one by one")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--results", type=Path, default=DEFAULT_RESULTS)
    parser.add_argument(
        "--reuse",
        type=Path,
        help="a --workdir already built from the same synthetic KB (skips the build; derive then measures a re-run)",
    )
    parser.add_argument(
        "--keep",
        type=Path,
        help="build into this --workdir (new or empty) and keep it, for later runs with --reuse",
    )
    parser.add_argument(
        "--derive-only",
        action="store_true",
        help="only the build and derive against bulk loads of the same quads "
        "(writes results/dialogue_derive.json, or --results)",
    )
    args = parser.parse_args()
    kb = cached_synthetic_kb(args.out, args.small)
    if args.keep and args.keep.exists() and any(args.keep.iterdir()):
        parser.error(f"--keep {args.keep}: not empty (give --reuse {args.keep} to measure on it)")
    work = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="kgforge-bench-dialogue-"))
    w = ("--workdir", str(work))
    if args.reuse:
        built = json.loads((work / "duconv" / "manifest.json").read_text(encoding="utf-8"))
        build_seconds = float("nan")
    else:
        print("kgforge build ...", file=sys.stderr)
        built, build_seconds, build_rss = kgforge(
            "build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources", *w
        )
    graph = {
        "entities": 10_000 if args.small else 144_000,
        "kb": str(kb),
        "quads": built["total_quads"],
        "build_seconds": round(build_seconds, 1),
        "build_peak_rss_mib": None if args.reuse else build_rss,
        "build_cpu_s": None if args.reuse else CPU_SECONDS[-1],
        "build_load_quads_per_s": built["timings"].get("load_quads_per_second"),
        "reused_workdir": bool(args.reuse),
    }

    derived, derive_runs, derive_rss, derive_cpu, against = derive_against_bulk_load(work, args.repeats)
    if args.derive_only:
        results = args.results if args.results != DEFAULT_RESULTS else DEFAULT_RESULTS.with_name("dialogue_derive.json")
        write_results(results, {"graph": graph, "derive_against_bulk_load": against, "machine": machine()})
        return
    print("baseline: SPARQL self-join ...", file=sys.stderr)
    self_join = baseline(work, "associated_self_join", "", args.baseline_timeout)

    goals_file = work / "goals.jsonl"
    goals, goals_runs, goals_rss, goals_cpu = median_runs(
        args.repeats,
        f"kgforge goals --n {args.goals}",
        "goals",
        "duconv",
        "--n",
        str(args.goals),
        "--seed",
        "0",
        "--out",
        str(goals_file),
        *w,
    )
    print("baseline: ORDER BY RAND() ...", file=sys.stderr)
    rand = baseline(work, "goal_one_step", f"\nORDER BY RAND() LIMIT {args.goals // 2}", args.baseline_timeout)

    export_file = work / "train.txt"
    goal_export = ("export", "duconv", "--goals", str(goals_file), "--format", "duconv", "--out", str(export_file), *w)
    kgforge(*goal_export)  # the samples the real dialogues are made from
    sessions, kdconv = real_dialogues(export_file, work)
    stages = {
        "export": goal_export,
        "real": (
            "export",
            "duconv",
            "--dialogues",
            str(sessions),
            "--format",
            "duconv",
            "--out",
            str(work / "sessions.out.txt"),
            *w,
        ),
        "kdconv": (
            "export",
            "duconv",
            "--dialogues",
            str(kdconv),
            "--format",
            "kdconv",
            "--out",
            str(work / "kdconv.out.json"),
            *w,
        ),
    }
    # The three exports take turns within each repeat, so each ratio compares runs made under the same load.
    reports: dict[str, dict] = {}
    runs: dict[str, list[float]] = {k: [] for k in stages}
    cpu: dict[str, list[float]] = {k: [] for k in stages}
    rss: dict[str, int] = {}
    for repeat in range(args.repeats):
        for name, stage in stages.items():
            print(f"kgforge {' '.join(stage[:2])} ({name}), run {repeat + 1}/{args.repeats} ...", file=sys.stderr)
            reports[name], seconds, rss[name] = kgforge(*stage)
            runs[name].append(seconds)
            cpu[name].append(CPU_SECONDS[-1])
    exported, export_runs, export_rss, export_cpu = reports["export"], runs["export"], rss["export"], cpu["export"]
    real, real_runs, real_rss, real_cpu = reports["real"], runs["real"], rss["real"], cpu["real"]
    regrounded, kd_runs, kd_rss, kd_cpu = reports["kdconv"], runs["kdconv"], rss["kdconv"], cpu["kdconv"]
    print(f"baseline: one SPARQL query per dialogue ({args.baseline_sample} dialogues) ...", file=sys.stderr)
    out, _, per_dialogue_rss = run_measured(
        [sys.executable, "-c", PER_DIALOGUE, str(work), str(goals_file), str(args.baseline_sample)]
    )
    per_dialogue = json.loads(out)
    per_dialogue_total = per_dialogue["seconds"] / per_dialogue["dialogues"] * goals["goals"]

    derive_s, goals_s, export_s = (statistics.median(r) for r in (derive_runs, goals_runs, export_runs))
    result = {
        "graph": graph,
        "derive": {
            "seconds_median": round(derive_s, 2),
            "runs_s": [round(x, 2) for x in derive_runs],
            "phases_s": derived["timings"],
            "pairs": derived["pairs"],
            "quads": derived["quads"],
            "groups_capped": derived["groups_capped"],
            "pairs_left_out_by_cap": derived["pairs_left_out_by_cap"],
            "max_group": derived["options"]["max_group"],
            "max_pairs": derived["options"]["max_pairs"],
            "cpu_s": derive_cpu,
            "peak_rss_mib": derive_rss,
            "target_s": TARGETS["derive"],
        },
        "derive_against_bulk_load": against,
        "derive_baseline_sparql_self_join": self_join,
        "goals": {
            "seconds_median": round(goals_s, 2),
            "runs_s": [round(x, 2) for x in goals_runs],
            "goals": goals["goals"],
            "kinds": goals["kinds"],
            "relations": len(goals["relations"]),
            "cpu_s": goals_cpu,
            "peak_rss_mib": goals_rss,
            "target_s": TARGETS["goals"],
        },
        "goals_baseline_order_by_rand": rand,
        "export": {
            "seconds_median": round(export_s, 2),
            "runs_s": [round(x, 2) for x in export_runs],
            "dialogues": exported["dialogues"],
            "triples": exported["triples"],
            "triples_per_dialogue": round(exported["triples"] / exported["dialogues"], 1),
            "cpu_s": export_cpu,
            "peak_rss_mib": export_rss,
            "target_s": TARGETS["export"],
        },
        "export_duconv_dialogues": _real_stage(real, real_runs, real_cpu, real_rss, export_runs, export_cpu),
        "export_kdconv_regrounding": _real_stage(regrounded, kd_runs, kd_cpu, kd_rss, export_runs, export_cpu),
        "export_baseline_query_per_dialogue": {
            "measured_dialogues": per_dialogue["dialogues"],
            "measured_seconds": round(per_dialogue["seconds"], 2),
            "extrapolated_seconds_for_all": round(per_dialogue_total, 1),
            "peak_rss_mib": per_dialogue_rss,
            "note": f"extrapolated from {per_dialogue['dialogues']} dialogues to {goals['goals']}; raw facts only "
            "(no ranking, labels of relations or checks)",
        },
        "ratios": {
            "export_baseline_over_kgforge": round(per_dialogue_total / export_s, 1),
            "derive_baseline_over_kgforge": (
                round(self_join["seconds"] / derive_s, 1)
                if self_join["finished"]
                else f">{self_join['seconds'] / derive_s:.1f} (baseline unfinished)"
            ),
        },
        "machine": machine(),
    }
    result["meets_targets"] = {
        "derive": derive_s <= TARGETS["derive"],
        "goals": goals_s <= TARGETS["goals"],
        "export": export_s <= TARGETS["export"],
        "duconv_dialogues": result["export_duconv_dialogues"]["ratio_to_goal_export"] <= RATIO_TARGET,
        "kdconv_regrounding": result["export_kdconv_regrounding"]["ratio_to_goal_export"] <= RATIO_TARGET,
    }
    write_results(args.results, result)


def machine() -> dict:
    return {
        "cpus": os.cpu_count(),
        "python": sys.version.split()[0],
        "load_average_at_end": [round(x, 1) for x in os.getloadavg()],
    }


def write_results(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(json.dumps(result, indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
