"""One collection served: its folder, tokens (read again when ``workers.tsv`` changes), sessions and journal,
and the per-token rate limits.

Only one server may serve a folder at a time (a lock file, ``.server.lock``): two would each append to the
journal without seeing the other's sessions.
"""

from __future__ import annotations

import fcntl
import os
import time
from collections.abc import Callable
from pathlib import Path

from kgforge.api import Domain
from kgforge.collect.collection import Collection
from kgforge.collect.folder import JOURNAL, WORKERS, Folder, Settings, Tokens
from kgforge.collect.journal import Journal, read_journal
from kgforge.collect.judge import TurnJudge
from kgforge.collect.records import CollectError, GoalView
from kgforge.collect.styles import STYLES
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kept import load_index

LOCK = ".server.lock"


class Buckets:
    """Per-token rate limits: a bucket of ``burst`` requests per worker, refilled at ``rate`` a second. A
    worker's page asks a few times a minute (its waits are long polls); a script flooding the server with one
    token is slowed down to ``rate`` without touching the other workers."""

    def __init__(self, rate: float = 5.0, burst: float = 30.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.rate, self.burst, self.clock = rate, burst, clock
        self.levels: dict[str, tuple[float, float]] = {}  # key -> (tokens left, when)

    def take(self, key: str) -> float | None:
        """None when ``key`` may go on; else the seconds after which it may."""
        now = self.clock()
        left, then = self.levels.get(key, (self.burst, now))
        left = min(self.burst, left + (now - then) * self.rate)
        if left < 1:
            self.levels[key] = (left, now)
            return (1 - left) / self.rate
        self.levels[key] = (left - 1, now)
        return None


class CollectService:
    """The collection in ``folder`` made ready to serve: its journal replayed, the domain's grounding index
    loaded for judging turns, the folder locked."""

    def __init__(self, folder: Folder, index: GroundingIndex | None = None, workdir: Path | str | None = None) -> None:
        self.folder = folder
        self.settings: Settings = folder.settings()
        self.style = STYLES.get(self.settings.style)
        self.lock = _lock(folder)
        try:
            # the published build, opened through the public API (as every reader above it does)
            self.index = index if index is not None else load_index(Domain(self.settings.domain, workdir).snapshot())
            self._tokens, self._tokens_seen = folder.tokens(), _mtime(folder.file(WORKERS))
            events = list(read_journal(folder.file(JOURNAL), repair=True))
            self.journal = Journal(folder.file(JOURNAL))
            self.collection = Collection(self.style, folder.views(), self.settings.per_goal, self.journal, self._judge)
            for event in events:
                self.collection.apply(event)
        except BaseException:
            os.close(self.lock)
            raise
        self.limits = Buckets()

    def _judge(self, goal: GoalView) -> TurnJudge:
        return TurnJudge(self.index, goal.knowledge, goal.topics)

    @property
    def tokens(self) -> Tokens:
        seen = _mtime(self.folder.file(WORKERS))
        if seen != self._tokens_seen:  # `kgforge collect tokens DIR --add N` while the server runs
            self._tokens, self._tokens_seen = self.folder.tokens(), seen
        return self._tokens

    def worker(self, token: str) -> str | None:
        return self.tokens.worker(token)

    def is_admin(self, token: str) -> bool:
        return self.tokens.is_admin(token)

    def close(self) -> None:
        self.journal.close()
        os.close(self.lock)


def _mtime(path: Path) -> int:
    try:
        return path.stat().st_mtime_ns
    except FileNotFoundError:
        return 0


def _lock(folder: Folder) -> int:
    fd = os.open(folder.file(LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        raise CollectError(f"another `kgforge collect` serves {folder.path} already; stop it first") from None
    return fd
