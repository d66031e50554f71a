"""Where a dump pass's batches are parsed: this machine's process pool, or the tasks of a Ray cluster.

An :class:`Engine` takes the reader and the pass spec of :func:`~kgforge.sources.wikidata.passes.run_resumable`
and hands back :class:`~kgforge.sources.wikidata.pipeline.BatchResult` s in dump order; the pass writes them to
its journal and checkpoint, whichever engine made them, so a pass killed under one engine resumes
under the other. ``local`` (the default) is the process pool of :func:`~kgforge.sources.wikidata.pipeline.run_pass`;
``ray`` (:mod:`kgforge.sources.wikidata.ray_engine`) parses shards of the same dump as Ray tasks.
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.jsonio import JsonObject
from kgforge.core.registry import Registry
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.pipeline import BatchResult, PassSpec, run_pass

RAY_EXTRA = "pip install 'kgforge[ray]'"
DEFAULT_SHARD_BYTES = 16 << 20


class Engine(Protocol):
    name: str

    def run(
        self,
        reader: DumpReader,
        spec: PassSpec,
        on_result: Callable[[BatchResult], None],
        batch_bytes: int,
        state: Path,
    ) -> None:
        """Parse every batch of ``reader`` and hand the results, in dump order, to ``on_result``.

        ``state`` is the pass's state folder (its journal and checkpoint live there)."""

    def checkpointed(self, done: bool) -> None:
        """The pass made everything handed out so far durable (``done``: the pass is finished)."""

    def report(self) -> JsonObject:
        """What the manifest records: the engine, its node count, the shards and who produced them."""


class LocalEngine:
    """The process pool on this machine (``workers=0``: parse in this process)."""

    name = "local"

    def __init__(self, workers: int) -> None:
        self.workers = workers

    def run(
        self,
        reader: DumpReader,
        spec: PassSpec,
        on_result: Callable[[BatchResult], None],
        batch_bytes: int,
        state: Path,
    ) -> None:
        run_pass(reader, spec, on_result, self.workers, batch_bytes, spool=state / "batches.spool")

    def checkpointed(self, done: bool) -> None:
        pass

    def report(self) -> JsonObject:
        return {"engine": self.name, "nodes": 1, "workers": self.workers, "host": socket.gethostname()}


EngineFactory = Callable[[int, "str | None", int], Engine]  # (workers, address, shard_bytes) -> engine
ENGINES: Registry[EngineFactory] = Registry(
    "engine", modules=("kgforge.sources.wikidata.ray_engine",), entry_point_group="kgforge.engines"
)


@ENGINES.register("local", description="a process pool on this machine")
def _local_engine(workers: int, address: str | None, shard_bytes: int) -> Engine:
    if address:
        raise ArgumentError("--address", "only the ray engine connects to a cluster; add --engine ray")
    return LocalEngine(workers)


def make_engine(name: str, workers: int, address: str | None = None, shard_bytes: int = DEFAULT_SHARD_BYTES) -> Engine:
    """The engine called ``name``; ``address`` (ray only) names a running cluster (``auto``, ``ray://host:port``,
    ``host:port``); without it a Ray instance is started on this machine (see :meth:`RayEngine.connect`)."""
    if name not in ENGINES:
        raise ArgumentError("--engine", f"{name!r} is not an engine; choose one of {', '.join(ENGINES.names())}")
    return ENGINES.get(name)(workers, address, shard_bytes)


def import_ray() -> Any:
    """The ``ray`` module, or an error saying how to install it."""
    try:
        import ray
    except ImportError as exc:
        raise KgforgeError(
            f"--engine ray needs Ray, which is not installed here ({exc}); install it with "
            f"{RAY_EXTRA}, or use --engine local"
        ) from None
    return ray
