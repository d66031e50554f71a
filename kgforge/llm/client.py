"""The client every stage asks a model through: an OpenAI-compatible chat endpoint, cached, bounded, counted.

Requests go to ``<url>/chat/completions`` (``url`` may also be that full address) with the key from an
environment variable (never written anywhere). A reply is cached on disk by the SHA-256 of its request
(endpoint, model, messages, temperature; :mod:`kgforge.llm.cache`), so a rerun costs nothing and a cache hit
never re-sends. :meth:`LLMClient.ask` caches only a reply that passes the caller's check; one that fails goes
to the quarantine file with the reason, and the caller falls back. Every exchange keeps
:mod:`kgforge.llm.limits`: one deadline for all of it, the reply cap (decoded size too), a nesting depth, a
redirect followed only on the configured host (the prompt and key go nowhere else), and HTTP 429 retried after
its ``Retry-After`` while the deadline allows.

One client may be used from many threads at once (``--concurrency``): each request has a connection of its
own, the counts and the quarantine are kept under a lock, and threads asking the same request at once send
it once.
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import math
import os
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

from kgforge.core import jsonio
from kgforge.core.jsonio import JsonObject
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record, omitted_when_none
from kgforge.llm import transport
from kgforge.llm.cache import CachedReply, ReplyCache, token_counts
from kgforge.llm.errors import BadReply, LLMError
from kgforge.llm.limits import MAX_ATTEMPTS, MAX_REPLY_BYTES, MAX_REPLY_DEPTH, Deadline

T = TypeVar("T")
DEFAULT_KEY_ENV = "KGFORGE_LLM_API_KEY"
_REDIRECTS = (301, 302, 303, 307, 308)
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True)
class ChatMessage(Record):
    role: str  # system, user, assistant
    content: str


@dataclass(frozen=True)
class ChatRequest(Record):
    """What is sent: the model, the messages, the temperature (and a token cap when given)."""

    model: str
    messages: tuple[ChatMessage, ...]
    temperature: float = 0.0
    max_tokens: int | None = omitted_when_none()
    seed: int | None = omitted_when_none()  # OpenAI's ``seed``: a model that honours it answers reproducibly

    @classmethod
    def of(
        cls,
        model: str,
        messages: Sequence[ChatMessage | Mapping[str, str]],
        temperature: float = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> ChatRequest:
        chat = tuple(m if isinstance(m, ChatMessage) else ChatMessage(m["role"], m["content"]) for m in messages)
        return cls(model, chat, float(temperature), max_tokens, seed)

    def body(self) -> JsonObject:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in self.messages],
            "temperature": self.temperature,
        }
        if self.max_tokens is not None:
            body["max_tokens"] = self.max_tokens
        if self.seed is not None:
            body["seed"] = self.seed
        return body

    def key(self, endpoint: str) -> str:
        """The cache key: SHA-256 of the endpoint and the body (the same key caches have always had)."""
        text = json.dumps({"endpoint": endpoint, **self.body()}, ensure_ascii=False, sort_keys=True)
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Usage(Record):
    """Tokens the reply's ``usage`` reports; None where the server did not say."""

    prompt_tokens: int | None = None
    completion_tokens: int | None = None


@dataclass(frozen=True)
class ChatResponse(Record):
    content: str
    usage: Usage
    cached: bool  # read from the cache: nothing was sent
    key: str  # the request's hash (the cache file's name)


@dataclass(frozen=True)
class LLMReport(Record):
    """What a client did: requests sent, replies read from the cache, replies refused, tokens reported."""

    endpoint: str
    model: str
    calls: int  # requests sent (cache hits are not calls)
    cache_hits: int
    rejected: int  # replies that failed the caller's check (quarantined)
    prompt_tokens: int  # as the replies' usage reports them (sent requests only)
    completion_tokens: int
    cache: str


