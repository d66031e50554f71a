"""A query worker's memory is capped: a short query that would grow a string to gigabytes (each BIND
doubles it) ends its worker at the cap, the caller gets QueryOutOfMemory (the server's 503), the CLI one
line, and the next query runs on a fresh worker."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest

from kgforge.core.errors import QueryOutOfMemory
from kgforge.serve.domain import ServeOptions, default_worker_memory
from kgforge.serve.pool import WorkerPool
from kgforge.store.layout import domain_paths, published_build
from kgforge.store.query import MEMORY_VARIABLE, QueryRunner
from kgforge.store.snapshot import Snapshot
from kgforge.store.sparql_text import PREFIXES
from tests.serve_support import build_demo

CAP = 256 * 2**20
DOUBLINGS = 30  # a 16-byte string doubled 30 times: 16 GiB, in a query of about 1 KB


def hungry_query() -> str:
    binds = " ".join(f"BIND(CONCAT(?v{i}, ?v{i}) AS ?v{i + 1})" for i in range(DOUBLINGS))
    return f'SELECT (STRLEN(?v{DOUBLINGS}) AS ?n) WHERE {{ BIND("0123456789abcdef" AS ?v0) {binds} }}'


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("memory") / "kg"
    build_demo(workdir, with_derived=False)
    return workdir


@pytest.mark.slow  # a query worker grown to its memory cap
def test_the_query_runner_stops_a_query_at_the_cap_and_goes_on(demo):
    assert len(hungry_query()) < 1200
    with QueryRunner(Snapshot.open("demo", demo), memory_limit=CAP) as runner:
        started = time.monotonic()
        with pytest.raises(QueryOutOfMemory, match="256 MiB"):
            runner.query(hungry_query(), timeout=120)
        assert time.monotonic() - started < 60, "the cap, not the timeout, ended it"
        assert runner.query("ASK { ?s ?p ?o }").boolean is True  # a fresh worker


@pytest.mark.slow  # a query worker grown to its memory cap
def test_the_cli_says_it_in_one_line(demo, cli, monkeypatch):
    monkeypatch.setenv(MEMORY_VARIABLE, "256")
    result = cli("query", "demo", hungry_query(), "--workdir", str(demo), "--timeout", "120", check=False)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "memory" in lines[0] and "256 MiB" in lines[0], result.stderr


@pytest.mark.slow  # a pool worker grown to its memory cap
def test_the_server_pool_reports_out_of_memory_and_replaces_the_worker(demo):
    async def ask() -> tuple[type, tuple]:
        pool = WorkerPool(1, PREFIXES, memory_limit=CAP)
        await pool.start()
        build = str(published_build(domain_paths("demo", demo)))
        loop = asyncio.get_running_loop()
        try:
            try:
                await pool.run(
                    {"kind": "rows", "sparql": hungry_query(), "max_rows": 10, "build": build}, loop.time() + 120, 120
                )
            except QueryOutOfMemory as exc:
                caught = type(exc)
            else:
                caught = type(None)
            reply = await pool.run(
                {"kind": "rows", "sparql": "SELECT ?s WHERE { ?s ?p ?o } LIMIT 1", "max_rows": 10, "build": build},
                loop.time() + 60,
                60,
            )
            return caught, reply
        finally:
            await pool.close()

    caught, reply = asyncio.run(ask())
    assert caught is QueryOutOfMemory
    assert reply[0] == "ok" and len(reply[1]["rows"]) == 1


def test_the_default_cap_keeps_the_pool_within_half_the_machine():
    options = ServeOptions(workers=8)
    assert 512 * 2**20 <= options.worker_memory_bytes() <= 8192 * 2**20
    assert ServeOptions(workers=8, worker_memory=300).worker_memory_bytes() == 300 * 2**20
    assert default_worker_memory(1) >= default_worker_memory(64)


@pytest.mark.slow  # a server's worker grown to its memory cap
def test_the_endpoint_answers_503(demo):
    import httpx

    from tests.serve_support import running_server

    with running_server(demo, workers=1, worker_memory=256, timeout=120) as base:
        reply = httpx.get(f"{base}/sparql", params={"query": hungry_query()}, timeout=120)
        assert reply.status_code == 503 and "memory" in reply.text and "256 MiB" in reply.text, reply.text
        after = httpx.get(f"{base}/sparql", params={"query": "ASK { ?s ?p ?o }"}, timeout=60)
        assert after.status_code == 200 and after.json()["boolean"] is True
