"""The LLM client against real HTTP servers on 127.0.0.1 that misbehave: a redirect to another host, a
reply without end, a reply dripping a byte a second, and 429 with Retry-After."""

from __future__ import annotations

import time

import pytest

from kgforge.llm import MAX_REPLY_BYTES, LLMError
from tests.llm_support import COMPLETION, ask, client, reply, server


@pytest.mark.slow  # waits out a refused redirect
def test_a_redirect_to_another_host_is_not_followed(tmp_path):
    with server(lambda h, n: reply(h)) as (canary, canary_asked):
        elsewhere = canary.replace("/v1", "/steal")
        with (
            server(lambda h, n: reply(h, 307, b"", Location=elsewhere)) as (url, _),
            pytest.raises(LLMError, match="redirected to .*not followed"),
        ):
            ask(client(url, tmp_path))
    assert canary_asked == []  # the prompt never reached it


def test_a_redirect_on_the_same_host_is_followed(tmp_path):
    def answer(handler, n):
        reply(handler) if handler.path.endswith("/moved/chat/completions") else reply(
            handler, 307, b"", Location="/v1/moved/chat/completions"
        )

    with server(answer) as (url, asked):
        assert ask(client(url, tmp_path)) == "fine"
    assert asked == ["/v1/chat/completions", "/v1/moved/chat/completions"]


def test_a_reply_past_the_size_cap_is_refused_without_reading_it_whole(tmp_path):
    def endless(handler, n):
        handler.send_response(200)
        handler.send_header("Content-Length", str(4 * MAX_REPLY_BYTES))
        handler.end_headers()
        block = b"x" * (1 << 20)
        for _ in range(4 * (MAX_REPLY_BYTES >> 20)):
            handler.wfile.write(block)

    with server(endless) as (url, _), pytest.raises(LLMError, match="larger than 16 MiB"):
        ask(client(url, tmp_path))


@pytest.mark.slow  # waits out a dripping server
def test_a_dripping_reply_is_cut_off_at_the_total_deadline(tmp_path):
    def drip(handler, n):
        handler.send_response(200)
        handler.send_header("Content-Length", str(len(COMPLETION)))
        handler.end_headers()
        for byte in COMPLETION:
            handler.wfile.write(bytes([byte]))
            handler.wfile.flush()
            time.sleep(0.3)

    started = time.monotonic()
    with server(drip) as (url, _), pytest.raises(LLMError, match="within the timeout"):
        ask(client(url, tmp_path, timeout=1.5))
    assert time.monotonic() - started < 5  # ~30 s to drip the whole reply


@pytest.mark.slow  # waits out Retry-After
def test_429_is_retried_after_its_retry_after(tmp_path):
    def busy_once(handler, n):
        reply(handler, 429, b"slow down", **{"Retry-After": "1"}) if n == 1 else reply(handler)

    started = time.monotonic()
    with server(busy_once) as (url, asked):
        assert ask(client(url, tmp_path)) == "fine"
    assert len(asked) == 2 and time.monotonic() - started >= 1.0


def test_429_with_a_retry_after_past_the_deadline_is_one_error(tmp_path):
    with (
        server(lambda h, n: reply(h, 429, b"", **{"Retry-After": "3600"})) as (url, asked),
        pytest.raises(LLMError, match="HTTP 429.*past the 5 s deadline"),
    ):
        ask(client(url, tmp_path, timeout=5))
    assert len(asked) == 1
