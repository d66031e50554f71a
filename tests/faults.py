"""Fault injection for the long jobs: SIGKILL a real `kgforge` process at a seeded random moment, then
look for what it may have left behind (orphan processes, ``.part`` files).

Every process started here carries ``KGFORGE_FAULT_TAG`` in its environment; its children inherit it,
so an orphan (a worker pool, a forkserver, a resource tracker) is found by scanning ``/proc`` for the
tag, whatever it is called.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

CLI = [sys.executable, "-c", "from kgforge.cli import main; main()"]
TAG = "KGFORGE_FAULT_TAG"


@dataclass
class Killed:
    """What happened to one run: ``killed`` is False when it finished before the kill landed."""

    tag: str
    killed: bool
    returncode: int
    delay: float


def start(
    args: list[str], tag: str | None = None, env: dict[str, str] | None = None, cwd: Path | None = None
) -> tuple[subprocess.Popen, str]:
    """``kgforge ARGS`` in a fresh process carrying a fault tag (returned)."""
    tag = tag or uuid.uuid4().hex
    process = subprocess.Popen(
        CLI + args,
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {}), TAG: tag},
    )
    return process, tag


def kill_at_random_point(
    args: list[str],
    seed: int,
    window: tuple[float, float],
    ready: Callable[[], bool] | None = None,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    ready_timeout: float = 120,
    tag: str | None = None,
) -> Killed:
    """Run ``kgforge ARGS``; once ``ready()`` holds (default: at once), wait a delay drawn from ``window``
    by ``random.Random(seed)`` and SIGKILL the process (only the process itself, as ``kill -9 PID`` would).
    ``tag`` (default: a fresh one) lets ``ready`` look at the run's processes before the kill."""
    delay = random.Random(seed).uniform(*window)
    process, tag = start(args, tag=tag, env=env, cwd=cwd)
    wait_until_ready(process, args, ready, ready_timeout)
    end = time.monotonic() + delay
    while process.poll() is None and time.monotonic() < end:
        time.sleep(0.01)
    killed = process.poll() is None
    if killed:
        process.send_signal(signal.SIGKILL)
    returncode = process.wait()
    return Killed(tag=tag, killed=killed, returncode=returncode, delay=delay)


def seconds_after_ready(
    args: list[str],
    ready: Callable[[], bool],
    env: dict[str, str] | None = None,
    ready_timeout: float = 120,
    tag: str | None = None,
) -> float:
    """Run ``kgforge ARGS`` to its end and return how long it ran after ``ready()`` first held: the span
    a test scales its kill windows to, so the kills land on a fast machine as on a slow one."""
    process, tag = start(args, tag=tag, env=env)
    wait_until_ready(process, args, ready, ready_timeout)
    began = time.monotonic()
    if process.wait() != 0:
        raise AssertionError(f"kgforge {' '.join(args)}: exit {process.returncode}")
    return time.monotonic() - began


def wait_until_ready(
    process: subprocess.Popen, args: list[str], ready: Callable[[], bool] | None, timeout: float
) -> None:
    deadline = time.monotonic() + timeout
    while ready is not None and not ready() and process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            raise AssertionError(f"kgforge {' '.join(args)}: not ready after {timeout} s")
        time.sleep(0.02)


def tagged_processes(tag: str) -> list[tuple[int, str]]:
    """``(pid, command line)`` of every live process whose environment carries ``tag``."""
    found = []
    needle = f"{TAG}={tag}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            if needle not in environ.split(b"\0"):
                continue
            state = next(
                (line for line in (entry / "status").read_text().splitlines() if line.startswith("State:")), ""
            )
            if "zombie" in state:
                continue
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        found.append((int(entry.name), cmdline.strip()))
    return found


def orphans(tag: str, grace: float = 10.0) -> list[tuple[int, str]]:
    """Processes of a killed run still alive after ``grace`` seconds (workers get that long to notice)."""
    deadline = time.monotonic() + grace
    alive = tagged_processes(tag)
    while alive and time.monotonic() < deadline:
        time.sleep(0.1)
        alive = tagged_processes(tag)
    return alive


def reap(tag: str) -> None:
    """Kill whatever a run left behind, so one failed test does not disturb the next."""
    for pid, _ in tagged_processes(tag):
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def part_files(root: Path) -> list[Path]:
    """Temporary files of interrupted writes (``*.part*``, ``*.tmp*``) anywhere under ``root``."""
    return sorted(p for p in root.rglob("*") if p.is_file() and (".part" in p.name or ".tmp" in p.name))


def open_files(root: Path) -> list[tuple[int, str]]:
    """``(pid, path)`` for every file under ``root`` that a live process holds open or mapped (a deleted one
    shows as ``path (deleted)``): after a killed run has been cleaned up, there should be none."""
    prefix = str(Path(root).resolve())
    found = set()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            targets = [os.readlink(fd) for fd in (entry / "fd").iterdir()]
            targets += [
                line.split(None, 5)[-1] for line in (entry / "maps").read_text().splitlines() if line.count(" ") >= 5
            ]
        except (FileNotFoundError, ProcessLookupError, PermissionError):
            continue
        found.update((int(entry.name), target) for target in targets if target.startswith(prefix))
    return sorted(found)
