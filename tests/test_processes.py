"""The workers' frames: whatever a worker sends comes back equal, and a frame cut short (the other end
killed mid-write) reads as EOFError, never as a short message; the sandbox's filter program is
well-formed for each machine it knows."""

from __future__ import annotations

import io

from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.processes import HEADER, read_frame, write_frame
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
