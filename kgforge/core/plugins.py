"""Loading plug-ins (entry points of installed packages) so that none can end a command silently.

A plug-in's module runs code when it is imported. One that raises is one line naming it and its entry point
(:class:`PluginError`); one that raises ``SystemExit`` (``sys.exit(0)``) is caught the same way. One that ends
the process outright — ``os._exit(0)``, a signal, a crash in an extension — cannot be caught by the process
it ends, so the entry points of a group are first imported in a forked copy of this process (:func:`probe`):
the copy reports each entry point it starts and each it finished, and one it started but never finished
stopped it. Only the ones that came through are then imported here. The copy costs a ``fork`` (the
process's pages are shared, not copied) and the plug-ins' import time once more, paid only by a group that
has plug-ins installed, once per process; where ``fork`` is unavailable or other threads run (forking then
could deadlock the copy), the entry points are imported here directly, and only an ``os._exit`` among them
goes unreported (docs/extending.md).
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Iterable
from importlib.metadata import EntryPoint
from typing import Any

from kgforge.core.errors import KgforgeError


class PluginError(KgforgeError):
    """A plug-in failed: on import, or while it ran. The message names it and its entry point."""


def describe(point: EntryPoint, kind: str) -> str:
    """``the metric plug-in 'bangs' (kgforge_example.metric:BANGS, entry point group kgforge.metrics)``."""
    return f"the {kind} plug-in {point.name!r} ({point.value}, entry point group {point.group})"


def probe(points: Iterable[EntryPoint]) -> dict[str, str]:
    """Entry point name -> how it ended the process while it was imported, for those that did; imported in a
    forked copy of this process (module docstring). Empty where that cannot be done safely."""
    points = list(points)
    if not points or not hasattr(os, "fork") or threading.active_count() > 1:
        return {}
    for stream in (sys.stdout, sys.stderr):  # nothing buffered here may be written twice
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe, a closed stream: nothing of ours to write twice
            pass
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:  # no process to spare (EAGAIN, ENOMEM): imported here, as where fork is missing
        os.close(read_end)
        os.close(write_end)
        return {}
    if pid == 0:  # the copy: never returns
        os.close(read_end)
        _import_in_copy(points, write_end)
    os.close(write_end)
    with os.fdopen(read_end, "rb") as reports:
        said = reports.read().decode("utf-8", "replace").splitlines()
    _, status = os.waitpid(pid, 0)
    started = [line[6:] for line in said if line.startswith("start ")]
    done = {line[5:] for line in said if line.startswith("done ")}
    stopped = [name for name in started if name not in done]
    return {name: _ending(status) for name in stopped[:1]}  # the copy stops at the first that ends it


def _import_in_copy(points: list[EntryPoint], reports: int) -> None:
    """Import each entry point, saying so on ``reports`` before and after; exit without cleaning up (the
    parent's files, buffers and handlers are the parent's)."""
    try:
        quiet = os.open(os.devnull, os.O_WRONLY)
        os.dup2(quiet, 1)
        os.dup2(quiet, 2)
        for point in points:
            os.write(reports, f"start {point.name}\n".encode())
            try:
                point.load()
            except BaseException:  # raised (SystemExit too): the parent reports it when it imports the plug-in
                pass
            os.write(reports, f"done {point.name}\n".encode())
    finally:
        os._exit(0)


def _ending(status: int) -> str:
    if os.WIFSIGNALED(status):
        return f"ended the process while it was imported (signal {os.WTERMSIG(status)})"
    return f"ended the process while it was imported (os._exit({os.WEXITSTATUS(status)}) or the like)"


def load(point: EntryPoint, kind: str, stopped: dict[str, str]) -> Any:
    """The object ``point`` names, imported here; a PluginError naming it if it raised (``SystemExit``
    included) or, in the probe, ended the process."""
    if point.name in stopped:
        raise PluginError(f"{describe(point, kind)} {stopped[point.name]}; it was not loaded")
    try:
        return point.load()
    except SystemExit as exc:
        raise PluginError(f"{describe(point, kind)} called SystemExit({exc.code!r}) while it was imported") from None
    except Exception as exc:  # a broken plug-in must name itself, whatever it raised
        raise PluginError(f"{describe(point, kind)} failed to load: {type(exc).__name__}: {exc}") from exc
