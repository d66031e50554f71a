"""The ``ray`` engine: a dump pass's shards parsed as Ray tasks, on this machine or on a cluster.

The dump is cut into shards of about ``shard_bytes`` — at the first line end past each multiple of the
size, so the same dump gives the same shards in every run, and where ``spec.align`` allows (whole
subjects of an N-Triples dump, whole entity blocks of a Turtle dump). The journal names a bad record
by its line number and byte offset in the decompressed dump, so a shard's first line number must be
known before its task runs; :class:`ShardPlan` says how the shards are found and what their tasks get:

- a plain dump: this process reads it (a newline count) and each task reads its byte range of the file;
- a compressed dump: the first pass to read it whole decompresses it here, through rapidgzip when it is
  installed, and stages each shard's bytes as a file in ``shards/`` that its task maps (nothing goes through
  Ray's object store, which would copy them twice); on the way it writes the dump's seek index and
  its table of shards (:class:`DumpShards`, :mod:`~kgforge.sources.wikidata.seek_index`). Every pass after
  it over the same dump (the extract pass after the index pass of a seeded import, a rerun with other
  settings, a resume at a shard's start) takes the shards from the table, and each task decompresses its
  own range through the index: nothing is decompressed here. A cut or corrupt dump leaves no index.

Each task parses its shard exactly as a local worker parses a batch
(:func:`~kgforge.sources.wikidata.pipeline.work`) and writes, in the pass's ``shards/`` folder:

- ``<offset>-<bytes>.data``: the shard's bytes, when this process stages them (removed once the shard is finished);
- ``<offset>-<bytes>.attempts``: one line per attempt (node, host, pid) when the task starts;
- ``<offset>-<bytes>.journal``: its journal lines (triples, quarantined records), written whole;
- ``<offset>-<bytes>.json``: its counts and producer, written last, so it marks the shard finished.

This process appends the shards' journals to the pass's journal in dump order, so the journal,
its checkpoint and what an import makes of them are those of the local engine, byte for byte. A
task whose worker dies (killed, out of memory, a lost node) is retried by Ray; a shard that was
finished before this process was killed is found by its name on the next run and never parsed
again. On a cluster of several machines the domain's folder (where ``shards/`` and ``dump-index/`` live)
must be on a filesystem every node mounts, and so must the dump (at the same path) unless it is compressed
and read without a seek index.
"""

from __future__ import annotations

import hashlib
import json
import mmap
import os
import shutil
import socket
import subprocess
from collections import Counter, deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.files import write_bytes_atomic, write_json_atomic
from kgforge.core.jsonio import JsonObject
from kgforge.core.lifeline import children, reap_descendants_when_gone
from kgforge.sources.wikidata.engines import (
    DEFAULT_SHARD_BYTES,
    ENGINES,
    Engine,
    import_ray,
)
from kgforge.sources.wikidata.framing import DumpReader, read_range
from kgforge.sources.wikidata.pipeline import Batch, BatchResult, PassSpec, work

TASK_RETRIES = 3  # how often Ray runs a shard again after its worker died
# Ray starts its workers at nice 15; on a machine other jobs share, they would lose the cores the local
# engine's workers (nice 0) keep. A Ray kgforge starts itself runs its workers at nice 0.
WORKER_NICENESS = "RAY_worker_niceness"


