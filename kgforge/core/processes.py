"""Worker processes that never run the user's ``__main__``.

multiprocessing's ``spawn`` and ``forkserver`` start methods import the parent's main module again in
every worker (as ``__mp_main__``), so that pickled functions defined there can be found. For kgforge that
is wrong twice over: a script without an ``if __name__ == "__main__":`` guard runs its own top level again
(a ``Domain.build()`` above a query builds twice, then multiprocessing refuses to start a process during
bootstrapping), and ``python -`` dies on ``FileNotFoundError: '<stdin>'``. kgforge's workers run kgforge's
code only, so:

- a worker that answers requests is a plain subprocess, ``python -m kgforge.<module>``, talking in
  :func:`write_frame` / :func:`read_frame` frames over its stdin and stdout (:func:`module_command`);
- a pool of workers (``ProcessPoolExecutor``) gets :func:`worker_context`: a forkserver of kgforge's own
  (its preload is kgforge's module, never ``__main__``) whose children are told nothing about the
  parent's main module;
- work that reads a large structure the parent made in memory (grounding's index) goes to
  :func:`forked_map`: copies of the parent made by ``fork``, which import nothing (so no ``__main__``
  either) and read the parent's memory instead of making their own.
"""

from __future__ import annotations

import contextlib
import io
import multiprocessing
import os
import pickle
import site
import struct
import sys
import threading
import types
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future, ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from multiprocessing import context as mp_context
from multiprocessing import forkserver, popen_forkserver, reduction, spawn, util
from pathlib import Path
from typing import IO, Any, TypeVar

from kgforge.core.errors import KgforgeError

HEADER = struct.Struct(">I")  # a frame: 4-byte big-endian length, then a pickle (both ends are kgforge)
_MAIN_KEYS = ("init_main_from_path", "init_main_from_name")


def module_command(module: str, *args: str) -> list[str]:
    """The command line that runs kgforge's ``module`` as a program with this interpreter."""
    return [sys.executable, "-m", module, *args]


def module_env() -> dict[str, str]:
    """This process's environment for a worker: the folder this ``kgforge`` was imported from first on
    PYTHONPATH (a notebook that put a checkout on ``sys.path`` by hand starts workers that import the
    same kgforge; an installed kgforge's site-packages is on every interpreter's path already, and is not
    put before the standard library), and no Rust backtraces."""
    root = str(Path(__file__).resolve().parents[2])
    env = dict(os.environ)
    paths = [path for path in env.get("PYTHONPATH", "").split(os.pathsep) if path]
    if root not in _site_folders() and root not in paths:
        env["PYTHONPATH"] = os.pathsep.join([root, *paths])
    env["RUST_BACKTRACE"] = "0"  # a worker ended by its memory cap says so in one line, not in a Rust stack dump
    return env


def _site_folders() -> set[str]:
    folders = [*site.getsitepackages(), site.getusersitepackages()] if hasattr(site, "getsitepackages") else []
    return {str(Path(folder).resolve()) for folder in folders}


def write_frame(stream: IO[bytes], message: Any) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(HEADER.pack(len(data)) + data)
    stream.flush()


def read_frame(stream: IO[bytes]) -> Any:
    """The next frame's message; EOFError when the other end has gone (also in the middle of a frame)."""
    header = stream.read(HEADER.size)
    if len(header) < HEADER.size:
        raise EOFError
    (size,) = HEADER.unpack(header)
    data = stream.read(size)
    if len(data) < size:
        raise EOFError
    return pickle.loads(data)


class _Popen(popen_forkserver.Popen):
    """multiprocessing's forkserver launch, through kgforge's own server, with the parent's main module
    left out of what the child prepares from (the child imports only what the pickled target needs)."""

    _fds: list[int]  # set by popen_forkserver.Popen.__init__, not declared in typeshed

    def _launch(self, process_obj: Any) -> None:
        prep_data = spawn.get_preparation_data(process_obj._name)
        for key in _MAIN_KEYS:
            prep_data.pop(key, None)
        buf = io.BytesIO()
        mp_context.set_spawning_popen(self)
        try:
            reduction.dump(prep_data, buf)
            reduction.dump(process_obj, buf)
        finally:
            mp_context.set_spawning_popen(None)
        self.sentinel, w = _server(process_obj.preload).connect_to_new_process(self._fds)
        parent_w = os.dup(w)  # the child watches this pipe to learn that its parent is gone
        close_fds = util.close_fds  # type: ignore[attr-defined]  # CPython's own helper, absent from typeshed
        self.finalizer = util.Finalize(self, close_fds, (parent_w, self.sentinel))
        with open(w, "wb", closefd=True) as f:
            f.write(buf.getbuffer())
        self.pid = forkserver.read_signed(self.sentinel)


class _Process(mp_context.ForkServerProcess):
    preload: tuple[str, ...] = ()

    @staticmethod
    def _Popen(process_obj: Any) -> _Popen:  # noqa: N802 (multiprocessing's name)
        return _Popen(process_obj)


class _Context(mp_context.ForkServerContext):
    def __init__(self, preload: tuple[str, ...]) -> None:
        super().__init__()
        self.preload = preload

    def Process(self, *args: Any, **kwargs: Any) -> _Process:  # type: ignore[override]  # noqa: N802
        process = _Process(*args, **kwargs)
        process.preload = self.preload
        return process


