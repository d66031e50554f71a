"""Benchmark: `kgforge corpus stats` and `kgforge corpus split` over 30k synthetic DuConv dialogues.

    python benchmarks/bench_corpus.py              # 30k sessions; writes benchmarks/results/corpus.json

The dialogues are made as ``bench_dialogue.py`` makes its real-layout ones (its ``real_dialogues``: a
conversation that asks about and states each fact, and the same dialogues as KdConv with gold ``attrs``),
from goal samples drawn here straight from the synthetic KB of ``benchmarks/synthetic.py`` (the small one,
cached in bench-out/): a start topic A with a film/star neighbour B (one-step) or one two hops away
(two-step), A's first 7 facts and B's first 4 as knowledge (the DuConv export's pool budgets) with their
领域 facts. The graph is not built: the corpus commands never read it. Each command runs in a fresh
``kgforge`` process timed from outside (wall seconds, CPU seconds, peak RSS of that process).
Target: stats and split of the 30k DuConv sessions in <= 30 s each.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.bench_dialogue import CPU_SECONDS, real_dialogues, run_measured  # noqa: E402
from benchmarks.synthetic import TYPE_NAMES, TYPE_RELATION, cached_synthetic_kb  # noqa: E402

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
TARGET_S = 30.0
BUDGETS = (7, 4)  # facts of topic A and B, as the DuConv export's pool budgets


def goal_samples(kb: Path, n: int, out: Path, seed: int = 0) -> Path:
    """``n`` DuConv goal samples (half one-step, half two-step) whose topics and knowledge come from ``kb``."""
    facts: dict[str, list[list[str]]] = json.loads(kb.read_text(encoding="utf-8"))
    kind = {head: next((t for _, r, t in triples if r == TYPE_RELATION), None) for head, triples in facts.items()}
    linked = {head: [t for _, r, t in triples if t in facts and r != TYPE_RELATION] for head, triples in facts.items()}
    starts = [h for h, ts in linked.items() if ts]
    rng = random.Random(seed)
    with open(out, "w", encoding="utf-8") as handle:
        made = 0
        while made < n:
            a = rng.choice(starts)
            mid = rng.choice(linked[a])
            two_step = made % 2 == 1 and linked.get(mid)
            b = rng.choice(linked[mid]) if two_step else mid
            if b == a:
                continue
            path = [[a, "相关", mid], [mid, "相关", b]] if two_step else [[a, "相关", b]]
            knowledge = [[t, TYPE_RELATION, kind[t] or TYPE_NAMES["star"]] for t in (a, b)]
            knowledge += [
                f for t, budget in zip((a, b), BUDGETS) for f in [x for x in facts[t] if x[1] != TYPE_RELATION][:budget]
            ]
            handle.write(
                json.dumps(
                    {"goal": [["START", a, b], *path], "knowledge": knowledge, "history": [], "response": "null"},
                    ensure_ascii=False,
                )
                + "\n"
            )
            made += 1
    return out


def measured(label: str, *args: str) -> dict:
    print(f"{label} ...", file=sys.stderr)
    out, seconds, rss = run_measured([*CLI, *args, "--json"])
    report = json.loads(out)
    return {
        "seconds": round(seconds, 2),
        "cpu_s": CPU_SECONDS[-1],
        "peak_rss_mib": rss,
        "within_target": seconds <= TARGET_S,
        "report": report,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dialogues", type=int, default=30_000)
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--results", type=Path, default=Path(__file__).resolve().parent / "results" / "corpus.json")
    args = parser.parse_args()
    work = args.out / "corpus"
    work.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    kb = cached_synthetic_kb(args.out, small=True)
    sessions, kdconv = real_dialogues(goal_samples(kb, args.dialogues, work / "samples.jsonl"), work)
    made = round(time.perf_counter() - started, 1)
    stages = {
        "stats_duconv": measured("corpus stats (DuConv sessions)", "corpus", "stats", str(sessions)),
        "split_duconv_by_dialogue": measured(
            "corpus split --by dialogue", "corpus", "split", str(sessions), "--out", str(work / "by-dialogue")
        ),
        "split_duconv_by_topic": measured(
            "corpus split --by topic",
            "corpus",
            "split",
            str(sessions),
            "--out",
            str(work / "by-topic"),
            "--by",
            "topic",
        ),
        "stats_kdconv": measured("corpus stats (KdConv dialogues, jieba)", "corpus", "stats", str(kdconv)),
    }
    for stage in stages.values():  # the figures, not every split's path
        report = stage.pop("report")
        stage["dialogues"] = report["dialogues"]
        if "parts" in report:
            stage.update(
                units=report["units"],
                largest_unit=report["largest_unit"],
                shares=[round(p["share"], 4) for p in report["parts"]],
                notes=report["notes"],
            )
        else:
            stage.update(utterances=report["utterances"], tokens=report["tokens"])
    result = {
        "dialogues": args.dialogues,
        "seconds_to_make_the_dialogues": made,
        "target_s": TARGET_S,
        "stages": stages,
    }
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))


if __name__ == "__main__":
    main()
