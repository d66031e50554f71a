"""An OpenAI-compatible chat endpoint for the optional LLM steps: predicate selection, template
writing and judging answers.

Requests go to ``<url>/chat/completions`` (``url`` may also be that full address) with the key from an
environment variable (never written anywhere). Every reply that passes its check is cached on disk,
keyed by the SHA-256 of the request (endpoint, model, messages, temperature), in a file named by that
hash inside the cache folder, so a rerun costs nothing and no request can place a file elsewhere. A
reply that fails its check is not cached: it goes to the quarantine file with the reason, and the
caller falls back (the statistical selector, the bundled templates, no judgement).
"""

from __future__ import annotations

import email.utils
import hashlib
import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import requests
import urllib3

from kgforge.core.errors import KgforgeError
from kgforge.core.files import write_json_atomic
from kgforge.core.quarantine import Quarantine

T = TypeVar("T")
DEFAULT_KEY_ENV = "KGFORGE_LLM_API_KEY"
MAX_PREDICATES_PER_CALL = 50
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)
MAX_REPLY_BYTES = 16 << 20  # a chat reply is kilobytes; more is a broken or hostile server
MAX_ATTEMPTS = 5  # requests per call: redirects on the same host and 429 retries together
_REDIRECTS = (301, 302, 303, 307, 308)


class LLMError(KgforgeError):
    """The endpoint could not be reached or did not answer in the OpenAI chat shape."""


class BadReply(ValueError):
    """A reply that does not say what was asked for (quarantined, then the caller falls back)."""


