"""Benchmark: `kgforge collect` under 200 simulated worker pairs chatting at once through the JSON API.

    python benchmarks/bench_collect.py                    # 200 pairs, 8 turns each; writes benchmarks/results/bench_collect.json
    python benchmarks/bench_collect.py --pairs 20         # a quick run

The domain is built from the shared DuConv sessions (``../shared/data/duconv/dev.head250.jsonl``, or
``$KGFORGE_SHARED_DATA``) into ``bench-out/collect/``, with ``kgforge derive`` and ``--pairs`` goals from
``kgforge goals``; a fresh collection folder is made for every run, and the real command (``python -m kgforge
collect``) serves it as its own process on 127.0.0.1.

Each simulated worker is an asyncio task with its own keep-alive connection (a small HTTP/1.1 client of this
file: the load generator must not need more CPU than the server it measures, on a 2-core machine). It asks to
join until paired, then follows the session with long polls (``?since=N&wait=20``); when it is its turn it
"types" for a random 0.3–1.5 s (real workers take seconds; shorter here, so the 400 workers load the server
harder than people would) and posts its turn; the leader clicks one fact of its knowledge for each of its turns
and ends the session after 8 turns. Measured: the latency of every turn POST (sent to answer read), of the
finish and of the session GETs that returned at once. Then the collection is exported and every acknowledged
turn is looked for in the export (and nothing else is there): "no lost turn".

Target (issue 48): p95 turn latency <= 50 ms, no lost turn.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from kgforge.api import Domain  # noqa: E402
from kgforge.collect import export_collection, prepare_collection  # noqa: E402
from kgforge.collect.folder import Folder  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench-out" / "collect"
RESULTS = ROOT / "benchmarks" / "results" / "bench_collect.json"
SHARED = Path(os.environ.get("KGFORGE_SHARED_DATA", ROOT.parent / "shared" / "data"))
TARGETS = {"p95_turn_ms": 50.0, "lost_turns": 0}
TURNS = 8


class Connection:
    """One keep-alive HTTP/1.1 connection: just what the collection's JSON API needs."""

    def __init__(self, port: int, token: str) -> None:
        self.port, self.token = port, token
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None
        self.used = 0.0

    async def request(self, method: str, path: str, body: dict | None = None) -> tuple[int, dict]:
        if self.writer is None or time.monotonic() - self.used > 4.0:  # the server closes idle ones after 5 s
            await self.close()
            self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
        data = json.dumps(body, ensure_ascii=False).encode() if body is not None else b""
        head = f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1:{self.port}\r\nAuthorization: Bearer {self.token}\r\n"
        if body is not None:
            head += "Content-Type: application/json\r\n"
        self.writer.write(f"{head}Content-Length: {len(data)}\r\n\r\n".encode() + data)
        status_line = await self.reader.readline()
        length = 0
        while (line := await self.reader.readline()) not in (b"\r\n", b""):
            name, _, value = line.decode("latin-1").partition(":")
            if name.lower() == "content-length":
                length = int(value)
        payload = await self.reader.readexactly(length)
        self.used = time.monotonic()
        return int(status_line.split()[1]), json.loads(payload) if payload else {}

    async def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None


class Tally:
    def __init__(self) -> None:
        self.turn_ms: list[float] = []
        self.turn_at: list[float] = []  # when each turn was sent (perf_counter)
        self.finish_ms: list[float] = []
        self.acknowledged: dict[str, dict[int, str]] = {}  # session -> index -> text acknowledged
        self.refused: list[tuple[int, dict]] = []


async def worker(port: int, token: str, tally: Tally, rng: random.Random) -> None:
    conn = Connection(port, token)
    try:
        while True:
            status, joined = await conn.request("POST", "/api/collect/join")
            if status == 200 and joined["partner"]:
                break
            await asyncio.sleep(0.5)
        sid, since = joined["session"], -1
        while True:
            status, view = await conn.request("GET", f"/api/collect/session/{sid}?since={since}&wait=20")
            since = len(view["turns"])
            if view["state"] != "open":
                return
            if view["role"] == "leader" and since >= TURNS:
                started = time.perf_counter()
                status, _ = await conn.request("POST", f"/api/collect/session/{sid}/finish")
                tally.finish_ms.append((time.perf_counter() - started) * 1000)
                return
            if not view["your_turn"]:
                continue
            await asyncio.sleep(rng.uniform(0.3, 1.5))
            facts = [rng.choice(view["knowledge"])["id"]] if view.get("knowledge") else []
            text = f"{view['role']} {since}: " + rng.choice(["你好", "是吗？", "这部电影不错。", "我很喜欢他。"])
            started = time.perf_counter()
            status, reply = await conn.request(
                "POST", f"/api/collect/session/{sid}/turn", {"text": text, "facts": facts}
            )
            tally.turn_ms.append((time.perf_counter() - started) * 1000)
            tally.turn_at.append(started)
            if status == 200:
                tally.acknowledged.setdefault(sid, {})[reply["index"]] = text
                since = reply["index"] + 1  # as the page does: its one long poll waits for the partner's turn
            else:
                tally.refused.append((status, reply))
    finally:
        await conn.close()


