"""Benchmark: `kgforge build` on a DuConv-scale graph against a raw pyoxigraph bulk_load and rdflib.

    python benchmarks/bench_build.py            # 144k entities, ~3.6M triples (DuConv Table 2 scale)
    python benchmarks/bench_build.py --small    # 10k entities, 250k triples, for a quick look

Reports, from one run, each measurement with the peak RSS of the process that made it (the largest over
repeats): the whole build (import + load); the load phase of kgforge (bulk load into a fresh store + per-graph count check; the reload's wall time including
manifest, swap and pruning is reported beside it) against a plain
``pyoxigraph.Store.bulk_load`` of the very same N-Quads files, alternating, medians of --repeats;
and rdflib parsing the same N-Quads (a sample, extrapolated). Writes benchmarks/results/bench_build.json.
Target: load phase >= 0.8x raw bulk_load, and far ahead of rdflib.

    python benchmarks/bench_build.py --small --refresh-only   # the refresh part alone

    python benchmarks/bench_build.py --schema-less            # the refresh of a domain with no schema file

Schema-less refresh (--schema-less): a domain with no schema file (its schema inferred at build time) from a
synthetic KB of about 1M quads and the shared KdConv travel KB (../shared/data/kdconv/travel/kb_travel.json):
a full build, a rebuild with nothing changed, and a rebuild after one value of the travel KB changed, each as
the command a user runs. Targets: unchanged <= 10% of the full build, one small source changed <= 15%, and
the refreshed store's quads equal to a full rebuild's. Writes results/bench_build_schema_less.json.

Refresh, in the same run: a full build of two sources (the KB and a second KB 1% its size), a rebuild with
no source changed, a rebuild after the 1% source changed (regenerated with another seed), each as the
command a user runs (start-up included), with its peak memory. Targets: unchanged <= 10% of the full build,
1% changed <= 15%.
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
from benchmarks.synthetic import cached_synthetic_kb, write_synthetic_kb  # noqa: E402

RAW_LOAD = """
import sys, time, pyoxigraph as ox
store = ox.Store(sys.argv[1])
started = time.perf_counter()
for path in sys.argv[2:]:
    store.bulk_load(path=path, format=ox.RdfFormat.N_QUADS)
store.flush()
print(time.perf_counter() - started)
"""
KGFORGE_LOAD = """
import json, sys, time
from kgforge.publish.transaction import load_graphs
from kgforge.core.schema import load_schema
from kgforge.store.layout import carry_quads, domain_paths, published_build, read_manifest, staged_build, write_lock
started = time.perf_counter()
paths = domain_paths("duconv", sys.argv[1])
# the build's load phase again, over the same graphs: fresh store, count check, swap
with write_lock(paths), staged_build(paths) as staging:
    published = published_build(paths)
    manifest = read_manifest(paths, published)
    carry_quads(published, staging, manifest.graphs)
    summary = load_graphs(paths, staging, dict(manifest.graphs), load_schema(manifest.schema.path), None,
                          dict(manifest.stages))
