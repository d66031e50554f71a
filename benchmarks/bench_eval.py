"""Benchmark: `kgforge eval` on 100k responses (every metric, knowledge included) against the DuConv-scale graph,
beside the official DuConv metric script on the same lexical metrics, measured in the same run.

    python benchmarks/bench_eval.py                    # 144k entities, 3.6M triples; 20k sessions, 100k responses
    python benchmarks/bench_eval.py --small            # 10k entities; 2k sessions, 10k responses
    python benchmarks/bench_eval.py --reuse WORKDIR    # WORKDIR/duconv built from the same synthetic KB before

1. The synthetic KB of ``benchmarks/synthetic.py`` (cached in bench-out/), built as domain ``duconv``.
2. Synthetic DuConv sessions over it (JSON lines, word-segmented like the real files): two topics per session,
   their facts as ``knowledge``, a one-step goal, and a conversation whose bot turns state the topics' facts
   (one of them quoting a stretch of a free-text fact). Predictions (one per line) re-state each bot turn's fact
   with other words, give it another entity's value (a hallucination), or talk about a third entity.
3. ``kgforge eval PRED --gold SESSIONS --domain duconv`` in a fresh process: all metrics, per-response Parquet.
4. The official script (baidu/knowledge-driven-dialogue generative_pt/tools/eval.py, taken from its git mirror:
   $READERS_MIRRORS or /work/.mirror) on the same responses as ``prediction<TAB>gold`` lines, and
   ``kgforge eval`` of that file with the script's five metrics only; their printed lines must be equal.

Wall seconds as a user waits (fresh processes, imports included), plus each process's CPU seconds: the
machine is 2 shared cores. Writes benchmarks/results/bench_eval.json. Target: <= 60 s for step 3.

    python benchmarks/bench_eval.py --systems          # 10 systems x 10k responses, every model-free metric

``--systems``: ten synthetic systems of 10,000 word-segmented responses each against one gold file, scored in one
``kgforge eval --system … --vectors V`` run (every metric that needs no model: F1, BLEU-1..4, DISTINCT-1..4,
ROUGE-L, CIDEr-D, METEOR, Embedding Average, Vector Extrema, Greedy Matching; a 100-dimension word2vec text file
over the vocabulary), timed as a fresh process; beside it the naive way, one plain Python loop per metric over
every response (Counter n-grams, an LCS table, pycocoevalcap's Cider, NLTK's meteor_score, numpy per response),
timed in this process on one system and multiplied by ten (the loops take many minutes per system); the corpus
values of that system are compared with kgforge's. Writes
benchmarks/results/bench_eval_systems.json. Target: <= 60 s for the kgforge run.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.synthetic import TEXT_RELATIONS, cached_synthetic_kb  # noqa: E402

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
TARGET_S = 60.0
OFFICIAL_COMMIT = "ba85518a1ac2a57988188fc5f2b8fe42e1facf64"
OFFICIAL_PATH = "generative_pt/tools/eval.py"
BOT_TURNS = 5
FACTS_PER_TOPIC = 8
FILLER = ["嗯 嗯 ， 然后 呢 ？", "是 吗 ， 我 还 不 知道 。", "听 起来 不错 。", "好 的 ， 谢谢 你 。"]


def run_measured(args: list[str], stdout_to: Path | None = None) -> tuple[str, float, float]:
    """Run a command; its stdout, wall seconds and CPU seconds (user + system of that process)."""
    started = time.perf_counter()
    with tempfile.TemporaryFile(mode="w+") as err:
        out_handle = open(stdout_to, "w") if stdout_to else subprocess.PIPE
        process = subprocess.Popen(
            args, stdout=out_handle, stderr=err, text=True, encoding="utf-8", env={**os.environ, "PYTHONUTF8": "1"}
        )
        out = process.stdout.read() if stdout_to is None else ""
        _, status, usage = os.wait4(process.pid, 0)
        if stdout_to:
            out_handle.close()
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(f"command failed: {' '.join(map(str, args))}\n{err.read()[-3000:]}")
    return out, time.perf_counter() - started, usage.ru_utime + usage.ru_stime


def spaced(text: str) -> str:
    """A synthetic name or value cut into words the way DuConv's segmenter might (2-character words)."""
    return " ".join(text[i : i + 2] for i in range(0, len(text), 2))