async def load(port: int, workers: list[str], seed: int) -> tuple[Tally, float]:
    tally, rng = Tally(), random.Random(seed)
    started = time.perf_counter()
    await asyncio.gather(*(worker(port, token, tally, random.Random(rng.random())) for token in workers))
    return tally, time.perf_counter() - started


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def domain(pairs: int) -> tuple[Path, Path]:
    workdir, goals = OUT / "kg", OUT / f"goals-{pairs}.jsonl"
    kg = Domain("duconv", workdir)
    if not kg.paths.store_link.exists():
        kg.build(sources=[f"duconv:{SHARED / 'duconv' / 'dev.head250.jsonl'}"])
        kg.derive()
    if not goals.exists():
        kg.goals(pairs, goals)
    return workdir, goals


def serve(folder: Path, workdir: Path, goals: Path, port: int) -> subprocess.Popen[bytes]:
    command = [sys.executable, "-m", "kgforge", "collect", "duconv", "--goals", str(goals), "--style", "duconv"]
    command += ["--out", str(folder), "--port", str(port), "--workdir", str(workdir), "--max-connections", "1000"]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=ROOT)
    deadline = time.monotonic() + 120
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return process
        except OSError:
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"kgforge collect did not start: {process.stderr.read().decode()[-2000:]}") from None
            time.sleep(0.2)


def lost(tally: Tally, export: Path) -> tuple[int, int]:
    """(acknowledged turns missing from the export, turns in the export nobody was told were accepted)."""
    written = {}
    for line in export.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        texts = ["".join(t.split()) for t in record["conversation"]]
        written[record["collected"]["session"]] = texts
    missing = extra = 0
    for sid, acked in tally.acknowledged.items():
        texts = written.get(sid, [])
        missing += sum(1 for i, text in acked.items() if i >= len(texts) or texts[i] != "".join(text.split()))
        extra += max(0, len(texts) - len(acked))
    return missing, extra


def by_second(tally: Tally) -> list[list[float]]:
    """[second of the run, turns sent in it, their p50 and p95 ms]: where in the run the slow turns were."""
    first, seconds = min(tally.turn_at), {}
    for at, ms in zip(tally.turn_at, tally.turn_ms):
        seconds.setdefault(int(at - first), []).append(ms)
    return [
        [second, len(values), round(percentile(values, 0.5), 1), round(percentile(values, 0.95), 1)]
        for second, values in sorted(seconds.items())
    ]


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))] if ordered else float("nan")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    workdir, goals = domain(args.pairs)
    folder = OUT / f"run-{args.pairs}"
    shutil.rmtree(folder, ignore_errors=True)
    prepare_collection("duconv", goals, "duconv", folder, workdir=workdir, workers=2 * args.pairs)
    port = free_port()
    server = serve(folder, workdir, goals, port)
    try:
        tally, seconds = asyncio.run(load(port, [t for t, _ in Folder(folder).workers()], args.seed))
    finally:
        server.send_signal(signal.SIGINT)
        server.wait(60)
    report = export_collection(folder, "duconv", folder / "collected.txt")
    missing, extra = lost(tally, folder / "collected.txt")
    acknowledged = sum(len(a) for a in tally.acknowledged.values())
    result = {
        "pairs": args.pairs,
        "turns_per_session": TURNS,
        "sessions_finished": report.sessions,
        "turns_acknowledged": acknowledged,
        "turns_exported": report.turns,
        "turns_refused": len(tally.refused),
        "lost_turns": missing,
        "unacknowledged_turns_written": extra,
        "p50_turn_ms": round(statistics.median(tally.turn_ms), 2),
        "p95_turn_ms": round(percentile(tally.turn_ms, 0.95), 2),
        "p99_turn_ms": round(percentile(tally.turn_ms, 0.99), 2),
        "max_turn_ms": round(max(tally.turn_ms), 2),
        "p95_finish_ms": round(percentile(tally.finish_ms, 0.95), 2),
        "seconds": round(seconds, 1),
        "turns_per_second": round(acknowledged / seconds, 1),
        "targets": TARGETS,
        "machine": f"{os.cpu_count()} cores",
        "measured": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    result["ok"] = result["p95_turn_ms"] <= TARGETS["p95_turn_ms"] and missing == 0 and report.sessions == args.pairs
    result["by_second"] = by_second(tally)
    RESULTS.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(result, indent=2))
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
