"""The one adapter between ``kgforge synth`` (and the LLM judge) and an OpenAI-compatible chat endpoint.

It is built on :class:`kgforge.qa.llm.LLMClient` (the redirect rule, the size cap, 429 and ``Retry-After``, one
wall-clock deadline per request) and adds what synthesis needs and that client lacks, kept here so that moving to
the ``kgforge.llm`` package is a change of this module only:

* **every exchange cached before it is used**, good reply or bad, keyed by the SHA-256 of the request (the same
  naming as qa's cache: a hex name inside the cache folder). A retry or a repair is another request (it carries
  the reply it answers), so a cached bad reply never comes back in its place. A run killed at any point and run
  again sends nothing already answered;
* **the reply's ``usage``** (prompt and completion tokens), cached with the content so that a rerun reports the
  same tokens;
* **threads**: one ``LLMClient`` (and so one ``requests.Session``) per thread, counters under a lock.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.files import write_json_atomic
from kgforge.core.quarantine import Quarantine
from kgforge.qa.llm import DEFAULT_KEY_ENV, LLMClient, LLMError, json_reply

__all__ = ["DEFAULT_KEY_ENV", "ChatClient", "LLMError", "Reply", "json_reply", "request_key"]


@dataclass(frozen=True)
class Reply:
    """One answered request: the reply's text, its token counts (0 where the endpoint gave none) and whether it
    came from the cache."""

    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


def request_key(body: dict[str, Any], endpoint: str) -> str:
    """The hash a request is cached by (what qa's cache hashes: the endpoint and the request body)."""
    key = json.dumps({"endpoint": endpoint, **body}, ensure_ascii=False, sort_keys=True)
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


class _UsageClient(LLMClient):
    """An LLMClient that keeps the last reply it read on this thread, so that its ``usage`` can be read."""

    last: bytes = b""

    def _exchange(
        self, url: str, body: dict[str, Any], headers: dict[str, str], deadline: float
    ) -> tuple[int, bytes, Any]:
        status, reply, response_headers = super()._exchange(url, body, headers, deadline)
        self.last = reply
        return status, reply, response_headers


@dataclass
class ChatClient:
    """Chat requests to ``url`` with ``model``, each answered from ``cache_dir`` or sent (``timeout``: seconds
    for the whole exchange, 429 waits included). Safe to call from many threads."""

    url: str
    model: str
    cache_dir: Path
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0
    sent: int = 0  # requests sent to the endpoint
    cache_hits: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _local: threading.local = field(default_factory=threading.local, repr=False)

    def _client(self) -> _UsageClient:
        client = getattr(self._local, "client", None)
        if client is None:
            quarantine = Quarantine(self.cache_dir / "unused.jsonl", echo=False)  # replies are checked by the caller
            client = self._local.client = _UsageClient(
                self.url, self.model, self.cache_dir, quarantine, self.key_env, self.timeout
            )
        return client

    @property
    def endpoint(self) -> str:
        return self._client().endpoint

    def body(self, messages: list[dict[str, str]], **settings: Any) -> dict[str, Any]:
        """The request body for ``messages`` (``settings``: temperature, seed, …)."""
        return {"model": self.model, "messages": messages, **settings}

    def cached(self, body: dict[str, Any]) -> bool:
        return self._path(body).is_file()

    def send(self, body: dict[str, Any]) -> Reply:
        """The reply to ``body``: the cached one, or the endpoint's, cached before it is returned."""
        path = self._path(body)
        if path.is_file():
            try:
                kept = json.loads(path.read_text(encoding="utf-8"))
                reply = Reply(kept["content"], *_tokens(kept.get("usage")), cached=True)
            except (OSError, ValueError, KeyError, TypeError):
                reply = None  # a damaged cache entry is asked again
            if reply is not None:
                with self._lock:
                    self.cache_hits += 1
                return reply
        client = self._client()
        content = client._post(body)
        usage = _usage(client.last)
        with self._lock:
            self.sent += 1
        write_json_atomic(path, {"model": self.model, "content": content, "usage": usage}, indent=None, durable=False)
        return Reply(content, *_tokens(usage))

    def _path(self, body: dict[str, Any]) -> Path:
        return self._client().cache_path(body)


def _usage(reply: bytes) -> dict[str, Any] | None:
    try:
        usage = json.loads(reply).get("usage")
    except (ValueError, AttributeError):
        return None
    return usage if isinstance(usage, dict) else None


def _tokens(usage: Any) -> tuple[int, int]:
    if not isinstance(usage, dict):
        return 0, 0
    prompt, completion = usage.get("prompt_tokens"), usage.get("completion_tokens")
    whole: Callable[[Any], int] = lambda v: v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else 0  # noqa: E731
    return whole(prompt), whole(completion)
