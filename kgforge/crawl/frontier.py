"""The persistent frontier: every URL the crawl knows, its page kind, discovery order and state.

It is a SQLite file committed after every page, so after ``kill -9`` a resumed crawl carries on
where it stopped: finished pages are not fetched again (their responses are in the cache anyway),
failed pages stay failed with their reason, and pending pages are fetched in discovery order.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

STATES = ("pending", "done", "failed", "skipped")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS pages (
    url TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    seq INTEGER NOT NULL,
    referrer TEXT,
    state TEXT NOT NULL DEFAULT 'pending',
    status INTEGER,
    from_cache INTEGER NOT NULL DEFAULT 0,
    reason TEXT,
    finished_at REAL
);
CREATE INDEX IF NOT EXISTS pages_state_seq ON pages (state, seq);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@dataclass(frozen=True)
class PageRow:
    url: str
    kind: str
    seq: int
    referrer: str | None
    state: str
    status: int | None
    from_cache: bool
    reason: str | None


class Frontier:
    """One site's frontier in ``path`` (SQLite, WAL). Use from one thread."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(self.path, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.execute("PRAGMA synchronous=NORMAL")
        self.db.executescript(_SCHEMA)

    def close(self) -> None:
        self.db.close()

    def get_meta(self, key: str) -> str | None:
        row = self.db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        self.db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def add(self, links: Iterable[tuple[str, str]], referrer: str | None = None) -> list[PageRow]:
        """Add ``(url, kind)`` pairs not seen before; returns the new rows."""
        with self._transaction():
            return self._add(links, referrer)

    def _add(self, links: Iterable[tuple[str, str]], referrer: str | None) -> list[PageRow]:
        seq = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM pages").fetchone()[0]
        added = []
        for url, kind in links:
            cursor = self.db.execute(
                "INSERT OR IGNORE INTO pages (url, kind, seq, referrer) VALUES (?, ?, ?, ?)",
                (url, kind, seq + 1, referrer),
            )
            if cursor.rowcount:
                seq += 1
                added.append(PageRow(url, kind, seq, referrer, "pending", None, False, None))
        return added

    def finish(
        self,
        url: str,
        state: str,
        status: int | None = None,
        from_cache: bool = False,
        reason: str | None = None,
        links: Iterable[tuple[str, str]] = (),
    ) -> list[PageRow]:
        """Record a page's outcome and the links found on it, in one committed transaction."""
        if state not in STATES:
            raise ValueError(f"unknown page state {state!r}")
        with self._transaction():
            self.db.execute(
                "UPDATE pages SET state = ?, status = ?, from_cache = ?, reason = ?, finished_at = ? WHERE url = ?",
                (state, status, int(from_cache), reason, time.time(), url),
            )
            return self._add(links, url)

    def pending(self, limit: int | None = None) -> list[PageRow]:
        sql = "SELECT * FROM pages WHERE state = 'pending' ORDER BY seq"
        rows = self.db.execute(sql + (" LIMIT ?" if limit else ""), (limit,) if limit else ()).fetchall()
        return [_row(r) for r in rows]

    def pages(self, state: str | None = None) -> list[PageRow]:
        if state:
            rows = self.db.execute("SELECT * FROM pages WHERE state = ? ORDER BY seq", (state,))
        else:
            rows = self.db.execute("SELECT * FROM pages ORDER BY seq")
        return [_row(r) for r in rows.fetchall()]

    def counts(self) -> dict[str, int]:
        found = dict(self.db.execute("SELECT state, COUNT(*) FROM pages GROUP BY state").fetchall())
        return {state: found.get(state, 0) for state in STATES}

    def finished(self) -> int:
        return self.db.execute("SELECT COUNT(*) FROM pages WHERE state != 'pending'").fetchone()[0]

    def requeue_skipped(self, reason_prefix: str) -> int:
        """Make skipped pages whose reason starts with ``reason_prefix`` pending again."""
        with self._transaction():
            return self.db.execute(
                "UPDATE pages SET state = 'pending', reason = NULL WHERE state = 'skipped' AND reason LIKE ? || '%'",
                (reason_prefix,),
            ).rowcount

    def reset(self) -> None:
        with self._transaction():
            self.db.execute("DELETE FROM pages")
            self.db.execute("DELETE FROM meta")

    def _transaction(self) -> _Transaction:
        return _Transaction(self.db)


class _Transaction:
    def __init__(self, db: sqlite3.Connection) -> None:
        self.db = db

    def __enter__(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        self.db.execute("COMMIT" if exc_type is None else "ROLLBACK")


def _row(row: tuple) -> PageRow:
    url, kind, seq, referrer, state, status, from_cache, reason, _ = row
    return PageRow(url, kind, seq, referrer, state, status, bool(from_cache), reason)