@dataclass(frozen=True)
class ShardFiles:
    """The files of the shard that starts at byte ``offset`` of the decompressed dump."""

    folder: Path
    offset: int
    size: int

    @property
    def stem(self) -> str:
        return f"{self.offset:015d}-{self.size}"

    @property
    def journal(self) -> Path:
        return self.folder / f"{self.stem}.journal"

    @property
    def meta(self) -> Path:
        return self.folder / f"{self.stem}.json"

    @property
    def attempts(self) -> Path:
        return self.folder / f"{self.stem}.attempts"

    @property
    def data(self) -> Path:
        return self.folder / f"{self.stem}.data"

    def finished(self) -> JsonObject | None:
        """The meta of a shard finished earlier, if its journal is whole (nothing is fsynced per shard: after
        a crash of the machine a journal may be short, and the shard is then parsed again)."""
        try:
            meta = json.loads(self.meta.read_text(encoding="utf-8"))
            whole = self.journal.stat().st_size == meta["journal_bytes"]
        except (OSError, ValueError, KeyError):
            return None
        return meta if whole else None

    def claim(self) -> JsonObject:
        """Record this attempt (who runs it) and return the producer: node, host, pid, attempt number."""
        producer = {"node": _node_id(), "host": socket.gethostname(), "pid": os.getpid()}
        with open(self.attempts, "a", encoding="utf-8") as out:
            out.write(json.dumps(producer) + "\n")
        with open(self.attempts, encoding="utf-8") as attempts:
            producer["attempt"] = sum(1 for _ in attempts)
        return producer

    def write(self, batch: Batch, result: BatchResult, producer: dict[str, Any]) -> JsonObject:
        write_bytes_atomic(self.journal, result.journal, durable=False)
        meta = {
            "offset": self.offset,
            "bytes": self.size,
            "first_line": batch.first_line,
            "end_line": result.end_line,
            "end_offset": result.end_offset,
            "entities": result.entities,
            "journal_bytes": len(result.journal),
            "counts": dict(result.counts),
            "producer": producer,
        }
        write_json_atomic(self.meta, meta, durable=False)  # the pass journal's checkpoint is what is fsynced
        return meta

    def remove(self) -> None:
        for path in (self.journal, self.meta, self.attempts, self.data):
            path.unlink(missing_ok=True)


_REAPER: list[subprocess.Popen] = []


def _reap_local_ray(ray_processes: set[int]) -> None:
    """The local Ray instance this process started (``ray_processes``: the ones ``ray.init`` started here)
    ends with it even when it is killed: Ray's raylet and GCS watch their driver, but the agents the raylet
    starts (dashboard, runtime env) outlive them. Nothing else this process started is touched."""
    if ray_processes:  # none: Ray started nothing here (another driver's instance), nothing to reap
        _REAPER.append(reap_descendants_when_gone(roots=ray_processes))


def _node_id() -> str:
    import ray

    return ray.get_runtime_context().get_node_id()


def parse_shard(
    batch: Batch, spec: PassSpec, folder: str, source: str | None = None, seek_index: str | None = None
) -> JsonObject:
    """The Ray task: parse one shard and write its files; returns its meta. The shard comes without its bytes:
    with ``source`` the task reads its byte range of the dump itself (of a compressed dump's decompressed
    stream through ``seek_index``), else it maps the file the reading process staged them in."""
    shard = ShardFiles(Path(folder), batch.first_offset, batch.end_offset - batch.first_offset)
    finished = shard.finished()  # a retry of a task whose worker died after its shard was written
    if finished:
        return finished
    producer = shard.claim()
    if source is not None:
        index = Path(seek_index) if seek_index else None
        batch = replace(batch, data=read_range(Path(source), batch.first_offset, batch.end_offset, index))
        return shard.write(batch, work(batch, spec), producer)
    with open(shard.data, "rb") as handle, mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as staged:
        result = work(batch, spec, (staged, 0, len(staged)))
    meta = shard.write(batch, result, producer)
    shard.data.unlink(missing_ok=True)
    return meta