def read_heads(kb: Path, count: int) -> list[tuple[str, list[list[str]]]]:
    """The first ``count`` entities of the KB (one ``"head": [[h, r, t], ...]`` entry per line)."""
    heads = []
    with open(kb, encoding="utf-8") as handle:
        for line in handle:
            line = line.strip().rstrip(",")
            if line in ("{", "}"):
                continue
            heads.append(next(iter(json.loads("{" + line + "}").items())))
            if len(heads) == count:
                break
    return heads


def fact_text(fact: list[str], rng: random.Random) -> str:
    head, relation, tail = fact
    if relation in TEXT_RELATIONS:
        start = rng.randrange(max(1, len(tail) - 12))
        return f"{spaced(head)} ， 网友 说 {spaced(tail[start : start + 12])} 。"
    return rng.choice([f"{spaced(head)} 的 {relation} 是 {spaced(tail)} 。", f"你 知道 吗 ， {spaced(tail)} 呢 。"])


def make_sessions(kb: Path, sessions: int, seed: int, gold_out: Path, pred_out: Path, pairs_out: Path) -> dict:
    rng = random.Random(seed)
    heads = [h for h in read_heads(kb, 2 * sessions + 1000) if len(h[1]) >= 3]
    by_relation: dict[str, list[str]] = {}
    for _, facts in heads:
        for _, relation, tail in facts:
            if relation not in TEXT_RELATIONS and relation != "领域":
                by_relation.setdefault(relation, []).append(tail)
    responses = 0
    with (
        open(gold_out, "w", encoding="utf-8") as gold,
        open(pred_out, "w", encoding="utf-8") as pred,
        open(pairs_out, "w", encoding="utf-8") as pairs,
    ):
        for i in range(sessions):
            (a, a_facts), (b, b_facts) = heads[(2 * i) % len(heads)], heads[(2 * i + 1) % len(heads)]
            knowledge = a_facts[:FACTS_PER_TOPIC] + b_facts[:FACTS_PER_TOPIC]
            stated = [f for f in knowledge if f[1] != "领域"]
            goal = [["START", spaced(a), spaced(b)], [spaced(x) for x in stated[0]]]
            conversation = []
            for turn in range(BOT_TURNS):
                fact = stated[turn % len(stated)]
                bot = fact_text(fact, rng)
                conversation += [bot, rng.choice(FILLER)]
                roll = rng.random()
                if roll < 0.6:
                    guess = fact_text(fact, rng)
                elif roll < 0.8 and by_relation.get(fact[1]):
                    guess = f"{spaced(fact[0])} 的 {fact[1]} 是 {spaced(rng.choice(by_relation[fact[1]]))} 。"
                else:
                    other = heads[rng.randrange(len(heads))]
                    guess = fact_text(other[1][rng.randrange(len(other[1]))], rng)
                pred.write(guess + "\n")
                pairs.write(f"{guess}\t{bot}\n")
                responses += 1
            record = {
                "goal": goal,
                "knowledge": [[spaced(x) for x in f] for f in knowledge],
                "conversation": conversation,
            }
            gold.write(json.dumps(record, ensure_ascii=False) + "\n")
    return {"sessions": sessions, "responses": responses}


def official_script(folder: Path) -> Path:
    for root in (os.environ.get("READERS_MIRRORS"), "/work/.mirror"):
        repo = Path(root or "") / "baidu+knowledge-driven-dialogue" / "repo"
        if root and repo.exists():
            script = folder / "official_eval.py"
            script.write_bytes(
                subprocess.run(
                    ["git", "-C", str(repo), "show", f"{OFFICIAL_COMMIT}:{OFFICIAL_PATH}"],
                    check=True,
                    capture_output=True,
                ).stdout
            )
            return script
    raise SystemExit(
        "the official eval.py comes from a git mirror of baidu/knowledge-driven-dialogue: fetch "
        "github:baidu/knowledge-driven-dialogue and set READERS_MIRRORS to the folder holding "
        "baidu+knowledge-driven-dialogue/repo"
    )


SYSTEMS = 10
SYSTEM_RESPONSES = 10_000
MODEL_FREE = (
    "f1",
    "bleu1",
    "bleu2",
    "bleu3",
    "bleu4",
    "distinct1",
    "distinct2",
    "distinct3",
    "distinct4",
    "rouge_l",
    "cider",
    "meteor",
    "embedding_average",
    "vector_extrema",
    "greedy_matching",
)


