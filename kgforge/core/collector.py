"""Python's cyclic garbage collector kept off the objects a long run builds up and keeps.

Left alone, the collector goes through every object the program holds each time their number grows by a
quarter: a grounding run keeps tens of millions (its caches and its output), and on 8,000 KdConv dialogues
those passes took 15 of 42 s. Inside :func:`objects_kept_apart` each call of the function it gives moves what
is alive so far out of the collector's reach (``gc.freeze``, which costs nothing); objects made afterwards are
still collected when they die young, and all of them are handed back (``gc.unfreeze``) when the block ends.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def objects_kept_apart() -> Iterator[Callable[[], None]]:
    """A function to call between the units of a long run (a dialogue); see the module docstring. A program
    that froze objects itself keeps its own arrangement: the function then does nothing."""
    if gc.get_freeze_count():
        yield lambda: None
        return
    try:
        yield gc.freeze
    finally:
        gc.unfreeze()
