"""Benchmark: `kgforge ground` of 30k synthetic KdConv dialogues and 30k DuConv sessions on the DuConv-scale
graph, beside the 30k goal export of the same run and a naive grounder.

    python benchmarks/bench_ground.py               # 144k entities, ~3.6M triples, 30k dialogues of each
    python benchmarks/bench_ground.py --small --n 3000   # 10k entities, for a quick look
    python benchmarks/bench_ground.py --keep DIR    # build into DIR (kept) instead of a temporary folder
    python benchmarks/bench_ground.py --reuse DIR   # a --workdir built from the same synthetic KB before

The dialogues are those of ``bench_dialogue.py`` (made from the goal export's samples: the same topics and
knowledge, a conversation that states 8 of the facts; the KdConv messages that state a fact carry it as
gold ``attrs``, so the run also scores itself). Every stage is a fresh ``kgforge`` process timed from
outside (wall and CPU seconds, peak RSS). The naive baseline scans every entity label of the graph with
``label in message`` for each message, on a sample of messages, extrapolated to all (labelled so).
Grounding runs with its default worker processes (one per CPU) and, for KdConv, also in one process
(``--workers 1``), so that both are measured in the same run. The first KdConv grounding finds no index kept
beside the build (the benchmark removes it) and makes it; the others read it back, as every grounding of a
build after its first does. The goal export and the default KdConv grounding, the issue's two figures, run
``--repeat`` times in turn (export, grounding, export, grounding...), so that both meet the same machine; their
ratio is of the medians (on this shared machine one run of either moves by 10-20% from the next). Target: each
grounding within 1.5x of the goal export of the same run. Writes benchmarks/results/ground.json.

Every stage runs the kgforge a user installs: a wheel built from this checkout (``pip wheel``, grounding's inner
loop compiled with mypyc by ``hatch_build.py``) and put on the stages' path; ``--as-is`` times the kgforge this
Python imports instead (an editable install runs those modules interpreted). The results say which ran.
"""

from __future__ import annotations

import argparse
import filecmp
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_dialogue import CPU_SECONDS, kgforge, real_dialogues, run_measured  # noqa: E402
from benchmarks.synthetic import cached_synthetic_kb  # noqa: E402
from hatch_build import install_wheel  # noqa: E402
from kgforge.grounding.kept import KEPT_INDEX  # noqa: E402
from kgforge.store.snapshot import Snapshot  # noqa: E402

