"""Resumable passes over a dump, and the import they make up (index → select → extract).

A pass appends everything it produces to one journal file in its state folder — ``T`` lines
(triples), ``I`` lines (selection records), ``E`` lines (bad records), ``D`` lines (deprecated
statements), ``H`` lines (XLORE's held concept triples) — and, every few seconds, records in ``checkpoint.json`` the decompressed byte
offset and line reached together with the journal's size. After a kill, the next run with the
same dump and settings truncates the journal to that size and restarts reading at that offset;
a finished pass is reused as it is.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core import checks
from kgforge.core.files import write_json_atomic
from kgforge.sources.wikidata.engines import DEFAULT_SHARD_BYTES, Engine, LocalEngine, make_engine
from kgforge.sources.wikidata.entity import IndexRecord
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.pipeline import (
    BATCH_BYTES,
    BatchResult,
    PassSpec,
    Throttle,
)

CHECKPOINT_SECONDS = float(os.environ.get("KGFORGE_WIKIDATA_CHECKPOINT_SECONDS", "5"))
PARALLEL_FROM_BYTES = 32 << 20


@dataclass(frozen=True)
class PassOptions:
    """How a dump's passes run: the keys every pass-based importer (Wikidata's dumps, XLORE's) reads beside
    its own."""

    workers: int | None = None
    """Parsing processes (0: in this process); default: in-process below 32 MB, else one per core, at most 8."""
    engine: str = "local"
    """``local``, or ``ray`` (see :mod:`kgforge.sources.wikidata.engines`)."""
    address: str | None = None
    """The Ray cluster to join (``engine = "ray"``); default: a local one."""
    shard_bytes: int = DEFAULT_SHARD_BYTES
    """The ray engine's shard size."""
    decompressor: str = "auto"
    """``auto``, ``python``, or a command (``lbzip2``, ``pigz``)."""
    resume: bool = True
    """Continue an interrupted pass from its checkpoint."""
    checkpoint_seconds: float = CHECKPOINT_SECONDS
    """Seconds between checkpoints of a pass."""
    batch_bytes: int = BATCH_BYTES
    """Bytes of whole lines handed to a worker at a time."""

    def __post_init__(self) -> None:
        checks.optional(checks.whole, self.workers, "workers", 0)
        checks.whole(self.shard_bytes, "shard_bytes", 1)
        checks.whole(self.batch_bytes, "batch_bytes", 1)
        checks.number(self.checkpoint_seconds, "checkpoint_seconds")

    def runner(self, dump_bytes: int) -> PassRunner:
        """What runs the passes over dumps of ``dump_bytes`` in all: the engine, with the workers these options
        give (by default, none below :data:`PARALLEL_FROM_BYTES`)."""
        workers = self.workers
        if workers is None:
            workers = 0 if dump_bytes < PARALLEL_FROM_BYTES else min(os.cpu_count() or 1, 8)
        return PassRunner(self, workers, make_engine(self.engine, workers, self.address, self.shard_bytes))


@dataclass
class PassRunner:
    """One engine that runs every pass of an import with the same options."""

    options: PassOptions
    workers: int
    engine: Engine

    def run(
        self, dump: Path, spec: PassSpec, state_root: Path, on_progress: Callable[[int], None] = lambda n: None
    ) -> PassResult:
        options = self.options
        return run_resumable(
            dump,
            spec,
            state_root,
            self.workers,
            options.decompressor,
            options.resume,
            on_progress,
            checkpoint_seconds=options.checkpoint_seconds,
            batch_bytes=options.batch_bytes,
            engine=self.engine,
        )


@dataclass
class PassResult:
    journal: Path
    counts: Counter[str] = field(default_factory=Counter)
    resumed_from: int = 0  # byte offset the pass restarted at (0: from the start)
    reused: bool = False  # the pass had already finished: nothing was read
    truncated: str | None = None
    decompressor: str = ""
    engine: dict[str, Any] = field(default_factory=dict)  # Engine.report() of the run that finished it


def pass_key(dump: Path, spec: PassSpec) -> str:
    """Identifies a pass: the dump (path, size, mtime) and every setting that changes its output."""
    stat = dump.stat()
    wanted = hashlib.sha1("\n".join(sorted(spec.wanted)).encode()).hexdigest() if spec.wanted is not None else None
    settings = {
        "dump": str(dump.resolve()),
        "size": stat.st_size,
        "mtime": stat.st_mtime_ns,
        "mode": spec.mode,
        "cfg": repr(sorted(spec.cfg.as_dict().items())),
        "wanted": wanted,
    }
    return hashlib.sha1(json.dumps(settings, sort_keys=True).encode()).hexdigest()[:16]


