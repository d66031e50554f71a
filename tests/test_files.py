"""core.files: the one atomic write every published file goes through."""

from __future__ import annotations

import os

import pytest

from kgforge.core.files import (
    atomic_path,
    atomic_write,
    part_owner,
    part_path,
    write_json_atomic,
)

DEAD_PID = 999_999_999  # above any pid_max: no such process


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "out.jsonl"
    target.write_text("old\n", encoding="utf-8")
    with pytest.raises(RuntimeError), atomic_write(target) as out:
        out.write("half of the new")
        raise RuntimeError("killed halfway")
    assert target.read_text(encoding="utf-8") == "old\n" and sorted(tmp_path.iterdir()) == [target]


def test_writers_that_take_a_path_get_the_same_policy(tmp_path):
    target = tmp_path / "deep" / "out.bin"
    with atomic_path(target) as part:
        assert part_owner(part) == os.getpid() and not target.exists()
        part.write_bytes(b"\x00\x01")
    assert target.read_bytes() == b"\x00\x01" and sorted(target.parent.iterdir()) == [target]


def test_the_next_writer_removes_what_a_killed_one_left_and_nothing_else(tmp_path):
    target = tmp_path / "goals.jsonl"
    dead = target.with_name(f"{target.name}.part{DEAD_PID}.1")
    live = target.with_name(f"{target.name}.part{os.getppid()}.1")  # our parent runs: not ours to remove
    other = tmp_path / f"other.jsonl.part{DEAD_PID}.1"  # another file's: left to its own next writer
    for path in (dead, live, other):
        path.write_text("half", encoding="utf-8")
    write_json_atomic(target, {"a": 1})
    assert not dead.exists() and live.exists() and other.exists()
    assert target.read_text(encoding="utf-8") == '{\n  "a": 1\n}'


def test_temporary_names_carry_the_writer(tmp_path):
    part = part_path(tmp_path / "x.nq")
    assert part.name.startswith("x.nq.part") and part_owner(part) == os.getpid()
    assert part_owner(tmp_path / "x.nq") is None
