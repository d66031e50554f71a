"""A collection folder (``--out DIR``): what it holds, how it is made from a domain and a goals file, and the
worker and admin tokens.

=====================  ======================================================================================
``collection.json``    the domain, style, goals file (name and sha256), goals per session count, build id
``goals.view.jsonl``   each goal as the sessions show and export it (:class:`GoalView`), made once
``refused.jsonl``      goals the style's goal export refused, with why (only when some were)
``workers.tsv``        ``token<TAB>worker``: the links to hand out (mode 600)
``admin.token``        the admin's token (mode 600)
``journal.jsonl``      every session, turn and finish, appended and fsynced (:mod:`kgforge.collect.journal`)
=====================  ======================================================================================

Tokens are 192 random bits (``secrets.token_urlsafe(24)``). A token is looked up by its SHA-256 and then
compared with :func:`hmac.compare_digest`, so how long a refusal takes says nothing about how close a guess
was. Worker ids (``w0001``…) are the pseudonyms the journal and the exports use; tokens appear nowhere else.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from kgforge.collect.records import CollectError, GoalView
from kgforge.collect.styles import STYLES, facts_of
from kgforge.core.files import sha256_file
from kgforge.core.jsonio import JsonObject
from kgforge.core.output import OutputFile, output_dir, safe_output_path

SETTINGS, VIEWS, REFUSED = "collection.json", "goals.view.jsonl", "refused.jsonl"
WORKERS, ADMIN, JOURNAL = "workers.tsv", "admin.token", "journal.jsonl"
HEADER = "token\tworker\n"
TOKEN_BYTES = 24  # 192 bits
VERSION = 1


@dataclass(frozen=True)
class Settings:
    """``collection.json``."""

    domain: str
    style: str
    per_goal: int
    goals_file: str
    goals_sha256: str
    build: str
    created: str
    version: int = VERSION

    def as_json(self) -> JsonObject:
        return dict(vars(self))


class Folder:
    """The files of one collection folder."""

    def __init__(self, path: Path | str) -> None:
        self.path = Path(path)

    def file(self, name: str) -> Path:
        return self.path / name

    def output(self, name: str) -> OutputFile:
        """The folder's file ``name`` to write, checked as a user's output (the folder a user named)."""
        return output_dir(self.path).file(name)

    @property
    def exists(self) -> bool:
        return self.file(SETTINGS).exists()

    def check_writable(self, managed: Path | None = None, allowed: Iterable[Path] = ()) -> None:
        """Refuse a folder that is a file or a link, or lies inside a domain's own layout (``managed``)."""
        if self.path.is_symlink() or (self.path.exists() and not self.path.is_dir()):
            raise CollectError(f"--out {self.path}: not a folder; give a new path or a collection folder")
        safe_output_path(self.path, managed=managed, allowed=allowed, what="--out", folder=True)

    def settings(self) -> Settings:
        path = self.file(SETTINGS)
        if not path.exists():
            raise CollectError(
                f"{self.path} is not a collection folder (no {SETTINGS}); make one with "
                "`kgforge collect DOMAIN --goals GOALS.jsonl --style STYLE --out DIR`"
            )
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            settings = Settings(**data)
        except (ValueError, TypeError) as exc:
            raise CollectError(f"{path}: not a collection's settings ({exc})") from None
        STYLES.get(settings.style)
        return settings

    def write_settings(self, settings: Settings) -> None:
        self.output(SETTINGS).write_json(settings.as_json())

    def views(self) -> list[GoalView]:
        path, out = self.file(VIEWS), []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            try:
                data = json.loads(line)
                out.append(
                    GoalView(
                        data["goal_id"],
                        tuple(data["topics"]),
                        tuple(tuple(x) for x in data["goal"]),
                        facts_of(data["knowledge"]),
                        data["record"],
                        data.get("profile"),
                        data.get("situation"),
                        tuple((kind, topic) for kind, topic in data.get("steps") or ()),
                    )
                )
            except (ValueError, KeyError, TypeError) as exc:
                raise CollectError(f"{path}:{number}: not a goal view ({exc})") from None
        return out

    def write_views(self, views: Iterable[GoalView]) -> int:
        count = 0
        with self.output(VIEWS).open() as out:
            for view in views:
                data = {
                    "goal_id": view.goal_id,
                    "topics": view.topics,
                    "goal": view.goal,
                    "knowledge": [fact.triple for fact in view.knowledge],
                    "record": view.record,
                    "profile": view.profile,
                    "situation": view.situation,
                    "steps": view.steps,
                }
                out.write(json.dumps(data, ensure_ascii=False) + "\n")
                count += 1
        return count

    # ---------------------------------------------------------------- tokens

    def workers(self) -> list[tuple[str, str]]:
        """(token, worker id) of every worker, in the order they were added."""
        path = self.file(WORKERS)
        if not path.exists():
            return []
        pairs = []
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
            if number == 1 and line + "\n" == HEADER or not line.strip():
                continue
            fields = line.split("\t")
            if len(fields) != 2 or not all(fields):
                raise CollectError(f"{path}:{number}: expected TOKEN<TAB>WORKER")
            pairs.append((fields[0], fields[1]))
        if len({token for token, _ in pairs}) != len(pairs) or len({w for _, w in pairs}) != len(pairs):
            raise CollectError(f"{path}: a token or a worker id appears twice")
        return pairs

    def add_workers(self, count: int) -> list[str]:
        """``count`` new workers with fresh tokens, appended to ``workers.tsv`` (rewritten whole, mode 600);
        returns their ids."""
        pairs = self.workers()
        taken = [int(w[1:]) for _, w in pairs if w[:1] == "w" and w[1:].isdigit()]
        first = max(taken, default=0) + 1
        new = [(secrets.token_urlsafe(TOKEN_BYTES), f"w{n:04d}") for n in range(first, first + count)]
        _write_private(self.output(WORKERS), HEADER + "".join(f"{t}\t{w}\n" for t, w in pairs + new))
        return [w for _, w in new]

    def admin_token(self) -> str:
        """The admin's token, made the first time it is asked for."""
        path = self.file(ADMIN)
        if path.exists():
            token = path.read_text(encoding="utf-8").strip()
            if token:
                return token
        token = secrets.token_urlsafe(TOKEN_BYTES)
        _write_private(self.output(ADMIN), token + "\n")
        return token

    def tokens(self) -> Tokens:
        return Tokens(self.workers(), self.admin_token())


