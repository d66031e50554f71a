"""Bad records go to a quarantine file with their location and the reason, never silently away."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import IO, Any

from rich.console import Console
from rich.markup import escape

from kgforge.core.files import AtomicFile
from kgforge.core.output import OutputFile

_stderr = Console(stderr=True, highlight=False)
MAX_RECORD_CHARS = 2000
MAX_WARNINGS_SHOWN = 20


def warn(source: str, location: str, reason: str) -> None:
    """One line on stderr naming a bad record's file and place, as it is found."""
    _stderr.print(f"[yellow]warning[/]: {escape(source)} {escape(location)}: {escape(reason)}", soft_wrap=True)


class Quarantine:
    """Collects rejected records of one source into ``path`` (JSON lines): a file of kgforge's own layout,
    written as records come (a killed import leaves what it found), or a user's file (an :class:`OutputFile`
    beside an input: checked, and published whole when the quarantine is closed)."""

    def __init__(self, path: Path | OutputFile, echo: bool = True) -> None:
        self.path = path.path if isinstance(path, OutputFile) else Path(path)  # named in messages and reports
        self._target = path if isinstance(path, OutputFile) else None
        self._own = None if isinstance(path, OutputFile) else Path(path)
        self.echo = echo
        self.count = 0
        self.reasons: Counter[str] = Counter()
        self._out: IO[str] | None = None
        self._stream: AtomicFile | None = None

    def clear(self) -> None:
        """Remove what an earlier run left in the quarantine file of kgforge's own layout."""
        if self._own is not None:
            self._own.unlink(missing_ok=True)

    def _open(self) -> IO[str]:
        # lone surrogates (undecodable bytes of a record) are written as \udcff escapes, never a crash
        if self._target is not None:
            self._stream = self._target.stream(errors="backslashreplace")
            return self._stream.handle
        assert self._own is not None
        self._own.parent.mkdir(parents=True, exist_ok=True)
        return open(self._own, "w", encoding="utf-8", errors="backslashreplace")

    def reject(self, source: str, location: str, reason: str, record: Any = None) -> None:
        """Record one bad record. ``location`` is ``line N``, ``byte N`` or a URL."""
        if self._out is None:
            self._out = self._open()
        entry = {"source": source, "location": location, "reason": reason}
        if record is not None:
            text = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False)
            entry["record"] = text[:MAX_RECORD_CHARS]
        self._out.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.count += 1
        self.reasons[reason.split(":")[0]] += 1
        if self.echo and self.count <= MAX_WARNINGS_SHOWN:
            warn(source, location, reason)
        elif self.echo and self.count == MAX_WARNINGS_SHOWN + 1:
            _stderr.print(
                f"[yellow]warning[/]: more bad records; all are listed in {escape(str(self.path))}", soft_wrap=True
            )

    def close(self) -> None:
        if self._stream is not None:
            self._stream.commit()
        elif self._out is not None:
            self._out.close()
        self._out = self._stream = None


REJECTED_SUFFIX = ".rejected.jsonl"


def rejected_path(out: Path) -> Path:
    """Where the records a command set aside from what it wrote to ``out`` are listed: ``OUT.rejected.jsonl``."""
    return out.with_name(out.name + REJECTED_SUFFIX)


def write_rejected(out: OutputFile, rejected: list[dict[str, Any]]) -> Path | None:
    """List ``rejected`` (each with its file, line and reason) beside ``out`` in ``OUT.rejected.jsonl``, written
    whole or not at all, and return its path; with nothing rejected, remove a list an earlier run left there
    (it would describe another output) and return None. Every command that sets records aside (``export``,
    ``ground``, ``corpus split`` and ``candidates`` with ``--skip-invalid``) writes its list here."""
    target = out.sidecar(REJECTED_SUFFIX)
    if not rejected:
        target.remove()
        return None
    return target.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rejected))
