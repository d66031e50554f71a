"""Property-based: the block reader and the in-place line spans agree with the line-by-line reader, and a
compressed dump's seek index gives back any range of its decompressed stream."""

from __future__ import annotations

import bz2
import gzip
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.sources.wikidata.framing import DumpReader, entity_spans, read_range

# lines as a dump might hold them: framing, blank, padded, with and without the trailing comma, long ones
line = st.one_of(
    st.sampled_from([b"[", b"]", b"", b"  ", b" [ ", b"],", b"\r", b",", b'{"id":"Q1"},', b'{"id":"Q2"}']),
    st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")),
    st.integers(1, 300).map(lambda n: b'{"a":"' + b"x" * n + b'"},'),
)
dumps = st.tuples(st.lists(line, max_size=40), st.booleans()).map(
    lambda t: b"\n".join(t[0]) + (b"\n" if t[1] and t[0] else b"")
)
# plain dumps: a file that begins with a gzip or bzip2 magic number is read as compressed (and, being no real
# stream, reported as corrupt), which the compressed-stream tests cover
plain_dumps = dumps.filter(lambda data: not data.startswith((b"\x1f\x8b", b"BZh")))
SETTINGS = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])


@SETTINGS
@given(plain_dumps, st.integers(1, 200))
def test_blocks_are_whole_lines_numbered_like_the_line_reader(tmp_path: Path, data: bytes, size: int) -> None:
    path = tmp_path / "dump.json"
    path.write_bytes(data)
    lines = list(DumpReader(path))
    blocks = list(DumpReader(path).blocks(size))
    assert b"".join(block for _, _, block in blocks) == data
    assert all(block.endswith(b"\n") for _, _, block in blocks[:-1])
    starts = {offset: number for number, offset, _ in lines}
    for number, offset, _ in blocks:
        assert starts[offset] == number  # each block starts at a line, under that line's number and offset


def entity_json(line: bytes) -> bytes | None:
    """The framing rule, written plainly: the line stripped, without a trailing comma; None for framing lines."""
    text = line.strip()
    if not text or text in (b"[", b"]"):
        return None
    return text[:-1] if text.endswith(b",") else text


@SETTINGS
@given(dumps)
def test_spans_find_what_entity_json_cuts_out(data: bytes) -> None:
    base = 7  # the batch lies inside a larger buffer, as in a ring slot
    buffer = b"p" * base + data + b"q" * 5
    pieces = data.split(b"\n") if data else []
    if data.endswith(b"\n"):
        pieces.pop()
    spans = list(entity_spans(buffer, base, base + len(data)))
    assert [index for index, _, _ in spans] == list(range(len(pieces)))
    for (_, start, span), piece in zip(spans, pieces):
        assert buffer[start : start + len(piece)] == piece
        assert (buffer[span[0] : span[1]] if span else None) == entity_json(piece)


def test_a_framed_dump_read_in_blocks_notices_its_missing_close(tmp_path: Path) -> None:
    whole = b'[\n{"id":"Q1"},\n{"id":"Q2"}\n]\n'
    cut = whole[: whole.index(b"]")]
    for name, data in (("whole.json", whole), ("cut.json", cut)):
        (tmp_path / name).write_bytes(data)
    complete, truncated = DumpReader(tmp_path / "whole.json"), DumpReader(tmp_path / "cut.json")
    list(complete.blocks(4)), list(truncated.blocks(4))
    assert complete.truncated is None
    assert truncated.truncated is not None and "no closing ']'" in truncated.truncated


