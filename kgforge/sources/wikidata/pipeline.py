"""A pass over a dump: lines are read and cut into batches here, parsed in worker processes.

Workers decode JSON and turn each entity into its triples (``extract``) or its selection record
(``index``); results come back in dump order, so the caller can record a checkpoint — the
decompressed byte offset and line after the last batch it has written — and a killed pass can
start again from there. A worker that dies or raises fails the whole pass (no silent holes); a
worker whose reading process dies ends too (:mod:`kgforge.core.lifeline`), so a killed import leaves no
process behind and its spool is released.

Batches and their results travel through a :class:`BatchRing`, not through the pool's pipes.
"""

from __future__ import annotations

import json
import mmap
import os
import re
import tempfile
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from kgforge.core.errors import KgforgeError
from kgforge.core.gc_pause import paused_gc
from kgforge.core.jsonio import too_deep
from kgforge.core.lifeline import die_with
from kgforge.core.processes import worker_context
from kgforge.sources.wikidata.entity import (
    BadEntity,
    EntityOutput,
    IndexRecord,
    WikidataConfig,
    index_entity,
    process_entity,
)
from kgforge.sources.wikidata.framing import DumpReader, decode_entity, entity_spans

BATCH_BYTES = 1 << 20
_HANDLERS: dict[str, Callable[[Any, WikidataConfig], EntityOutput | IndexRecord]] = {
    "extract": process_entity,
    "index": index_entity,
}
_LEADING_ID = re.compile(rb'\{"type":"[a-z]+",(?:"datatype":"[a-z-]+",)?"id":"([A-Z][0-9]+)"')


@dataclass
class Batch:
    first_line: int
    first_offset: int
    data: bytes  # whole lines of the dump, newlines kept; empty while they wait in the batch's ring slot
    end_offset: int = 0
    slot: int = 0  # the BatchRing slot reserved for this batch and its result
    size: int = 0  # bytes of ``data`` waiting in the slot (0: ``data`` travels inline)


@dataclass
class BatchResult:
    """A batch's journal (UTF-8), rendered in the worker so the reading process only writes it."""

    end_line: int
    end_offset: int
    journal: bytes = b""  # empty while it waits in the batch's ring slot
    counts: Counter[str] = field(default_factory=Counter)
    entities: int = 0
    slot: int = 0
    size: int = 0  # bytes of ``journal`` waiting in the slot (0: it travels inline)


