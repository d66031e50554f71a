"""The workers' frames: whatever a worker sends comes back equal, and a frame cut short (the other end
killed mid-write) reads as EOFError, never as a short message; the sandbox's filter program is
well-formed for each machine it knows; work shared over forked processes comes back in order, its errors as
themselves, a killed process as one error."""

from __future__ import annotations

import io
import os
import signal
import subprocess
import sys
import threading
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.processes import HEADER, forked_map, module_env, read_frame, write_frame
from kgforge.core.sandbox import network_filter

MESSAGES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text() | st.binary(),
    lambda inner: st.lists(inner, max_size=4).map(tuple) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)


@given(st.lists(MESSAGES, max_size=5))
def test_frames_round_trip_in_order(messages):
    stream = io.BytesIO()
    for message in messages:
        write_frame(stream, message)
    stream.seek(0)
    assert [read_frame(stream) for _ in messages] == messages
    assert stream.read() == b""


@given(MESSAGES, st.data())
def test_a_frame_cut_short_is_end_of_file(message, data):
    stream = io.BytesIO()
    write_frame(stream, message)
    whole = stream.getvalue()
    cut = data.draw(st.integers(0, len(whole) - 1))
    try:
        read_frame(io.BytesIO(whole[:cut]))
    except EOFError:
        pass
    else:
        raise AssertionError(f"a frame cut at {cut} of {len(whole)} bytes was read")
    assert HEADER.unpack(whole[: HEADER.size])[0] == len(whole) - HEADER.size


def test_each_filter_jumps_inside_itself_and_ends_in_a_return():
    for machine in ("x86_64", "aarch64"):
        program = network_filter(machine)
        for at, (code, jt, jf, _) in enumerate(program):
            if code in (0x15, 0x35):  # conditional jumps land on an instruction of the program
                assert at + 1 + max(jt, jf) < len(program)
        assert program[-1][0] == 0x06  # the last instruction returns


# ---------------------------------------------------------------- forked_map


def _pid_after(seconds: float) -> int:
    time.sleep(seconds)
    return os.getpid()


def test_forked_map_keeps_the_order_and_reads_what_it_was_never_sent():
    """The work and its items reach the processes by the fork (a lock cannot be pickled), the results come back
    in the items' order, and two processes share the items."""
    held = threading.Lock()
    results = forked_map(lambda n: (n * n, held.locked(), _pid_after(0.2)), list(range(6)), 2, "squares")
    assert [square for square, _, _ in results] == [n * n for n in range(6)]
    assert not any(locked for _, locked, _ in results)
    assert len({pid for _, _, pid in results}) == 2 and os.getpid() not in {pid for _, _, pid in results}


def test_one_process_works_here():
    assert forked_map(lambda n: (n, os.getpid()), [1, 2], 1, "here") == [(1, os.getpid()), (2, os.getpid())]


def test_an_error_in_the_work_comes_back_as_itself():
    def work(n: int) -> int:
        if n == 3:
            raise InputError(f"item {n} is bad")
        return n

    with pytest.raises(InputError, match="item 3 is bad"):
        forked_map(work, list(range(5)), 2, "checking")


def test_a_worker_killed_is_one_error_naming_the_job():
    def work(n: int) -> int:
        if n == 2:
            os.kill(os.getpid(), signal.SIGKILL)
        return n

    with pytest.raises(KgforgeError, match="grounding the test corpus: a worker process died"):
        forked_map(work, list(range(4)), 2, "grounding the test corpus")


def test_forked_map_runs_from_a_script_read_from_stdin():
    """``python -`` has no file to import again: forked processes never import anything, so it just works."""
    script = (
        "from kgforge.core.processes import forked_map\n"
        "big = {n: str(n) for n in range(100_000)}\n"
        "print(forked_map(lambda n: big[n * 1000], list(range(5)), 2, 'stdin'))\n"
    )
    done = subprocess.run(
        [sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120, env=module_env()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['0', '1000', '2000', '3000', '4000']" and done.stderr == ""