def make_systems(folder: Path, systems: int, responses: int, seed: int = 0) -> tuple[Path, dict[str, Path], Path]:
    """A gold file and ``systems`` prediction files (one segmented response per line): each system keeps a
    different share of the gold words and draws the rest from a Zipf-like vocabulary; a word2vec text file."""
    import numpy as np

    rng = random.Random(seed)
    chars = [chr(c) for c in range(0x4E00, 0x4E00 + 600)]
    vocab = list(dict.fromkeys("".join(rng.sample(chars, rng.choice((1, 2, 2, 3)))) for _ in range(6000)))
    cumulative = list(itertools.accumulate(1 / (rank + 1) for rank in range(len(vocab))))

    def words(n: int) -> list[str]:
        return rng.choices(vocab, cum_weights=cumulative, k=n)

    golds = [words(rng.randint(4, 24)) for _ in range(responses)]
    gold = folder / "gold.txt"
    gold.write_text("".join(" ".join(g) + "\n" for g in golds), encoding="utf-8")
    files = {}
    for s in range(systems):
        keep = 0.3 + 0.5 * s / max(systems - 1, 1)
        lines = []
        for g in golds:
            kept = [w if rng.random() < keep else words(1)[0] for w in g]
            lines.append(" ".join(kept[: max(1, len(kept) + rng.randint(-3, 3))]))
        files[f"system{s}"] = folder / f"system{s}.txt"
        files[f"system{s}"].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    matrix = np.random.default_rng(seed).normal(size=(len(vocab), 100))
    vectors = folder / "vectors.txt"
    vectors.write_text(
        f"{len(vocab)} 100\n"
        + "".join(word + " " + " ".join(f"{x:.5f}" for x in row) + "\n" for word, row in zip(vocab, matrix)),
        encoding="utf-8",
    )
    return gold, files, vectors