def shards(
    reader: DumpReader, shard_bytes: int, read_bytes: int, align: Callable[[bytes], int] | None = None
) -> Iterator[Batch]:
    """The dump cut into shards where every run cuts it: the first line end at or past ``shard_bytes``
    from the shard's start (then ``2 × shard_bytes``, … while ``align`` finds no place to end).

    The reader's blocks are held as they come and joined once per shard; line numbers come from the
    blocks, so only the block a cut falls in is counted again."""
    held: deque[tuple[int, bytes]] = deque()  # (first line, data) of whole-line blocks not yet in a shard
    size = offset = 0
    search = shard_bytes - 1
    for line, start, data in reader.blocks(read_bytes):
        if not held:
            offset, search = start, shard_bytes - 1
        held.append((line, data))
        size += len(data)
        while size > search:
            cut = _cut(held, search, align)
            if cut is None:
                break
            if isinstance(cut, int):  # ``align`` found no place to end before this line end: look further
                search = cut + shard_bytes
                continue
            yield Batch(held[0][0], offset, cut, offset + len(cut))
            _drop(held, len(cut))
            offset, size, search = offset + len(cut), size - len(cut), shard_bytes - 1
    if held:
        line = held[0][0]
        data = b"".join(block for _, block in held)
        yield Batch(line, offset, data, offset + len(data))


def _cut(held: deque[tuple[int, bytes]], search: int, align: Callable[[bytes], int] | None) -> bytes | int | None:
    """The shard that ends at the first line end at or past byte ``search`` of the held blocks (its data);
    that line end's position when ``align`` says the shard may not end there; None when no line end is held."""
    position = 0
    for index, (_, block) in enumerate(held):  # noqa: B007 — the block reached is read after the loop
        if position + len(block) > search:
            newline = block.find(b"\n", max(0, search - position))
            if newline >= 0:
                break
        position += len(block)
    else:
        return None
    candidate = b"".join([block for _, block in list(held)[:index]] + [block[: newline + 1]])
    end = align(candidate) if align else len(candidate)
    if end == 0:
        return position + newline
    return candidate if end == len(candidate) else candidate[:end]


def _drop(held: deque[tuple[int, bytes]], count: int) -> None:
    """Take the first ``count`` bytes off the held blocks, keeping the line number of the first one left."""
    while held and count >= len(held[0][1]):
        count -= len(held.popleft()[1])
    if count:
        line, block = held.popleft()
        held.appendleft((line + block.count(b"\n", 0, count), block[count:]))


class ShardPlan:
    """Where a pass's shards come from, and whether their tasks read staged bytes or byte ranges of the dump.

    - a plain dump: this process reads it to cut the shards; the tasks read their ranges of the file;
    - a compressed dump read whole once before (``how = "used"``): the shards' places come from the table
      that read left (:class:`DumpShards`) and the tasks read their ranges through the dump's seek index, so
      nothing here decompresses anything;
    - otherwise this process decompresses the dump and stages each shard's bytes in a file its task maps; if
      it reads the whole dump through rapidgzip (``how = "built"``), it leaves the table and seek index for the
      passes after.
    """

    def __init__(
        self,
        reader: DumpReader,
        batches: Iterator[Batch],
        how: str,
        source: str | None = None,
        seek_index: str | None = None,
        table: DumpShards | None = None,
        end: tuple[int, int] | None = None,
    ) -> None:
        self.reader, self.batches, self.how = reader, batches, how
        self.source, self.seek_index, self.table, self.end = source, seek_index, table, end
        self.cuts: list[tuple[int, int, int]] = []

    @classmethod
    def choose(
        cls,
        reader: DumpReader,
        state_root: Path,
        shard_bytes: int,
        read_bytes: int,
        align: Callable[[bytes], int] | None,
    ) -> ShardPlan:
        cut = shards(reader, shard_bytes, read_bytes, align)
        if reader.compression == "plain":
            return cls(reader, cut, "", source=str(reader.path.resolve()))
        table = DumpShards.of(state_root, reader.path, shard_bytes, align)
        known = table.load(reader.start_offset)
        if known is not None:
            batches, end = known
            reader.index_with(table.seek_index)  # not read here, but through this index by the tasks
            return cls(reader, iter(batches), "used", str(reader.path.resolve()), str(table.seek_index), end=end)
        indexed = reader.index_with(table.seek_index)
        return cls(reader, cut, "building" if indexed else "", table=table)

    def __iter__(self) -> Iterator[Batch]:
        for batch in self.batches:
            self.cuts.append((batch.first_line, batch.first_offset, batch.end_offset))
            yield batch

    def finish(self) -> None:
        """After the last shard: the reader stands at the dump's end; a whole read leaves its table."""
        if self.end is not None:
            self.reader.read_elsewhere(*self.end)
        elif self.how == "building":
            self.how = ""
            if self.table is not None and self.reader.index_written and self.reader.truncated is None:
                self.table.save(self.cuts, self.reader.offset, self.reader.line)
                self.how = "built"


