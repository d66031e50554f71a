"""The server's query workers: a fixed number of processes, each query under a deadline.

A query waits for an idle worker and then for its answer, both within the request's deadline. A worker
still busy at the deadline is killed (the only way to stop a pyoxigraph query) and replaced in the
background; the request gets :class:`QueryTimeout`, which the app answers with 503.

Workers are ``python -m kgforge.serve.worker``: kgforge's own module, never the server's ``__main__``
(``serve()`` from a script without a guard, or from a notebook, starts no second copy of it). Each has no
network (:mod:`kgforge.core.sandbox`) and, given ``memory_limit``, a cap on its data: a query past the cap
ends with :class:`QueryOutOfMemory` (the worker is replaced), which the app answers with 503.
"""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import time
from typing import Any

from kgforge.core.errors import QueryOutOfMemory, QueryTimeout, QueryWorkerDied
from kgforge.core.processes import HEADER, module_command, module_env

WORKER_MODULE = "kgforge.serve.worker"
WorkerDied = QueryWorkerDied  # the name the app catches: a worker process ended while it ran a query
_OUT_OF_MEMORY_SIGNALS = (-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGKILL)  # allocation failed, or the OOM killer


class _Worker:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None and process.stdout is not None  # both PIPE (WorkerPool._spawn)
        self.requests, self.replies = process.stdin, process.stdout

    async def call(self, message: Any) -> Any:
        data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
        self.requests.write(HEADER.pack(len(data)) + data)
        await self.requests.drain()
        (size,) = HEADER.unpack(await self.replies.readexactly(HEADER.size))
        return pickle.loads(await self.replies.readexactly(size))

    def kill(self) -> None:
        if self.process.returncode is None:
            self.process.kill()


class WorkerPool:
    """``size`` worker processes over one domain's store versions."""

    def __init__(self, size: int, prefixes: dict[str, str], memory_limit: int | None = None) -> None:
        self.size = size
        self.prefixes = prefixes
        self.memory_limit = memory_limit
        self._idle: asyncio.Queue[_Worker] = asyncio.Queue()
        self._all: set[_Worker] = set()
        self._spawning: set[asyncio.Task] = set()
        self._closed = False

    async def start(self) -> None:
        await asyncio.gather(*(self._spawn() for _ in range(self.size)))

    async def _spawn(self) -> None:
        command = module_command(WORKER_MODULE, str(os.getpid()), str(self.memory_limit or 0))
        process = await asyncio.create_subprocess_exec(
            *command, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=2**20, env=module_env()
        )
        worker = _Worker(process)
        data = pickle.dumps(self.prefixes)
        worker.requests.write(HEADER.pack(len(data)) + data)
        await worker.requests.drain()
        if self._closed:
            worker.kill()
            return
        self._all.add(worker)
        self._idle.put_nowait(worker)

    def _replace(self, worker: _Worker) -> None:
        worker.kill()
        self._all.discard(worker)
        if not self._closed:
            task = asyncio.get_running_loop().create_task(self._spawn())
            self._spawning.add(task)
            task.add_done_callback(self._spawning.discard)

    async def run(self, message: dict[str, Any], deadline: float, timeout: float) -> Any:
        """The worker's reply to ``message``, or QueryTimeout once ``deadline`` (``time.monotonic``) passes."""
        try:
            worker = await asyncio.wait_for(self._idle.get(), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            raise QueryTimeout(
                f"no query worker came free within the {timeout:g} s timeout (all {self.size} busy); try again later"
            ) from None
        try:
            reply = await asyncio.wait_for(worker.call(message), max(deadline - time.monotonic(), 0))
        except TimeoutError:
            self._replace(worker)
            raise QueryTimeout(f"the query ran past the server's {timeout:g} s timeout and was stopped") from None
        # uvloop says a pipe closed under a worker killed while idle with RuntimeError
        except (asyncio.IncompleteReadError, ConnectionError, RuntimeError) as exc:
            raise await self._death(worker, exc) from None
        except BaseException:  # cancelled mid-frame: the pipe is in an unknown state
            self._replace(worker)
            raise
        self._idle.put_nowait(worker)
        if reply[0] == "memory":
            # a worker without a cap runs out of the machine's memory: no cap to name then
            cap = f" ({self.memory_limit / 2**20:g} MiB)" if self.memory_limit else ""
            raise QueryOutOfMemory(f"{reply[1]}{cap}: the query was stopped")
        return reply

    async def _death(self, worker: _Worker, exc: Exception) -> QueryWorkerDied:
        """Why ``worker`` ended (it is replaced): out of memory when it had a cap and died as an allocation
        failure (abort) or the kernel's OOM killer (SIGKILL) ends a process, else killed or crashed."""
        try:
            code = await asyncio.wait_for(worker.process.wait(), 2)
        except TimeoutError:
            code = None
        self._replace(worker)
        if self.memory_limit and code in _OUT_OF_MEMORY_SIGNALS:
            return QueryOutOfMemory(
                f"the query worker ran out of memory (cap {self.memory_limit / 2**20:g} MiB) "
                "while running the query and was stopped"
            )
        return QueryWorkerDied(
            f"the query worker ended while running the query ({type(exc).__name__}, exit status {code})"
        )

    async def close(self) -> None:
        self._closed = True
        for task in list(self._spawning):
            task.cancel()
        for worker in list(self._all):
            if worker.process.returncode is None:
                worker.requests.close()
        for worker in list(self._all):
            try:
                await asyncio.wait_for(worker.process.wait(), 5)
            except TimeoutError:
                worker.kill()
                await worker.process.wait()
        self._all.clear()
