"""`kgforge serve` against a hostile or careless client: client mistakes are 4xx before a worker sees them,
every answer carries the security headers, foreign Host names and cross-site pages are refused, slow
connections are cut off, and a worker that dies is a 503. A real server on 127.0.0.1, real sockets."""

from __future__ import annotations

import os
import signal
import socket
import threading
import time
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.serve.hygiene import Hygiene
from kgforge.serve.protocol import MAX_NESTING, invalid_escape, nesting_depth
from kgforge.serve.runner import ServeError, listen, listening
from kgforge.serve.search import LabelIndex
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from tests.serve_support import FAREWELL, build_demo, running_server, wait_search_ready

ASK = "ASK { ?s ?p ?o }"
FRIEND = "http://friend.example"


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """The demo domain without `kgforge derive` (no associated pairs)."""
    workdir = tmp_path_factory.mktemp("serve-hardening") / "kg"
    build_demo(workdir, with_derived=False)
    return workdir


@pytest.fixture(scope="module")
def server(plain):
    with running_server(
        plain, workers=2, cors=(FRIEND,), allowed_hosts=("lab.example",), header_timeout=1.0, body_timeout=1.5
    ) as base:
        yield base


@pytest.fixture(scope="module")
def client():
    with httpx.Client(timeout=30) as c:
        yield c


def ask(client, base, query=ASK, **kwargs):
    return client.get(f"{base}/sparql", params={"query": query}, **kwargs)


def one_line(reply) -> str:
    text = reply.text
    assert text.endswith("\n") and text.count("\n") == 1, text
    return text.strip()


# ---------------------------------------------------------------- client mistakes are 4xx


def nested(depth: int) -> str:
    return "SELECT * WHERE " + "{" * depth + " ?s ?p ?o " + "}" * depth


@pytest.mark.slow  # deep queries through a real server
def test_nesting_is_bounded_before_a_worker_sees_the_query(client, server):
    assert ask(client, server, nested(MAX_NESTING)).status_code == 200
    started = time.monotonic()
    for _ in range(10):  # each of these used to kill a worker (a stack overflow in the parser)
        reply = ask(client, server, nested(5000))
        assert reply.status_code == 400 and f"at most {MAX_NESTING}" in one_line(reply)
    assert time.monotonic() - started < 5
    assert ask(client, server).json()["boolean"] is True


def test_nesting_depth_ignores_strings_iris_and_comments():
    text = 'SELECT * { ?s <http://x/(((> "(((" . # {{{{\n ?s ?p """[[[""" }'
    assert nesting_depth(text) == 1
    assert nesting_depth("SELECT * { FILTER((1)) }") == 3


@pytest.mark.parametrize(
    "query",
    [
        'SELECT * WHERE { ?s ?p "\\U0011FFFF" }',
        'SELECT * WHERE { ?s ?p "\\U0011FFFF" } # service',
        'SELECT * WHERE { ?s ?p "\\uD800" }',
        'SELECT * WHERE { ?s ?p "\\UZZ" }',
    ],
)
def test_an_invalid_escape_is_a_one_line_400(client, server, query):
    reply = ask(client, server, query)
    assert reply.status_code == 400 and "invalid escape" in one_line(reply) and "line 1" in reply.text


HEX = "0123456789abcdefABCDEF"
ESCAPE_TOKENS = st.one_of(
    st.just("a"),
    st.just("\\\\"),  # a plain letter, an escaped backslash
    st.builds(lambda n, digits: "\\u" + digits[:n], st.integers(0, 4), st.text(HEX + "g", min_size=4, max_size=4)),
    st.builds(lambda n, digits: "\\U" + digits[:n], st.integers(0, 8), st.text(HEX + "g", min_size=8, max_size=8)),
)


@settings(max_examples=300, deadline=None)
@given(st.lists(ESCAPE_TOKENS, max_size=6))
def test_the_escape_scan_agrees_with_oxigraph(tokens):
    """Oxigraph's parser is the reference: the scan refuses exactly the literals it cannot read."""
    query = 'SELECT ("' + "".join(tokens) + '" AS ?x) {}'
    try:
        list(ox.Store().query(query))
        parses = True
    except SyntaxError:
        parses = False
    assert (invalid_escape(query) is None) == parses, query


