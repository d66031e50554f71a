"""The one adapter between ``kgforge synth`` (and the LLM judge) and an OpenAI-compatible chat endpoint.

It is :class:`kgforge.llm.LLMClient` (one deadline per exchange, the reply cap, 429 and ``Retry-After``, the
redirect rule, a cache by the request's SHA-256 that a hit never re-sends, safe from many threads) with what
synthesis asks of it kept in one place:

* **every exchange cached before it is used**, good reply or bad (:meth:`LLMClient.complete` caches what the
  endpoint answered; the caller checks it). A retry or a repair is another request (it carries the reply it
  answers), so a cached bad reply never comes back in its place. A run killed at any point and run again sends
  nothing already answered;
* **the reply's ``usage``** (prompt and completion tokens), cached with the content so that a rerun reports the
  same tokens;
* **a seed** sent with each draft (OpenAI's ``seed``), so that a model that honours it drafts reproducibly.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kgforge.core.quarantine import Quarantine
from kgforge.llm import DEFAULT_KEY_ENV, ChatRequest, LLMClient, LLMError, json_reply

__all__ = ["DEFAULT_KEY_ENV", "ChatClient", "LLMError", "Reply", "json_reply"]


@dataclass(frozen=True)
class Reply:
    """One answered request: the reply's text, its token counts (0 where the endpoint gave none) and whether it
    came from the cache."""

    content: str
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached: bool = False


class ChatClient:
    """Chat requests to ``url`` with ``model``, each answered from ``cache_dir`` or sent (``timeout``: seconds
    for the whole exchange, 429 waits included). Safe to call from many threads."""

    def __init__(
        self, url: str, model: str, cache_dir: Path, key_env: str = DEFAULT_KEY_ENV, timeout: float = 120.0
    ) -> None:
        quarantine = Quarantine(Path(cache_dir) / "unused.jsonl", echo=False)  # replies are checked by the caller
        self.model = model
        self.llm = LLMClient(url, model, Path(cache_dir), quarantine, key_env, timeout)

    @property
    def endpoint(self) -> str:
        return self.llm.endpoint

    @property
    def sent(self) -> int:
        """Requests sent to the endpoint (cache hits are not)."""
        return self.llm.stats().calls

    @property
    def cache_hits(self) -> int:
        return self.llm.stats().cache_hits

    def body(self, messages: list[dict[str, str]], temperature: float = 0.0, seed: int | None = None) -> ChatRequest:
        """The request for ``messages`` at ``temperature`` (with ``seed`` when given)."""
        return ChatRequest.of(self.model, messages, temperature, seed=seed)

    def cached(self, request: ChatRequest) -> bool:
        return self.llm.cache.get(request.key(self.endpoint)) is not None

    def send(self, request: ChatRequest) -> Reply:
        """The reply to ``request``: the cached one, or the endpoint's, cached before it is returned."""
        response = self.llm.complete(request)
        usage = response.usage
        return Reply(response.content, usage.prompt_tokens or 0, usage.completion_tokens or 0, response.cached)
