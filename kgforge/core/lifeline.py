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
"""

from __future__ import annotations

import os
import select
import threading
import time
from collections.abc import Callable

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
