"""`kgforge query --endpoint` against a real `kgforge serve` and against tiny misbehaving HTTP servers on
127.0.0.1 (one that answers garbage, one that drips a byte a second): a one-line error within the
`--timeout`, never a traceback; plain `--bind` values read as the local store reads them."""

from __future__ import annotations

import csv
import io
import socket
import socketserver
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kgforge.core.errors import QueryError, QueryTimeout
from kgforge.serve.client import endpoint_query
from kgforge.store.labels import UnknownLabel
from tests.conftest import REPO
from tests.serve_support import FAREWELL, build_demo, running_server

FACTS_OF = "SELECT ?e ?p ?o WHERE { ?e ?p ?o } ORDER BY ?p ?o"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("serve-client") / "kg"
    build_demo(workdir, with_derived=False)
    return workdir


@pytest.fixture(scope="module")
def server(demo):
    with running_server(demo, workers=2) as base:
        yield base


# ---------------------------------------------------------------- misbehaving servers


class _Handler(socketserver.BaseRequestHandler):
    def handle(self) -> None:
        self.request.settimeout(5)
        try:
            self.request.recv(65536)  # the request (small: a query form)
            self.server.behave(self.request)
        except OSError:
            pass


@contextmanager
def misbehaving(behave) -> Iterator[str]:
    """A threaded TCP server on 127.0.0.1 that answers every connection with ``behave(sock)``."""
    socketserver.ThreadingTCPServer.allow_reuse_address = True
    with socketserver.ThreadingTCPServer(("127.0.0.1", 0), _Handler) as server:
        server.daemon_threads = True
        server.behave = behave
        thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        thread.start()
        try:
            yield f"http://127.0.0.1:{server.server_address[1]}/sparql"
        finally:
            server.shutdown()


def not_http(sock: socket.socket) -> None:
    sock.sendall(b"\x00\xffSSH-2.0-OpenSSH garbage\r\n\r\n")


def broken_json(sock: socket.socket) -> None:
    body = b'{"head": {"vars": ["s"]}, "results": {"bindings": [{"s": {"type": "uri", "val'
    sock.sendall(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


def html_error(sock: socket.socket) -> None:
    body = b"<html>\n<body>\n<h1>Bad Gateway</h1>\n</body>\n</html>\n"
    sock.sendall(
        b"HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/html\r\nContent-Length: "
        + str(len(body)).encode()
        + b"\r\n\r\n"
        + body
    )


def drip(sock: socket.socket) -> None:
    """Headers at once, then a byte a second, for a minute: every read gets a byte well within any per-read
    timeout."""
    sock.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/sparql-results+json\r\nContent-Length: 100\r\n\r\n")
    for _ in range(60):
        sock.sendall(b" ")
        time.sleep(1)


def drip_headers(sock: socket.socket) -> None:
    for byte in b"HTTP/1.1 200 OK\r\nX-Padding: " + b"a" * 60:
        sock.sendall(bytes([byte]))
        time.sleep(1)


@pytest.mark.parametrize("behave", [not_http, broken_json, html_error])
def test_a_garbage_answer_is_a_one_line_error(behave):
    with misbehaving(behave) as url, pytest.raises(QueryError) as caught:
        endpoint_query(url, "SELECT * WHERE { ?s ?p ?o }", timeout=10)
    message = str(caught.value)
    assert url in message and "\n" not in message and not isinstance(caught.value, QueryTimeout)


@pytest.mark.slow  # waits out a dripping server
@pytest.mark.parametrize("behave", [drip, drip_headers])
def test_timeout_is_a_total_deadline_against_a_dripping_server(behave):
    with misbehaving(behave) as url:
        started = time.monotonic()
        with pytest.raises(QueryTimeout) as caught:
            endpoint_query(url, "SELECT * WHERE { ?s ?p ?o }", timeout=2)
        took = time.monotonic() - started
    assert 2 <= took < 3, took
    assert "2 s" in str(caught.value) and "\n" not in str(caught.value)


@pytest.mark.slow  # waits out a server dripping a byte a second
def test_the_command_says_one_line_for_garbage_and_a_drip(cli, demo):
    with misbehaving(broken_json) as url:
        garbage = cli("query", "demo", "SELECT * WHERE { ?s ?p ?o }", "--endpoint", url, check=False)
    assert garbage.returncode == 1 and "Traceback" not in garbage.stderr
    assert len(garbage.stderr.strip().splitlines()) == 1 and "does not parse" in garbage.stderr
    with misbehaving(drip) as url:
        started = time.monotonic()
        dripped = cli("query", "demo", "SELECT * WHERE { ?s ?p ?o }", "--endpoint", url, "--timeout", "2", check=False)
        took = time.monotonic() - started
    assert dripped.returncode == 1 and "Traceback" not in dripped.stderr
    assert len(dripped.stderr.strip().splitlines()) == 1 and "within 2 s" in dripped.stderr
    assert took < 20  # the command's own start-up included; a per-read timeout would run the minute out


# ---------------------------------------------------------------- plain --bind values through an endpoint


def test_a_label_binds_through_the_endpoint_as_it_does_locally(cli, demo, server):
    query = [
        "query",
        "demo",
        "--file",
        str(REPO / "queries" / "entity_facts.rq"),
        "--bind",
        "name=霸王别姬",
        "--format",
        "csv",
    ]
    local = cli(*query, "--workdir", str(demo))
    remote = cli(*query, "--endpoint", f"{server}/sparql")
    assert remote.stdout == local.stdout and "陈凯歌" in remote.stdout


def test_an_entity_label_is_resolved_to_its_iri_through_the_endpoint(cli, demo, server):
    def facts(*where: str) -> list[tuple[str, str, str]]:
        out = cli("query", "demo", FACTS_OF, "--bind", "e=霸王别姬", "--format", "csv", *where).stdout
        return [(row["e"], row["p"], row["o"]) for row in csv.DictReader(io.StringIO(out))]

    remote = facts("--endpoint", f"{server}/sparql")
    assert remote == facts("--workdir", str(demo))  # the local run adds label columns; the facts are the same
    assert {e for e, _, _ in remote} == {FAREWELL} and len(remote) > 5


def test_a_label_nothing_carries_is_the_same_error_through_the_endpoint(cli, demo, server):
    local = cli("query", "demo", FACTS_OF, "--bind", "e=霸王别鸡", "--workdir", str(demo), check=False)
    remote = cli("query", "demo", FACTS_OF, "--bind", "e=霸王别鸡", "--endpoint", f"{server}/sparql", check=False)
    assert remote.returncode == local.returncode == 1
    assert remote.stderr == local.stderr and "did you mean" in remote.stderr and "霸王别姬" in remote.stderr


def test_label_values_travel_as_substitutions_not_text(server):
    """A label with quotes and braces is looked up as a value: no injection, the one-line 'no entity' error."""
    with pytest.raises(UnknownLabel) as caught:
        endpoint_query(f"{server}/sparql", FACTS_OF, {"e": '霸" } ?x ?y ?z { "'}, timeout=30, domain="demo")
    assert "no entity has the label" in str(caught.value)


def redirect(sock: socket.socket) -> None:
    sock.sendall(
        b"HTTP/1.1 307 Temporary Redirect\r\nLocation: http://elsewhere.example/sparql\r\nContent-Length: 0\r\n\r\n"
    )


def test_a_redirect_is_named_not_followed():
    with misbehaving(redirect) as url, pytest.raises(QueryError) as caught:
        endpoint_query(url, "ASK {}", timeout=10)
    assert "307" in str(caught.value) and "http://elsewhere.example/sparql" in str(caught.value)