@dataclass
class LLMClient:
    url: str
    model: str
    cache_dir: Path
    quarantine: Quarantine
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0
    temperature: float = 0.0
    calls: int = 0  # requests sent (cache hits are not calls)
    cache_hits: int = 0
    rejected: int = 0
    session: requests.Session = field(default_factory=requests.Session, repr=False)

    @property
    def endpoint(self) -> str:
        url = self.url.rstrip("/")
        return url if url.endswith("/chat/completions") else url + "/chat/completions"

    def cache_path(self, body: dict[str, Any]) -> Path:
        key = json.dumps({"endpoint": self.endpoint, **body}, ensure_ascii=False, sort_keys=True)
        path = self.cache_dir / f"{hashlib.sha256(key.encode('utf-8')).hexdigest()}.json"
        if path.resolve().parent != self.cache_dir.resolve():  # a hex name cannot, but never trust a path
            raise LLMError(f"cache path {path} escapes {self.cache_dir}")
        return path

    def ask(self, messages: list[dict[str, str]], check: Callable[[str], T], what: str) -> T | None:
        """The checked answer to ``messages``, from the cache or the endpoint; None (and a quarantine
        entry naming ``what``) when the reply fails ``check``."""
        body = {"model": self.model, "messages": messages, "temperature": self.temperature}
        path = self.cache_path(body)
        if path.is_file():
            self.cache_hits += 1
            return check(json.loads(path.read_text(encoding="utf-8"))["content"])
        content = self._post(body)
        try:
            answer = check(content)
        except BadReply as exc:
            self.rejected += 1
            self.quarantine.reject(self.endpoint, what, f"malformed LLM reply: {exc}", content)
            return None
        write_json_atomic(path, {"model": self.model, "content": content}, indent=None, durable=False)
        return answer

    def _post(self, body: dict[str, Any]) -> str:
        """The reply's content. ``timeout`` bounds the whole exchange (a server dripping a byte a second is
        cut off), the reply is read up to :data:`MAX_REPLY_BYTES`, a redirect is followed only on the
        configured host (the prompt and key go nowhere else), and HTTP 429 is retried after its
        ``Retry-After`` while the deadline allows."""
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.calls += 1
        deadline = time.monotonic() + self.timeout
        url = self.endpoint
        for _ in range(MAX_ATTEMPTS):
            status, reply, response_headers = self._exchange(url, body, headers, deadline)
            if status in _REDIRECTS:
                url = self._same_host(url, response_headers.get("Location", ""))
                continue
            if status == 429:
                self._wait_to_retry(response_headers.get("Retry-After"), deadline)
                continue
            break
        else:
            raise LLMError(f"{self.endpoint}: no answer after {MAX_ATTEMPTS} attempts (HTTP {status})")
        text = reply.decode("utf-8", "replace")
        if status != 200:
            raise LLMError(f"{self.endpoint}: HTTP {status}: {text[:200]}")
        try:
            return json.loads(text)["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"{self.endpoint}: not an OpenAI chat completion: {text[:200]}") from None

    def _exchange(
        self, url: str, body: dict[str, Any], headers: dict[str, str], deadline: float
    ) -> tuple[int, bytes, Any]:
        """One request: its status, its body (at most MAX_REPLY_BYTES, read before ``deadline``), its headers."""
        try:
            response = self.session.post(
                url, json=body, headers=headers, timeout=_left(deadline, url), stream=True, allow_redirects=False
            )
        except requests.RequestException as exc:
            raise LLMError(f"{self.endpoint}: {exc}") from None
        with response:
            chunks, size = [], 0
            try:
                while chunk := response.raw.read1(1 << 16):  # what has arrived: the deadline is checked between
                    size += len(chunk)
                    if size > MAX_REPLY_BYTES:
                        raise LLMError(
                            f"{self.endpoint}: the reply is larger than {MAX_REPLY_BYTES >> 20} MiB; not read further"
                        )
                    chunks.append(chunk)
                    _left(deadline, url)
            except (requests.RequestException, OSError, urllib3.exceptions.HTTPError) as exc:
                raise LLMError(f"{self.endpoint}: {exc}") from None
        return response.status_code, b"".join(chunks), response.headers

    def _same_host(self, url: str, location: str) -> str:
        target = urljoin(url, location)
        if _origin(target) != _origin(self.endpoint):
            raise LLMError(
                f"{self.endpoint}: redirected to {_origin(target)}; not followed (the prompt and key go "
                "only to the configured host; give that address as the URL if it is meant)"
            )
        return target

    def _wait_to_retry(self, retry_after: str | None, deadline: float) -> None:
        wait = _seconds(retry_after)
        if time.monotonic() + wait >= deadline:
            raise LLMError(
                f"{self.endpoint}: HTTP 429 (too many requests); Retry-After {retry_after or '?'} "
                f"is past the {self.timeout:g} s deadline"
            )
        time.sleep(wait)

    def report(self) -> dict[str, Any]:
        return {
            "endpoint": self.endpoint,
            "model": self.model,
            "calls": self.calls,
            "cache_hits": self.cache_hits,
            "rejected": self.rejected,
            "cache": str(self.cache_dir),
        }


def _origin(url: str) -> tuple[str, str | None, int | None]:
    parts = urlsplit(url)
    return parts.scheme, parts.hostname, parts.port or {"http": 80, "https": 443}.get(parts.scheme)


def _left(deadline: float, url: str) -> float:
    """Seconds left before ``deadline`` (each socket read waits at most that long); LLMError when none."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise LLMError(f"{url}: no complete reply within the timeout; stopped")
    return left


def _seconds(retry_after: str | None) -> float:
    """Retry-After as seconds: a number, or an HTTP date; 1 s when absent or unreadable."""
    if not retry_after:
        return 1.0
    try:
        return max(float(retry_after), 0.0)
    except ValueError:
        pass
    try:
        return max(email.utils.parsedate_to_datetime(retry_after).timestamp() - time.time(), 0.0)
    except (TypeError, ValueError):
        return 1.0


def json_reply(content: str) -> Any:
    """The JSON value of a reply, which may come inside a ``` fence."""
    text = content.strip()
    fenced = _FENCE.match(text)
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        raise BadReply(f"not JSON ({exc.msg} at column {exc.colno})") from None


# ---------------------------------------------------------------- predicate selection


def selection_messages(type_label: str, language: str, chunk: list[dict[str, Any]]) -> list[dict[str, str]]:
    lines = [
        f"{key}: {p['label']} (coverage {p['coverage']:.2f}, e.g. {str(p.get('example') or '')[:40]!r})"
        for key, p in chunk
    ]
    return [
        {
            "role": "system",
            "content": "You choose which facts about an entity people would ask a voice assistant "
            "about. Answer with JSON only.",
        },
        {
            "role": "user",
            "content": (
                f"Entity type: {type_label}. Question language: {language}.\n"
                "Predicates (id: name):\n" + "\n".join(lines) + "\n\n"
                "Keep the predicates whose values make interesting factoid questions; drop identifiers, codes, "
                'media, URLs and names. Reply as {"keep": [ids]} using only the ids above.'
            ),
        },
    ]


def keep_check(ids: set[str]) -> Callable[[str], list[str]]:
    def check(content: str) -> list[str]:
        value = json_reply(content)
        keep = value.get("keep") if isinstance(value, dict) else None
        if not isinstance(keep, list) or not all(isinstance(k, str) for k in keep):
            raise BadReply('expected {"keep": ["p1", ...]}')
        unknown = sorted(set(keep) - ids)
        if unknown:
            raise BadReply(f"ids that were not offered: {', '.join(unknown[:5])}")
        return keep

    return check


# ---------------------------------------------------------------- templates and judging


def template_messages(type_label: str, predicate_label: str, language: str) -> list[dict[str, str]]:
    return [
        {
            "role": "system",
            "content": "You write question templates for a conversational QA dataset. Answer with JSON only.",
        },
        {
            "role": "user",
            "content": (
                f"Write questions in {language} asking for the {predicate_label!r} of a {type_label}. For each of "
                "voice (spoken, natural) and text (terse, typed), give 3 templates naming the entity as {subject} "
                "and 3 referring back to it as {ref} (deixis). Use {predicate} for the predicate's name if you need "
                "it; never include an answer. Reply as "
                '{"voice": {"name": [...], "deixis": [...]}, "text": {"name": [...], "deixis": [...]}}.'
            ),
        },
    ]


def templates_check(content: str) -> dict[str, dict[str, list[str]]]:
    value = json_reply(content)
    if not isinstance(value, dict):
        raise BadReply("expected an object with voice and text")
    for interaction in ("voice", "text"):
        entry = value.get(interaction)
        if not isinstance(entry, dict) or not all(
            isinstance(entry.get(r), list) and entry[r] and all(isinstance(t, str) for t in entry[r])
            for r in ("name", "deixis")
        ):
            raise BadReply(f"{interaction} must give non-empty name and deixis lists of strings")
    return {i: {r: value[i][r] for r in ("name", "deixis")} for i in ("voice", "text")}


def judge_messages(question: str, gold: list[str], prediction: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You grade answers to factoid questions. Answer with JSON only."},
        {
            "role": "user",
            "content": (
                f"Question: {question}\nCorrect answers (any one suffices): {json.dumps(gold, ensure_ascii=False)}\n"
                f'Predicted answer: {prediction}\nIs the prediction correct? Reply as {{"correct": true}} or '
                '{"correct": false}.'
            ),
        },
    ]


def judge_check(content: str) -> bool:
    value = json_reply(content)
    if not isinstance(value, dict) or not isinstance(value.get("correct"), bool):
        raise BadReply('expected {"correct": true|false}')
    return value["correct"]