class BatchRing:
    """Fixed-size slots in one file, through which batches reach the workers and results return.

    Only ``(slot, size)`` goes through the pool's pipes. A megabyte sent through a pipe is copied
    only when the worker asks for its next batch, so each worker would wait for the reading process
    between batches; a worker reads its slot in place, through a shared mapping of the file. A
    batch's slot carries its result back (the worker has read the batch by then), and the caller
    reuses slot ``n`` only after batch ``n - slots`` has come back. Data larger than a slot travels
    inline instead.
    """

    def __init__(self, path: Path, slots: int, slot_bytes: int) -> None:
        self.path, self.slots, self.slot_bytes = path, slots, slot_bytes
        self._fd: int | None = None
        self._map: mmap.mmap | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fd": None, "_map": None}  # each process opens the file itself

    def _handle(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

    def create(self) -> None:
        """Make the file its full size (sparse), so that workers can map all of it at once."""
        os.ftruncate(self._handle(), self.slots * self.slot_bytes)

    def view(self, slot: int, size: int) -> tuple[mmap.mmap, int, int]:
        """``(mapping, start, end)``: where the ``size`` bytes of ``slot`` lie, read in place, not copied."""
        if self._map is None:
            self._map = mmap.mmap(self._handle(), self.slots * self.slot_bytes, access=mmap.ACCESS_READ)
        start = slot * self.slot_bytes
        return self._map, start, start + size

    def put(self, slot: int, data: bytes) -> bool:
        """Store ``data`` in ``slot``; False (nothing stored) when it does not fit."""
        if len(data) > self.slot_bytes:
            return False
        view, position = memoryview(data), slot * self.slot_bytes
        while view:
            written = os.pwrite(self._handle(), view, position)
            view, position = view[written:], position + written
        return True

    def get(self, slot: int, size: int) -> bytes:
        data = os.pread(self._handle(), size, slot * self.slot_bytes)
        if len(data) != size:
            raise KgforgeError(
                f"{self.path}: slot {slot} holds {len(data)} bytes, expected {size}; "
                "was the spool file changed by another process?"
            )
        return data

    def close(self) -> None:
        if self._map is not None:
            self._map.close()
            self._map = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


BatchParser = Callable[["Batch", "PassSpec", Any, int, int, "BatchResult"], list[str]]


class PassConfig(Protocol):
    """What a pass's parser reads its lines with (:class:`WikidataConfig`, or another format's settings)."""

    def as_dict(self) -> dict[str, Any]:
        """Every setting that changes the pass's output, by name (it goes into the pass's key)."""


Config = TypeVar("Config", bound=PassConfig)


@dataclass
class PassSpec(Generic[Config]):
    mode: str  # extract | index (JSON entity lines), or a mode of ``parser`` (nt-extract | nt-index)
    cfg: Config  # what the mode's parser reads: a WikidataConfig for JSON entity lines
    wanted: frozenset[str] | None = None  # only these ids (None: every entity)
    parser: BatchParser | None = None  # parses a batch of another line format; None: JSON entity lines
    align: Callable[[bytes], int] | None = None  # where a batch may end (DumpReader.blocks); None: any line
    header: bytes = b""  # what ``parser`` reads each batch after (the Turtle dump's prefixes)


_WORKER: tuple[PassSpec, BatchRing] | None = None


def _init_worker(spec: PassSpec, ring: BatchRing, parent: int) -> None:
    global _WORKER
    die_with(parent)
    _WORKER = (spec, ring)


def _work_in_worker(batch: Batch) -> BatchResult:
    assert _WORKER is not None, "worker used before its initializer ran"
    spec, ring = _WORKER
    result = work(batch, spec, ring.view(batch.slot, batch.size) if batch.size else None)
    if ring.put(batch.slot, result.journal):
        result.slot, result.size, result.journal = batch.slot, len(result.journal), b""
    return result


def work(batch: Batch, spec: PassSpec, where: tuple[Any, int, int] | None = None) -> BatchResult:
    """Parse and handle every line of ``batch`` (in a worker, or in-process).

    ``where`` is ``(buffer, start, end)`` when the batch's bytes wait elsewhere (a worker's mapping
    of the ring) rather than in ``batch.data``.
    """
    started = time.process_time()
    result = BatchResult(batch.first_line, batch.end_offset)
    with paused_gc():
        buffer, base, stop = where or (batch.data, 0, len(batch.data))
        parts = (spec.parser or parse_entities)(batch, spec, buffer, base, stop, result)
    result.journal = "".join(parts).encode("utf-8", "backslashreplace")  # lone surrogates in quarantined records
    result.counts["parse_cpu_us"] += int((time.process_time() - started) * 1e6)  # CPU spent parsing, any process
    return result


def parse_entities(
    batch: Batch, spec: PassSpec[WikidataConfig], buffer: Any, base: int, stop: int, result: BatchResult
) -> list[str]:
    """Journal text of a batch of JSON entity lines; ``result`` gets the counts and the last line."""
    parts: list[str] = []
    with memoryview(buffer) as view:
        for index, line_start, span in entity_spans(buffer, base, stop):
            result.end_line = line = batch.first_line + index
            if span is not None:
                parts.append(_handle_line(view, span, line, batch.first_offset + line_start - base, spec, result))
    return parts


def _handle_line(
    view: memoryview, span: tuple[int, int], line: int, offset: int, spec: PassSpec[WikidataConfig], result: BatchResult
) -> str:
    """The journal text of one entity line (empty when it is skipped); counts go to ``result``."""
    first, last = span
    if spec.wanted is not None:
        leading = _LEADING_ID.match(view, first, last)
        if leading and leading.group(1).decode() not in spec.wanted:
            result.counts["entities_skipped"] += 1
            return ""
    try:
        entity = decode_entity(view, first, last)
    except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
        result.counts["entities_bad"] += 1
        return journal_error(line, offset, f"malformed JSON: {exc}", _excerpt(view, first, last))
    if spec.wanted is not None and isinstance(entity, dict) and entity.get("id") not in spec.wanted:
        result.counts["entities_skipped"] += 1
        return ""
    if isinstance(entity, dict) and "missing" in entity:
        result.counts["entities_missing"] += 1
        return ""
    try:
        journal = render(_HANDLERS[spec.mode](entity, spec.cfg), line, offset, result.counts)
    except (BadEntity, RecursionError) as exc:
        reason = too_deep(None) if isinstance(exc, RecursionError) else str(exc)
        result.counts["entities_bad"] += 1
        return journal_error(line, offset, f"bad entity: {reason}", _excerpt(view, first, last))
    result.entities += 1
    return journal


def _excerpt(view: memoryview, first: int, last: int) -> str:
    return bytes(view[first : min(last, first + 300)]).decode("utf-8", "replace")


def render(output: EntityOutput | IndexRecord, line: int, offset: int, counts: Counter[str]) -> str:
    """Journal lines of one entity: ``I`` (index record) or ``T``/``E``/``D`` (triples, problems, deprecated).

    ``counts`` are updated only once every line is rendered (a ``RecursionError`` leaves them as they were)."""
    if isinstance(output, IndexRecord):
        return "I " + output.to_line()
    parts = ["T " + "\nT ".join(map(" ".join, output.triples)) + "\n"] if output.triples else []
    parts += [journal_error(line, offset, reason, record, where) for where, reason, record in output.problems]
    for statement in output.deprecated:
        parts.append(
            "D " + json.dumps({"entity": output.id, "line": line, "statement": statement}, ensure_ascii=False) + "\n"
        )
    for key, count in output.counts.items():  # Counter.update is slower for a handful of keys
        counts[key] += count
    if output.problems:
        counts["statements_bad"] += len(output.problems)
    return "".join(parts)


def journal_error(line: int, offset: int, reason: str, record: Any, where: str = "") -> str:
    """An ``E`` journal line: a bad record at ``line`` (byte ``offset``; ``where`` inside it), quarantined
    when the journal is replayed."""
    location = f"line {line} (byte {offset})" + (f" {where}" if where else "")
    excerpt = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False, default=str)[:1000]
    return "E " + json.dumps({"location": location, "reason": reason, "record": excerpt}, ensure_ascii=False) + "\n"


