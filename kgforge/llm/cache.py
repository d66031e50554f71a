"""Replies kept on disk by the hash of their request, so a rerun costs nothing and a hit never re-sends.

One file per request, ``<sha256>.json`` inside the cache folder (a hex name: no request can place a file
elsewhere), written atomically under a name of its own per process and thread, so any number of threads and
processes may write the same folder. :meth:`ReplyCache.claim` makes the threads of one process that ask the
same request at once wait for the first: it is sent once, and the others read its reply.
"""

from __future__ import annotations

import json
import threading
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.files import write_json_atomic
from kgforge.llm.errors import LLMError


@dataclass(frozen=True)
class CachedReply:
    content: str
    prompt_tokens: int | None
    completion_tokens: int | None


class ReplyCache:
    """The folder of cached replies, safe to use from many threads."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self._guard = threading.Lock()
        self._claims: dict[str, list[Any]] = {}  # key -> [lock, holders]

    def path(self, key: str) -> Path:
        path = self.folder / f"{key}.json"
        if path.resolve().parent != self.folder.resolve():  # a hex name cannot, but never trust a path
            raise LLMError(f"cache path {path} escapes {self.folder}")
        return path

    def get(self, key: str) -> CachedReply | None:
        """The reply kept for ``key``; None when there is none, or it cannot be read (said, then asked again)."""
        path = self.path(key)
        try:
            value = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            warnings.warn(f"{path}: cached reply unreadable ({exc}); asking again", RuntimeWarning, stacklevel=2)
            return None
        content = value.get("content") if isinstance(value, dict) else None
        if not isinstance(content, str):
            warnings.warn(f"{path}: cached reply has no content; asking again", RuntimeWarning, stacklevel=2)
            return None
        return CachedReply(content, *token_counts(value.get("usage")))

    def put(self, key: str, model: str, reply: CachedReply) -> None:
        usage = {"prompt_tokens": reply.prompt_tokens, "completion_tokens": reply.completion_tokens}
        write_json_atomic(
            self.path(key), {"model": model, "content": reply.content, "usage": usage}, indent=None, durable=False
        )

    @contextmanager
    def claim(self, key: str) -> Iterator[None]:
        """Hold ``key`` while asking for it: another thread claiming it waits, then finds the reply cached."""
        with self._guard:
            entry = self._claims.setdefault(key, [threading.Lock(), 0])
            entry[1] += 1
        try:
            with entry[0]:
                yield
        finally:
            with self._guard:
                entry[1] -= 1
                if not entry[1]:
                    del self._claims[key]


def token_counts(usage: Any) -> tuple[int | None, int | None]:
    """Prompt and completion tokens as a reply's ``usage`` gives them: non-negative integers, or None where
    the server did not say."""
    usage = usage if isinstance(usage, dict) else {}
    return tuple(  # type: ignore[return-value]
        value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None
        for value in (usage.get("prompt_tokens"), usage.get("completion_tokens"))
    )