print(json.dumps({"wall": time.perf_counter() - started, "load": summary.timings["load_seconds"]}))
"""
RDFLIB_PARSE = """
import sys, time, rdflib
data = open(sys.argv[1], encoding="utf-8").read()
started = time.perf_counter()
rdflib.Dataset().parse(data=data, format="nquads")
print(time.perf_counter() - started)
"""


def run_measured(args: list[str]) -> tuple[str, float, int]:
    """Run a command; return its stdout, wall seconds and peak RSS in MiB (of that process)."""
    started = time.perf_counter()
    process = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"command failed ({process.returncode}): {' '.join(args)}")
    return out, time.perf_counter() - started, usage.ru_maxrss // 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path, default=Path("bench-out"), help="folder for the generated graph")
    parser.add_argument("--result", type=Path, default=Path(__file__).resolve().parent / "results" / "bench_build.json")
    parser.add_argument("--refresh-only", action="store_true", help="only the full build against the refreshes")
    parser.add_argument("--work", type=Path, help="folder for the benchmark's builds (default: a new temporary one)")
    parser.add_argument("--schema-less", action="store_true", help="only the refresh of a domain with no schema")
    args = parser.parse_args()
    if args.schema_less:
        work = args.work or Path(tempfile.mkdtemp(prefix="kgforge-bench-"))
        write_result(args.result.with_name(f"{args.result.stem}_schema_less.json"), schema_less_refresh(args.out, work))
        return
    kb = cached_synthetic_kb(args.out, args.small)
    work = args.work or Path(tempfile.mkdtemp(prefix="kgforge-bench-"))
    cli = [sys.executable, "-c", "from kgforge.cli import main; main()"]
    refresh = refresh_benchmark(cli, kb, args.out, work / "refresh", args.small)
    if args.refresh_only:  # beside the full benchmark's result, which may be of another size
        write_result(
            args.result.with_name(f"{args.result.stem}_refresh.json"),
            {"graph": {"entities": 10_000 if args.small else 144_000, "kb": str(kb)}, "refresh": refresh},
        )
        return

    print("kgforge build (import + load) ...", file=sys.stderr)
    out, build_seconds, build_rss = run_measured(
        cli + ["build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(work), "--json"]
    )
    summary = json.loads(out)
    quads = summary["total_quads"]
    quad_files = [str(work / "duconv" / s["quads_file"]) for s in summary["sources"]] + [
        str(work / "duconv" / "quads" / "schema.nq")
    ]

    kgforge_load, kgforge_wall, raw_load, kgforge_rss, raw_rss = [], [], [], 0, 0
    for repeat in range(args.repeats):  # alternate the two, so background noise hits both alike
        print(f"load phase, repeat {repeat + 1}/{args.repeats} ...", file=sys.stderr)
        out, _, rss = run_measured([sys.executable, "-c", KGFORGE_LOAD, str(work)])
        kgforge_rss = max(kgforge_rss, rss)
        kgforge_load.append(json.loads(out)["load"])
        kgforge_wall.append(json.loads(out)["wall"])
        with tempfile.TemporaryDirectory(prefix="raw-", dir=work) as raw_dir:
            out, _, rss = run_measured([sys.executable, "-c", RAW_LOAD, raw_dir, *quad_files])
            raw_rss = max(raw_rss, rss)
            raw_load.append(float(out))

    sample_lines = 200_000
    sample = work / "sample.nq"
    with open(quad_files[0], encoding="utf-8") as src, open(sample, "w", encoding="utf-8") as dst:
        for i, line in enumerate(src):
            if i >= sample_lines:
                break
            dst.write(line)
    sampled = min(sample_lines, summary["sources"][0]["quads"])
    out, _, rdflib_rss = run_measured([sys.executable, "-c", RDFLIB_PARSE, str(sample)])
    rdflib_rate = sampled / float(out)

    kgforge_rate = quads / statistics.median(kgforge_load)
    raw_rate = quads / statistics.median(raw_load)
    result = {
        "graph": {"entities": 10_000 if args.small else 144_000, "quads": quads, "kb": str(kb)},
        "build": {
            "seconds": round(build_seconds, 1),
            "peak_rss_mib": build_rss,
            "import_seconds": summary["timings"]["import_seconds"],
        },
        "load_phase_quads_per_s": {
            "kgforge_median": round(kgforge_rate),
            "raw_bulk_load_median": round(raw_rate),
            "kgforge_runs_s": [round(x, 2) for x in kgforge_load],
            "kgforge_reload_wall_s": [round(x, 2) for x in kgforge_wall],
            "kgforge_peak_rss_mib": kgforge_rss,
            "raw_runs_s": [round(x, 2) for x in raw_load],
            "raw_peak_rss_mib": raw_rss,
        },
        "rdflib_parse_quads_per_s": round(rdflib_rate),
        "rdflib_sample_quads": sampled,
        "rdflib_peak_rss_mib": rdflib_rss,
        "ratio_kgforge_load_vs_raw": round(kgforge_rate / raw_rate, 2),
        "ratio_per_pair_median": round(statistics.median(r / k for k, r in zip(kgforge_load, raw_load)), 2),
        "ratio_kgforge_load_vs_rdflib": round(kgforge_rate / rdflib_rate, 1),
        "target": "load phase >= 0.8x raw bulk_load",
        "refresh": refresh,
    }
    write_result(args.result, result)


def write_result(path: Path, result: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(result, indent=2), encoding="utf-8")
    print(json.dumps(result, indent=2))


def refresh_benchmark(cli: list[str], kb: Path, folder: Path, work: Path, small: bool) -> dict:
    """A full build of the KB and a 1% second source, then a rebuild with nothing changed and one with the
    1% source changed: wall seconds (the whole command), peak RSS, and each against the full build."""
    entities, triples = (10_000, 250_000) if small else (144_000, 3_600_000)
    second = folder / "refresh" / f"kb_second_{entities // 100}.json"  # its own name: its own graph
    second.parent.mkdir(parents=True, exist_ok=True)
    write_synthetic_kb(second, entities=entities // 100, triples=triples // 100, seed=1)
    command = cli + [
        "build",
        "duconv",
        "--source",
        f"kdconv:{kb}",
        "--source",
        f"kdconv:{second}",
        "--no-schema-sources",
        "--workdir",
        str(work),
        "--json",
    ]
    runs = {}
    for name in ("full", "unchanged", "one_percent_changed"):
        if name == "one_percent_changed":
            write_synthetic_kb(second, entities=entities // 100, triples=triples // 100, seed=2)
        print(f"refresh benchmark: {name} build ...", file=sys.stderr)
        out, seconds, rss = run_measured(command)
        summary = json.loads(out)
        runs[name] = {
            "seconds": round(seconds, 2),
            "peak_rss_mib": rss,
            "quads": summary["total_quads"],
            "imported": [r["source"] for r in summary["refresh"] if r["action"] == "imported"],
            "published": summary["published"],
            "timings": summary["timings"],
        }
    full = runs["full"]["seconds"]
    for name in ("unchanged", "one_percent_changed"):
        runs[name]["ratio_to_full"] = round(runs[name]["seconds"] / full, 3)
    runs["targets"] = {"unchanged": "<= 0.10 of full", "one_percent_changed": "<= 0.15 of full"}
    return runs


def schema_less_refresh(folder: Path, work: Path) -> dict:
    """The refresh of a domain without a schema file: full build, unchanged rebuild, one small source changed,
    each against the full build, and the refreshed store against a full rebuild of the same sources."""
    kb = folder / "synthetic_kb_40000.json"
    if not kb.exists():
        write_synthetic_kb(kb, entities=40_000, triples=1_000_000)
    travel = folder / "schema_less" / "kb_travel.json"
    travel.parent.mkdir(parents=True, exist_ok=True)
    shared = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "kdconv" / "travel" / "kb_travel.json"
    original = json.loads(shared.read_text(encoding="utf-8"))
    travel.write_text(json.dumps(original, ensure_ascii=False), encoding="utf-8")
    cli = [sys.executable, "-c", "from kgforge.cli import main; main()"]
    command = cli + ["build", "sights", "--source", f"kdconv:{kb}", "--source", f"kdconv:{travel}"]
    runs: dict = {}
    for name in ("full", "unchanged", "one_small_source_changed"):
        if name == "one_small_source_changed":
            entity = next(iter(original))
            original[entity][0][2] = original[entity][0][2] + "（修订）"  # one value of one sight
            travel.write_text(json.dumps(original, ensure_ascii=False), encoding="utf-8")
        print(f"schema-less refresh: {name} build ...", file=sys.stderr)
        out, seconds, rss = run_measured([*command, "--workdir", str(work / "kg"), "--json"])
        summary = json.loads(out)
        runs[name] = {
            "seconds": round(seconds, 2),
            "peak_rss_mib": rss,
            "quads": summary["total_quads"],
            "sources_observed": summary["schema"].get("sources_observed"),
            "imported": [r["source"] for r in summary["refresh"] if r["action"] == "imported"],
            "published": summary["published"],
        }
    print("schema-less refresh: full rebuild to compare ...", file=sys.stderr)
    run_measured([*command, "--workdir", str(work / "fresh"), "--json"])
    for name in ("unchanged", "one_small_source_changed"):
        runs[name]["ratio_to_full"] = round(runs[name]["seconds"] / runs["full"]["seconds"], 3)
    runs["same_quads_as_a_full_rebuild"] = _sorted_quads(work / "kg") == _sorted_quads(work / "fresh")
    runs["targets"] = {"unchanged": "<= 0.10 of full", "one_small_source_changed": "<= 0.15 of full"}
    return runs


def _sorted_quads(workdir: Path) -> str:
    """The published store's quads, sorted, as one digest (1M lines compare quicker as a hash)."""
    import hashlib

    import pyoxigraph as ox

    store = ox.Store.read_only(str(workdir / "sights" / "store" / "oxigraph"))
    digest = hashlib.sha256()
    for line in sorted(str(quad) for quad in store):
        digest.update(line.encode("utf-8") + b"\n")
    return digest.hexdigest()


if __name__ == "__main__":
    main()
