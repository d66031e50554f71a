"""Benchmark: `kgforge serve` under a loopback load of the queries/ mix, beside `oxigraph serve-read-only`.

    pip install -e '.[bench]'                       # the oxigraph server binary (baseline)
    python benchmarks/bench_serve.py                 # DuConv-scale graph (built once into bench-out/)
    python benchmarks/bench_serve.py --small --seconds 10

Both servers serve the same store (the published build of the synthetic DuConv-scale domain, derived
triples included) in the same run, each in turn for ``--seconds`` with ``--clients`` concurrent clients
(one process each, HTTP/1.1 keep-alive, a new request as soon as the last answer is read), after a
warm-up. The mix is every file of ``queries/`` except the whole-graph self-join (which finishes on
neither), with values drawn from the graph and substituted into the query text (Oxigraph's server takes no
substitutions), prefixes declared: the two servers get byte-identical requests, JSON results. Rounds
alternate the order (baseline, kgforge, kgforge, baseline, …).

Then the explorer's entity page is fetched for --pages random entities, one at a time (p50, p99).
Writes benchmarks/results/bench_serve.json. Target: throughput >= 0.8x the baseline's, entity
page p50 < 100 ms.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing as mp
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import urllib.parse
from pathlib import Path

import pyoxigraph as ox

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.synthetic import cached_synthetic_kb  # noqa: E402
from kgforge.core.resources import query_text  # noqa: E402
from kgforge.store.layout import domain_paths  # noqa: E402
from kgforge.store.query import PREFIXES  # noqa: E402
from kgforge.store.snapshot import Snapshot  # noqa: E402

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
TARGETS = {"throughput_ratio": 0.8, "entity_page_p50_ms": 100.0}
# query file → (variables bound, extra text after the query)
MIX = {
    "entity_by_label": (("name",), ""),
    "entity_facts": (("name",), ""),
    "entity_neighbours": (("topic",), ""),
    "neighbourhood": (("topic",), ""),
    "dialogue_subgraph": (("a", "b"), ""),
    "goal_one_step": (("a", "b"), ""),
    "goal_two_step": (("a", "b"), ""),
    "associated_pairs": (("a", "b"), ""),
    "transition_1hop": (("t1",), ""),
    "transition_2hop": (("t1",), "\nLIMIT 100"),
    "transition_3hop": (("t1",), "\nLIMIT 100"),
}
HEADERS = {"Content-Type": "application/x-www-form-urlencoded", "Accept": "application/sparql-results+json"}


# ---------------------------------------------------------------- the workload


def sample_values(store_dir: Path, seed: int, n: int) -> dict[str, list]:
    """Terms to bind, drawn from the graph: entity topics, their zh labels, linked pairs, associated pairs."""
    store = ox.Store.read_only(str(store_dir))
    rng = random.Random(seed)

    def rows(sparql: str) -> list:
        return list(store.query(sparql, use_default_graph_as_union=True, prefixes=PREFIXES))

    edges = rows("SELECT ?s ?o WHERE { ?p kg:kind kg:EntityValued . ?s ?p ?o } LIMIT 200000")
    pairs = rows(
        "SELECT ?a ?b WHERE { GRAPH <https://kgforge.org/graph/derived/associated> "
        "{ ?n kg:left ?a ; kg:right ?b } } LIMIT 200000"
    )
    linked = [(r["s"], r["o"]) for r in rng.sample(edges, min(n, len(edges)))]
    topics = [t for pair in linked for t in pair]
    labels = {}
    for topic in topics[:n]:
        found = list(
            store.query(
                "SELECT ?t ?l WHERE { ?t rdfs:label ?l FILTER(LANG(?l) = 'zh') } LIMIT 1",
                substitutions={ox.Variable("t"): topic},
                prefixes=PREFIXES,
                use_default_graph_as_union=True,
            )
        )
        if found:
            labels[str(topic)] = found[0]["l"]
    associated = [(r["a"], r["b"]) for r in rng.sample(pairs, min(n, len(pairs)))] or linked
    return {"topic": topics, "name": list(labels.values()), "pair": linked, "associated": associated}


def bound_query(name: str, values: dict[str, ox.NamedNode | ox.Literal]) -> str:
    """The shipped query with each bound variable replaced by its term, as SEP-0007 substitution defines
    it (Oxigraph's server takes no substitutions): ``(TERM AS ?v)`` in the SELECT clause, TERM elsewhere."""
    variables, tail = MIX[name]
    text = "\n".join(line for line in query_text(name).splitlines() if not line.lstrip().startswith("#"))
    head, where, body = text.partition("WHERE {")
    for variable in variables:
        term = str(values[variable])
        head = re.sub(rf"\?{variable}\b", f"({term} AS ?{variable})", head)
        body = re.sub(rf"\?{variable}\b", lambda _: term, body)
    prologue = "".join(f"PREFIX {p}: <{iri}>\n" for p, iri in PREFIXES.items())
    return prologue + head + where + body + tail


def workload(store_dir: Path, seed: int, per_query: int) -> list[tuple[str, str]]:
    """(query name, form body) pairs, the names interleaved."""
    pool = sample_values(store_dir, seed, per_query * 2)
    rng = random.Random(seed + 1)
    requests = []
    for i in range(per_query):
        for name, (variables, _) in MIX.items():
            if variables == ("name",):
                values = {"name": pool["name"][i % len(pool["name"])]}
            elif variables == ("a", "b"):
                a, b = (pool["associated"] if name in ("goal_two_step", "associated_pairs") else pool["pair"])[
                    rng.randrange(len(pool["pair"]))
                ]
                values = {"a": a, "b": b}
            else:
                values = {variables[0]: pool["topic"][rng.randrange(len(pool["topic"]))]}
            requests.append((name, urllib.parse.urlencode({"query": bound_query(name, values)})))
    return requests


# ---------------------------------------------------------------- the load


def client(port: int, requests: list[tuple[str, str]], start: int, seconds: float, out: mp.Queue) -> None:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    latencies: list[tuple[str, float]] = []
    errors: dict[str, int] = {}
    i, end = start, time.perf_counter() + seconds
    while time.perf_counter() < end:
        name, body = requests[i % len(requests)]
        i += 1
        started = time.perf_counter()
        try:
            conn.request("POST", "/sparql", body=body, headers=HEADERS)
            reply = conn.getresponse()
            reply.read()
            status = reply.status
        except (OSError, http.client.HTTPException) as exc:
            conn.close()
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            status = type(exc).__name__
        if status != 200:
            errors[f"{name}: {status}"] = errors.get(f"{name}: {status}", 0) + 1
            continue
        latencies.append((name, time.perf_counter() - started))
    out.put((latencies, errors))


def load(port: int, requests: list[tuple[str, str]], clients: int, seconds: float) -> dict:
    queue: mp.Queue = mp.Queue()
    step = len(requests) // clients
    processes = [mp.Process(target=client, args=(port, requests, k * step, seconds, queue)) for k in range(clients)]
    cpu_before = os.times()
    for p in processes:
        p.start()
    results = [queue.get() for _ in processes]
    for p in processes:
        p.join()
    latencies = [x for r in results for x in r[0]]
    errors: dict[str, int] = {}
    for r in results:
        for k, v in r[1].items():
            errors[k] = errors.get(k, 0) + v
    times = sorted(t for _, t in latencies)
    per_query = {}
    for name in MIX:
        mine = sorted(t for n, t in latencies if n == name)
        if mine:
            per_query[name] = {"n": len(mine), "p50_ms": round(1000 * mine[len(mine) // 2], 2)}
    return {
        "requests": len(times),
        "seconds": seconds,
        "throughput_rps": round(len(times) / seconds, 1),
        "p50_ms": round(1000 * percentile(times, 0.5), 2),
        "p99_ms": round(1000 * percentile(times, 0.99), 2),
        "mean_ms": round(1000 * statistics.fmean(times), 2) if times else None,
        "errors": errors,
        "per_query": per_query,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "client_cpu_s": round(sum(os.times()[2:4]) - sum(cpu_before[2:4]), 1),
    }


def percentile(sorted_values: list[float], q: float) -> float:
    return sorted_values[min(len(sorted_values) - 1, int(q * len(sorted_values)))] if sorted_values else float("nan")


# ---------------------------------------------------------------- the servers


def free_port() -> int:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_until(port: int, path: str, ready, timeout: float = 600) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", path)
            reply = conn.getresponse()
            body = reply.read()
            if ready(reply.status, body):
                return
        except OSError:
            pass
        time.sleep(0.5)
    raise SystemExit(f"server on port {port} was not ready in {timeout:g} s")


def start_oxigraph(store_dir: Path, timeout: float) -> tuple[subprocess.Popen, int]:
    binary = shutil.which("oxigraph") or str(Path(sys.executable).parent / "oxigraph")
    if not Path(binary).exists():
        raise SystemExit("the baseline needs the oxigraph server binary: pip install -e '.[bench]'")
    port = free_port()
    process = subprocess.Popen(
        [
            binary,
            "serve-read-only",
            "--location",
            str(store_dir),
            "--bind",
            f"127.0.0.1:{port}",
            "--union-default-graph",
            "--timeout-s",
            str(int(timeout)),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    wait_until(port, "/query?query=ASK%7B%7D", lambda status, _: status == 200)
    return process, port


def start_kgforge(workdir: Path, timeout: float, workers: int | None) -> tuple[subprocess.Popen, int]:
    port = free_port()
    args = [*CLI, "serve", "duconv", "--workdir", str(workdir), "--port", str(port), "--timeout", str(timeout)]
    process = subprocess.Popen(
        args + (["--workers", str(workers)] if workers else []), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    wait_until(port, "/api/status", lambda status, body: status == 200 and json.loads(body)["search_ready"])
    return process, port


def stop(process: subprocess.Popen) -> None:
    process.terminate()
    try:
        process.wait(30)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


def entity_pages(port: int, entities: list[str]) -> dict:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    times, statuses = [], {}
    for iri in entities:
        started = time.perf_counter()
        conn.request("GET", "/entity?" + urllib.parse.urlencode({"iri": iri}))
        reply = conn.getresponse()
        reply.read()
        times.append(time.perf_counter() - started)
        statuses[reply.status] = statuses.get(reply.status, 0) + 1
    times.sort()
    return {
        "pages": len(times),
        "statuses": statuses,
        "p50_ms": round(1000 * percentile(times, 0.5), 2),
        "p99_ms": round(1000 * percentile(times, 0.99), 2),
    }


# ---------------------------------------------------------------- main


def prepare(out: Path, small: bool) -> Path:
    """The benchmark domain: the synthetic KB built and derived once into ``out/kg`` (reused after)."""
    workdir = out / ("kg-small" if small else "kg")
    if not (workdir / "duconv" / "store").exists():
        kb = cached_synthetic_kb(out, small)
        for args in (["build", "duconv", "--source", f"kdconv:{kb}", "--no-schema-sources"], ["derive", "duconv"]):
            print(f"kgforge {' '.join(args[:2])} ...", file=sys.stderr)
            subprocess.run([*CLI, *args, "--workdir", str(workdir), "--json"], check=True, stdout=subprocess.DEVNULL)
    return workdir


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--warmup", type=float, default=10.0)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=1, help="baseline+kgforge pairs, order alternating")
    parser.add_argument("--per-query", type=int, default=300, help="distinct requests per query file")
    parser.add_argument("--pages", type=int, default=300)
    parser.add_argument("--timeout", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=None, help="kgforge serve --workers (default: one per core)")
    parser.add_argument("--out", type=Path, default=Path("bench-out"))
    parser.add_argument("--result", type=Path, default=Path("benchmarks/results/bench_serve.json"))
    args = parser.parse_args()

    workdir = prepare(args.out, args.small)
    store_dir = Snapshot.open("duconv", workdir).store_dir.resolve()
    requests = workload(store_dir, seed=0, per_query=args.per_query)
    print(f"{len(requests)} requests over {len(MIX)} query files; store {store_dir}", file=sys.stderr)

    runs: dict[str, list[dict]] = {"oxigraph": [], "kgforge": []}
    pages = None
    order = [("oxigraph", "kgforge"), ("kgforge", "oxigraph")]
    for round_ in range(args.rounds):
        for server in order[round_ % 2]:
            process, port = (
                start_oxigraph(store_dir, args.timeout)
                if server == "oxigraph"
                else start_kgforge(workdir, args.timeout, args.workers)
            )
            try:
                print(
                    f"round {round_ + 1}: {server} warm-up {args.warmup:g} s, load {args.seconds:g} s ...",
                    file=sys.stderr,
                )
                load(port, requests, args.clients, args.warmup)
                runs[server].append(load(port, requests, args.clients, args.seconds))
                if server == "kgforge" and pages is None:
                    topics = sample_values(store_dir, seed=7, n=args.pages)["topic"][: args.pages]
                    entity_pages(port, [t.value for t in topics[:20]])  # warm: relation labels, caches
                    pages = entity_pages(port, [t.value for t in topics])
            finally:
                stop(process)

    throughput = {k: statistics.median(r["throughput_rps"] for r in v) for k, v in runs.items()}
    ratio = round(throughput["kgforge"] / throughput["oxigraph"], 3)
    result = {
        "command": " ".join(["python benchmarks/bench_serve.py", *sys.argv[1:]]),
        "graph": {
            "quads": json.loads((domain_paths("duconv", workdir).manifest).read_text())["total_quads"],
            "small": args.small,
        },
        "load": {
            "clients": args.clients,
            "seconds": args.seconds,
            "warmup_s": args.warmup,
            "rounds": args.rounds,
            "distinct_requests": len(requests),
            "queries": list(MIX),
        },
        "oxigraph_serve_read_only": runs["oxigraph"],
        "kgforge_serve": runs["kgforge"],
        "throughput_median_rps": throughput,
        "throughput_ratio_kgforge_over_oxigraph": ratio,
        "entity_page": pages,
        "meets_targets": {
            "throughput_ratio": ratio >= TARGETS["throughput_ratio"],
            "entity_page_p50": bool(pages) and pages["p50_ms"] < TARGETS["entity_page_p50_ms"],
        },
        "targets": TARGETS,
        "machine": {
            "cpus": os.cpu_count(),
            "python": sys.version.split()[0],
            "load_average_at_end": [round(x, 2) for x in os.getloadavg()],
        },
    }
    args.result.parent.mkdir(parents=True, exist_ok=True)
    args.result.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    for name, value in (("oxigraph serve-read-only", runs["oxigraph"][-1]), ("kgforge serve", runs["kgforge"][-1])):
        print(
            f"{name:26s} {value['throughput_rps']:8.1f} req/s  p50 {value['p50_ms']:8.2f} ms  "
            f"p99 {value['p99_ms']:8.2f} ms  errors {sum(value['errors'].values())}"
        )
    print(
        f"throughput ratio {ratio} (target >= {TARGETS['throughput_ratio']}); entity page p50 "
        f"{pages and pages['p50_ms']} ms, p99 {pages and pages['p99_ms']} ms (target p50 < 100 ms)"
    )
    print(f"written to {args.result}")


if __name__ == "__main__":
    main()