@dataclass(frozen=True)
class DumpShards:
    """A compressed dump's shards (first line, start and end in the decompressed stream) and its seek index,
    under ``<state root>/dump-index/<key>/``; the key names the dump (path, size, mtime), the shard size and
    how shards may end, so a changed dump or setting never finds the table of another."""

    folder: Path

    @classmethod
    def of(cls, state_root: Path, dump: Path, shard_bytes: int, align: Callable[[bytes], int] | None) -> DumpShards:
        stat = dump.stat()
        key = json.dumps(
            [str(dump.resolve()), stat.st_size, stat.st_mtime_ns, shard_bytes, getattr(align, "__qualname__", None)]
        )
        return cls(state_root / "dump-index" / hashlib.sha1(key.encode()).hexdigest()[:16])

    @property
    def seek_index(self) -> Path:
        return self.folder / "seek-index.gztool"

    @property
    def table(self) -> Path:
        return self.folder / "shards.json"

    def load(self, offset: int) -> tuple[list[Batch], tuple[int, int]] | None:
        """The shards from byte ``offset`` on (byte ranges, no data) and the dump's end (offset, last line); None
        without a table, or when no shard starts there (a pass resumed where the local engine stopped)."""
        try:
            table = json.loads(self.table.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not self.seek_index.is_file():
            return None
        cuts = [Batch(line, start, b"", end) for line, start, end in table["shards"]]
        if offset not in {batch.first_offset for batch in cuts} | {0, table["end_offset"]}:
            return None
        return [batch for batch in cuts if batch.first_offset >= offset], (table["end_offset"], table["end_line"])

    def save(self, cuts: list[tuple[int, int, int]], end_offset: int, end_line: int) -> None:
        write_json_atomic(self.table, {"shards": cuts, "end_offset": end_offset, "end_line": end_line}, indent=None)


class RayEngine:
    """Shards parsed by Ray tasks; ``workers`` tasks at a time (0: one per CPU of the cluster)."""

    name = "ray"

    def __init__(self, workers: int, address: str | None = None, shard_bytes: int = DEFAULT_SHARD_BYTES) -> None:
        self.workers, self.address, self.shard_bytes = workers, address, shard_bytes
        self.ray = import_ray()
        self.produced: list[dict[str, Any]] = []
        self._appended: list[ShardFiles] = []
        self._folder: Path | None = None
        self.nodes = 0
        self._plan: ShardPlan | None = None

    def connect(self) -> None:
        """Join the cluster at ``address``, or start Ray on this machine for this process: no dashboard,
        Ray's token authentication (its default). Ray 2.x listens on the machine's address, not on
        127.0.0.1 only: it turns a loopback node address into the reachable one."""
        ray = self.ray
        if not ray.is_initialized():
            if self.address:
                ray.init(address=self.address, include_dashboard=False, log_to_driver=False)
            else:
                os.environ.setdefault(WORKER_NICENESS, "0")  # Ray's workers are niced (15) unless told
                before = children(os.getpid())
                ray.init(num_cpus=self.workers or os.cpu_count(), include_dashboard=False, log_to_driver=False)
                _reap_local_ray(children(os.getpid()) - before)
        self.nodes = sum(1 for node in ray.nodes() if node.get("Alive"))

    def parallel(self) -> int:
        return self.workers or max(1, int(self.ray.cluster_resources().get("CPU", 1)))

    def run(
        self,
        reader: DumpReader,
        spec: PassSpec,
        on_result: Callable[[BatchResult], None],
        batch_bytes: int,
        state: Path,
    ) -> None:
        self.connect()
        ray = self.ray
        self.produced = []  # the report names this pass's shards only
        self._folder = state / "shards"
        self._folder.mkdir(parents=True, exist_ok=True)
        task = ray.remote(max_retries=TASK_RETRIES, retry_exceptions=False)(parse_shard)
        spec_ref = ray.put(spec)
        pending: deque[tuple[ShardFiles, Any]] = deque()
        in_flight = 2 * self.parallel()
        plan = self._plan = ShardPlan.choose(reader, state.parent, self.shard_bytes, batch_bytes, spec.align)
        try:
            for shard in plan:
                files = ShardFiles(self._folder, shard.first_offset, shard.end_offset - shard.first_offset)
                done = files.finished()
                if not done:
                    if not plan.source:
                        write_bytes_atomic(files.data, shard.data, durable=False)
                    done = task.remote(
                        replace(shard, data=b""), spec_ref, str(self._folder), plan.source, plan.seek_index
                    )
                pending.append((files, done))
                while len(pending) >= in_flight:
                    on_result(self._collect(*pending.popleft()))
            while pending:
                on_result(self._collect(*pending.popleft()))
        finally:
            self._settle(pending)
        plan.finish()

    def _settle(self, pending: deque[tuple[ShardFiles, Any]]) -> None:
        """When the pass stops early (a stop, an error, Ctrl-C), let the tasks still running finish: their
        shards stay in ``shards/`` for the next run instead of running on after the pass has ended."""
        refs = [outcome for _, outcome in pending if not isinstance(outcome, dict)]
        if refs:
            self.ray.wait(refs, num_returns=len(refs))

    def _collect(self, files: ShardFiles, outcome: Any) -> BatchResult:
        reused = isinstance(outcome, dict)
        meta = outcome if reused else self._wait(files, outcome)
        result = BatchResult(
            meta["end_line"], meta["end_offset"], files.journal.read_bytes(), Counter(meta["counts"]), meta["entities"]
        )
        self.produced.append(
            {
                "offset": meta["offset"],
                "bytes": meta["bytes"],
                "first_line": meta["first_line"],
                "entities": meta["entities"],
                **meta["producer"],
                "reused": reused,
            }
        )
        self._appended.append(files)
        return result

    def _wait(self, files: ShardFiles, ref: Any) -> dict[str, Any]:
        try:
            return self.ray.get(ref)
        except self.ray.exceptions.RayError as exc:
            raise KgforgeError(
                f"the Ray task for the shard at byte {files.offset} ({files.size} bytes) failed after up to "
                f"{TASK_RETRIES} retries: {exc}. The shards finished so far are kept: run the same import again "
                "to resume"
            ) from exc

    def checkpointed(self, done: bool) -> None:
        for files in self._appended:  # their journals are in the pass's journal now, up to its checkpoint
            files.remove()
        self._appended.clear()
        if done and self._folder is not None:
            shutil.rmtree(self._folder, ignore_errors=True)  # shards of another --shard-bytes, if any

    def report(self) -> JsonObject:
        return {
            "engine": self.name,
            "nodes": self.nodes,
            "workers": self.parallel() if self.nodes else self.workers,
            "address": self.address or "local",
            "shard_bytes": self.shard_bytes,
            "dump_index": self._plan.how if self._plan else "",
            "shards": self.produced,
        }


@ENGINES.register("ray", description="Ray tasks, on this machine or a cluster (pip install 'kgforge[ray]')")
def _ray_engine(workers: int, address: str | None, shard_bytes: int) -> Engine:
    return RayEngine(workers, address, shard_bytes)
