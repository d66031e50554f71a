"""The dump engines side by side on XLORE's files: the extract pass of every file of a synthetic XLORE dump
folder in this process (``in_process``), with 2 worker processes (``local``) and with 2 Ray workers of a
local Ray on this machine (``ray``), in one run.

    python benchmarks/bench_xlore.py [--instances 100000] [--repeats 3] [--shard-bytes N]
        [--dump FOLDER] [--output PATH]

The dump is three files as XLore writes them: ``xlore.instance.list.ttl`` (a Chinese and an English label
and a ~200-character Baidu abstract per instance, relative IRIs against its ``@base``, prefixed names),
``xlore.instance.infobox.ttl`` (about 6 infobox triples per instance, absolute IRIs, an instance or a
``@zh`` literal as object) and ``xlore.taxonomy.ttl`` (``owl:InstanceOf`` a concept); the default
100k instances make about 1M lines. Each file is one pass (:func:`kgforge.sources.xlore.passes.run_file`,
as ``kgforge import --source xlore`` runs it, no mapped properties or classes). Each repeat runs the three
engines, their order rotated from repeat to repeat, each on a fresh state folder removed after it. The
rate is triples read (``triples_read``, summed over the files) per second of wall time. The medians, their
ratios (target: ray ≥ 0.9 × local) and the machine's load average at the start and the end are printed and
written to benchmarks/results/bench_xlore.json. ``--dump`` reuses a folder written before (``--instances``
is then only recorded). Ray runs its workers at nice 0 here, as the local engine's workers run (``kgforge``
does the same when it starts Ray itself).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_engine import report  # noqa: E402
from kgforge.sources.wikidata.engines import DEFAULT_SHARD_BYTES, LocalEngine  # noqa: E402
from kgforge.sources.wikidata.passes import PassOptions, PassRunner  # noqa: E402
from kgforge.sources.wikidata.ray_engine import WORKER_NICENESS, RayEngine  # noqa: E402
from kgforge.sources.xlore.lines import CONCEPT, INSTANCE, PROPERTY, xlore_files  # noqa: E402
from kgforge.sources.xlore.passes import EXTRACT, XloreConfig, run_file  # noqa: E402

WORKERS = 2
ARMS = ["in_process", "local", "ray"]
HEAD = (
    "@base <http://xlore.org/instance/> .\n@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
    "@prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
)
WORDS = [
    "中国",
    "电影",
    "导演",
    "演员",
    "出生",
    "北京",
    "上海",
    "作品",
    "主演",
    "获得",
    "年",
    "月",
    "日",
    "是",
    "一部",
    "由",
    "的",
    "和",
    "在",
    "著名",
    "代表作",
    "奖项",
    "剧情",
    "喜剧",
    "公司",
    "出品",
    "上映",
    "毕业于",
    "大学",
    "音乐",
    "歌手",
    "专辑",
    "发行",
    "城市",
    "位于",
    "省",
    "人口",
    "面积",
    "历史",
    "文化",
    "科学家",
    "研究",
]
PROPERTIES = 200
CONCEPTS = 2000


def sentence(rng: random.Random, chars: int) -> str:
    """About ``chars`` characters of Baidu-abstract-like Chinese text, with a few numbers in it."""
    parts: list[str] = []
    size = 0
    while size < chars:
        part = rng.choice(WORDS) if rng.random() < 0.9 else str(rng.randrange(1900, 2024))
        if rng.random() < 0.08:
            part += rng.choice("，、；")
        parts.append(part)
        size += len(part)
    return "".join(parts) + "。"


def write_xlore_dump(folder: Path, instances: int) -> Path:
    """The three files of a synthetic XLORE dump in ``folder`` (deterministic for a given ``instances``)."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    with open(folder / "xlore.instance.list.ttl", "w", encoding="utf-8", newline="\n") as out:
        out.write(HEAD)
        for n in range(instances):
            out.write(
                f'<bdi{n}> rdfs:label "名字{n}"@zh .\n'
                f'<bdi{n}> rdfs:label "Name {n}"@en .\n'
                f'<bdi{n}> rdfs:comment "{sentence(rng, 200)}"@baidu .\n'
            )
    with open(folder / "xlore.instance.infobox.ttl", "w", encoding="utf-8", newline="\n") as out:
        for n in range(instances):
            lines = []
            for _ in range(rng.randint(4, 8)):  # 6 on average
                obj = (
                    f"<{INSTANCE}bdi{rng.randrange(instances)}>"
                    if rng.random() < 0.6
                    else f'"{sentence(rng, rng.randint(2, 12))}"@zh'
                )
                lines.append(f"<{INSTANCE}bdi{n}> <{PROPERTY}p{rng.randrange(PROPERTIES)}> {obj} .\n")
            out.write("".join(lines))
    with open(folder / "xlore.taxonomy.ttl", "w", encoding="utf-8", newline="\n") as out:
        out.write("@prefix owl: <http://www.w3.org/2002/07/owl#> .\n")
        for n in range(instances):
            out.write(f"<{INSTANCE}bdi{n}> owl:InstanceOf <{CONCEPT}bdc{rng.randrange(CONCEPTS)}> .\n")
    return folder


