"""One served domain: its query workers and what the server keeps per store version.

Every request resolves the ``store`` link once and works on that build only (:class:`Version`), so a
rebuild published mid-request never mixes two stores in one answer; the next request sees the new
build. The two most recent versions are kept (a build keeps the previous one on disk too); what the
server derived from a version (its search index, its tables, its relation labels) goes with it.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core import checks
from kgforge.core.errors import QueryError, QueryTimeout
from kgforge.goals.graph import GoalGraph
from kgforge.serve import stages
from kgforge.serve.pool import WorkerPool
from kgforge.serve.search import LabelIndex
from kgforge.store.layout import DomainPaths
from kgforge.store.manifest import Manifest
from kgforge.store.query import PREFIXES
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

log = logging.getLogger(__name__)
KEEP_VERSIONS = 2
RELATIONS_QUERY = """
SELECT ?r ?label ?kind WHERE {
  { GRAPH <https://kgforge.org/graph/schema> { ?r kg:kind ?kind } }
  UNION
  { ?r rdfs:label ?label FILTER(STRSTARTS(STR(?r), "https://kgforge.org/relation/")) }
}"""  # the schema's kinds, and the labels of every relation (derived ones too: 同导演 / "same director")


def default_workers() -> int:
    """Queries that may run at once: two per core, at least 8. A worker is a small process (tens of MB);
    with fewer workers than concurrent clients, quick queries would queue behind slow ones while the
    cores are shared anyway."""
    return max(8, 2 * (os.cpu_count() or 1))


def default_worker_memory(workers: int) -> int:
    """MiB one query worker may hold by default: the pool together at most half of this machine's memory,
    each worker between 512 MiB and 8 GiB."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 2048
    return max(512, min(8192, total // 2**20 // (2 * workers)))


@dataclass(frozen=True)
class ServeOptions:
    """How the server runs; checked like every other library entry point."""

    host: str = "127.0.0.1"
    port: int = 7878
    timeout: float = 30.0  # seconds a query (or an explorer page) may take before 503
    max_rows: int = 100_000  # rows (or triples) a protocol answer may hold
    workers: int = field(default_factory=lambda: default_workers())
    cors: tuple[str, ...] = ()  # origins allowed to call the endpoint from a browser ("*" for any)
    allowed_hosts: tuple[str, ...] = ()  # Host names answered besides localhost and --host ("*" for any)
    max_connections: int = 512  # open connections at once; one more is answered 503 and closed
    header_timeout: float = 10.0  # seconds a connection may take to send a request's headers
    body_timeout: float = 30.0  # seconds a request may take to send its body
    worker_memory: int | None = None  # MiB of data one query worker may hold (None: default_worker_memory)

    def __post_init__(self) -> None:
        checks.whole(self.port, "--port", 1, 65535)
        checks.whole(self.max_connections, "--max-connections", 1)
        checks.number(self.header_timeout, "header_timeout", above=True)
        checks.number(self.body_timeout, "body_timeout", above=True)
        checks.number(self.timeout, "--timeout", above=True)
        checks.whole(self.max_rows, "--max-rows", 1)
        checks.whole(self.workers, "--workers", 1, 256)
        if self.worker_memory is not None:
            checks.whole(self.worker_memory, "--memory", 64)

    def worker_memory_bytes(self) -> int:
        return (self.worker_memory or default_worker_memory(self.workers)) * 2**20


class VersionGone(QueryError):
    """The build a request was reading was removed (two rebuilds within one request)."""


@dataclass
class Version:
    """One published build as the server holds it."""

    snapshot: Snapshot  # the build, its manifest and (read once, in a thread) its tables
    relations: dict[str, dict[str, str]] | None = None
    tables_task: asyncio.Task | None = None
    index_task: asyncio.Task[LabelIndex] | None = None
    index: LabelIndex | None = None
    goal_graph: GoalGraph | None = None  # the goal view's sampling material, read on its first use

    def release(self) -> None:
        for task in (self.tables_task, self.index_task):
            if task is not None:
                task.cancel()

    @property
    def build(self) -> Path:
        return self.snapshot.build

    @property
    def manifest(self) -> Manifest:
        return self.snapshot.manifest

    @property
    def id(self) -> str:
        return self.build.name


@dataclass
class Rows:
    variables: list[str]
    rows: list[dict[str, tuple]]


class ServedDomain:
    def __init__(self, paths: DomainPaths, options: ServeOptions) -> None:
        self.paths = paths
        self.options = options
        self.pool = WorkerPool(options.workers, PREFIXES, options.worker_memory_bytes())
        self._versions: dict[Path, Version] = {}

    async def start(self) -> None:
        self.current()  # no store at all: fail at start, with the command that builds one
        await self.pool.start()

    async def close(self) -> None:
        for version in self._versions.values():
            version.release()
        await self.pool.close()

    def current(self) -> Version:
        """The published build now; a new one is taken up here, the oldest kept one let go."""
        snapshot = Snapshot.open(self.paths, reuse={b: v.snapshot for b, v in self._versions.items()})
        version = self._versions.get(snapshot.build)
        if version is None:
            version = self._versions[snapshot.build] = Version(snapshot)
            for old in list(self._versions)[:-KEEP_VERSIONS]:
                self._versions.pop(old).release()
            self._start_index(version)  # search works from the new build as soon as its index is read
            log.info("serving build %s", version.id)
        return version

    def deadline(self) -> float:
        return time.monotonic() + self.options.timeout

    async def run(self, version: Version, message: dict[str, Any], deadline: float) -> Any:
        """The worker's payload for ``message`` run on ``version``; QueryError on a query error."""
        reply = await self.pool.run({**message, "build": str(version.build)}, deadline, self.options.timeout)
        if reply[0] == "gone":
            raise VersionGone(reply[1])
        if reply[0] == "error":
            raise ServedQueryError(reply[1], reply[2])
        return reply[1]

    async def rows(
        self, version: Version, sparql: str, bindings: dict[str, tuple], deadline: float, max_rows: int = 10_000
    ) -> Rows:
        payload = await self.run(
            version, {"kind": "rows", "sparql": sparql, "bindings": bindings, "max_rows": max_rows}, deadline
        )
        variables = payload["variables"]
        return Rows(variables, [{v: t for v, t in zip(variables, row) if t is not None} for row in payload["rows"]])

    async def relations(self, version: Version, deadline: float) -> dict[str, dict[str, str]]:
        """Relation IRI → zh and en labels and kind: the schema's relations and the derived ones (同导演),
        read once per version."""
        if version.relations is None:
            found: dict[str, dict[str, str]] = {}
            for row in (await self.rows(version, RELATIONS_QUERY, {}, deadline, max_rows=1_000_000)).rows:
                entry = found.setdefault(row["r"][1], {})
                if "kind" in row:
                    entry["kind"] = row["kind"][1].rsplit("#", 1)[-1]
                if "label" in row:
                    entry["en" if (row["label"][2] or "").startswith("en") else "zh"] = row["label"][1]
            version.relations = found
        return version.relations

    def tables(self, version: Version) -> asyncio.Task:
        """The version's graph tables, read once in a thread (seconds at DuConv scale)."""
        if version.tables_task is None:
            version.tables_task = asyncio.get_running_loop().create_task(
                asyncio.to_thread(stages.tables_of, version.snapshot)
            )
        return version.tables_task

    def goal_graph(self, version: Version, tables: GraphTables) -> GoalGraph:
        """The version's goal material (topic types, classes, labels over its whole graph), read once per
        version in the calling thread; a newly published build is a new version, so it is read again."""
        if version.goal_graph is None:
            version.goal_graph = stages.goal_graph(version.snapshot)
        return version.goal_graph

    def _start_index(self, version: Version) -> None:
        async def build_index() -> LabelIndex:
            version.index = await asyncio.to_thread(LabelIndex.from_tables, await self.tables(version))
            return version.index

        version.index_task = asyncio.get_running_loop().create_task(build_index())
        version.index_task.add_done_callback(_log_failure)

    async def index(self, version: Version, deadline: float) -> LabelIndex:
        """The version's search index, waiting for it (within ``deadline``) while it is read."""
        if version.index is not None:
            return version.index
        assert version.index_task is not None  # current() starts reading it with the version
        try:
            return await asyncio.wait_for(asyncio.shield(version.index_task), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise QueryTimeout(
                f"the search index of build {version.id} is still being read; try again in a few seconds"
            ) from None


def _log_failure(task: asyncio.Task) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("reading the search index failed: %s", task.exception())


class ServedQueryError(QueryError):
    """A query the worker refused or could not run; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
