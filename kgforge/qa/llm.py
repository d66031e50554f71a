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

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import requests

from kgforge.qa.kg import KgforgeError, Quarantine, write_json_atomic

T = TypeVar("T")
DEFAULT_KEY_ENV = "KGFORGE_LLM_API_KEY"
MAX_PREDICATES_PER_CALL = 50
_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


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
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        self.calls += 1
        try:
            response = self.session.post(self.endpoint, json=body, headers=headers, timeout=self.timeout)
        except requests.RequestException as exc:
            raise LLMError(f"{self.endpoint}: {exc}") from None
        if response.status_code != 200:
            raise LLMError(f"{self.endpoint}: HTTP {response.status_code}: {response.text[:200]}")
        try:
            return response.json()["choices"][0]["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise LLMError(f"{self.endpoint}: not an OpenAI chat completion: {response.text[:200]}") from None

    def report(self) -> dict[str, Any]:
        return {"endpoint": self.endpoint, "model": self.model, "calls": self.calls, "cache_hits": self.cache_hits,
                "rejected": self.rejected, "cache": str(self.cache_dir)}


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
    lines = [f"{key}: {p['label']} (coverage {p['coverage']:.2f}, e.g. {str(p.get('example') or '')[:40]!r})"
             for key, p in chunk]
    return [
        {"role": "system", "content": "You choose which facts about an entity people would ask a voice assistant "
                                      "about. Answer with JSON only."},
        {"role": "user", "content": (
            f"Entity type: {type_label}. Question language: {language}.\n"
            "Predicates (id: name):\n" + "\n".join(lines) + "\n\n"
            "Keep the predicates whose values make interesting factoid questions; drop identifiers, codes, "
            "media, URLs and names. Reply as {\"keep\": [ids]} using only the ids above.")},
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
        {"role": "system", "content": "You write question templates for a conversational QA dataset. Answer with "
                                      "JSON only."},
        {"role": "user", "content": (
            f"Write questions in {language} asking for the {predicate_label!r} of a {type_label}. For each of "
            "voice (spoken, natural) and text (terse, typed), give 3 templates naming the entity as {subject} "
            "and 3 referring back to it as {ref} (deixis). Use {predicate} for the predicate's name if you need "
            "it; never include an answer. Reply as "
            '{"voice": {"name": [...], "deixis": [...]}, "text": {"name": [...], "deixis": [...]}}.')},
    ]


def templates_check(content: str) -> dict[str, dict[str, list[str]]]:
    value = json_reply(content)
    if not isinstance(value, dict):
        raise BadReply("expected an object with voice and text")
    for interaction in ("voice", "text"):
        entry = value.get(interaction)
        if not isinstance(entry, dict) or not all(
                isinstance(entry.get(r), list) and entry[r] and all(isinstance(t, str) for t in entry[r])
                for r in ("name", "deixis")):
            raise BadReply(f"{interaction} must give non-empty name and deixis lists of strings")
    return {i: {r: value[i][r] for r in ("name", "deixis")} for i in ("voice", "text")}


def judge_messages(question: str, gold: list[str], prediction: str) -> list[dict[str, str]]:
    return [
        {"role": "system", "content": "You grade answers to factoid questions. Answer with JSON only."},
        {"role": "user", "content": (
            f"Question: {question}\nCorrect answers (any one suffices): {json.dumps(gold, ensure_ascii=False)}\n"
            f"Predicted answer: {prediction}\nIs the prediction correct? Reply as {{\"correct\": true}} or "
            "{\"correct\": false}.")},
    ]


def judge_check(content: str) -> bool:
    value = json_reply(content)
    if not isinstance(value, dict) or not isinstance(value.get("correct"), bool):
        raise BadReply('expected {"correct": true|false}')
    return value["correct"]
