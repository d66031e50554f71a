"""F14: the LLM client's deadline bounds the whole exchange (connecting, the headers, every read), not only
the gaps between chunks. Before, a server that answered late and then sent 60 bytes and stalled kept
`qa select` 181 s against its 120 s timeout; here the timeout is 2 s and each call must end within it plus
a small margin."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

from kgforge.llm import LLMError
from tests.llm_support import COMPLETION, ask, client, server

DEADLINE = 2.0
MARGIN = 1.0  # thread start-up and a busy test machine; a read timeout set once would add a whole DEADLINE


@pytest.fixture
def released() -> Iterator[threading.Event]:
    """Set when the test ends, so a stalled server thread ends too."""
    event = threading.Event()
    yield event
    event.set()


def cut_off(answer, tmp_path) -> tuple[str, str, float]:
    """Ask a server answering with ``answer`` under the 2 s deadline: its URL, the error, the seconds it took."""
    with server(answer) as (url, _):
        started = time.monotonic()
        with pytest.raises(LLMError) as caught:
            ask(client(url, tmp_path, timeout=DEADLINE))
        return url, str(caught.value), time.monotonic() - started


def send_in_pieces(handler, body: bytes, size: int, pause) -> None:
    """A 200 reply of ``body``, ``size`` bytes at a time with ``pause()`` after each (True: stop sending)."""
    handler.send_response(200)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    for start in range(0, len(body), size):
        handler.wfile.write(body[start : start + size])
        handler.wfile.flush()
        if pause():
            return


def test_a_reply_that_sends_60_bytes_then_stalls_ends_at_the_deadline(tmp_path, released):
    body = COMPLETION.ljust(1000)

    def late_then_stalled(handler, n):
        time.sleep(1.8)  # the headers come late, yet sooner than any single read's timeout
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body[:60])
        handler.wfile.flush()
        released.wait(60)

    url, error, took = cut_off(late_then_stalled, tmp_path)
    assert DEADLINE - 0.1 <= took < DEADLINE + MARGIN, took
    assert error == f"{url}/chat/completions: no complete reply within the timeout (2 s); stopped"


def test_headers_dripped_a_byte_at_a_time_end_at_the_deadline(tmp_path, released):
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 70\r\nX-Slow: " + b"s" * 200

    def drip(handler, n):
        for byte in head:  # each byte well within a read's timeout; all of them far past the deadline
            if released.wait(0.25):
                return
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()

    _, error, took = cut_off(drip, tmp_path)
    assert took < DEADLINE + MARGIN and "no complete reply within the timeout" in error, (took, error)


def test_a_body_dripped_under_each_read_timeout_ends_at_the_deadline(tmp_path, released):
    body = COMPLETION.ljust(400)

    def drip(handler, n):
        send_in_pieces(handler, body, 10, lambda: released.wait(0.2))

    _, error, took = cut_off(drip, tmp_path)
    assert took < DEADLINE + MARGIN and "no complete reply within the timeout" in error, (took, error)


def test_a_reply_within_the_deadline_is_read_whole(tmp_path):
    def slow_but_in_time(handler, n):
        send_in_pieces(handler, COMPLETION, 20, lambda: time.sleep(0.1))

    with server(slow_but_in_time) as (url, _):
        assert ask(client(url, tmp_path, timeout=DEADLINE)) == "fine"
