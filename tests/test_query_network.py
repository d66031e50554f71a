"""No query opens a network connection unless SERVICE calls are allowed, whatever its text says.

The guard is below Oxigraph: the query worker (``kgforge query``, ``Domain.query``, the server's pool)
cannot make a network socket (seccomp, else a network namespace). A canary server on 127.0.0.1 counts
every TCP connection it accepts. Each trick below is a real SERVICE call for Oxigraph (with
``--allow-service`` it does reach the canary, so the canary works and the trick is live); without it, the
canary sees nothing, from the command line and from the endpoint, whether the text check caught the
trick or not.
"""

from __future__ import annotations

import asyncio
import json
import platform
import socket
import threading
from pathlib import Path

import httpx
import pytest

from kgforge.core import sandbox
from kgforge.core.errors import QueryError
from kgforge.serve.pool import WorkerPool
from kgforge.store.layout import domain_paths, published_build
from kgforge.store.query import QueryRunner, uses_service
from kgforge.store.snapshot import Snapshot
from kgforge.store.sparql_text import PREFIXES
from tests.serve_support import build_demo, running_server

EMPTY_RESULTS = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": []}}).encode()

# {url}: the canary's SPARQL endpoint; {base}: its root (for prefixed names)
TRICKS = {
    "plain": "SELECT * WHERE { SERVICE <{url}> { ?x ?y ?z } }",
    "lower case": "select * where { service <{url}> { ?x ?y ?z } }",
    "silent": "SELECT * WHERE { SERVICE SILENT <{url}> { ?x ?y ?z } }",
    "prefixed name": "PREFIX c: <{base}> SELECT * WHERE { SERVICE c:sparql { ?x ?y ?z } }",
    "double-quote escape and a comment": 'SELECT * WHERE { { VALUES ?a { "\\u0022 } } } #" } SERVICE <{url}> { ?x ?y ?z } } }',
    "single-quote escape and a comment": "SELECT * WHERE { { VALUES ?a { '\\u0027 } } } #' } SERVICE <{url}> { ?x ?y ?z } } }",
    "escape, comment, lower case, prefixed name": "PREFIX c: <{base}> select * where { { values ?a { '\\u0027 } } } #' } service c:sparql { ?x ?y ?z } } }",
    "in a subquery": "SELECT * WHERE { { SELECT ?x WHERE { SERVICE <{url}> { ?x ?y ?z } } } }",
    "in EXISTS": "SELECT * WHERE { VALUES ?a { 1 } FILTER EXISTS { SERVICE <{url}> { ?x ?y ?z } } }",
    "a comment inside the clause": "SELECT * WHERE { SERVICE#{\n<{url}> { ?x ?y ?z } }",
}


class Canary:
    """A loopback HTTP server that counts the connections it accepts and answers an empty SPARQL result."""

    def __init__(self) -> None:
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.connections = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.listener.getsockname()[1]}/"

    def query(self, trick: str) -> str:
        return TRICKS[trick].replace("{url}", self.base + "sparql").replace("{base}", self.base)

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self._lock:
                self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(5)
            data = b""
            try:
                while b"\r\n\r\n" not in data:
                    chunk = conn.recv(65536)
                    if not chunk:
                        return
                    data += chunk
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\n"
                    b"Connection: close\r\nContent-Length: "
                    + str(len(EMPTY_RESULTS)).encode()
                    + b"\r\n\r\n"
                    + EMPTY_RESULTS
                )
            except OSError:
                return

    def close(self) -> None:
        self.listener.close()


@pytest.fixture
def canary():
    server = Canary()
    yield server
    server.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("network") / "kg"
    build_demo(workdir, with_derived=False)
    return workdir


def test_some_tricks_pass_the_text_check():
    """The guard below Oxigraph matters: these reach the worker (the text check is only a friendly message)."""
    base = "http://127.0.0.1:9/"
    passing = [
        name
        for name, text in TRICKS.items()
        if not uses_service(text.replace("{url}", base + "sparql").replace("{base}", base))
    ]
    assert "double-quote escape and a comment" in passing and "single-quote escape and a comment" in passing


@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_no_trick_reaches_the_network_from_kgforge_query(trick, demo, canary, cli):
    result = cli("query", "demo", canary.query(trick), "--workdir", str(demo), "--format", "json", check=False)
    assert canary.connections == 0, result.stderr
    assert result.returncode == 1 and "Traceback" not in result.stderr  # refused, or the call failed: said so
    assert len(result.stderr.strip().splitlines()) == 1 and "--allow-service" in result.stderr, result.stderr


