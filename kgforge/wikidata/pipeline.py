"""A pass over a dump: lines are read and cut into batches here, parsed in worker processes.

Workers decode JSON and turn each entity into its triples (``extract``) or its selection record
(``index``); results come back in dump order, so the caller can record a checkpoint — the
decompressed byte offset and line after the last batch it has written — and a killed pass can
start again from there. A worker that dies or raises fails the whole pass (no silent holes).
"""

from __future__ import annotations

import json
import multiprocessing
import re
import time
from collections import Counter, deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
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
    lines: list[bytes]
    end_offset: int = 0


@dataclass
class BatchResult:
    """A batch's journal text, rendered in the worker so the reading process only writes it."""

    end_line: int
    end_offset: int
    journal: str = ""
    counts: Counter[str] = field(default_factory=Counter)
    entities: int = 0


@dataclass
class PassSpec:
    mode: str  # extract | index
    cfg: WikidataConfig
    wanted: frozenset[str] | None = None  # only these ids (None: every entity)


_SPEC: PassSpec | None = None


def _init_worker(spec: PassSpec) -> None:
    global _SPEC
    _SPEC = spec


def work(batch: Batch, spec: PassSpec | None = None) -> BatchResult:
    """Parse and handle every entity line of ``batch`` (in a worker, or in-process)."""
    spec = spec or _SPEC
    assert spec is not None, "worker used before its initializer ran"
    handler = _HANDLERS[spec.mode]
    started = time.process_time()
    result = BatchResult(batch.first_line + len(batch.lines) - 1, batch.end_offset)
    parts: list[str] = []
    offset = batch.first_offset
    for index, raw in enumerate(batch.lines):
        line, start = batch.first_line + index, offset
        offset += len(raw)
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
    result.journal = "".join(parts)
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
    current: Batch | None = None
    size = 0
    for line, offset, raw in reader:
        if current is None:
            current, size = Batch(line, offset, []), 0
        current.lines.append(raw)
        size += len(raw)
        if size >= batch_bytes or len(current.lines) >= batch_lines:
            current.end_offset = offset + len(raw)
            yield current
            current = None
    if current is not None:
        current.end_offset = reader.offset
        yield current


def run_pass(reader: DumpReader, spec: PassSpec, on_result: Callable[[BatchResult], None],
             workers: int = 0, batch_bytes: int = BATCH_BYTES) -> None:
    """Feed every batch of ``reader`` through ``spec`` and hand results, in order, to ``on_result``.

    ``workers=0`` parses in this process; otherwise at most ``2 × workers`` batches are in
    flight, so memory stays bounded however large the dump is.
    """
    if workers <= 0:
        for batch in batches(reader, batch_bytes):
            on_result(work(batch, spec))
        return
    context = multiprocessing.get_context("forkserver")
    try:
        with ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker, initargs=(spec,)) as pool:
            pending: deque[Future[BatchResult]] = deque()
            for batch in batches(reader, batch_bytes):
                pending.append(pool.submit(work, batch))
                while len(pending) >= 2 * workers:
                    on_result(pending.popleft().result())
            while pending:
                on_result(pending.popleft().result())
    except BrokenProcessPool as exc:
        raise KgforgeError(f"{reader.path}: a parsing worker process died (killed, or out of memory) while the "
                           f"reader was at byte {reader.offset} (line {reader.line}); the pass stopped. Run the "
                           "same import again to resume from its last checkpoint") from exc


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
