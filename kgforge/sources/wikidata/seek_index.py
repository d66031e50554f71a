"""Seek indexes of compressed dumps: read a .gz or .bz2 dump once, then start anywhere in it.

A gzip stream can only be decompressed from its start, and a bz2 one from a block boundary that
nothing records, so a task that should parse bytes 4e9 to 4.016e9 of a decompressed dump would
have to decompress the four gigabytes before them. `rapidgzip <https://github.com/mxmlnkn/rapidgzip>`_
(gzip and bz2) records, while it decompresses, checkpoints every few megabytes — the compressed
bit offset and, for gzip, the 32 KiB window the next bytes refer back to — and exports them as an
index (the compact ``gztool`` format, about 1 % of a gzip dump). With the index, a reader in another
process or on another machine seeks to any decompressed offset by decompressing only from the
checkpoint before it.

rapidgzip is optional (the ``ray`` extra); without it, :func:`rapidgzip_module` is None and the dump
passes decompress as before.
"""

from __future__ import annotations

import atexit
import io
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

INDEX_FORMAT = "GZTOOL"  # windows stored compressed: ~1 % of a gzip dump, against ~20 % for indexed_gzip's format
_RAPIDGZIP_ERRORS = (RuntimeError, ValueError, OSError, EOFError)  # what rapidgzip raises on a cut or corrupt stream


def rapidgzip_module() -> Any | None:
    """The ``rapidgzip`` module, or None when it is not installed."""
    try:
        import rapidgzip  # lazy: optional dependency (the ray extra)
    except ImportError:
        return None
    return rapidgzip


def _rapidgzip() -> Any:
    """The ``rapidgzip`` module, where a caller has checked :func:`rapidgzip_module` first."""
    module = rapidgzip_module()
    if module is None:
        raise ModuleNotFoundError("rapidgzip is not installed (the ray extra)")
    return module


def threads_for(compression: str) -> int:
    """Decompression threads: bz2 blocks decode independently, one per core (84 against 75 MB/s on 2 cores
    here); gzip's speculative parallel decoding took 2.7 times the CPU of one thread on 2 cores and finished
    later, so gzip gets one thread."""
    return (os.cpu_count() or 1) if compression == "bz2" else 1


class IndexingStream:
    """A dump's decompressed bytes through rapidgzip, which keeps a seek index as it goes.

    If rapidgzip stops (it reports a cut or corrupt stream as a ``RuntimeError`` or ``ValueError`` and may
    stop earlier in it than Python's own decompressors), the stream goes on through ``fallback(offset)``
    — Python's gzip or bz2 module, read up to that decompressed offset — so the bytes read are exactly
    what the plain reader gives, and no index is exported, since it would not cover the stream.
    """

    def __init__(
        self, path: Path, compression: str, index: Path, start_offset: int, fallback: Callable[[int], io.BufferedIOBase]
    ) -> None:
        self.path, self.compression, self.index = path, compression, index
        self.position = start_offset
        self._open_fallback = fallback
        self._fallback: io.BufferedIOBase | None = None
        self._rapid: Any = None
        self.seeks = start_offset > 0 and index.is_file()
        try:
            self._rapid = _rapidgzip().open(str(path), parallelization=threads_for(compression))
            if self.seeks:
                self._rapid.import_index(str(index))
                self._rapid.seek(start_offset)
        except _RAPIDGZIP_ERRORS:
            self.seeks = False
            self._go_on_in_python()
            return
        if start_offset and not self.seeks:
            self._go_on_in_python()  # no index to seek with: Python's decompressor skips

    def read1(self, size: int = -1) -> bytes:
        if self._fallback is None:
            try:
                data = self._rapid.read(size)
            except _RAPIDGZIP_ERRORS:
                self._go_on_in_python()
                return self.read1(size)
        else:
            data = self._fallback.read1(size)
        self.position += len(data)
        return data

    read = read1

    def __iter__(self) -> Any:
        raise TypeError("read an IndexingStream by blocks (read1), not by lines")

    def _go_on_in_python(self) -> None:
        self._close_rapid()
        self._fallback = self._open_fallback(self.position)

    def export(self) -> bool:
        """Write the seek index (atomically) if the whole stream went through rapidgzip; True if written."""
        if self._rapid is None or self.seeks:
            return False
        self.index.parent.mkdir(parents=True, exist_ok=True)
        partial = self.index.with_name(self.index.name + ".part")
        with open(partial, "wb") as out:
            self._rapid.export_index(out, getattr(_rapidgzip().IndexFormat, INDEX_FORMAT))
        partial.replace(self.index)
        return True

    def _close_rapid(self) -> None:
        if self._rapid is not None:
            self._rapid.close()  # rapidgzip aborts the interpreter at exit if a reader was left open
            self._rapid = None

    def close(self) -> None:
        self._close_rapid()
        if self._fallback is not None:
            self._fallback.close()


_OPEN: dict[tuple[str, str], Any] = {}  # this process's seekable readers, kept between the tasks it runs


def read_indexed(path: Path, index: Path, start: int, end: int) -> bytes:
    """Bytes ``start`` to ``end`` of a compressed dump's decompressed stream, through its seek index.

    A Ray worker runs many shards of the same dump: its reader (and the imported index) is kept open
    between them."""
    key = (str(path), str(index))
    reader = _OPEN.get(key)
    if reader is None:
        close_readers()
        reader = _rapidgzip().open(str(path), parallelization=1)
        reader.import_index(str(index))
        _OPEN[key] = reader
    reader.seek(start)
    return reader.read(end - start)


@atexit.register
def close_readers() -> None:
    while _OPEN:
        _OPEN.popitem()[1].close()