def test_every_trick_is_a_live_service_call_once_allowed(demo, canary):
    """The same queries through the library: refused or failed without allow_service, and each of them
    reaches the canary with it (so the canary works, and every trick is a real SERVICE call)."""
    with QueryRunner(Snapshot.open("demo", demo)) as runner:
        for trick in TRICKS:
            with pytest.raises(QueryError):
                runner.query(canary.query(trick))
        assert canary.connections == 0
        for trick in TRICKS:
            before = canary.connections
            runner.query(canary.query(trick), allow_service=True)
            assert canary.connections > before, trick


def test_the_worker_itself_has_no_network(demo, canary, monkeypatch):
    """With the text check out of the way, the worker's own call fails: the socket cannot be made."""
    monkeypatch.setattr("kgforge.store.query.uses_service", lambda sparql: False)
    with QueryRunner(Snapshot.open("demo", demo)) as runner:
        with pytest.raises(QueryError, match="(?i)denied|service|connect"):
            runner.query(canary.query("plain"))
        assert runner.isolation in ("seccomp", "namespace")
    assert canary.connections == 0


@pytest.mark.slow  # a real server asked every trick (the CLI's own path stays in the fast loop)
@pytest.mark.parametrize("trick", sorted(TRICKS))
def test_no_trick_reaches_the_network_from_the_endpoint(trick, demo, canary):
    with running_server(demo, workers=1) as base:
        reply = httpx.get(f"{base}/sparql", params={"query": canary.query(trick)}, timeout=60)
    assert reply.status_code == 403 and "SERVICE" in reply.text, reply.text
    assert canary.connections == 0


def test_the_server_pool_worker_has_no_network(demo, canary):
    """The endpoint's own SERVICE check bypassed: the pool's worker cannot connect either."""

    async def ask() -> tuple:
        pool = WorkerPool(1, PREFIXES)
        await pool.start()
        try:
            request = {
                "kind": "rows",
                "sparql": canary.query("plain"),
                "max_rows": 10,
                "build": str(published_build(domain_paths("demo", demo))),
            }
            return await pool.run(request, asyncio.get_running_loop().time() + 60, 60)
        finally:
            await pool.close()

    reply = asyncio.run(ask())
    assert reply[0] == "error" and reply[1] == 403 and "SERVICE" in reply[2], reply
    assert canary.connections == 0


def test_the_filter_refuses_inet_sockets_in_a_child(tmp_path):
    """The seccomp program on this machine: AF_INET and AF_INET6 refused, AF_UNIX kept, inherited by children."""
    if platform.machine().lower() not in ("x86_64", "amd64", "aarch64", "arm64"):
        pytest.skip(f"no seccomp program for {platform.machine()}")
    code = (
        "import socket, subprocess, sys\n"
        "from kgforge.core.sandbox import close_network\n"
        "print(close_network())\n"
        "for family in (socket.AF_INET, socket.AF_INET6):\n"
        "    try:\n        socket.socket(family)\n        print('open')\n"
        "    except PermissionError:\n        print('refused')\n"
        "socket.socketpair(); print('unix')\n"
        "child = subprocess.run([sys.executable, '-c', 'import socket; socket.socket()'], capture_output=True)\n"
        "print('child refused' if b'PermissionError' in child.stderr else 'child open')\n"
    )
    import subprocess
    import sys

    from tests.test_entry_points import environment

    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment(), timeout=60
    ).stdout.split("\n")
    assert out[:5] == ["seccomp", "refused", "refused", "unix", "child refused"], out


def test_network_filter_checks_the_architecture_first():
    program = sandbox.network_filter("x86_64")
    assert program[0] == (0x20, 0, 0, 4) and program[1][3] == 0xC000003E  # load arch, compare with x86_64
    assert sandbox.network_filter("aarch64")[1][3] == 0xC00000B7


def test_without_seccomp_the_worker_falls_back_to_a_network_namespace():
    """Where a seccomp filter cannot be installed (here: made to fail), a new network namespace closes the
    network instead; where that is not allowed either, close_network says None."""
    import subprocess
    import sys

    from tests.test_entry_points import environment

    code = (
        "from kgforge.core import sandbox\n"
        "def refused():\n    raise OSError(1, 'seccomp refused')\n"
        "sandbox._install_seccomp = refused\n"
        "print(sandbox.close_network(), sandbox.network_reachable())\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=environment(), timeout=60
    ).stdout.split()
    if out == ["None", "True"]:
        pytest.skip("this machine allows no network namespace either")
    assert out == ["namespace", "False"], out