def _write_private(out: OutputFile, text: str) -> None:
    """``text`` to ``out`` atomically, readable by its owner only (the temporary file too, before any byte)."""
    target = out.stream()
    try:
        os.chmod(target.part, 0o600)
        target.handle.write(text)
    except BaseException:
        target.discard()
        raise
    target.commit()


class Tokens:
    """Who a token is: a worker id, the admin, or nobody (looked up by digest, compared in constant time)."""

    def __init__(self, workers: Iterable[tuple[str, str]], admin: str) -> None:
        self._workers = {_digest(token): (token, worker) for token, worker in workers}
        self._admin = admin

    def worker(self, token: str) -> str | None:
        found = self._workers.get(_digest(token))
        if found is None or not hmac.compare_digest(found[0].encode(), token.encode()):
            return None
        return found[1]

    def is_admin(self, token: str) -> bool:
        return hmac.compare_digest(self._admin.encode(), token.encode())

    def ids(self) -> list[str]:
        return [worker for _, worker in self._workers.values()]


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def new_settings(domain: str, style: str, per_goal: int, goals_file: Path, build: str) -> Settings:
    return Settings(
        domain, style, per_goal, str(goals_file), sha256_file(goals_file), build, time.strftime("%Y-%m-%dT%H:%M:%S%z")
    )
