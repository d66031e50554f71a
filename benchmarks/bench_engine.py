"""The dump engines side by side: the Wikidata extract pass with ``--engine ray`` (2 Ray workers, a local
Ray on this machine) against ``--engine local`` (2 worker processes), on the same synthetic dump, in one run.

    python benchmarks/bench_engine.py [--entities 200000] [--repeats 4] [--compression gz|bz2|plain]
        [--dump PATH] [--output PATH]

The dump is bench_wikidata's (the ``latest-all.json`` framing, entities of a few kB like real ones).
Each repeat runs both engines, in alternating order, on a fresh state folder. For a compressed dump the ray
engine runs twice: its first read decompresses in this process and leaves the dump's seek index
(``ray``); the pass after it (``ray_indexed``, as the extract pass after a seeded import's index pass)
has its tasks decompress their own ranges through that index. The medians, their ratios
(target: ray ≥ 0.9 × local), the dump's bytes per entity and the ray engine's shard sizes are printed
and written to benchmarks/results/bench_engine.json. ``--dump`` reuses a dump written before (generating
200k entities takes minutes). Ray runs its workers at nice 0 here, as the local engine's workers run
(``kgforge`` does the same when it starts Ray itself).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.bench_wikidata import realistic_entity  # noqa: E402
from kgforge.core.schema import load_schema  # noqa: E402
from kgforge.demo.wikidata_dump import write_dump  # noqa: E402
from kgforge.sources.wikidata.engines import DEFAULT_SHARD_BYTES, LocalEngine  # noqa: E402
from kgforge.sources.wikidata.entity import WikidataConfig  # noqa: E402
from kgforge.sources.wikidata.passes import run_resumable  # noqa: E402
from kgforge.sources.wikidata.pipeline import PassSpec  # noqa: E402
from kgforge.sources.wikidata.ray_engine import WORKER_NICENESS, RayEngine  # noqa: E402

WORKERS = 2


def timed_pass(dump: Path, engine, state: Path) -> dict:
    """One extract pass from the start into ``state`` (a compressed dump's seek index, if any, stays there)."""
    spec = PassSpec("extract", WikidataConfig.from_schema(load_schema("film")))
    started = time.perf_counter()
    result = run_resumable(dump, spec, state, engine=engine, decompressor="python", resume=False)
    seconds = time.perf_counter() - started
    journal_bytes = result.journal.stat().st_size
    shutil.rmtree(result.journal.parent)
    entities = result.counts["entities"]
    return {
        "entities": entities,
        "seconds": seconds,
        "rate": entities / seconds,
        "journal_bytes": journal_bytes,
        "engine": {k: v for k, v in result.engine.items() if k != "shards"},
        "shard_bytes": [s["bytes"] for s in result.engine.get("shards", [])],
    }


def report(medians: dict[str, float], figures: dict, unit: str, output: Path, record: dict) -> None:
    """Print the medians and figures, and write them with ``record`` to ``output`` (JSON)."""
    for name, rate in medians.items():
        print(f"  {name:<11} {rate:>10,.0f} {unit}/s")
    for key, value in figures.items():
        print(f"  {key:<32} {value:,.3f}" if isinstance(value, float) else f"  {key:<32} {value}")
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps({**record, "medians": medians, "figures": figures}, indent=2), encoding="utf-8")
    print(f"wrote {output}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--entities", type=int, default=200_000)
    parser.add_argument("--repeats", type=int, default=4)
    parser.add_argument("--compression", choices=["gz", "bz2", "plain"], default="gz")
    parser.add_argument("--shard-bytes", type=int, default=DEFAULT_SHARD_BYTES)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/bench_engine.json"))
    parser.add_argument("--dump", type=Path, default=None, help="a dump of --entities entities made before")
    args = parser.parse_args()
    import ray

    scratch = Path(tempfile.mkdtemp(prefix="bench-engine-"))
    try:
        suffix = {"gz": ".json.gz", "bz2": ".json.bz2", "plain": ".json"}[args.compression]
        started = time.perf_counter()
        dump = args.dump or write_dump(scratch / f"dump{suffix}", (realistic_entity(i) for i in range(args.entities)))
        print(
            f"{'reused' if args.dump else 'generated'} {args.entities:,} entities in {time.perf_counter() - started:.1f}s: "
            f"{dump.stat().st_size / 1e6:,.1f} MB ({args.compression}) on {os.cpu_count()} cores",
            flush=True,
        )
        started = time.perf_counter()
        os.environ.setdefault(WORKER_NICENESS, "0")
        ray.init(num_cpus=WORKERS, include_dashboard=False, log_to_driver=False)
        ray_start = time.perf_counter() - started
        arms = ["local", "ray"] + (["ray_indexed"] if args.compression != "plain" else [])
        runs: dict[str, list[dict]] = {name: [] for name in arms}
        for repeat in range(args.repeats):
            state = {"local": Path(tempfile.mkdtemp(dir=scratch)), "ray": Path(tempfile.mkdtemp(dir=scratch))}
            state["ray_indexed"] = state["ray"]  # the pass after: it finds the seek index the first read left
            for name in arms if repeat % 2 == 0 else arms[1:] + arms[:1]:
                engine = LocalEngine(WORKERS) if name == "local" else RayEngine(WORKERS, shard_bytes=args.shard_bytes)
                runs[name].append(timed_pass(dump, engine, state[name]))
            print(
                f"  repeat {repeat + 1}: "
                + ", ".join(f"{k} {v[-1]['rate']:,.0f}/s" for k, v in runs.items())
                + f"; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        medians = {name: statistics.median(r["rate"] for r in results) for name, results in runs.items()}
        ratio = medians["ray"] / medians["local"]
        decompressed = runs["ray"][0]["shard_bytes"]
        figures = {
            "ray_vs_local": ratio,
            "target": 0.9,
            "meets_target": ratio >= 0.9,
            **(
                {
                    "ray_indexed_vs_local": medians["ray_indexed"] / medians["local"],
                    "dump_index": runs["ray_indexed"][0]["engine"].get("dump_index"),
                }
                if "ray_indexed" in medians
                else {}
            ),
            "dump_bytes_per_entity": dump.stat().st_size / args.entities,
            "decompressed_bytes_per_entity": sum(decompressed) / args.entities,
            "journal_bytes_per_entity": runs["local"][0]["journal_bytes"] / args.entities,
            "shards": len(decompressed),
            "shard_bytes_median": statistics.median(decompressed) if decompressed else 0,
            "ray_start_seconds": ray_start,
        }
        print(
            f"\nmedians over {args.repeats} repeats, {args.entities:,} entities ({args.compression}), "
            f"{WORKERS} workers each, {os.cpu_count()} cores:"
        )
        report(
            medians,
            figures,
            "entities",
            args.output,
            {
                "entities": args.entities,
                "compression": args.compression,
                "dump_bytes": dump.stat().st_size,
                "cpu_count": os.cpu_count(),
                "workers": WORKERS,
                "repeats": args.repeats,
                "shard_bytes": args.shard_bytes,
                "runs": {
                    name: [{k: v for k, v in r.items() if k != "shard_bytes"} for r in results]
                    for name, results in runs.items()
                },
            },
        )
    finally:
        ray.shutdown()
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
