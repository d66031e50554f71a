"""Worker processes that end with the process they work for.

A killed process runs none of its clean-up. Its pool workers would wait for their next task for ever:
they hold the pool's pipes open themselves, the forkserver and the resource tracker stay as long as a
worker does, and all of them keep the run's files open (the batch spool, the store). So every worker
calls :func:`die_with` with its parent's pid before it takes any work: a daemon thread waits on a pidfd
of that process and ends the worker the moment it exits; the forkserver and the resource tracker then
see their last client gone and exit too.

A parent-death signal (``PR_SET_PDEATHSIG``) alone would not do: it fires when the *thread* that forked
the worker exits, and the workers of a forkserver pool are the forkserver's children, not the pool's
owner's.

A process tree kgforge does not write (a local Ray instance) gets :func:`reap_descendants_when_gone`: a
reaper process that ends, once the driver exits, every descendant of it it has seen.
"""

from __future__ import annotations

import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from kgforge.core.processes import module_command, module_env

POLL_SECONDS = 0.5  # how often the fallback (no pidfd: not Linux 5.3+) looks for the process


def die_with(pid: int) -> None:
    """End this process as soon as process ``pid`` exits (at once if it already has)."""
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        _end()
    except (AttributeError, OSError):
        _watch(_poll, pid)
    else:
        _watch(_wait, handle)


def _watch(target: Callable[[int], None], argument: int) -> None:
    threading.Thread(target=target, args=(argument,), name="kgforge-lifeline", daemon=True).start()


def _wait(pidfd: int) -> None:
    poller = select.poll()  # poll, not select: a descriptor number above 1023 is fine
    poller.register(pidfd, select.POLLIN)  # a pidfd turns readable when its process exits
    poller.poll()
    _end()


def _poll(pid: int) -> None:
    while True:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            _end()
        except PermissionError:  # alive, under another user (the pid was reused): the parent is gone
            _end()
        time.sleep(POLL_SECONDS)


def _end() -> None:
    """Exit now, from any thread, running no clean-up: what it would clean up belonged to the dead parent."""
    os._exit(1)


# ---------------------------------------------------------------- processes that do not watch their parent

WATCH_SECONDS = 1.0  # how often the reaper looks for new descendants while the watched process lives
TERM_GRACE_SECONDS = 2.0  # from SIGTERM to SIGKILL for a descendant left behind


def reap_descendants_when_gone(pid: int | None = None, roots: Iterable[int] = ()) -> subprocess.Popen[bytes]:
    """Start a reaper that ends, once ``pid`` (this process by default) exits, killed or not, every process
    descended from it, or only ``roots`` and their descendants when ``roots`` are given.

    For process trees kgforge does not write itself: a local Ray instance's agents (the dashboard and
    runtime-env agents) are the raylet's children and outlive it when the driver that started Ray is
    killed. The reaper (``python -m kgforge.core.lifeline PID [ROOT …]``, in a session of its own so a
    Ctrl-C or a kill of the driver's process group leaves it to do its job) notes the processes to end
    every second while ``pid`` lives (they are re-parented once their parents die, so they must be known
    before), then sends SIGTERM and, after a grace, SIGKILL to those still alive (the same process: its
    start time is checked, so a reused pid is left alone), and exits."""
    argv = [str(pid or os.getpid()), *map(str, roots)]
    return subprocess.Popen(
        module_command("kgforge.core.lifeline", *argv),
        env=module_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )


def children(pid: int) -> set[int]:
    """The processes whose parent is ``pid`` now."""
    return {child for child, parent in _parents().items() if parent == pid}


def _start_time(pid: int) -> int | None:
    """The kernel's start time of ``pid`` (clock ticks since boot), None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return int(stat.rsplit(")", 1)[1].split()[19])


def _parents() -> dict[int, int]:
    parents = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    return parents


def _descendants(*pids: int) -> set[int]:
    children_of: dict[int, list[int]] = {}
    for child, parent in _parents().items():
        children_of.setdefault(parent, []).append(child)
    found, stack = set(), list(pids)
    while stack:
        for child in children_of.get(stack.pop(), []):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _reap(pid: int, roots: tuple[int, ...] = ()) -> None:
    """The reaper's loop (see :func:`reap_descendants_when_gone`)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the driver's Ctrl-C is the driver's, not the reaper's
    known: dict[int, int] = {}
    try:
        handle = os.pidfd_open(pid)
    except ProcessLookupError:
        return
    poller = select.poll()
    poller.register(handle, select.POLLIN)
    while not poller.poll(WATCH_SECONDS * 1000):
        watched = (_descendants(*roots) | set(roots)) if roots else _descendants(pid)
        for child in watched - known.keys() - {os.getpid()}:
            started = _start_time(child)
            if started is not None:
                known[child] = started
    left = {child: started for child, started in known.items() if _start_time(child) == started}
    for sig in (signal.SIGTERM, signal.SIGKILL):
        for child, started in list(left.items()):
            if _start_time(child) != started:
                left.pop(child)
                continue
            try:
                os.kill(child, sig)
            except ProcessLookupError:
                left.pop(child)
        deadline = time.monotonic() + TERM_GRACE_SECONDS
        while left and time.monotonic() < deadline:
            time.sleep(0.1)
            left = {child: started for child, started in left.items() if _start_time(child) == started}


if __name__ == "__main__":
    _reap(int(sys.argv[1]), tuple(int(root) for root in sys.argv[2:]))
