"""Bad records go to a quarantine file with their location and the reason, never silently away."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from kgforge.core.files import write_text_atomic

_stderr = Console(stderr=True, highlight=False)
MAX_RECORD_CHARS = 2000
MAX_WARNINGS_SHOWN = 20


def warn(source: str, location: str, reason: str) -> None:
    """One line on stderr naming a bad record's file and place, as it is found."""
    _stderr.print(f"[yellow]warning[/]: {escape(source)} {escape(location)}: {escape(reason)}", soft_wrap=True)


class Quarantine:
    """Collects rejected records of one source into ``path`` (JSON lines)."""

    def __init__(self, path: Path, echo: bool = True) -> None:
        self.path = Path(path)
        self.echo = echo
        self.count = 0
        self.reasons: Counter[str] = Counter()
        self._out = None

    def reject(self, source: str, location: str, reason: str, record: Any = None) -> None:
        """Record one bad record. ``location`` is ``line N``, ``byte N`` or a URL."""
        if self._out is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            # lone surrogates (undecodable bytes of a record) are written as \udcff escapes, never a crash
            self._out = open(self.path, "w", encoding="utf-8", errors="backslashreplace")
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
        if self._out is not None:
            self._out.close()
            self._out = None


def rejected_path(out: Path) -> Path:
    """Where the records a command set aside from what it wrote to ``out`` are listed: ``OUT.rejected.jsonl``."""
    return out.with_name(out.name + ".rejected.jsonl")


def write_rejected(out: Path, rejected: list[dict[str, Any]]) -> Path | None:
    """List ``rejected`` (each with its file, line and reason) beside ``out`` in ``OUT.rejected.jsonl``, written
    whole or not at all, and return its path; with nothing rejected, remove a list an earlier run left there
    (it would describe another output) and return None. Every command that sets records aside (``export``,
    ``ground``, ``corpus split`` and ``candidates`` with ``--skip-invalid``) writes its list here."""
    path = rejected_path(Path(out))
    if not rejected:
        path.unlink(missing_ok=True)
        return None
    write_text_atomic(path, "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rejected))
    return path