def test_a_broken_compressed_stream_still_gives_its_complete_lines_in_blocks(tmp_path: Path) -> None:
    lines = [b'{"id":"Q%d","pad":"%s"},' % (i, b"y" * (i % 50)) for i in range(1, 20001)]
    data = b"[\n" + b"\n".join(lines) + b"\n]\n"
    for suffix, compress in ((".bz2", lambda b: bz2.compress(b, 1)), (".gz", gzip.compress)):  # bz2: 100 kB blocks
        path = tmp_path / f"dump.json{suffix}"
        packed = compress(data)
        path.write_bytes(packed[: len(packed) // 2])
        reader = DumpReader(path, decompressor="python")
        got = b"".join(block for _, _, block in reader.blocks(1 << 20))
        assert reader.truncated is not None and "ends early or is corrupt" in reader.truncated
        assert got and got.endswith(b"\n") and data.startswith(got)  # whole lines only
        assert reader.offset == len(got)
        by_line = b"".join(raw for _, _, raw in DumpReader(path, decompressor="python") if raw.endswith(b"\n"))
        assert got == by_line  # no complete line the line reader keeps is lost before the break


def text_lines(count: int, seed: int = 7) -> bytes:
    """Lines of varied, not too repetitive text: several rapidgzip checkpoints' worth of decompressed bytes."""
    import random

    rng = random.Random(seed)
    words = [bytes(rng.choices(b"abcdefghijklmnopqrstuvwxyz", k=rng.randint(2, 9))) for _ in range(5000)]
    return b"".join(b'{"id":"Q%d","w":"%s"},\n' % (i, b" ".join(rng.choices(words, k=12))) for i in range(count))


@pytest.fixture(scope="module", params=[".gz", ".bz2"])
def indexed_dump(request, tmp_path_factory) -> tuple[Path, Path, bytes]:
    """A compressed dump of ~12 MB decompressed, read whole once through rapidgzip: (dump, seek index, data)."""
    folder = tmp_path_factory.mktemp("indexed")
    data = b"[\n" + text_lines(120_000) + b"]\n"
    dump = folder / f"dump.json{request.param}"
    dump.write_bytes(gzip.compress(data, 6) if request.param == ".gz" else bz2.compress(data, 9))
    reader = DumpReader(dump)
    assert reader.index_with(folder / "seek.idx")
    assert b"".join(block for _, _, block in reader.blocks(1 << 20)) == data
    assert reader.truncated is None and reader.index_written and reader.decompressor_name == "rapidgzip"
    return dump, folder / "seek.idx", data


@pytest.mark.slow  # hypothesis ranges over compressed dumps
@settings(max_examples=40, deadline=None)
@given(start=st.floats(0, 1), length=st.integers(0, 3 << 20))
def test_a_range_read_through_the_seek_index_is_that_range_of_the_stream(indexed_dump, start, length) -> None:
    dump, index, data = indexed_dump
    first = int(start * len(data))
    end = min(len(data), first + length)
    assert read_range(dump, first, end, index) == data[first:end]


def test_a_read_from_an_offset_seeks_with_the_index_and_writes_none(indexed_dump) -> None:
    dump, index, data = indexed_dump
    offset = data.index(b"\n", len(data) // 2) + 1
    before = index.stat().st_mtime_ns
    reader = DumpReader(dump, start_offset=offset, start_line=data.count(b"\n", 0, offset) + 1)
    reader.index_with(index)
    blocks = list(reader.blocks(1 << 20))
    assert b"".join(block for _, _, block in blocks) == data[offset:]
    assert blocks[0][0] == data.count(b"\n", 0, offset) + 1
    assert not reader.index_written and index.stat().st_mtime_ns == before


@pytest.mark.slow  # compressed streams cut at many points
@pytest.mark.parametrize("suffix", [".gz", ".bz2"])
def test_a_cut_stream_read_through_rapidgzip_gives_what_pythons_module_gives(tmp_path: Path, suffix: str) -> None:
    data = b"[\n" + text_lines(60_000) + b"]\n"
    packed = gzip.compress(data) if suffix == ".gz" else bz2.compress(data, 1)
    path = tmp_path / f"cut.json{suffix}"
    path.write_bytes(packed[: len(packed) * 2 // 3])
    python = DumpReader(path, decompressor="python")
    expected = b"".join(block for _, _, block in python.blocks(1 << 20))
    indexed = DumpReader(path)
    assert indexed.index_with(tmp_path / "seek.idx")
    got = b"".join(block for _, _, block in indexed.blocks(1 << 20))
    assert got == expected and len(got) > len(data) // 3
    assert indexed.truncated == python.truncated and "ends early or is corrupt" in indexed.truncated
    assert not indexed.index_written and not (tmp_path / "seek.idx").exists()
