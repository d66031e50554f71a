"""Reading a Wikidata dump line by line: plain, .gz or .bz2, with a parallel decompressor when one is installed.

The ``latest-all.json`` framing is one entity per line between a ``[`` line and a ``]`` line,
each entity line ending in ``,`` except the last. Offsets are counted in the *decompressed*
stream, so a pass can restart at any line boundary it recorded: a plain file is seeked, a
compressed one is decompressed and skipped up to the offset (no parsing on the way).
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import shutil
import subprocess
import tempfile
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, TypeVar

from kgforge.core.errors import InputError
from kgforge.core.jsonio import loads
from kgforge.sources.wikidata.seek_index import IndexingStream, rapidgzip_module, read_indexed

# decompressors tried in order when ``decompressor="auto"``: parallel ones first; for bz2 the plain
# bzip2 command still helps (decompression moves to its own process); for gzip, Python's zlib is
# fast enough that an extra single-threaded process only adds copying
TOOLS = {
    "bz2": (("lbzip2", "-dc"), ("pbzip2", "-dc"), ("bzip2", "-dc")),
    "gz": (("pigz", "-dc"),),
}
PARALLEL_TOOLS = {"lbzip2", "pbzip2", "pigz"}
PYTHON_OPENERS: dict[str, Callable[..., Any]] = {"bz2": bz2.open, "gz": gzip.open}
_STREAM_ERRORS = (EOFError, OSError, zlib.error)  # what a cut or corrupt compressed stream raises
_PIECE_BYTES = 1 << 16  # most bytes one read gathers for a block
_FRAME_LINE_BYTES = 64  # a '[' or ']' framing line is shorter than this (spaces included)
_Item = TypeVar("_Item")
TURTLE_DIRECTIVES = (b"@prefix", b"@base", b"PREFIX", b"BASE")  # how a Turtle dump (latest-all.ttl) begins


def compression_of(path: Path) -> str:
    """``bz2``, ``gz`` or ``plain``, from the file's first bytes (not its name)."""
    with open(path, "rb") as handle:
        head = handle.read(3)
    if head == b"BZh":
        return "bz2"
    if head[:2] == b"\x1f\x8b":
        return "gz"
    return "plain"


def pick_tool(compression: str, decompressor: str = "auto") -> tuple[str, ...] | None:
    """The external command to decompress with, or None for Python's own module.

    ``decompressor`` is ``auto`` (a parallel tool on PATH if any, else the single-threaded
    command-line tool in its own process, else Python), ``python``, or a command name.
    """
    if compression == "plain" or decompressor == "python":
        return None
    if decompressor != "auto":
        if shutil.which(decompressor) is None:
            raise InputError(f"decompressor {decompressor!r} is not on PATH")
        return (decompressor, "-dc")
    for tool in TOOLS[compression]:
        if shutil.which(tool[0]):
            return tool
    return None