def _wrapped(inner: tuple[str, int], opening: str, closing: str, extra: int) -> tuple[str, int]:
    text, depth = inner
    return f"{opening} {text} {closing}", depth + extra


PATTERNS = st.recursive(  # (a group graph pattern, how deep its brackets nest), built together
    st.sampled_from(
        [("?s ?p ?o", 0), ('?s ?p "{(["', 0), ("?s <http://x/(> ?o # }}}\n", 0), ("FILTER((1 + 2) > 0)", 2)]
    ),
    lambda inner: st.one_of(
        st.builds(_wrapped, inner, st.just("{"), st.just("}"), st.just(1)),
        st.builds(_wrapped, inner, st.just("OPTIONAL {"), st.just("}"), st.just(1)),
        st.builds(lambda a, b: (f"{{ {a[0]} }} UNION {{ {b[0]} }}", 1 + max(a[1], b[1])), inner, inner),
        st.builds(lambda a, b: (f"{a[0]}\n {b[0]}", max(a[1], b[1])), inner, inner),
    ),
    max_leaves=30,
)


@settings(max_examples=200, deadline=None)
@given(PATTERNS)
def test_nesting_depth_is_the_deepest_bracket(pattern):
    text, depth = pattern
    assert nesting_depth(f"SELECT * WHERE {{ {text} }}") == depth + 1


def test_valid_escapes_and_escaped_backslashes_pass():
    assert invalid_escape('SELECT ("\\u0041\\U0001F600" AS ?x) {}') is None
    assert invalid_escape('SELECT ("\\\\U0011" AS ?x) {}  # \\UZZ in a comment') is None


def test_an_unknown_prefix_gets_the_words_the_cli_gives(client, server, plain):
    query = "SELECT * WHERE { ?s foo:bar ?o }"
    with QueryRunner(Snapshot.open("demo", plain)) as runner, pytest.raises(Exception) as local:
        runner.query(query)
    reply = ask(client, server, query)
    assert reply.status_code == 400 and reply.text.strip() == str(local.value)
    assert "unknown prefix 'foo:'" in reply.text


def test_goals_of_a_topic_the_graph_lacks_is_404_without_paths(client, server, plain):
    reply = client.get(f"{server}/goals", params={"topic": "https://kgforge.org/entity/nope"})
    assert reply.status_code == 404 and "nope" in reply.text
    assert str(plain) not in reply.text and str(plain.resolve()) not in reply.text


def test_goals_without_derive_fall_back_to_one_step(client, server):
    reply = client.get(f"{server}/goals", params={"topic": FAREWELL, "n": 3})
    assert reply.status_code == 200, reply.text
    assert 'id="one-step-only"' in reply.text and reply.text.count('class="goal"') == 3
    assert reply.text.count("one-step goal <code>") == 3 and "two-step goal <code>" not in reply.text


@pytest.mark.slow  # kills a query worker
def test_a_dead_worker_is_a_one_line_503(plain, client):
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"
    others = set(worker_pids())  # the module's server's workers: left alone
    with running_server(plain, workers=1, timeout=30.0) as base:
        answer = {}
        thread = threading.Thread(target=lambda: answer.setdefault("reply", ask(client, base, endless)))
        thread.start()
        time.sleep(1.0)
        for pid in set(worker_pids()) - others:
            os.kill(pid, signal.SIGKILL)  # as the kernel's OOM killer would
        thread.join(30)
        reply = answer["reply"]
        assert reply.status_code == 503 and "worker" in one_line(reply)
        assert ask(client, base).status_code == 200  # replaced