RATIO_TARGET = 1.5
NAIVE = """
import json, sys, time

workdir, dialogues, sample = sys.argv[1], sys.argv[2], int(sys.argv[3])
from kgforge.store.snapshot import Snapshot
labels = Snapshot.open("duconv", workdir).tables().labels["label"].unique().to_list()
messages = [m["message"] for d in json.load(open(dialogues, encoding="utf-8")) for m in d["messages"]]
started = time.perf_counter()
found = sum(1 for text in messages[:sample] for label in labels if label in text)
seconds = time.perf_counter() - started
print(json.dumps({"messages": len(messages), "measured_messages": min(sample, len(messages)), "labels": len(labels),
                  "seconds": seconds, "extrapolated_seconds": seconds / min(sample, len(messages)) * len(messages),
                  "mentions_in_sample": found}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--n", type=int, default=30_000, help="goals, so dialogues of each kind")
    parser.add_argument("--baseline-sample", type=int, default=200, help="messages the naive baseline scans")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--results", type=Path, default=Path(__file__).resolve().parent / "results" / "ground.json")
    parser.add_argument("--reuse", type=Path, help="a workdir built before: the build and derive are skipped")
    parser.add_argument("--keep", type=Path, help="build into this folder and keep it (for --reuse later)")
    parser.add_argument("--repeat", type=int, default=3, help="runs of the goal export and KdConv grounding, in turn")
    parser.add_argument("--as-is", action="store_true", help="time the kgforge this Python imports, not a wheel")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat: at least 1")
    if not args.as_is:
        run_installed(Path(tempfile.mkdtemp(prefix="kgforge-bench-wheel-")))
    kb = cached_synthetic_kb(args.out, args.small)
    work = args.reuse or args.keep or Path(tempfile.mkdtemp(prefix="kgforge-bench-ground-"))
    w = ("--workdir", str(work))
    if not args.reuse:
        print("kgforge build ...", file=sys.stderr)
        kgforge("build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources", *w)
        kgforge("derive", "duconv", *w)  # two-step goals need the associated triples
    goals_file, export_file = work / "goals.jsonl", work / "train.txt"
    kgforge("goals", "duconv", "--n", str(args.n), "--seed", "0", "--out", str(goals_file), *w)

    def export() -> dict:
        print("kgforge export (goals) ...", file=sys.stderr)
        exported, seconds, rss = kgforge(
            "export", "duconv", "--goals", str(goals_file), "--format", "duconv", "--out", str(export_file), *w
        )
        return {"seconds": seconds, "cpu_s": CPU_SECONDS[-1], "peak_rss_mib": rss, "dialogues": exported["dialogues"]}

    exports = [export()]
    sessions, kdconv = real_dialogues(export_file, work)
    stages: dict[str, dict] = {}
    result = {
        "when": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "small": args.small,
        "n": args.n,
        "compiled_modules": compiled_modules(),
        "goal_export": medians(exports),
        "ground": stages,
    }
    save(args.results, result)

    def ground(name: str, source: Path, fmt: str, *options: str) -> dict:
        print(f"kgforge ground ({name}) ...", file=sys.stderr)
        out = str(work / f"{name}.grounded")
        report, seconds, rss = kgforge(
            "ground", "duconv", "--dialogues", str(source), "--format", fmt, "--out", out, *options, *w
        )
        return {
            "seconds": seconds,
            "cpu_s": CPU_SECONDS[-1],
            "workers": report["workers"],
            "peak_rss_mib": rss,  # of the largest process: the workers share the pages of the index they forked with
            "dialogues": report["dialogues"],
            "messages": report["messages"],
            "facts_stated": report["attrs_predicted"],
            "micro_against_gold": (report["scores"] or {}).get("micro"),
        }

    def keep(name: str, runs: list[dict]) -> None:  # each stage kept as it ends: a run cut short says what it measured
        goal = result["goal_export"]
        stages[name] = medians(runs) | {
            "ratio_to_goal_export": round(statistics.median(r["seconds"] for r in runs) / goal["seconds"], 2),
            "cpu_ratio_to_goal_export": round(statistics.median(r["cpu_s"] for r in runs) / goal["cpu_s"], 2),
            "target_ratio": RATIO_TARGET,
        }
        save(args.results, result)

    # the first grounding of a build makes its index and keeps it beside the build; every later one reads it back
    (Snapshot.open("duconv", work).build / KEPT_INDEX).unlink(missing_ok=True)
    first = [ground("kdconv_first_of_build", kdconv, "kdconv")]
    # the figures: the default grounding (one worker process per CPU) and the goal export, in turn
    defaults = [ground("kdconv", kdconv, "kdconv")]
    for _ in range(args.repeat - 1):
        exports.append(export())
        result["goal_export"] = medians(exports)
        defaults.append(ground("kdconv", kdconv, "kdconv"))
    keep("kdconv_first_of_build", first)  # kept now: every stage's ratio is to the median of all the exports
    keep("kdconv", defaults)
    stages["kdconv"]["ratios_round_by_round"] = [
        round(g["seconds"] / e["seconds"], 2) for g, e in zip(defaults, exports, strict=True)
    ]
    keep("kdconv_one_process", [ground("kdconv_one_process", kdconv, "kdconv", "--workers", "1")])
    keep("duconv", [ground("duconv", sessions, "duconv")])
    for name in ("kdconv_first_of_build", "kdconv_one_process"):
        stages[name]["same_bytes_as_workers"] = filecmp.cmp(work / "kdconv.grounded", work / f"{name}.grounded", False)
    save(args.results, result)
    print("naive baseline ...", file=sys.stderr)
    out, _, naive_rss = run_measured([sys.executable, "-c", NAIVE, str(work), str(kdconv), str(args.baseline_sample)])
    naive = json.loads(out) | {
        "peak_rss_mib": naive_rss,
        "note": "one substring scan of every label per message; extrapolated from the sample",
    }
    result["naive_baseline_kdconv"] = naive
    save(args.results, result)
    print(json.dumps(result, ensure_ascii=False, indent=2))


def run_installed(folder: Path) -> None:
    """Every later stage runs kgforge as installed from a wheel of this checkout (``hatch_build.install_wheel``),
    first on the stages' path; PYTHONSAFEPATH keeps a stage from importing the checkout in its working folder."""
    print("pip wheel (kgforge, grounding compiled) ...", file=sys.stderr)
    site = install_wheel(folder)
    os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(site), os.environ.get("PYTHONPATH")]))
    os.environ["PYTHONSAFEPATH"] = "1"


def compiled_modules() -> list[str]:
    """The grounding modules the stages' kgforge runs compiled (none: interpreted)."""
    probe = "import json; from kgforge.grounding import compiled_modules; print(json.dumps(compiled_modules()))"
    return json.loads(run_measured([sys.executable, "-c", probe])[0])


def medians(runs: list[dict]) -> dict:
    """One stage's runs: each figure's median (the counts are the same in every run), and each run's seconds."""
    made = {key: statistics.median(run[key] for run in runs) for key in ("seconds", "cpu_s", "peak_rss_mib")}
    return {key: round(value, 2) for key, value in made.items()} | {
        **{key: value for key, value in runs[-1].items() if key not in made},
        "runs": len(runs),
        "seconds_each_run": [round(run["seconds"], 2) for run in runs],
    }


def save(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