class DumpReader:
    """Iterate ``(line_number, byte_offset, raw_line)`` over a dump, from ``start_offset``.

    After iteration, ``truncated`` holds a message when the stream ended early (a compressed
    stream cut short or corrupt, or a file without its closing ``]``), else None.

    A compressed dump can be read with a seek index (:meth:`index_with`).
    """

    def __init__(
        self, path: Path | str, decompressor: str = "auto", start_offset: int = 0, start_line: int = 1
    ) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"{self.path}: no such file")
        self.compression = compression_of(self.path)
        self.tool = pick_tool(self.compression, decompressor)
        self.seek_index: Path | None = None
        self.index_written = False
        self.start_offset, self.start_line = start_offset, start_line
        self.offset, self.line = start_offset, start_line - 1
        self.truncated: str | None = None
        self.saw_open = self.saw_close = False
        self._tail = b""  # the last bytes read, where the closing ']' is looked for
        self._proc: subprocess.Popen | None = None
        self._stderr: IO[bytes] | None = None

    def index_with(self, seek_index: Path) -> bool:
        """Decompress through rapidgzip and, once the whole stream is read, write its seek index at
        ``seek_index`` (then ``index_written``); a read that starts past byte 0 seeks with that index when it
        exists. False (nothing changes) for a plain dump or without rapidgzip. See
        :mod:`~kgforge.sources.wikidata.seek_index`."""
        if self.compression == "plain" or rapidgzip_module() is None:
            return False
        self.seek_index, self.tool = seek_index, None
        return True

    def read_elsewhere(self, end_offset: int, end_line: int) -> None:
        """The dump from here to its end was read by others (tasks through the seek index that an earlier whole
        read wrote): the reader stands at its end, with nothing to report, as if it had read it."""
        self.offset, self.line, self.saw_open, self.saw_close = end_offset, end_line, True, True

    @property
    def decompressor_name(self) -> str:
        if self.seek_index:
            return "rapidgzip"
        return self.tool[0] if self.tool else ("python-" + self.compression if self.compression != "plain" else "none")

    def _open(self) -> io.BufferedIOBase:
        if self.seek_index:
            stream: Any = IndexingStream(
                self.path, self.compression, self.seek_index, self.start_offset, fallback=self._python_stream_at
            )
            return stream
        if self.tool:
            self._stderr = tempfile.TemporaryFile()
            self._proc = subprocess.Popen(
                [*self.tool, str(self.path)], stdout=subprocess.PIPE, stderr=self._stderr, bufsize=1 << 20
            )
            return self._proc.stdout  # type: ignore[return-value]
        if self.compression != "plain":
            return PYTHON_OPENERS[self.compression](self.path, "rb")
        handle = open(self.path, "rb", buffering=1 << 20)
        assert isinstance(handle, io.BufferedReader)  # "rb" with a buffer size opens one; the stub says BinaryIO
        handle.seek(self.start_offset)
        return handle

    def _skip(self, stream: io.BufferedIOBase) -> None:
        if self.compression != "plain" and self.start_offset and not self.seek_index:
            skip_to(stream, self.start_offset, self.path)

    def _python_stream_at(self, offset: int) -> io.BufferedIOBase:
        """The decompressed stream through Python's own module, read up to byte ``offset``."""
        stream = PYTHON_OPENERS[self.compression](self.path, "rb")
        skip_to(stream, offset, self.path)
        return stream

    def __iter__(self) -> Iterator[tuple[int, int, bytes]]:
        return self._guarded(self._lines)

    def blocks(
        self, size: int = 1 << 20, align: Callable[[bytes], int] | None = None
    ) -> Iterator[tuple[int, int, bytes]]:
        """``(first line number, byte offset, data)`` for runs of whole lines of about ``size`` bytes.

        Cheaper than line by line when the lines go on elsewhere in bulk (the parsing workers). A
        line longer than ``size`` comes whole; the dump's last line may lack its newline. If the
        stream breaks, the complete lines read before the break still come. ``align(block)``, when
        given, says where in a block of whole lines it may end (a line start; 0: nowhere yet, so
        the block grows), so that lines which belong together stay in one block.
        """
        return self._guarded(lambda stream: self._blocks(stream, size, align))

    def _guarded(self, produce: Callable[[io.BufferedIOBase], Iterator[_Item]]) -> Iterator[_Item]:
        """Run ``produce`` over the opened stream; a stream that breaks off sets ``truncated``."""
        stream = self._open()
        finished = False
        try:
            self._skip(stream)
            try:
                yield from produce(stream)
                finished = True
                if isinstance(stream, IndexingStream):
                    self.index_written = stream.export()
            except _STREAM_ERRORS as exc:
                self.truncated = (
                    f"{self.path}: the compressed stream ends early or is corrupt ({exc}) after "
                    f"byte {self.offset} of the decompressed dump (line {self.line}); "
                    "the entities before it were kept"
                )
        finally:
            stream.close()
            self._finish(finished)
        if self.truncated is None and self.offset == 0:
            self.truncated = f"{self.path}: the dump is empty (not one byte to read)"
        if self.truncated is None and self.saw_open and not self.saw_close:
            self.truncated = (
                f"{self.path}: the dump has no closing ']' line: it ends at byte {self.offset} "
                f"(line {self.line}) and is probably truncated; the entities before it were kept"
            )

    def _lines(self, stream: io.BufferedIOBase) -> Iterator[tuple[int, int, bytes]]:
        for raw in stream:
            self.line += 1
            offset = self.offset
            self.offset += len(raw)
            if len(raw) <= _FRAME_LINE_BYTES:
                self._note_frame(raw.strip())
            yield self.line, offset, raw

    def _blocks(
        self, stream: io.BufferedIOBase, size: int, align: Callable[[bytes], int] | None
    ) -> Iterator[tuple[int, int, bytes]]:
        pieces: list[bytes] = []
        held = 0
        try:
            while piece := stream.read1(min(_PIECE_BYTES, size)):  # one read at a time: data before a break is kept
                pieces.append(piece)
                held += len(piece)
                cut = piece.rfind(b"\n") + 1 if held >= size else 0
                if cut:  # whole lines up to the last newline of this piece; the rest starts the next block
                    pieces[-1] = piece[:cut]
                    block, rest = b"".join(pieces), piece[cut:]
                    end = align(block) if align else len(block)
                    if end == 0:  # no place to end yet (one group fills the block): read on
                        pieces = [block, rest]
                        continue
                    if end < len(block):
                        block, rest = block[:end], block[end:] + rest
                    yield self._block(block)
                    pieces, held = ([rest], len(rest)) if rest else ([], 0)
        except _STREAM_ERRORS:
            data = b"".join(pieces)
            cut = data.rfind(b"\n") + 1
            if cut:
                yield self._block(data[:cut])
            raise
        if held:
            yield self._block(b"".join(pieces))
        self._note_frame(self._tail.rstrip().rsplit(b"\n", 1)[-1].strip())

    def _block(self, data: bytes) -> tuple[int, int, bytes]:
        first_line, offset = self.line + 1, self.offset
        if offset == 0:
            self._note_frame(data[:_FRAME_LINE_BYTES].split(b"\n", 1)[0].strip())
        self.line += data.count(b"\n") + (not data.endswith(b"\n"))
        self.offset += len(data)
        self._tail = (self._tail + data[-_FRAME_LINE_BYTES:])[-_FRAME_LINE_BYTES:]
        return first_line, offset, data

    def _note_frame(self, stripped: bytes) -> None:
        if stripped == b"[":
            self.saw_open = True
        elif stripped == b"]":
            self.saw_close = True

    def _finish(self, finished: bool) -> None:
        if self._proc is None:
            return
        code = self._proc.wait()
        message = b""
        if self._stderr is not None:
            self._stderr.seek(0)
            message = self._stderr.read()[-500:]
            self._stderr.close()
        if code != 0 and finished and self.truncated is None:
            detail = message.decode("utf-8", "replace").strip() or f"exit status {code}"
            tool = self.tool[0] if self.tool else "the decompressor"  # a process runs only with a tool
            self.truncated = (
                f"{self.path}: {tool} failed ({detail}) after byte {self.offset} of the "
                f"decompressed dump (line {self.line}); the entities before it were kept"
            )
        self._proc = None