def naive_scores(
    gold: Path, files: dict[str, Path], vectors: Path
) -> tuple[dict[str, dict[str, float]], dict[str, float]]:
    """Every metric the plain way: a Python loop per metric over every response of every system."""
    import math
    from collections import Counter

    import numpy as np
    from nltk.stem.porter import PorterStemmer
    from nltk.translate.meteor_score import meteor_score
    from pycocoevalcap.cider.cider import Cider

    golds = [line.split(" ") for line in gold.read_text(encoding="utf-8").splitlines()]
    systems = {
        name: [line.split(" ") for line in path.read_text(encoding="utf-8").splitlines()]
        for name, path in files.items()
    }
    lines = vectors.read_text(encoding="utf-8").splitlines()[1:]
    table = {line.split(" ", 1)[0]: np.array(line.split(" ")[1:], dtype=float) for line in lines}
    seconds: dict[str, float] = {}
    values: dict[str, dict[str, float]] = {name: {} for name in systems}

    def timed(metric: str, function) -> None:
        started = time.perf_counter()
        for name, preds in systems.items():
            values[name][metric] = function(preds)
        seconds[metric] = time.perf_counter() - started

    def f1(preds):
        hits = pc = gc = 0
        for p, g in zip(preds, golds):
            a, b = Counter("".join(p)), Counter("".join(g))
            hits += sum((a & b).values())
            pc += sum(a.values())
            gc += sum(b.values())
        precision, recall = hits / pc, hits / gc
        return 2 * precision * recall / (precision + recall)

    def bleu(n):
        def score(preds):
            logs = 0.0
            for k in range(1, n + 1):
                hit = total = 0
                for p, g in zip(preds, golds):
                    a = Counter("".join(p[i : i + k]) for i in range(len(p) - k + 1))
                    b = Counter("".join(g[i : i + k]) for i in range(len(g) - k + 1))
                    hit += sum((a & b).values())
                    total += sum(a.values())
                logs += math.log(hit / total) / n
            c, r = sum(map(len, preds)), sum(map(len, golds))
            return math.exp(logs) * (math.exp(1 - r / c) if c < r else 1.0)

        return score

    def distinct(n):
        def score(preds):
            grams = ["".join(p[i : i + n]) for p in preds for i in range(len(p) - n + 1)]
            return len(set(grams)) / len(grams)

        return score

    def rouge_l(preds):
        total = 0.0
        for p, g in zip(preds, golds):
            row = [0] * (len(g) + 1)
            for a in p:
                previous = 0
                for j, b in enumerate(g, start=1):
                    current = row[j]
                    row[j] = previous + 1 if a == b else max(row[j], row[j - 1])
                    previous = current
            lcs = row[-1]
            if lcs:
                precision, recall = lcs / len(p), lcs / len(g)
                total += (1 + 1.2**2) * precision * recall / (recall + 1.2**2 * precision)
        return total / len(preds)

    def cider(preds):
        return Cider().compute_score(
            {i: [" ".join(g)] for i, g in enumerate(golds)}, {i: [" ".join(p)] for i, p in enumerate(preds)}
        )[0]

    class NoSynonyms:
        @staticmethod
        def synsets(word, *args, **kwargs):
            return []

    def meteor(preds):
        stemmer = PorterStemmer()
        return sum(meteor_score([g], p, stemmer=stemmer, wordnet=NoSynonyms()) for p, g in zip(preds, golds)) / len(
            preds
        )

    def embedding(kind):
        def score(preds):
            found = []
            for p, g in zip(preds, golds):
                a = np.array([table[w] for w in p if w in table])
                b = np.array([table[w] for w in g if w in table])
                if kind == "average":
                    x, y = a.mean(axis=0), b.mean(axis=0)
                    found.append(x @ y / np.linalg.norm(x) / np.linalg.norm(y))
                elif kind == "extrema":
                    x = np.array([c.max() if abs(c.max()) >= abs(c.min()) else c.min() for c in a.T])
                    y = np.array([c.max() if abs(c.max()) >= abs(c.min()) else c.min() for c in b.T])
                    found.append(x @ y / np.linalg.norm(x) / np.linalg.norm(y))
                else:
                    sims = np.array([[u @ v / np.linalg.norm(u) / np.linalg.norm(v) for v in b] for u in a])
                    found.append((sims.max(axis=1).mean() + sims.max(axis=0).mean()) / 2)
            return float(np.mean(found))

        return score

    timed("f1", f1)
    for n in (1, 2, 3, 4):
        timed(f"bleu{n}", bleu(n))
        timed(f"distinct{n}", distinct(n))
    timed("rouge_l", rouge_l)
    timed("cider", cider)
    timed("meteor", meteor)
    timed("embedding_average", embedding("average"))
    timed("vector_extrema", embedding("extrema"))
    timed("greedy_matching", embedding("greedy"))
    return values, seconds


