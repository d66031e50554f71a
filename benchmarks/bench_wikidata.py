"""Wikidata JSON dump import throughput: entities/s with 1 and 2 worker processes, beside the
single-core limit (decompress + JSON parse only, nothing else) measured in the same run.

    python benchmarks/bench_wikidata.py [--small] [--entities N] [--compression gz|bz2|plain]

Generates a dump in the real ``latest-all.json`` framing (entities with ~40 label languages,
descriptions, aliases, sitelinks, statements with qualifiers and references, so a line is a few kB
like a real one), then times, each ``--repeats`` times: the limit (one process: decompress in blocks, find the lines,
``json.loads`` each, framed and decoded as the workers do it), and the full extract pass (parse, truthy selection, value mapping, journal
written to disk) in-process and with 1 and 2 workers. Prints medians and ratios and writes JSON.
Anchor: simple-wikidata-db, about 59 entities/s per process.
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

from kgforge.core.gc_pause import paused_gc  # noqa: E402
from kgforge.core.schema import load_schema  # noqa: E402
from kgforge.demo.wikidata_dump import write_dump  # noqa: E402
from kgforge.sources.wikidata.entity import WikidataConfig  # noqa: E402
from kgforge.sources.wikidata.framing import DumpReader, decode_entity, entity_spans  # noqa: E402
from kgforge.sources.wikidata.passes import run_resumable  # noqa: E402
from kgforge.sources.wikidata.pipeline import BATCH_BYTES, PassSpec  # noqa: E402

LANGS = [
    "en",
    "zh",
    "zh-hans",
    "zh-hant",
    "zh-cn",
    "zh-tw",
    "de",
    "fr",
    "es",
    "it",
    "ja",
    "ko",
    "ru",
    "pt",
    "nl",
    "pl",
    "sv",
    "fi",
    "da",
    "nb",
    "cs",
    "hu",
    "ro",
    "tr",
    "ar",
    "he",
    "fa",
    "hi",
    "bn",
    "th",
    "vi",
    "id",
    "ms",
    "uk",
    "el",
    "bg",
    "sr",
    "hr",
    "sl",
    "mul",
]
PROPS = ["P31", "P57", "P161", "P136", "P495", "P364", "P577", "P2047", "P1476", "P345", "P18", "P625"]


def snak(pid: str, i: int, k: int) -> dict:
    kind = k % 6
    if kind == 0:
        value = {
            "type": "wikibase-entityid",
            "value": {
                "entity-type": "item",
                "numeric-id": (i * 31 + k) % 900000 + 1,
                "id": f"Q{(i * 31 + k) % 900000 + 1}",
            },
        }
        datatype = "wikibase-item"
    elif kind == 1:
        value, datatype = {"type": "string", "value": f"tt{i * 7 + k:08d}"}, "external-id"
    elif kind == 2:
        value = {
            "type": "time",
            "value": {
                "time": f"+{1900 + i % 120}-0{1 + k % 9}-1{k % 9}T00:00:00Z",
                "timezone": 0,
                "before": 0,
                "after": 0,
                "precision": 9 + k % 3,
                "calendarmodel": "http://www.wikidata.org/entity/Q1985727",
            },
        }
        datatype = "time"
    elif kind == 3:
        value = {
            "type": "quantity",
            "value": {"amount": f"+{i % 200 + k}", "unit": "http://www.wikidata.org/entity/Q7727"},
        }
        datatype = "quantity"
    elif kind == 4:
        value, datatype = (
            {"type": "monolingualtext", "value": {"text": f"title {i} {k}", "language": "en"}},
            "monolingualtext",
        )
    else:
        value = {
            "type": "globecoordinate",
            "value": {
                "latitude": (i % 180) - 90.5,
                "longitude": (k * 7 % 360) - 180.25,
                "altitude": None,
                "precision": 0.0001,
                "globe": "http://www.wikidata.org/entity/Q2",
            },
        }
        datatype = "globe-coordinate"
    return {"snaktype": "value", "property": pid, "hash": f"{i:020x}{k:020x}", "datavalue": value, "datatype": datatype}


def realistic_entity(i: int) -> dict:
    qid = f"Q{i + 1}"
    claims = {}
    for k, pid in enumerate(PROPS):
        statements = []
        for j in range(1 + (i + k) % 3):
            statement = {
                "mainsnak": snak(pid, i, k * 6 + j),
                "type": "statement",
                "id": f"{qid}${i:08X}-{k:04X}-{j:04X}-0000-000000000000",
                "rank": "preferred" if j == 1 and i % 5 == 0 else "normal",
                "references": [{"hash": f"{i:040x}", "snaks": {"P143": [snak("P143", i, 0)]}, "snaks-order": ["P143"]}],
            }
            if j == 0 and k % 4 == 0:
                statement["qualifiers"] = {"P580": [snak("P580", i, 2)]}
                statement["qualifiers-order"] = ["P580"]
            statements.append(statement)
        claims[pid] = statements
    return {
        "type": "item",
        "id": qid,
        "labels": {lang: {"language": lang, "value": f"label {i} in {lang}"} for lang in LANGS},
        "descriptions": {
            lang: {"language": lang, "value": f"description of entity number {i} ({lang})"} for lang in LANGS[:20]
        },
        "aliases": {lang: [{"language": lang, "value": f"alias {i} {lang}"}] for lang in LANGS[:5]},
        "claims": claims,
        "sitelinks": {
            f"{lang.replace('-', '_')}wiki": {"site": f"{lang}wiki", "title": f"Page {i}", "badges": []}
            for lang in LANGS[:15]
        },
        "lastrevid": 1000000 + i,
    }


def limit_rate(dump: Path) -> tuple[float, float]:
    """Single-core limit: decompress + JSON parse, in one process, nothing else — read in blocks and
    framed and decoded exactly as the workers do it, the collector paused as there. Returns entities per wall second and per CPU second."""
    started, cpu = time.perf_counter(), time.process_time()
    count = 0
    with paused_gc():  # as in the workers
        for _, _, block in DumpReader(dump, decompressor="python").blocks(BATCH_BYTES):
            view = memoryview(block)
            for _, _, span in entity_spans(block, 0, len(block)):
                if span is not None:
                    decode_entity(view, *span)
                    count += 1
    return count / (time.perf_counter() - started), count / (time.process_time() - cpu)


def pass_rate(dump: Path, cfg: WikidataConfig, workers: int, scratch: Path) -> tuple[float, float, float]:
    """The extract pass: entities per wall second, and CPU microseconds per entity spent by the
    reading process and by the parsing (in the workers; CPU time, so other load does not count)."""
    state = Path(tempfile.mkdtemp(dir=scratch))
    self_before = time.process_time()
    started = time.perf_counter()
    result = run_resumable(dump, PassSpec("extract", cfg), state, workers=workers, decompressor="python", resume=False)
    seconds = time.perf_counter() - started
    entities = result.counts["entities"]
    reader_us = (time.process_time() - self_before) / entities * 1e6
    workers_us = result.counts["parse_cpu_us"] / entities  # measured inside the workers, batch by batch
    shutil.rmtree(state)
    return entities / seconds, reader_us, workers_us


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="20k entities, for a quick run")
    parser.add_argument("--entities", type=int, default=None)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--compression", choices=["gz", "bz2", "plain"], default="gz")
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/bench_wikidata.json"))
    args = parser.parse_args()
    n = args.entities or (20_000 if args.small else 200_000)
    scratch = Path(tempfile.mkdtemp(prefix="bench-wikidata-"))
    try:
        suffix = {"gz": ".json.gz", "bz2": ".json.bz2", "plain": ".json"}[args.compression]
        started = time.perf_counter()
        dump = write_dump(scratch / f"dump{suffix}", (realistic_entity(i) for i in range(n)))
        print(
            f"generated {n:,} entities in {time.perf_counter() - started:.1f}s: {dump.stat().st_size / 1e6:,.1f} MB "
            f"({args.compression}) on {os.cpu_count()} cores",
            flush=True,
        )
        cfg = WikidataConfig.from_schema(load_schema("film"))
        runs: dict[str, list[float]] = {"limit": [], "in_process": [], "workers_1": [], "workers_2": []}
        cpu: dict[str, list[float]] = {
            "limit_us_per_entity": [],
            "in_process_us": [],
            "workers_1_reader_us": [],
            "workers_1_worker_us": [],
            "workers_2_reader_us": [],
            "workers_2_worker_us": [],
        }
        for repeat in range(args.repeats):
            wall, per_cpu = limit_rate(dump)
            runs["limit"].append(wall)
            cpu["limit_us_per_entity"].append(1e6 / per_cpu)
            rate, reader_us, _ = pass_rate(dump, cfg, 0, scratch)
            runs["in_process"].append(rate)
            cpu["in_process_us"].append(reader_us)
            for k in (1, 2):
                rate, reader_us, worker_us = pass_rate(dump, cfg, k, scratch)
                runs[f"workers_{k}"].append(rate)
                cpu[f"workers_{k}_reader_us"].append(reader_us)
                cpu[f"workers_{k}_worker_us"].append(worker_us)
            print(
                f"  repeat {repeat + 1}: "
                + ", ".join(f"{k} {v[-1]:,.0f}/s" for k, v in runs.items())
                + f"; load average {os.getloadavg()[0]:.1f}",
                flush=True,
            )
        medians = {k: statistics.median(v) for k, v in runs.items()}
        cpu_medians = {k: statistics.median(v) for k, v in cpu.items()}
        worker_work = cpu_medians["workers_1_worker_us"]
        ratios = {
            "in_process_vs_limit": medians["in_process"] / medians["limit"],
            "workers_1_vs_limit": medians["workers_1"] / medians["limit"],
            "workers_2_per_worker_vs_limit": medians["workers_2"] / (2 * medians["limit"]),
            "scaling_2_vs_1": medians["workers_2"] / medians["workers_1"],
            # CPU-time view, immune to other load: the rate one worker core sustains vs the limit's core
            "worker_cpu_efficiency_vs_limit": cpu_medians["limit_us_per_entity"] / worker_work,
            "workers_1_vs_simple_wikidata_db_59_per_s": medians["workers_1"] / 59,
        }
        print(f"\nmedians over {args.repeats} runs, {n:,} entities ({args.compression}), {os.cpu_count()} cores:")
        for key, value in medians.items():
            print(f"  {key:<12} {value:>10,.0f} entities/s")
        for key, value in cpu_medians.items():
            print(f"  cpu {key:<28} {value:>8,.0f} us/entity")
        for key, value in ratios.items():
            print(f"  {key:<42} {value:6.2f}")
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(
            json.dumps(
                {
                    "entities": n,
                    "compression": args.compression,
                    "dump_bytes": dump.stat().st_size,
                    "cpu_count": os.cpu_count(),
                    "repeats": args.repeats,
                    "runs": runs,
                    "medians": medians,
                    "cpu_us_per_entity": cpu,
                    "cpu_medians": cpu_medians,
                    "ratios": ratios,
                },
                indent=2,
            ),
            encoding="utf-8",
        )
        print(f"wrote {args.output}")
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
