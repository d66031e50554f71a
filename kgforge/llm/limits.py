"""The bounds every exchange with a model keeps: one wall-clock deadline, a reply size cap (on the bytes as
sent and as decoded), a nesting depth, and a number of attempts."""

from __future__ import annotations

import time

from kgforge.core.jsonio import MAX_DEPTH
from kgforge.llm.errors import LLMError

MAX_REPLY_BYTES = 16 << 20  # a chat reply is kilobytes; more is a broken or hostile server (decoded size too)
MAX_ATTEMPTS = 5  # requests per call: redirects on the same host and 429 retries together
MAX_REPLY_DEPTH = MAX_DEPTH  # levels of nested arrays and objects in a reply (a chat reply needs fewer than 10)

__all__ = ["MAX_ATTEMPTS", "MAX_REPLY_BYTES", "MAX_REPLY_DEPTH", "Deadline"]


class Deadline:
    """One wall-clock limit for a whole exchange: connecting, sending, the headers, every read, the waits
    between retries. ``where`` names the endpoint in the error."""

    def __init__(self, seconds: float, where: str) -> None:
        self.seconds = seconds
        self.where = where
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        """Seconds left (each socket operation waits at most that long); LLMError when none are."""
        left = self.end - time.monotonic()
        if left <= 0:
            raise self.error()
        return left

    @property
    def passed(self) -> bool:
        return time.monotonic() >= self.end

    def error(self) -> LLMError:
        return LLMError(f"{self.where}: no complete reply within the timeout ({self.seconds:g} s); stopped")