def systems_benchmark(out: Path) -> None:
    data = Path(tempfile.mkdtemp(prefix="kgforge-bench-eval-systems-", dir=out if out.is_dir() else None))
    gold, files, vectors = make_systems(data, SYSTEMS, SYSTEM_RESPONSES)
    args = [
        *CLI,
        "eval",
        "--gold",
        str(gold),
        "--vectors",
        str(vectors),
        "--metrics",
        ",".join(MODEL_FREE),
        "--leaderboard",
        str(data / "board"),
        "--json",
    ]
    for name, path in files.items():
        args += ["--system", f"{name}={path}"]
    print(
        f"kgforge eval: {SYSTEMS} systems x {SYSTEM_RESPONSES:,} responses, {len(MODEL_FREE)} metrics ...",
        file=sys.stderr,
    )
    printed, wall, cpu = run_measured(args)
    board = {row["system"]: row for row in json.loads(printed)["leaderboard"]}
    print(f"kgforge: {wall:.1f} s wall, {cpu:.1f} s CPU; the naive loops on one system ...", file=sys.stderr)
    first = next(iter(files))
    started = time.perf_counter()
    naive, per_metric = naive_scores(gold, {first: files[first]}, vectors)
    naive_wall = (time.perf_counter() - started) * SYSTEMS  # every system costs the same: extrapolated
    worst = max(abs(board[s][m] - naive[s][m]) for s in naive for m in naive[s])
    result = {
        "command": "python benchmarks/bench_eval.py --systems",
        "inputs": {
            "systems": SYSTEMS,
            "responses_per_system": SYSTEM_RESPONSES,
            "metrics": list(MODEL_FREE),
            "vectors": "6000 words x 100 dims, word2vec text",
        },
        "kgforge_eval_systems": {
            "seconds": round(wall, 2),
            "cpu_s": round(cpu, 2),
            "target_s": TARGET_S,
            "meets_target": wall <= TARGET_S,
        },
        "naive_loops": {
            "measured_on": f"{first} ({SYSTEM_RESPONSES:,} responses), times {SYSTEMS} for all systems",
            "seconds_extrapolated": round(naive_wall, 2),
            "per_metric_s_one_system": {k: round(v, 2) for k, v in per_metric.items()},
        },
        "speedup": round(naive_wall / wall, 2),
        "largest_difference_of_corpus_values": worst,
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_at_end": [round(x, 1) for x in os.getloadavg()],
        },
    }
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "bench_eval_systems.json").write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--systems", action="store_true", help="10 systems x 10k responses, every model-free metric")
    parser.add_argument("--sessions", type=int, help="default: 20000 (2000 with --small), 5 responses each")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--reuse", type=Path, help="a workdir whose duconv domain was built from the same KB")
    args = parser.parse_args()
    if args.systems:
        systems_benchmark(args.out)
        return
    kb = cached_synthetic_kb(args.out, args.small)
    sessions = args.sessions or (2_000 if args.small else 20_000)
    work = args.reuse or Path(tempfile.mkdtemp(prefix="kgforge-bench-eval-"))
    w = ("--workdir", str(work))
    build_seconds = None
    if not args.reuse:
        print("kgforge build duconv ...", file=sys.stderr)
        _, build_seconds, _ = run_measured(
            [*CLI, "build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources", *w, "--json"]
        )
    data = Path(tempfile.mkdtemp(prefix="kgforge-bench-eval-data-"))
    gold, pred, pairs = data / "sessions.jsonl", data / "predictions.txt", data / "pairs.txt"
    made = make_sessions(kb, sessions, 0, gold, pred, pairs)

    print(f"kgforge eval: {made['responses']:,} responses, all metrics ...", file=sys.stderr)
    out, eval_s, eval_cpu = run_measured(
        [
            *CLI,
            "eval",
            str(pred),
            "--gold",
            str(gold),
            "--domain",
            "duconv",
            *w,
            "--out",
            str(data / "scores.parquet"),
            "--json",
        ]
    )
    report = json.loads(out)
    print("official eval.py on the same responses ...", file=sys.stderr)
    official_out, official_s, official_cpu = run_measured([sys.executable, str(official_script(data)), str(pairs)])
    print("kgforge eval --official on the same file ...", file=sys.stderr)
    ours_out, ours_s, ours_cpu = run_measured(
        [*CLI, "eval", str(pairs), "--official", "--no-out", "--metrics", "f1,bleu1,bleu2,distinct1,distinct2"]
    )
    result = {
        "command": "python benchmarks/bench_eval.py" + (" --small" if args.small else ""),
        "graph": {
            "entities": 10_000 if args.small else 144_000,
            "kb": str(kb),
            "build_seconds": None if build_seconds is None else round(build_seconds, 1),
        },
        "inputs": made,
        "kgforge_eval_all_metrics": {
            "seconds": round(eval_s, 2),
            "cpu_s": round(eval_cpu, 2),
            "phases_s": report["seconds"],
            "target_s": TARGET_S,
            "meets_target": eval_s <= TARGET_S,
            "metrics": {k: None if v is None else round(v, 4) for k, v in report["metrics"].items()},
            "knowledge": report["knowledge"],
        },
        "official_script_lexical": {
            "seconds": round(official_s, 2),
            "cpu_s": round(official_cpu, 2),
            "printed": official_out,
        },
        "kgforge_eval_official_metrics": {
            "seconds": round(ours_s, 2),
            "cpu_s": round(ours_cpu, 2),
            "printed": ours_out,
            "same_output": ours_out == official_out,
        },
        "ratios": {
            "official_over_kgforge_lexical": round(official_s / ours_s, 2),
            "kgforge_all_metrics_over_official_lexical": round(eval_s / official_s, 2),
        },
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_at_end": [round(x, 1) for x in os.getloadavg()],
        },
    }
    results = Path(__file__).resolve().parent / "results"
    results.mkdir(exist_ok=True)
    (results / "bench_eval.json").write_text(json.dumps(result, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, ensure_ascii=False, indent=2))
    if not result["kgforge_eval_official_metrics"]["same_output"]:
        raise SystemExit("kgforge and the official script printed different values")


if __name__ == "__main__":
    main()