def skip_to(stream: io.BufferedIOBase, offset: int, path: Path) -> None:
    """Read a decompressed stream at its start up to byte ``offset`` (no seeking in a compressed one)."""
    left = offset
    while left:
        chunk = stream.read(min(left, 1 << 22))
        if not chunk:
            raise InputError(
                f"{path}: cannot resume at byte {offset}: the decompressed dump has only {offset - left} bytes"
            )
        left -= len(chunk)


def read_range(path: Path, start: int, end: int, seek_index: Path | None = None) -> bytes:
    """Bytes ``start`` to ``end`` of a dump, as a task of another process reads its shard: of the file itself
    (a plain dump), or of its decompressed stream through its ``seek_index``."""
    if seek_index is not None:
        data = read_indexed(path, seek_index, start, end)
    else:
        with open(path, "rb") as handle:
            handle.seek(start)
            data = handle.read(end - start)
    if len(data) != end - start:
        raise InputError(
            f"{path}: expected bytes {start} to {end} but the file ends at byte {start + len(data)}; "
            "was the dump changed during the import?"
        )
    return data


_SPACE = frozenset(b" \t\n\r\x0b\x0c")
_BRACKETS = frozenset(b"[]")
_COMMA = ord(",")


def line_spans(buffer: Any, start: int, stop: int) -> Iterator[tuple[int, int, int]]:
    """``(line index, line start, line end)`` for each line of ``buffer[start:stop]`` (end: before its newline)."""
    index = 0
    while start < stop:
        newline = buffer.find(b"\n", start, stop)
        end = stop if newline < 0 else newline
        yield index, start, end
        index, start = index + 1, end + 1