def make_runner(arm: str, shard_bytes: int) -> PassRunner:
    options = PassOptions(resume=False)
    if arm == "in_process":
        return PassRunner(options, 0, LocalEngine(0))
    if arm == "local":
        return PassRunner(options, WORKERS, LocalEngine(WORKERS))
    return PassRunner(options, WORKERS, RayEngine(WORKERS, shard_bytes=shard_bytes))


def timed_passes(files: list[Path], runner: PassRunner, state_root: Path) -> dict:
    """The extract pass of every file into ``state_root`` (removed after); triples read per second of wall time."""
    per_file: dict[str, dict] = {}
    started = time.perf_counter()
    try:
        for path in files:
            file_started = time.perf_counter()
            cfg = XloreConfig.of(path, None, {}, {})
            result = run_file(runner, path, EXTRACT, cfg, state_root)
            per_file[path.name] = {
                "triples": result.counts["triples_read"],
                "lines_bad": result.counts["lines_bad"],
                "seconds": time.perf_counter() - file_started,
                "journal_bytes": result.journal.stat().st_size,
                "directives_after_head": result.counts["directives_after_head"],
                "shards": len(result.engine.get("shards", [])),
            }
        seconds = time.perf_counter() - started
    finally:
        shutil.rmtree(state_root, ignore_errors=True)
    triples = sum(f["triples"] for f in per_file.values())
    return {
        "triples": triples,
        "seconds": seconds,
        "rate": triples / seconds,
        "lines_bad": sum(f["lines_bad"] for f in per_file.values()),
        "files": per_file,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--instances", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--shard-bytes", type=int, default=DEFAULT_SHARD_BYTES)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/bench_xlore.json"))
    parser.add_argument("--dump", type=Path, default=None, help="an XLORE dump folder made before")
    args = parser.parse_args()
    import ray

    load_start = os.getloadavg()
    scratch = Path(tempfile.mkdtemp(prefix="bench-xlore-"))
    try:
        started = time.perf_counter()
        folder = args.dump or write_xlore_dump(scratch / "dump", args.instances)
        files = xlore_files(folder)
        dump_bytes = sum(p.stat().st_size for p in files)
        lines = {}
        for path in files:
            with open(path, "rb") as handle:
                lines[path.name] = sum(1 for _ in handle)
        print(
            f"{'reused' if args.dump else 'generated'} {args.instances:,} instances in "
            f"{time.perf_counter() - started:.1f}s: {len(files)} files, {sum(lines.values()):,} lines, "
            f"{dump_bytes / 1e6:,.1f} MB on {os.cpu_count()} cores; load average {load_start[0]:.1f}",
            flush=True,
        )
        started = time.perf_counter()
        os.environ.setdefault(WORKER_NICENESS, "0")
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False)
        ray_start = time.perf_counter() - started
        runs: dict[str, list[dict]] = {name: [] for name in ARMS}
        for repeat in range(args.repeats):
            shift = repeat % len(ARMS)
            for name in ARMS[shift:] + ARMS[:shift]:
                state_root = Path(tempfile.mkdtemp(dir=scratch, prefix=f"state-{name}-"))
                runs[name].append(timed_passes(files, make_runner(name, args.shard_bytes), state_root))
            print(
                f"  repeat {repeat + 1}: "
                + ", ".join(f"{k} {v[-1]['rate']:,.0f}/s" for k, v in runs.items())
                + f"; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        triples = {r["triples"] for results in runs.values() for r in results}
        if len(triples) != 1:
            print(f"WARNING: the engines read different numbers of triples: {sorted(triples)}", flush=True)
        medians = {name: statistics.median(r["rate"] for r in results) for name, results in runs.items()}
        ratio = medians["ray"] / medians["local"]
        load_end = os.getloadavg()
        figures = {
            "ray_vs_local": ratio,
            "target": 0.9,
            "meets_target": ratio >= 0.9,
            "local_vs_in_process": medians["local"] / medians["in_process"],
            "ray_vs_in_process": medians["ray"] / medians["in_process"],
            "triples": max(triples),
            "dump_bytes_per_triple": dump_bytes / max(1, max(triples)),
            "lines_bad": max(r["lines_bad"] for results in runs.values() for r in results),
            "ray_shards": sum(f["shards"] for f in runs["ray"][0]["files"].values()),
            "ray_start_seconds": ray_start,
            "load_average_start": load_start[0],
            "load_average_end": load_end[0],
        }
        print(
            f"\nmedians over {args.repeats} repeats, {args.instances:,} instances ({sum(lines.values()):,} lines), "
            f"{WORKERS} workers each (in_process: none), {os.cpu_count()} cores:"
        )
        report(
            medians,
            figures,
            "triples",
            args.output,
            {
                "instances": args.instances,
                "dump": str(args.dump) if args.dump else None,
                "dump_bytes": dump_bytes,
                "lines": lines,
                "cpu_count": os.cpu_count(),
                "workers": WORKERS,
                "repeats": args.repeats,
                "shard_bytes": args.shard_bytes,
                "load_average": {"start": load_start, "end": load_end},
                "runs": runs,
            },
        )
    finally:
        ray.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
