"""The collection's journal: every event (a session paired, a turn, a session finished) one JSON line,
appended and fsynced before anyone is told it happened.

Writes from concurrent requests are committed in groups: a request's line joins the lines waiting while a
write is under way, and one ``write`` + ``fsync`` makes the whole group durable, so 200 sessions posting at
once cost a few disk flushes rather than 200 (each caller still returns only once its own line is on disk).
A process killed in the middle of a write can leave the last line cut short; that line was never
acknowledged, so reading the journal drops it (with a warning) and cuts the file back to the last whole line
before anything is appended. Any other damaged line is an error naming the file and line: nothing is skipped.
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgforge.collect.records import CollectError
from kgforge.core.output import output_file


class JournalBroken(CollectError):
    """A write to the journal failed (a full disk, an I/O error): nothing more is accepted until a restart."""


def read_journal(path: Path, *, repair: bool) -> Iterator[dict[str, Any]]:
    """The events of the journal at ``path`` in order (none when it does not exist yet). A cut-short last line
    is left out; with ``repair`` (the server, which holds the journal alone, at start) it is also cut off the
    file, with a warning. Without ``repair`` (an export while the server runs) it is a write under way."""
    if not path.exists():
        return
    data = path.read_bytes()
    whole = data.rfind(b"\n") + 1
    if whole < len(data) and repair:
        warnings.warn(
            f"{path}: dropped an incomplete last line of {len(data) - whole} bytes (a write cut short by a kill; "
            "it was never acknowledged)",
            RuntimeWarning,
            stacklevel=2,
        )
        output_file(path).write_bytes(data[:whole])  # the whole lines, written aside and renamed over it
    for number, line in enumerate(data[:whole].splitlines(), start=1):
        if not line.strip():
            continue
        try:
            event = json.loads(line)
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CollectError(f"{path}:{number}: not a journal line ({exc})") from None
        if not isinstance(event, dict) or not isinstance(event.get("event"), str):
            raise CollectError(f"{path}:{number}: not a journal event (an object with 'event')")
        yield event | {"_line": number}


class Journal:
    """Appends events to ``path``; :meth:`append` returns once the event is on disk."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.size = os.fstat(self.fd).st_size
        self.waiting: list[tuple[bytes, asyncio.Future[None]]] = []
        self.writer: asyncio.Task[None] | None = None
        self.broken: str | None = None
        self.flushes = 0  # disk flushes so far (the benchmark reports events per flush)

    async def append(self, event: dict[str, Any]) -> None:
        if self.broken:
            raise JournalBroken(self.broken)
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting.append((encode(event), done))
        if self.writer is None:
            self.writer = asyncio.create_task(self._write_groups())
        await done

    def append_now(self, event: dict[str, Any]) -> None:
        """Append one event at once (outside the event loop: tools and tests)."""
        self._write([encode(event)])

    async def _write_groups(self) -> None:
        try:
            while self.waiting:
                group, self.waiting = self.waiting, []
                try:
                    await asyncio.to_thread(self._write, [line for line, _ in group])
                except OSError as exc:
                    self.broken = (
                        f"the journal {self.path} could not be written ({exc.strerror or exc}); "
                        "restart the server once that is fixed"
                    )
                    for _, done in group + self.waiting:
                        if not done.done():
                            done.set_exception(JournalBroken(self.broken))
                    self.waiting = []
                    return
                for _, done in group:
                    if not done.done():
                        done.set_result(None)
        finally:
            self.writer = None

    def _write(self, lines: list[bytes]) -> None:
        data = b"".join(lines)
        try:
            written = 0
            while written < len(data):
                written += os.write(self.fd, data[written:])
            os.fsync(self.fd)
        except OSError:
            os.ftruncate(self.fd, self.size)  # no half-written group left for a later append to follow
            raise
        self.size += len(data)
        self.flushes += 1

    def close(self) -> None:
        os.close(self.fd)


def encode(event: dict[str, Any]) -> bytes:
    return (json.dumps(event, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")