def worker_pids() -> list[int]:
    own = str(os.getpid()).encode()
    found = []
    for entry in Path("/proc").iterdir():
        try:
            parts = (entry / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if b"kgforge.serve.worker" in parts and own in parts:
            found.append(int(entry.name))
    return found


# ---------------------------------------------------------------- headers, Host, cross-site


@pytest.mark.parametrize(
    "path",
    ["/sparql?query=ASK%7B%7D", "/sparql", "/", "/nothing", "/static/nothing.js", "/entity?iri=nope", "/api/status"],
)
def test_every_answer_carries_nosniff_and_frame_ancestors(client, server, path):
    reply = client.get(f"{server}{path}")
    assert reply.headers["x-content-type-options"] == "nosniff"
    assert "frame-ancestors 'none'" in reply.headers["content-security-policy"]


def test_a_foreign_host_name_is_refused(client, server):
    port = server.rsplit(":", 1)[1]
    refused = ask(client, server, headers={"Host": f"rebind.evil.example:{port}"})
    assert refused.status_code == 421 and "--allowed-host" in one_line(refused)
    assert refused.headers["x-content-type-options"] == "nosniff"
    for host in (f"localhost:{port}", f"127.0.0.1:{port}", "lab.example", f"[::1]:{port}", "10.1.2.3"):
        assert ask(client, server, headers={"Host": host}).status_code == 200, host


def test_a_cross_site_form_cannot_run_a_query(client, server):
    form = {"query": ASK}
    from_evil = client.post(f"{server}/sparql", data=form, headers={"Origin": "http://evil.example"})
    assert from_evil.status_code == 403 and "cross-site" in one_line(from_evil)
    opaque = client.post(f"{server}/sparql", data=form, headers={"Origin": "null"})
    assert opaque.status_code == 403
    no_origin = client.post(f"{server}/sparql", data=form, headers={"Sec-Fetch-Site": "cross-site"})
    assert no_origin.status_code == 403
    image = ask(client, server, headers={"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors"})
    assert image.status_code == 403  # an <img src=/sparql?query=…> runs nothing either
    # the explorer's own editor, a --cors origin, and a command-line client (no Origin) are answered
    assert (
        client.post(
            f"{server}/sparql", data=form, headers={"Origin": server, "Sec-Fetch-Site": "same-origin"}
        ).status_code
        == 200
    )
    assert client.post(f"{server}/sparql", data=form, headers={"Origin": FRIEND}).status_code == 200
    assert client.post(f"{server}/sparql", data=form).status_code == 200


# ---------------------------------------------------------------- the event loop and slow connections


def test_searching_clients_do_not_hold_up_a_query(client, server, monkeypatch):
    """A search costs tens of milliseconds on a 1M-entity graph; here each one is made to take 0.6 s (in
    the server's search code, which runs in this process): an ASK sent meanwhile must not wait for them."""
    wait_search_ready(client, server)
    search = LabelIndex.search

    def slow_search(self, text, limit=20):
        time.sleep(0.6)
        return search(self, text, limit)

    monkeypatch.setattr(LabelIndex, "search", slow_search)
    searches = [
        threading.Thread(target=client.get, args=(f"{server}/search",), kwargs={"params": {"q": "霸"}})
        for _ in range(4)
    ]
    for thread in searches:
        thread.start()
    time.sleep(0.1)
    started = time.monotonic()
    assert ask(client, server).status_code == 200
    took = time.monotonic() - started
    for thread in searches:
        thread.join(30)
    assert took < 0.4, f"an ASK waited {took:.2f} s behind searches"


def raw(base: str) -> socket.socket:
    host, port = base.removeprefix("http://").split(":")
    sock = socket.create_connection((host, int(port)), timeout=10)
    return sock


def closed_within(sock: socket.socket, seconds: float) -> tuple[bool, bytes]:
    """Whether the server closed ``sock`` within ``seconds``, and what it sent before."""
    sock.settimeout(seconds)
    received = b""
    try:
        while chunk := sock.recv(4096):
            received += chunk
    except TimeoutError:
        return False, received
    except ConnectionResetError:
        pass
    return True, received


@pytest.mark.slow  # waits out slow clients
def test_slow_headers_and_idle_connections_are_cut_off(server):
    idle, slow = raw(server), raw(server)
    slow.sendall(b"GET /sparql?query=ASK HTTP/1.1\r\nHo")  # …and no more
    started = time.monotonic()
    assert closed_within(idle, 5)[0]
    closed, said = closed_within(slow, 5)
    assert closed and said.startswith(b"HTTP/1.1 408")
    assert time.monotonic() - started < 3  # header_timeout is 1 s here


@pytest.mark.slow  # waits out a dribbling client
def test_a_dribbled_body_is_cut_off(server):
    sock = raw(server)
    body = b"query=" + b"A" * 60
    sock.sendall(
        b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n"
    )
    started = time.monotonic()
    answer = b""
    sock.settimeout(0.25)
    for byte in body:  # one byte every quarter second: 16 s for the whole body
        try:
            sock.sendall(bytes([byte]))
            answer += sock.recv(4096)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
        if answer:
            break
    assert answer.startswith(b"HTTP/1.1 408"), answer
    assert time.monotonic() - started < 4  # body_timeout is 1.5 s here


@pytest.mark.slow  # waits out idle connections
def test_idle_connections_past_the_cap_make_room_for_a_real_request(plain, client):
    with running_server(plain, workers=1, max_connections=4) as base:
        idle = [raw(base) for _ in range(4)]
        time.sleep(0.2)
        for _ in range(3):  # the client's connection, past the cap, closes one idle connection (and is kept alive)
            assert ask(client, base).status_code == 200
        assert [closed_within(sock, 0.5)[0] for sock in idle].count(True) == 1
        for sock in idle:
            sock.close()


@pytest.mark.slow  # holds every connection busy
def test_connections_past_the_cap_are_refused_when_all_are_busy(plain):
    with running_server(plain, workers=1, max_connections=4, body_timeout=20.0) as base:
        busy = []
        for _ in range(4):  # headers in, body awaited: a request in progress, not idle
            sock = raw(base)
            sock.sendall(
                b"POST /sparql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/sparql-query\r\n"
                b"Content-Length: 100\r\n\r\n"
            )
            busy.append(sock)
        time.sleep(0.3)
        closed, said = closed_within(raw(base), 3)
        assert closed and said.startswith(b"HTTP/1.1 503") and b"too many open connections" in said
        for sock in busy:
            sock.close()
        time.sleep(0.3)
        with httpx.Client(timeout=10) as fresh:
            assert ask(fresh, base).status_code == 200


# ---------------------------------------------------------------- where the server listens


def test_a_busy_port_is_one_line_naming_port_before_any_url(cli, plain):
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = cli("serve", "demo", "--workdir", str(plain), "--port", str(port), "--workers", "1", check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--port" in result.stderr and str(port) in result.stderr
    assert "http://" not in result.stdout


def test_an_unresolvable_host_is_one_line_naming_host(cli, plain):
    result = cli("serve", "demo", "--workdir", str(plain), "--host", "no such host!", "--workers", "1", check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "--host" in result.stderr
    assert "reachable from other machines" not in result.stderr + result.stdout and "http://" not in result.stdout


def test_only_a_bound_non_loopback_address_is_called_reachable():
    with listen("127.0.0.1", 0) as loopback, listen("0.0.0.0", 0) as everywhere:
        assert not listening(loopback).reachable_from_other_machines
        assert listening(everywhere).reachable_from_other_machines
        assert listening(loopback).url == f"http://127.0.0.1:{loopback.getsockname()[1]}"
    with pytest.raises(ServeError, match="--host"):
        listen("no such host!", 0)


def test_on_every_interface_the_machine_s_own_name_is_answered():
    own = socket.gethostname()
    everywhere = Hygiene(None, "0.0.0.0", (), ())
    assert everywhere.host_allowed(f"{own}:7878") and everywhere.host_allowed("localhost")
    assert not everywhere.host_allowed("rebind.evil.example")
    assert not Hygiene(None, "127.0.0.1", (), ()).host_allowed(f"{own}.invalid")
    assert Hygiene(None, "127.0.0.1", ("*",), ()).host_allowed("anything.example")


@settings(max_examples=200, deadline=None)
@given(st.ip_addresses(), st.one_of(st.none(), st.integers(1, 65535)))
def test_an_address_in_host_is_always_answered(address, port):
    text = f"[{address}]" if address.version == 6 else str(address)
    assert Hygiene(None, "127.0.0.1", (), ()).host_allowed(text if port is None else f"{text}:{port}")


@pytest.mark.slow  # starts servers under several host settings
@settings(max_examples=200, deadline=None)
@given(
    st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,20}){1,3}", fullmatch=True),
    st.one_of(st.none(), st.integers(1, 65535)),
    st.booleans(),
)
def test_a_name_is_answered_only_when_allowed(name, port, upper):
    host = (name.upper() if upper else name) + (f":{port}" if port else "")
    assert not Hygiene(None, "127.0.0.1", (), ()).host_allowed(host)
    assert Hygiene(None, "127.0.0.1", (name,), ()).host_allowed(host)
    assert Hygiene(None, name, (), ()).host_allowed(host + ("" if port else "."))