class LLMClient:
    """A model behind an OpenAI-compatible endpoint; see the module's docstring. ``before_send``, when given,
    sees each request about to be sent (not cache hits): a hook to count or to stop (a dry run raises)."""

    def __init__(
        self,
        url: str,
        model: str,
        cache_dir: Path,
        quarantine: Quarantine,
        key_env: str = DEFAULT_KEY_ENV,
        timeout: float = 120.0,
        temperature: float = 0.0,
        before_send: Callable[[ChatRequest], None] | None = None,
    ) -> None:
        self.url, self.model, self.key_env = url, model, key_env
        self.timeout, self.temperature, self.before_send = timeout, temperature, before_send
        self.cache_dir = Path(cache_dir)
        self.cache = ReplyCache(self.cache_dir)
        self.quarantine = quarantine
        self.calls = self.cache_hits = self.rejected = self.prompt_tokens = self.completion_tokens = 0
        self._lock = threading.Lock()

    @property
    def endpoint(self) -> str:
        url = self.url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"

    def request(
        self, messages: Sequence[ChatMessage | Mapping[str, str]], max_tokens: int | None = None
    ) -> ChatRequest:
        """A request of ``messages`` to this client's model at its temperature."""
        return ChatRequest.of(self.model, messages, self.temperature, max_tokens)

    def complete(self, request: ChatRequest) -> ChatResponse:
        """The reply to ``request``: from the cache, or sent (and then cached); LLMError when the exchange fails."""
        response, _, _ = self._fetch(request, _as_is)
        return response

    def ask(
        self, messages: Sequence[ChatMessage | Mapping[str, str]], check: Callable[[str], T], what: str
    ) -> T | None:
        """The checked answer to ``messages``, from the cache or the endpoint; None (and a quarantine entry
        naming ``what``) when the reply fails ``check`` (raises :class:`BadReply`). Only a reply that passes
        is cached."""
        response, value, problem = self._fetch(self.request(messages), check)
        if problem is not None:
            with self._lock:
                self.rejected += 1
            self.reject(what, f"malformed LLM reply: {problem}", response.content)
            return None
        return value

    def reject(self, what: str, reason: str, record: Any = None) -> None:
        """Put ``record`` in the quarantine file with ``reason`` (safe from many threads)."""
        with self._lock:
            self.quarantine.reject(self.endpoint, what, reason, record)

    def close(self) -> None:
        with self._lock:
            self.quarantine.close()

    def stats(self) -> LLMReport:
        with self._lock:
            return LLMReport(
                self.endpoint,
                self.model,
                self.calls,
                self.cache_hits,
                self.rejected,
                self.prompt_tokens,
                self.completion_tokens,
                str(self.cache_dir),
            )

    def _fetch(self, request: ChatRequest, check: Callable[[str], T]) -> tuple[ChatResponse, T | None, BadReply | None]:
        """The response, the checked value (or the check's complaint); a reply is cached only when it passes."""
        key = request.key(self.endpoint)
        with self.cache.claim(key):  # another thread asking the same request waits, then reads the cache
            kept = self.cache.get(key)
            if kept is None:
                reply = self._send(request)
                response = ChatResponse(reply.content, Usage(reply.prompt_tokens, reply.completion_tokens), False, key)
                try:
                    value = check(reply.content)
                except BadReply as exc:
                    return response, None, exc
                self.cache.put(key, request.model, reply)
                return response, value, None
        with self._lock:
            self.cache_hits += 1
        response = ChatResponse(kept.content, Usage(kept.prompt_tokens, kept.completion_tokens), True, key)
        try:
            return response, check(kept.content), None
        except BadReply as exc:
            return response, None, exc

    def _send(self, request: ChatRequest) -> CachedReply:
        """Send ``request`` within one deadline of ``timeout`` seconds (connecting, every read, redirects
        on the same host, waits after 429) and read its reply's content and usage."""
        headers = {"Content-Type": "application/json", **self._authorization()}
        if self.before_send is not None:
            self.before_send(request)
        with self._lock:
            self.calls += 1
        deadline = Deadline(self.timeout, self.endpoint)
        payload = json.dumps(request.body()).encode("ascii")  # ASCII escapes: even a lone surrogate is sent
        url = self.endpoint
        for _ in range(MAX_ATTEMPTS):
            reply = transport.post(url, payload, headers, deadline, MAX_REPLY_BYTES)
            if reply.status in _REDIRECTS:
                url = self._same_host(url, reply.headers.get("Location", ""))
                continue
            if reply.status == 429:
                self._wait_to_retry(reply.headers.get("Retry-After"), deadline)
                continue
            break
        else:
            raise LLMError(f"{self.endpoint}: no answer after {MAX_ATTEMPTS} attempts (HTTP {reply.status})")
        if reply.status != 200:
            raise LLMError(f"{self.endpoint}: HTTP {reply.status}: {_excerpt(reply.body)}")
        content, usage = completion(reply.body, self.endpoint)
        with self._lock:
            self.prompt_tokens += usage.prompt_tokens or 0
            self.completion_tokens += usage.completion_tokens or 0
        return CachedReply(content, usage.prompt_tokens, usage.completion_tokens)

    def _authorization(self) -> dict[str, str]:
        key = os.environ.get(self.key_env)
        if not key:
            return {}
        if _UNPRINTABLE.search(key) or any(c.isspace() for c in key):
            raise LLMError(f"${self.key_env}: the key holds a space or control character; it cannot be sent")
        return {"Authorization": f"Bearer {key}"}

    def _same_host(self, url: str, location: str) -> str:
        target = urljoin(url, location)
        if _origin(target) != _origin(self.endpoint):
            raise LLMError(
                f"{self.endpoint}: redirected to {_origin(target)}; not followed (the prompt and key go "
                "only to the configured host; give that address as the URL if it is meant)"
            )
        return target

    def _wait_to_retry(self, retry_after: str | None, deadline: Deadline) -> None:
        wait = _seconds(retry_after)
        if time.monotonic() + wait >= deadline.end:
            raise LLMError(
                f"{self.endpoint}: HTTP 429 (too many requests); Retry-After {retry_after or '?'} "
                f"is past the {self.timeout:g} s deadline"
            )
        time.sleep(wait)