def run_resumable(
    dump: Path,
    spec: PassSpec,
    state_root: Path,
    workers: int = 0,
    decompressor: str = "auto",
    resume: bool = True,
    on_progress: Callable[[int], None] = lambda n: None,
    stop_after_batches: int | None = None,
    checkpoint_seconds: float = CHECKPOINT_SECONDS,
    batch_bytes: int = BATCH_BYTES,
    engine: Engine | None = None,
) -> PassResult:
    """Run (or resume, or reuse) one pass; its output is the journal of the returned result.

    ``engine`` parses the batches (default: a :class:`~kgforge.sources.wikidata.engines.LocalEngine` of ``workers``).

    ``stop_after_batches`` ends the pass early after that many batches without marking it
    finished — what a kill does; tests use it to check resuming.
    """
    state = state_root / f"{spec.mode}-{pass_key(dump, spec)}"
    state.mkdir(parents=True, exist_ok=True)
    checkpoint_file, journal = state / "checkpoint.json", state / "journal"
    saved = _read_checkpoint(checkpoint_file) if resume else None
    if saved and saved.get("done"):
        return _finished_pass(journal, saved)
    offset, line, size = (saved["offset"], saved["line"], saved["journal_size"]) if saved else (0, 1, 0)
    with open(journal, "ab") as handle:
        handle.truncate(size)
    reader = DumpReader(dump, decompressor, start_offset=offset, start_line=line)
    result = PassResult(journal, Counter(saved["counts"]) if saved else Counter(), resumed_from=offset)
    throttle = Throttle(checkpoint_seconds)
    engine = engine or LocalEngine(workers)
    earlier_shards = (saved.get("engine") or {}).get("shards", []) if saved else []  # made before a kill
    seen = 0

    with open(journal, "ab") as out:

        def save(done: bool, end_offset: int, end_line: int) -> None:
            out.flush()
            os.fsync(out.fileno())
            result.decompressor = reader.decompressor_name  # as the engine left it (it may read with a seek index)
            result.engine = engine.report()
            if "shards" in result.engine:
                result.engine["shards"] = earlier_shards + result.engine["shards"]
            _write_checkpoint(checkpoint_file, dump, spec, result, done, end_offset, end_line, out.tell())
            engine.checkpointed(done)

        def on_result(batch: BatchResult) -> None:
            nonlocal seen
            _journal_batch(out, batch, result.counts)
            on_progress(batch.entities)
            seen += 1
            if stop_after_batches is not None and seen >= stop_after_batches:
                save(False, batch.end_offset, batch.end_line + 1)
                raise _Stop
            if throttle():
                save(False, batch.end_offset, batch.end_line + 1)

        try:
            engine.run(reader, spec, on_result, batch_bytes, state)
        except _Stop:
            return result
        result.truncated = reader.truncated
        save(True, reader.offset, reader.line + 1)
    return result


def _finished_pass(journal: Path, saved: dict[str, Any]) -> PassResult:
    """The result of a pass its checkpoint says finished: the journal is reused, the dump not read again."""
    return PassResult(
        journal,
        Counter(saved["counts"]),
        reused=True,
        truncated=saved.get("truncated"),
        decompressor=saved.get("decompressor", ""),
        engine=saved.get("engine", {}),
    )


def _write_checkpoint(
    file: Path,
    dump: Path,
    spec: PassSpec,
    result: PassResult,
    done: bool,
    end_offset: int,
    end_line: int,
    journal_size: int,
) -> None:
    """Where the pass stands: the dump position to go on from and the journal's length up to it (what a resumed
    pass truncates the journal to), written whole so that a kill leaves this checkpoint or the one before."""
    write_json_atomic(
        file,
        {
            "dump": str(dump),
            "mode": spec.mode,
            "offset": end_offset,
            "line": end_line,
            "journal_size": journal_size,
            "counts": dict(result.counts),
            "done": done,
            "truncated": result.truncated,
            "decompressor": result.decompressor,
            "engine": result.engine,
        },
    )


class _Stop(Exception):
    pass


def _read_checkpoint(path: Path) -> dict[str, Any] | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _journal_batch(out: Any, batch: BatchResult, counts: Counter[str]) -> None:
    counts.update(batch.counts)
    out.write(batch.journal)


def read_journal(journal: Path, kinds: str = "TIED") -> Iterator[tuple[str, str]]:
    """``(kind, payload)`` for each journal line of one of ``kinds``."""
    with open(journal, encoding="utf-8", newline="\n") as handle:
        for text in handle:
            if text[0] in kinds:
                yield text[0], text[2:-1]


def index_records(journal: Path) -> Iterator[IndexRecord]:
    for _, payload in read_journal(journal, "I"):
        yield IndexRecord.from_line(payload)


def split_triple(payload: str) -> tuple[str, str, str]:
    s, p, o = payload.split(" ", 2)
    return s, p, o
