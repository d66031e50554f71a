"""A pass over a dump: lines are read and cut into batches here, parsed in worker processes.

Workers decode JSON and turn each entity into its triples (``extract``) or its selection record
(``index``); results come back in dump order, so the caller can record a checkpoint — the
decompressed byte offset and line after the last batch it has written — and a killed pass can
start again from there. A worker that dies or raises fails the whole pass (no silent holes).

Batches and their results travel through a :class:`BatchRing`, not through the pool's pipes.
"""

from __future__ import annotations

import gc
import json
import multiprocessing
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
from typing import Any

from kgforge.errors import KgforgeError
from kgforge.wikidata.entity import (
    BadEntity, EntityOutput, IndexRecord, WikidataConfig, index_entity, process_entity,
)
from kgforge.wikidata.framing import DumpReader, entity_json

BATCH_BYTES = 1 << 20
BATCH_LINES = 2000
_HANDLERS = {"extract": process_entity, "index": index_entity}
_LEADING_ID = re.compile(rb'^\{"type":"[a-z]+",(?:"datatype":"[a-z-]+",)?"id":"([A-Z][0-9]+)"')


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
    between batches; a slot is one copy from the page cache. A batch's slot carries its result back
    (the worker has read the batch by then), and the caller reuses slot ``n`` only after batch
    ``n - slots`` has come back. Data larger than a slot travels inline instead.
    """

    def __init__(self, path: Path, slots: int, slot_bytes: int) -> None:
        self.path, self.slots, self.slot_bytes = path, slots, slot_bytes
        self._fd: int | None = None

    def __getstate__(self) -> dict[str, Any]:
        return {**self.__dict__, "_fd": None}  # each process opens the file itself

    def _handle(self) -> int:
        if self._fd is None:
            self._fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        return self._fd

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
            raise KgforgeError(f"{self.path}: slot {slot} holds {len(data)} bytes, expected {size}; "
                               "was the spool file changed by another process?")
        return data

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


@dataclass
class PassSpec:
    mode: str  # extract | index
    cfg: WikidataConfig
    wanted: frozenset[str] | None = None  # only these ids (None: every entity)


_WORKER: tuple[PassSpec, BatchRing] | None = None


def _init_worker(spec: PassSpec, ring: BatchRing) -> None:
    global _WORKER
    _WORKER = (spec, ring)


def _work_in_worker(batch: Batch) -> BatchResult:
    assert _WORKER is not None, "worker used before its initializer ran"
    spec, ring = _WORKER
    if batch.size:
        batch.data = ring.get(batch.slot, batch.size)
    result = work(batch, spec)
    if ring.put(batch.slot, result.journal):
        result.slot, result.size, result.journal = batch.slot, len(result.journal), b""
    return result


def work(batch: Batch, spec: PassSpec) -> BatchResult:
    """Parse and handle every entity line of ``batch`` (in a worker, or in-process)."""
    collecting = gc.isenabled()
    gc.disable()  # decoded entities hold no cycles: the collector's passes over them cost ~10% and free nothing
    try:
        return _work(batch, spec)
    finally:
        if collecting:
            gc.enable()


def _work(batch: Batch, spec: PassSpec) -> BatchResult:
    handler = _HANDLERS[spec.mode]
    started = time.process_time()
    lines = batch.data.split(b"\n")
    if batch.data.endswith(b"\n"):
        lines.pop()  # what follows the last newline
    result = BatchResult(batch.first_line + len(lines) - 1, batch.end_offset)
    parts: list[str] = []
    offset = batch.first_offset
    for index, raw in enumerate(lines):
        line, start = batch.first_line + index, offset
        offset += len(raw) + 1
        text = entity_json(raw)
        if text is None:
            continue
        if spec.wanted is not None:
            leading = _LEADING_ID.match(text)
            if leading and leading.group(1).decode() not in spec.wanted:
                result.counts["entities_skipped"] += 1
                continue
        try:
            entity = json.loads(text)
        except ValueError as exc:  # JSONDecodeError and UnicodeDecodeError
            parts.append(_error(line, start, "", f"malformed JSON: {exc}", text[:300].decode("utf-8", "replace")))
            result.counts["entities_bad"] += 1
            continue
        if spec.wanted is not None and isinstance(entity, dict) and entity.get("id") not in spec.wanted:
            result.counts["entities_skipped"] += 1
            continue
        if isinstance(entity, dict) and "missing" in entity:
            result.counts["entities_missing"] += 1
            continue
        try:
            output = handler(entity, spec.cfg)
        except (BadEntity, RecursionError) as exc:
            reason = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            parts.append(_error(line, start, "", f"bad entity: {reason}", text[:300].decode("utf-8", "replace")))
            result.counts["entities_bad"] += 1
            continue
        result.entities += 1
        parts.append(render(output, line, start, result.counts))
    result.journal = "".join(parts).encode("utf-8", "backslashreplace")  # lone surrogates in quarantined records
    result.counts["parse_cpu_us"] += int((time.process_time() - started) * 1e6)  # CPU spent parsing, any process
    return result


def render(output: EntityOutput | IndexRecord, line: int, offset: int, counts: Counter[str]) -> str:
    """Journal lines of one entity: ``I`` (index record) or ``T``/``E``/``D`` (triples, problems, deprecated)."""
    if isinstance(output, IndexRecord):
        return "I " + output.to_line()
    counts.update(output.counts)
    parts = [f"T {s} {p} {o}\n" for s, p, o in output.triples]
    for where, reason, record in output.problems:
        parts.append(_error(line, offset, " " + where, reason, record))
        counts["statements_bad"] += 1
    for statement in output.deprecated:
        parts.append("D " + json.dumps({"entity": output.id, "line": line, "statement": statement},
                                       ensure_ascii=False) + "\n")
    return "".join(parts)


def _error(line: int, offset: int, where: str, reason: str, record: Any) -> str:
    excerpt = record if isinstance(record, str) else json.dumps(record, ensure_ascii=False, default=str)[:1000]
    return "E " + json.dumps({"location": f"line {line} (byte {offset}){where}", "reason": reason,
                              "record": excerpt}, ensure_ascii=False) + "\n"


def batches(reader: DumpReader, batch_bytes: int = BATCH_BYTES, batch_lines: int = BATCH_LINES) -> Iterator[Batch]:
    lines: list[bytes] = []
    first_line = first_offset = size = 0
    for line, offset, raw in reader:
        if not lines:
            first_line, first_offset, size = line, offset, 0
        lines.append(raw)
        size += len(raw)
        if size >= batch_bytes or len(lines) >= batch_lines:
            yield Batch(first_line, first_offset, b"".join(lines), offset + len(raw))
            lines = []
    if lines:
        yield Batch(first_line, first_offset, b"".join(lines), reader.offset)


def run_pass(reader: DumpReader, spec: PassSpec, on_result: Callable[[BatchResult], None],
             workers: int = 0, batch_bytes: int = BATCH_BYTES, spool: Path | None = None) -> None:
    """Feed every batch of ``reader`` through ``spec`` and hand results, in order, to ``on_result``.

    ``workers=0`` parses in this process; otherwise at most ``2 × workers`` batches are in
    flight, so memory stays bounded however large the dump is. ``spool`` is the file behind the
    :class:`BatchRing` (a temporary file if not given); it is removed when the pass ends.
    """
    if workers <= 0:
        for batch in batches(reader, batch_bytes):
            on_result(work(batch, spec))
        return
    if spool is None:
        handle, name = tempfile.mkstemp(prefix="kgforge-batches-")
        os.close(handle)
        spool = Path(name)
    ring = BatchRing(spool, 2 * workers, 2 * batch_bytes)
    context = multiprocessing.get_context("forkserver")
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                                 initargs=(spec, ring)) as pool:
            pending: deque[Future[BatchResult]] = deque()
            for sequence, batch in enumerate(batches(reader, batch_bytes)):
                batch.slot = sequence % ring.slots
                if ring.put(batch.slot, batch.data):
                    batch.size, batch.data = len(batch.data), b""
                pending.append(pool.submit(_work_in_worker, batch))
                while len(pending) >= ring.slots:
                    on_result(_collect(pending.popleft(), ring))
            while pending:
                on_result(_collect(pending.popleft(), ring))
    except BrokenProcessPool as exc:
        raise KgforgeError(f"{reader.path}: a parsing worker process died (killed, or out of memory) while the "
                           f"reader was at byte {reader.offset} (line {reader.line}); the pass stopped. Run the "
                           "same import again to resume from its last checkpoint") from exc
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