_SERVERS: dict[tuple[str, ...], forkserver.ForkServer] = {}
_LOCK = threading.Lock()


def _server(preload: tuple[str, ...]) -> forkserver.ForkServer:
    with _LOCK:
        if preload not in _SERVERS:
            server = forkserver.ForkServer()
            server.set_forkserver_preload(list(preload))  # never '__main__': the server imports only these
            _SERVERS[preload] = server
        return _SERVERS[preload]


@contextlib.contextmanager
def main_module_hidden() -> Iterator[None]:
    """While the block runs, processes started by a library that uses multiprocessing's spawn itself
    (PyTorch's ``start_processes``, under Lightning's ``ddp_spawn``) see a bare ``__main__``: they prepare
    from nothing of the caller's script. The caller's module is back in place when the block ends; its
    threads do not read ``sys.modules["__main__"]`` meanwhile (the block runs in the thread that waits for
    the processes)."""
    saved = sys.modules["__main__"]
    sys.modules["__main__"] = types.ModuleType("__main__")
    try:
        yield
    finally:
        sys.modules["__main__"] = saved


def worker_context(*preload: str) -> mp_context.BaseContext:
    """A multiprocessing context (for ``ProcessPoolExecutor(mp_context=…)``) whose processes never import
    ``__main__``: they fork from a server of kgforge's own that imported ``preload`` (the modules the
    workers need) once. Targets must be module-level functions of importable modules."""
    return _Context(tuple(preload))


T = TypeVar("T")
R = TypeVar("R")
_FORKED: tuple[Callable[[Any], Any], Sequence[Any]] | None = None  # what the forked copies run, set around the pool


def usable_cpus() -> int:
    """The CPUs this process may run on (its affinity, where the platform tells it)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def can_fork() -> bool:
    """Whether :func:`forked_map` can run its work in other processes here: a platform that forks safely (not
    Windows, which cannot, nor macOS, where CPython calls a fork unsafe: system libraries may crash the copy),
    and not inside a daemonic worker (which may start none)."""
    return (
        sys.platform != "darwin"
        and "fork" in multiprocessing.get_all_start_methods()
        and not multiprocessing.current_process().daemon
    )


def forked_map(
    work: Callable[[T], R],
    items: Sequence[T],
    processes: int,
    what: str,
    done: Callable[[T], None] | None = None,
) -> list[R]:
    """``[work(item) for item in items]``, shared out over ``processes`` forked copies of this process.

    ``work`` and ``items`` reach the copies through the fork itself, never pickled (an index of millions of
    facts is read where the parent made it); only the results come back pickled, in the order of ``items``.
    The parent must have made everything ``work`` reads before the call, and ``work`` must not call a library
    that runs its own threads (polars): a forked copy has only the thread that forked. With one process, or
    where the platform does not fork (see :func:`can_fork`), the items are worked here, in order.
    ``what`` names the job in the error raised when a copy dies (killed, out of memory). ``done`` is called
    here, in this process, with each item whose work has ended, in the order they end (a progress bar's
    count); the results keep the order of ``items`` all the same."""
    processes = min(processes, len(items))
    if processes <= 1 or not can_fork():
        return [_worked(work, item, done) for item in items]
    global _FORKED
    _FORKED = (work, items)
    try:
        with warnings.catch_warnings():
            # Python 3.12+ warns that a multi-threaded process forks: polars' idle threads (and a progress bar's),
            # which the copies never use (see above)
            warnings.filterwarnings("ignore", ".*use of fork\\(\\) may lead to deadlocks", DeprecationWarning)
            pool = ProcessPoolExecutor(processes, mp_context=multiprocessing.get_context("fork"))
            futures = [pool.submit(_forked_call, position) for position in range(len(items))]
        try:
            _report_ended(futures, items, done)
            return [future.result() for future in futures]  # the first failed item in order raises
        except BaseException:  # an interrupt or a failed item: the items not started are not started
            pool.shutdown(wait=False, cancel_futures=True)
            raise
        finally:
            pool.shutdown()
    except BrokenProcessPool as exc:
        raise KgforgeError(f"{what}: a worker process died (killed, or out of memory); nothing was written") from exc
    finally:
        _FORKED = None


def _worked(work: Callable[[T], R], item: T, done: Callable[[T], None] | None) -> R:
    result = work(item)
    if done is not None:
        done(item)
    return result


def _report_ended(futures: list[Future[Any]], items: Sequence[T], done: Callable[[T], None] | None) -> None:
    """``done`` with the item of each future as it ends, until one fails (the caller raises its error)."""
    if done is None:
        return
    position = {future: at for at, future in enumerate(futures)}
    for future in as_completed(futures):
        if future.cancelled() or future.exception() is not None:
            return
        done(items[position[future]])


def _forked_call(position: int) -> Any:
    assert _FORKED is not None, "forked_map's work is set before its processes fork"
    work, items = _FORKED
    from kgforge.core.progress import showing  # lazy: start-up (a query worker imports this module, not rich)

    with showing(False):  # a copy of the parent's bar would draw over it: the parent reports
        return work(items[position])
