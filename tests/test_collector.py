"""objects_kept_apart hands every object back to the collector, and leaves a program's own freeze alone."""

from __future__ import annotations

import gc

from kgforge.core.collector import objects_kept_apart


def test_settled_objects_are_frozen_inside_and_handed_back_after() -> None:
    assert gc.get_freeze_count() == 0
    with objects_kept_apart() as settle:
        kept = [[i] for i in range(1000)]
        settle()
        assert gc.get_freeze_count() >= len(kept)
    assert gc.get_freeze_count() == 0


def test_cyclic_garbage_made_inside_is_collected_after() -> None:
    class Node:
        pass

    with objects_kept_apart() as settle:
        a, b = Node(), Node()
        a.other, b.other = b, a
        settle()
        del a, b
    assert gc.collect() >= 2  # the cycle, frozen while alive, is found once handed back


def test_a_programs_own_freeze_is_left_as_it_is() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with objects_kept_apart() as settle:
            settle()
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
