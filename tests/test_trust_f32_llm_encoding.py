"""F32: the LLM client asks for gzip and deflate and reads them. Before, it sent ``Accept-Encoding: gzip``
and then read a gzip reply as it came ("not an OpenAI chat completion"). The reply cap holds for the decoded
size: a gzip bomb is refused at 16 MiB, never inflated whole."""

from __future__ import annotations

import gzip
import time
import tracemalloc
import zlib

import pytest

from kgforge.llm import MAX_REPLY_BYTES, LLMError
from tests.llm_support import COMPLETION, ask, client, reply, server


def encoded_server(body: bytes, encoding: str, seen: list[str] | None = None):
    def answer(handler, n):
        if seen is not None:
            seen.append(handler.headers.get("Accept-Encoding", ""))
        reply(handler, body=body, **{"Content-Encoding": encoding})

    return server(answer)


def raw_deflate(data: bytes) -> bytes:
    packer = zlib.compressobj(wbits=-zlib.MAX_WBITS)
    return packer.compress(data) + packer.flush()


@pytest.mark.parametrize(
    ("encoding", "body"),
    [
        ("gzip", gzip.compress(COMPLETION, mtime=0)),
        ("x-gzip", gzip.compress(COMPLETION, mtime=0)),
        ("deflate", zlib.compress(COMPLETION)),  # deflate as RFC 9110 means it: zlib-wrapped
        ("deflate", raw_deflate(COMPLETION)),  # and as some servers send it: bare
        ("identity", COMPLETION),
    ],
)
def test_a_compressed_reply_is_decoded(tmp_path, encoding, body):
    seen: list[str] = []
    with encoded_server(body, encoding, seen) as (url, _):
        assert ask(client(url, tmp_path)) == "fine"
    assert {e.strip() for e in seen[0].split(",")} == {"gzip", "deflate"}  # it asks only for what it reads


def gzip_bomb(size: int) -> bytes:
    """``size`` zero bytes, gzip-compressed (about a thousandth of that)."""
    packer = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = bytes(1 << 20)
    return b"".join(packer.compress(block) for _ in range(size >> 20)) + packer.flush()


def test_a_gzip_bomb_is_refused_at_the_cap_without_inflating_it(tmp_path):
    bomb = gzip_bomb(16 * MAX_REPLY_BYTES)  # 256 MiB decoded, from a quarter of a megabyte
    assert len(bomb) < MAX_REPLY_BYTES // 32
    with encoded_server(bomb, "gzip") as (url, _):
        tracemalloc.start()
        started = time.monotonic()
        try:
            with pytest.raises(LLMError, match=r"larger than 16 MiB; not read further \(decoded\)"):
                ask(client(url, tmp_path))
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
    assert peak < 3 * MAX_REPLY_BYTES, peak  # the cap and a buffer, not 256 MiB
    assert time.monotonic() - started < 30


@pytest.mark.parametrize(
    ("encoding", "body", "problem"),
    [
        ("gzip", b"\x1f\x8b not really gzip", "not valid gzip"),
        ("gzip", gzip.compress(COMPLETION, mtime=0)[:-12], "gzip reply is cut short"),
        ("gzip", gzip.compress(COMPLETION, mtime=0) + b"trailing", "bytes after the end of the gzip reply"),
        ("deflate", b"neither zlib nor deflate", "not valid deflate"),
        ("br", COMPLETION, "Content-Encoding 'br' is not one kgforge reads"),
    ],
)
def test_a_reply_that_cannot_be_decoded_is_one_error(tmp_path, encoding, body, problem):
    with encoded_server(body, encoding) as (url, _), pytest.raises(LLMError, match=problem) as caught:
        ask(client(url, tmp_path))
    assert "\n" not in str(caught.value) and str(caught.value).startswith(url)