def entity_spans(buffer: Any, start: int, stop: int) -> Iterator[tuple[int, int, tuple[int, int] | None]]:
    """``(line index, line start, (JSON start, JSON end))`` for each line of ``buffer[start:stop]``.

    The JSON span is the line without surrounding whitespace and without the ``,`` that follows
    every entity but the last; it is None for framing lines (``[``, ``]``, blank). Found by index,
    so nothing is copied.
    """
    for index, first, last in line_spans(buffer, start, stop):
        line_start = first
        while first < last and buffer[first] in _SPACE:
            first += 1
        while last > first and buffer[last - 1] in _SPACE:
            last -= 1
        if first == last or (last - first == 1 and buffer[first] in _BRACKETS):
            yield index, line_start, None
        else:
            yield index, line_start, (first, last - (buffer[last - 1] == _COMMA))


def decode_entity(view: memoryview, first: int, last: int) -> Any:
    """``json.loads`` of ``view[first:last]``, decoded in place (one copy) as ``json.loads(bytes)`` decodes.

    Nesting is bounded only by what Python's parser follows (a :class:`~kgforge.core.jsonio.NestingError`
    beyond): counting every entity's brackets would slow the dump passes, and the entity handlers
    stop at a ``RecursionError`` themselves."""
    return loads(str(view[first:last], "utf-8", "surrogatepass").removeprefix("\ufeff"), max_depth=None)


MAX_DOCUMENT_BYTES = 512 << 20


def is_line_framed(path: Path) -> bool:
    """True for the dump framing (``[`` first, or one entity object per line as in ``--snippet``)."""
    for _, _, raw in DumpReader(path, decompressor="python"):
        text = raw.strip()
        if not text:
            continue
        if text == b"[":
            return True
        _, _, span = next(entity_spans(raw, 0, len(raw)))
        try:
            first = decode_entity(memoryview(raw), *span) if span else None
            return isinstance(first, dict) and "id" in first
        except ValueError:
            return False
    return True


def frame_document(path: Path, folder: Path) -> Path:
    """A single-entity file, an API response (``{"entities": {...}}``) or a JSON array of entities,
    rewritten in the dump framing under ``folder`` so the dump passes can read it."""
    size = path.stat().st_size
    if size > MAX_DOCUMENT_BYTES:
        raise InputError(
            f"{path}: not in the dump framing (one entity per line) and too large "
            f"({size:,} bytes) to read as one JSON document"
        )
    opener = PYTHON_OPENERS.get(compression_of(path), open)
    with opener(path, "rb") as handle:
        data = handle.read()
    try:
        document = loads(data)
    except ValueError as exc:
        raise InputError(f"{path}: neither a line-framed dump nor one JSON document: {exc}") from exc
    if isinstance(document, dict) and isinstance(document.get("entities"), dict):
        entities = list(document["entities"].values())
    elif isinstance(document, dict):
        entities = [document]
    elif isinstance(document, list):
        entities = document
    else:
        raise InputError(f'{path}: expected an entity, an array of entities or {{"entities": ...}}')
    folder.mkdir(parents=True, exist_ok=True)
    framed = folder / f"{path.name}.{hashlib.sha1(data).hexdigest()[:12]}.framed.json"
    if not framed.exists():
        tmp = framed.with_suffix(".part")
        with open(tmp, "w", encoding="utf-8") as out:
            out.write(
                "[\n" + ",\n".join(json.dumps(e, ensure_ascii=False, separators=(",", ":")) for e in entities) + "\n]\n"
            )
        tmp.replace(framed)
    return framed
