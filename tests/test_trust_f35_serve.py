"""F35 (issue 44): `kgforge serve` answers no request that names no server (a missing or empty ``Host`` is 400),
and runs no state-changing request a page on another site sent without an ``Origin`` but with its own page as
``Referer`` (403). A real server on 127.0.0.1 over the demo domain, real sockets."""

from __future__ import annotations

import socket

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.serve_support import build_demo, running_server

ASK = {"query": "ASK { ?s ?p ?o }"}
FRIEND = "http://friend.example"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("f35") / "kg"
    build_demo(workdir, with_derived=False)
    with running_server(workdir, workers=1, cors=(FRIEND,)) as base:
        yield base


@pytest.fixture(scope="module")
def client():
    with httpx.Client(timeout=30) as c:
        yield c


def raw(server: str, request: bytes) -> tuple[int, bytes]:
    """Send ``request`` as it is (no client fills in a Host); the status and the body of the answer."""
    host, port = server.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request)
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
            if b"\r\n\r\n" in answer and b"connection: close" not in answer.lower():
                head, _, body = answer.partition(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":")[1])
                        for line in head.lower().split(b"\r\n")
                        if line.startswith(b"content-length")
                    ),
                    None,
                )
                if length is not None and len(body) >= length:
                    break
    status = int(answer.split(b" ", 2)[1])
    return status, answer.partition(b"\r\n\r\n")[2]


@pytest.mark.parametrize(
    "request_line",
    [
        b"GET /api/status HTTP/1.1\r\n\r\n",  # no Host at all
        b"GET /api/status HTTP/1.1\r\nHost: \r\n\r\n",  # an empty one
        b"GET /api/status HTTP/1.1\r\nHost: :8080\r\n\r\n",  # a port and no name
        b"GET /sparql?query=ASK%7B%7D HTTP/1.0\r\n\r\n",  # HTTP/1.0 sends none either
    ],
)
def test_a_request_without_a_host_is_400(server, request_line):
    status, body = raw(server, request_line)
    assert status == 400
    assert body.decode().count("\n") == 1 and "Host" in body.decode()


def test_a_request_with_a_host_is_answered(server):
    port = server.rsplit(":", 1)[1]
    status, _ = raw(server, f"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
    assert status == 200


def test_a_cross_site_post_with_only_a_foreign_referer_is_refused(client, server):
    evil = client.post(f"{server}/sparql", data=ASK, headers={"Referer": "http://evil.example/page.html"})
    assert evil.status_code == 403 and "cross-site" in evil.text and evil.text.count("\n") == 1
    opaque = client.post(f"{server}/sparql", data=ASK, headers={"Referer": "not a url"})
    assert opaque.status_code == 403
    other_method = client.request("DELETE", f"{server}/api/status", headers={"Referer": "http://evil.example/"})
    assert other_method.status_code == 403  # every state-changing method, not POST alone
    image = client.get(f"{server}/sparql", params=ASK, headers={"Referer": "https://evil.example/x"})
    assert image.status_code == 403  # a query run from another site's page, by any method


def test_the_server_s_own_pages_a_cors_origin_and_command_line_clients_are_answered(client, server):
    own = client.post(f"{server}/sparql", data=ASK, headers={"Referer": f"{server}/entity?iri=x"})
    assert own.status_code == 200
    assert client.post(f"{server}/sparql", data=ASK, headers={"Referer": f"{FRIEND}/app"}).status_code == 200
    assert client.post(f"{server}/sparql", data=ASK).status_code == 200  # curl, httpx: no Origin, no Referer
    assert client.get(f"{server}/api/status", headers={"Referer": "http://evil.example/"}).status_code == 200


@given(
    st.sampled_from(["http", "https", "HTTP"]),
    st.from_regex(r"[a-z][a-z0-9-]{0,15}(\.[a-z][a-z0-9-]{0,15}){0,2}", fullmatch=True),
    st.one_of(st.none(), st.integers(1, 65535)),
    st.from_regex(r"(/[a-zA-Z0-9._~-]{0,8}){0,3}(\?[a-z=&]{0,10})?", fullmatch=True),
    st.booleans(),
)
def test_the_origin_of_a_referer_is_its_scheme_host_and_port(scheme, host, port, path, user):
    from kgforge.serve.hygiene import _origin_of

    netloc = host + (f":{port}" if port is not None else "")
    url = f"{scheme}://{'someone:secret@' if user else ''}{netloc}{path}"
    assert _origin_of(url) == f"{scheme}://{netloc}".lower()


@pytest.mark.parametrize(
    "url", ["", "about:blank", "javascript:alert(1)", "//evil.example/x", "http://[::1", "file:///etc"]
)
def test_a_referer_without_an_http_origin_has_none(url):
    from kgforge.serve.hygiene import _origin_of

    assert _origin_of(url) == "null"