def batches(
    reader: DumpReader, batch_bytes: int = BATCH_BYTES, align: Callable[[bytes], int] | None = None
) -> Iterator[Batch]:
    for first_line, offset, data in reader.blocks(batch_bytes, align):
        yield Batch(first_line, offset, data, offset + len(data))


def run_pass(
    reader: DumpReader,
    spec: PassSpec,
    on_result: Callable[[BatchResult], None],
    workers: int = 0,
    batch_bytes: int = BATCH_BYTES,
    spool: Path | None = None,
) -> None:
    """Feed every batch of ``reader`` through ``spec`` and hand results, in order, to ``on_result``.

    ``workers=0`` parses in this process; otherwise at most ``2 × workers`` batches are in
    flight, so memory stays bounded however large the dump is. ``spool`` is the file behind the
    :class:`BatchRing` (a temporary file if not given); it is removed when the pass ends.
    """
    if workers <= 0:
        for batch in batches(reader, batch_bytes, spec.align):
            on_result(work(batch, spec))
        return
    if spool is None:
        handle, name = tempfile.mkstemp(prefix="kgforge-batches-")
        os.close(handle)
        spool = Path(name)
    else:
        spool.unlink(missing_ok=True)  # a killed pass's spool: this pass's workers get a file of their own
    ring = BatchRing(spool, 2 * workers, 2 * batch_bytes)
    ring.create()
    context = worker_context(__name__)  # workers fork from a server that imported this module, never __main__
    try:
        with ProcessPoolExecutor(
            workers, mp_context=context, initializer=_init_worker, initargs=(spec, ring, os.getpid())
        ) as pool:
            pending: deque[Future[BatchResult]] = deque()
            for sequence, batch in enumerate(batches(reader, batch_bytes, spec.align)):
                batch.slot = sequence % ring.slots
                if ring.put(batch.slot, batch.data):
                    batch.size, batch.data = len(batch.data), b""
                pending.append(pool.submit(_work_in_worker, batch))
                while len(pending) >= ring.slots:
                    on_result(_collect(pending.popleft(), ring))
            while pending:
                on_result(_collect(pending.popleft(), ring))
    except BrokenProcessPool as exc:
        raise KgforgeError(
            f"{reader.path}: a parsing worker process died (killed, or out of memory) while the "
            f"reader was at byte {reader.offset} (line {reader.line}); the pass stopped. Run the "
            "same import again to resume from its last checkpoint"
        ) from exc
    finally:
        ring.close()
        spool.unlink(missing_ok=True)


def _collect(future: Future[BatchResult], ring: BatchRing) -> BatchResult:
    result = future.result()
    if result.size:
        result.journal = ring.get(result.slot, result.size)
    return result


class Throttle:
    """True at most once every ``seconds`` (for checkpoints and progress)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.last = time.monotonic()

    def __call__(self) -> bool:
        now = time.monotonic()
        if now - self.last >= self.seconds:
            self.last = now
            return True
        return False