@dataclass(frozen=True)
class LLMSettings:
    """Which model to ask, and how: what a command's ``--llm-url``, ``--llm-model``, ``--llm-key-env`` give."""

    url: str
    model: str
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0

    def client_at(self, cache: Path, quarantine: Quarantine, timeout: float | None = None) -> LLMClient:
        """A client caching in the folder ``cache`` and quarantining refused replies in ``quarantine``."""
        return LLMClient(self.url, self.model, cache, quarantine, self.key_env, timeout or self.timeout)


def completion(body: bytes, endpoint: str) -> tuple[str, Usage]:
    """The content and usage of an OpenAI chat completion; LLMError for anything else (not JSON, nested
    past :data:`MAX_REPLY_DEPTH`, no string content)."""
    text = body.decode("utf-8", "replace")
    try:
        value = jsonio.loads(text, MAX_REPLY_DEPTH)
    except jsonio.NestingError as exc:
        raise LLMError(f"{endpoint}: malformed reply: {exc}") from None
    except ValueError:
        value = None
    try:
        content = value["choices"][0]["message"]["content"]  # type: ignore[index]
    except (KeyError, IndexError, TypeError):
        content = None
    if not isinstance(content, str):
        raise LLMError(f"{endpoint}: not an OpenAI chat completion: {_excerpt(body)}")
    return content, Usage(*token_counts(value.get("usage")))  # type: ignore[union-attr]


def json_reply(content: str) -> Any:
    """The JSON value of a reply, which may come inside a ``` fence; BadReply when it is not JSON or is
    nested past :data:`MAX_REPLY_DEPTH`."""
    text = content.strip()
    fenced = _FENCE.match(text)
    try:
        return jsonio.loads(fenced.group(1) if fenced else text, MAX_REPLY_DEPTH)
    except json.JSONDecodeError as exc:
        raise BadReply(f"not JSON ({exc.msg} at column {exc.colno})") from None
    except jsonio.NestingError as exc:
        raise BadReply(str(exc)) from None


def _as_is(content: str) -> str:
    return content


def _excerpt(body: bytes) -> str:
    """The start of a reply for an error message, on one line, without control or bidi characters."""
    return _UNPRINTABLE.sub(_escaped, body[:200].decode("utf-8", "replace"))


def _escaped(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def _seconds(retry_after: str | None) -> float:
    """Retry-After as seconds: a number, or an HTTP date; 1 s when absent or unreadable."""
    if not retry_after:
        return 1.0
    try:
        seconds = float(retry_after)
    except ValueError:
        pass
    else:
        return max(seconds, 0.0) if not math.isnan(seconds) else 1.0
    try:
        return max(email.utils.parsedate_to_datetime(retry_after).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return 1.0
