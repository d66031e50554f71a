"""Progress bars for long jobs: items per second and ETA, on stderr.

Two ways in:

* :func:`progress_bar` — a bar a stage owns and passes around (the build, a crawl, training), shown when the
  caller says so (``progress=True``);
* :func:`tracked` / :func:`iterate` — a step that reports how far it is wherever it runs (grounding's parts,
  eval's metrics, a corpus file being read), shown only inside a :func:`showing` block. Nothing is shown
  outside one, so the library is quiet unless asked; the command line opens one for a command whose stderr
  is a terminal and that does not print ``--json`` (``kgforge.cli._app.long_running``). A step run inside a
  shown step adds its own line to the same bar while it runs (rich allows one live display at a time).

Like :func:`kgforge.core.limits.reading`, :func:`showing` sets a context variable for the call, so no function
between the entry point and the step carries a flag. Forked workers (:func:`kgforge.core.processes.forked_map`)
never show one: a copy of the parent's bar would draw over it; their parent reports for them.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    SpinnerColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

stderr_console = Console(stderr=True, highlight=False)
EVERY = 64  # items between two updates of a bar from :func:`iterate` (each update takes rich's lock)
T = TypeVar("T")
R = TypeVar("R")  # a record read from a file: it has a ``line``


class RateColumn(ProgressColumn):
    """Items per second of a task."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text("" if speed is None else f"{speed:,.0f}/s", style="progress.data.speed")


def progress_bar(enabled: bool = True) -> Progress:
    """A bar on stderr (``enabled`` False: one that shows nothing). What is printed on stdout while it is shown
    goes above it only when stdout is the same terminal: stdout sent to a file or pipe keeps its own bytes."""
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=stderr_console,
        disable=not enabled,
        redirect_stdout=_is_terminal(sys.stdout),
    )


def _is_terminal(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):  # a stream without isatty, or a closed one
        return False


# ---------------------------------------------------------------- steps that report where they run

_SHOWN: ContextVar[bool] = ContextVar("kgforge_progress_shown", default=False)
_ACTIVE: ContextVar[Progress | None] = ContextVar("kgforge_progress_active", default=None)


@contextmanager
def showing(enabled: bool = True) -> Iterator[None]:
    """Show the bars of the steps run in the block (``enabled`` False: show none, also inside an outer block)."""
    token = _SHOWN.set(enabled)
    try:
        yield
    finally:
        _SHOWN.reset(token)


def shown() -> bool:
    """Whether a step run here would show its bar."""
    return _SHOWN.get()


def terminal_wants_bars() -> bool:
    """Whether stderr, where the bars are drawn, is a terminal a person watches."""
    return stderr_console.is_terminal and not stderr_console.is_dumb_terminal


class Tracker:
    """How far one step is: ``advance`` it, or set how much is ``done``; a step not shown does nothing."""

    def __init__(self, bar: Progress | None = None, task: TaskID | None = None) -> None:
        self._bar, self._task = bar, task

    def advance(self, amount: float = 1) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.advance(self._task, amount)

    def update(self, *, done: float | None = None, total: float | None = None, what: str | None = None) -> None:
        if self._bar is not None and self._task is not None:
            self._bar.update(self._task, completed=done, total=total, description=what)


@contextmanager
def tracked(what: str, total: float | None = None) -> Iterator[Tracker]:
    """A step of ``total`` items (None: not known; the bar then counts and spins) named ``what``, shown when
    :func:`shown`: its line on the bar shown now, or a bar of its own."""
    if not _SHOWN.get():
        yield Tracker()
        return
    active = _ACTIVE.get()
    if active is not None:  # a step of a step: its line shows while it runs, its parent's stays
        task = active.add_task(what, total=total)
        yield Tracker(active, task)
        active.remove_task(task)
        return
    with progress_bar() as bar:
        token = _ACTIVE.set(bar)
        try:
            task = bar.add_task(what, total=total)
            yield Tracker(bar, task)
            _finish(bar, task)
        finally:
            _ACTIVE.reset(token)


def _finish(bar: Progress, task: TaskID) -> None:
    """A step of unknown size that ended shows what it counted as its total (its bar full, not spinning on)."""
    state = next(t for t in bar.tasks if t.id == task)
    if state.total is None:
        done = max(state.completed, 1)
        bar.update(task, total=done, completed=done)


def iterate(items: Iterable[T], what: str, total: int | None = None) -> Iterator[T]:
    """``items`` as they are, the bar of step ``what`` moved on as they are taken (``total`` defaults to the
    items' length where they have one)."""
    if not _SHOWN.get():
        yield from items
        return
    size = total if total is not None else len(items) if hasattr(items, "__len__") else None  # type: ignore[arg-type]
    with tracked(what, size) as tracker:
        pending = 0
        for item in items:
            yield item
            pending += 1
            if pending == EVERY:
                tracker.advance(pending)
                pending = 0
        tracker.advance(pending)


def by_line(records: Iterable[R], path: Path | str) -> Iterator[R]:
    """``records`` of the file ``path`` as they are (each with its ``line``), the bar of reading it moved on to
    the line of each: a file read record by record has no count of records before its end, but its lines."""
    if not _SHOWN.get():
        yield from records
        return
    try:
        total: int | None = file_lines(path)
    except OSError:  # not a file one can read: the reader says why, in its own words, when it opens it
        total = None
    with tracked(f"read {Path(path).name} (lines)", total) as tracker:
        for count, record in enumerate(records):
            yield record
            if count % EVERY == 0:
                tracker.update(done=record.line)  # type: ignore[attr-defined]
        tracker.update(done=total)


def file_lines(path: Path | str) -> int:
    """The lines of a file (its newlines, and a last line without one), counted in blocks: the total of a bar
    over a file read record by record, each record knowing its line."""
    lines, last = 0, b"\n"
    with open(path, "rb") as handle:
        while block := handle.read(1 << 22):
            lines += block.count(b"\n")
            last = block[-1:]
    return lines + (last != b"\n")
