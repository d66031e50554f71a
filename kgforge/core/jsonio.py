"""Reading JSON inputs record by record, keeping the line of each record for error messages.

Damage costs only the records it touches. JSON Lines are read line by line, so a line that is not
UTF-8, not JSON or nested too deeply is one error record and the next line is read as usual. A JSON
array or object is decoded member by member; its bytes are decoded with each invalid byte kept as a
lone surrogate (``surrogateescape``), so a member holding one is an error record naming the byte, and
a file cut anywhere (inside a multi-byte character too) keeps every member before the cut.

Nesting is bounded: a record nested deeper than ``MAX_DEPTH`` levels is an error record, never a
``RecursionError`` (:func:`loads` is the one place JSON from an input is decoded).
"""

from __future__ import annotations

import bisect
import codecs
import json
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kgforge.core.errors import InputError

MAX_DEPTH = 100  # levels of nested arrays and objects in one record; the corpora's records need fewer than 10
_decoder = json.JSONDecoder()
_WS = " \t\r\n"
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # an invalid byte, as ``surrogateescape`` decodes it


class NestingError(ValueError):
    """A JSON value nested deeper than the reader follows."""


@dataclass(frozen=True)
class Record:
    """One top-level record: its 1-based line, its key (for objects) and value, or its error."""

    line: int
    key: str | None
    value: Any
    error: str | None = None
    raw: str | None = None


def loads(text: str | bytes, max_depth: int | None = MAX_DEPTH) -> Any:
    """``json.loads`` with nesting bounded: deeper than ``max_depth`` levels (None: only as deep as
    Python's parser can follow) raises :class:`NestingError`, a ``ValueError``, never ``RecursionError``."""
    try:
        value = json.loads(text)
    except RecursionError:
        raise NestingError(too_deep(max_depth)) from None
    check_depth(value, text, max_depth)
    return value


def too_deep(max_depth: int | None) -> str:
    if max_depth is None:
        return "nested too deeply (deeper than Python's JSON parser follows)"
    return f"nested more than {max_depth} levels deep"


def check_depth(value: Any, text: str | bytes, max_depth: int | None, start: int = 0, end: int | None = None) -> None:
    """Raise :class:`NestingError` when ``value`` (decoded from ``text[start:end]``) nests deeper than
    ``max_depth``. Values with fewer brackets than that cannot, so most are not walked at all."""
    if max_depth is None or not isinstance(value, (list, dict)):
        return
    opening = ("[", "{") if isinstance(text, str) else (b"[", b"{")
    end = len(text) if end is None else end
    if text.count(opening[0], start, end) + text.count(opening[1], start, end) <= max_depth:
        return
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if depth > max_depth:
            raise NestingError(too_deep(max_depth))
        children = item.values() if isinstance(item, dict) else item
        stack.extend((child, depth + 1) for child in children if isinstance(child, (list, dict)))


def dumps_bytes(value: Any, *, sort_keys: bool = False) -> bytes:
    """``value`` as compact UTF-8 JSON, by orjson (several times faster than ``json`` on a few hundred MB of
    dialogues) where it can. Input text may hold what orjson refuses, and it is data, written back as
    read: a lone surrogate (from a ``\\ud800`` escape in a dataset) as that escape, an integer beyond
    64 bits as it is; NUL and ESC are escaped by either encoder."""
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS if sort_keys else 0)
    except TypeError:
        compact = {"sort_keys": sort_keys, "separators": (",", ":")}
        try:
            return json.dumps(value, ensure_ascii=False, **compact).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON's own \\uXXXX escape keeps it exactly
            return json.dumps(value, ensure_ascii=True, **compact).encode("ascii")


def array_items(records: Iterable[Any]) -> bytes:
    """Records as the lines of a JSON array (:func:`json_array`), one record a line, by :func:`dumps_bytes`."""
    return b",\n".join(map(dumps_bytes, records))


def json_lines(records: Iterable[Any]) -> bytes:
    """Records as JSON lines, by :func:`dumps_bytes`."""
    return b"".join(dumps_bytes(record) + b"\n" for record in records)


def json_array(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """A JSON array of pieces of :func:`array_items` (empty ones left out), in order, as bytes to write one
    after another: a file of dialogues one a line, as diffable as an indented one, without the whole file
    ever held as one string."""
    yield b"[\n"
    for at, piece in enumerate(filter(None, pieces)):
        if at:
            yield b",\n"
        yield piece
    yield b"\n]\n"


def shown(text: str) -> str:
    """``text`` with invalid bytes (lone surrogates from ``surrogateescape``) written as ``\\xff``."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def _present(path: Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def iter_json_lines(path: Path) -> Iterator[Record]:
    """JSON Lines: one record per non-blank line; a line that is not UTF-8, not JSON or nested too deeply
    becomes an error record (the byte offset of a bad byte in its reason) and costs only itself."""
    path = _present(path)
    offset, seen = 0, False
    with open(path, "rb") as handle:
        for lineno, raw in enumerate(handle, start=1):
            start, offset = offset, offset + len(raw)
            if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, start = raw[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
            if not raw.strip():
                continue
            seen = True
            yield _json_line(raw, lineno, start)
    if not seen:
        raise InputError(f"{path}:1: file is empty")


def _json_line(raw: bytes, lineno: int, start: int) -> Record:
    """The record of one line (``raw``, at byte offset ``start``), or why it cannot be used."""
    try:
        line = raw.decode("utf-8").rstrip("\r\n")
    except UnicodeDecodeError as exc:
        text = shown(raw.decode("utf-8", "surrogateescape").rstrip("\r\n"))
        return Record(lineno, None, None, f"not UTF-8 at byte offset {start + exc.start}", text)
    try:
        return Record(lineno, None, loads(line))
    except json.JSONDecodeError as exc:
        return Record(lineno, None, None, f"malformed JSON: {exc.msg} at column {exc.colno}", line)
    except NestingError as exc:
        return Record(lineno, None, None, str(exc), line[:200])


class _Document:
    """A whole file's text, with invalid bytes kept as lone surrogates; positions map to lines and byte offsets."""

    def __init__(self, path: Path) -> None:
        data = _present(path).read_bytes()
        if not data.strip():
            raise InputError(f"{path}:1: file is empty")
        self.text = data.decode("utf-8-sig", "surrogateescape")
        self._bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        self._bad = [m.start() for m in _ESCAPED_BYTE.finditer(self.text)]
        self._mark = (0, self._bom)  # a (position, byte offset) pair already computed

    def line_of(self, pos: int) -> int:
        return bisect.bisect_right(self._newlines, pos - 1) + 1

    def byte_offset(self, pos: int) -> int:
        """The byte offset in the file of text position ``pos`` (counted on from the last one asked)."""
        mark, offset = self._mark if pos >= self._mark[0] else (0, self._bom)
        offset += len(self.text[mark:pos].encode("utf-8", "surrogateescape"))
        self._mark = (pos, offset)
        return offset

    def first_bad_byte(self, start: int, end: int) -> int | None:
        """The text position of the first invalid byte in ``text[start:end]``, or None."""
        index = bisect.bisect_left(self._bad, start)
        return self._bad[index] if index < len(self._bad) and self._bad[index] < end else None

    def excerpt(self, start: int, end: int) -> str:
        return shown(self.text[start : min(end, start + 200)])


def iter_json_container(path: Path, expect: type) -> Iterator[Record]:
    """Members of a top-level JSON object (``expect=dict``) or array (``expect=list``).

    Each member is decoded on its own, so its line is known. A member holding invalid UTF-8 or nested
    deeper than ``MAX_DEPTH`` is an error record and the next member is read. A syntax error stops the
    file there: the members before it are kept and the error is yielded as a final error record.
    """
    doc = _Document(path)
    text = doc.text
    opener, closer = ("{", "}") if expect is dict else ("[", "]")
    pos = _skip_ws(text, 0)
    if text[pos] != opener:
        kind = "object" if expect is dict else "array"
        raise InputError(f"{path}:{doc.line_of(pos)}: top-level JSON must be an {kind}, found {shown(text[pos])!r}")
    try:
        pos = _skip_ws(text, pos + 1)
    except ValueError as exc:
        raise InputError(f"{path}:{doc.line_of(pos)}: {exc}") from exc
    if text[pos : pos + 1] == closer:
        return
    while True:
        start = pos
        try:
            key = None
            if expect is dict:
                key, pos = _decoder.raw_decode(text, pos)
                if not isinstance(key, str):
                    raise ValueError("object key is not a string")
                pos = _skip_ws(text, pos)
                if text[pos : pos + 1] != ":":
                    raise ValueError("expected ':' after key")
                pos = _skip_ws(text, pos + 1)
            value_start = pos
            try:
                value, pos = _decoder.raw_decode(text, pos)
            except RecursionError:  # too deep for Python's parser: skip the member if its end can be found
                end = value_end(text, value_start)
                if end is None:
                    raise NestingError(too_deep(MAX_DEPTH)) from None
                yield Record(doc.line_of(start), None, None, too_deep(MAX_DEPTH), doc.excerpt(start, end))
                pos = end
            else:
                yield _member(doc, start, value_start, pos, key, value)
            pos = _skip_ws(text, pos)
            sep = text[pos : pos + 1]
            if sep == ",":
                pos = _skip_ws(text, pos + 1)
                continue
            if sep == closer:
                return
            raise ValueError(f"expected ',' or {closer!r}")
        except (ValueError, json.JSONDecodeError) as exc:
            where = getattr(exc, "pos", pos)
            message = getattr(exc, "msg", str(exc))
            reason = f"{message}" if isinstance(exc, NestingError) else f"malformed JSON: {message}"
            yield Record(
                doc.line_of(start),
                None,
                None,
                f"{reason} (byte offset {doc.byte_offset(where)}); the rest of the file was not read",
                doc.excerpt(start, start + 200),
            )
            return


def _member(doc: _Document, start: int, value_start: int, end: int, key: str | None, value: Any) -> Record:
    """The record of the member ``text[start:end]``: its value, or why it cannot be used."""
    line = doc.line_of(start)
    bad = doc.first_bad_byte(start, end)
    if bad is not None:
        return Record(line, None, None, f"not UTF-8 at byte offset {doc.byte_offset(bad)}", doc.excerpt(start, end))
    try:
        check_depth(value, doc.text, MAX_DEPTH, value_start, end)
    except NestingError as exc:
        return Record(line, None, None, str(exc), doc.excerpt(start, end))
    return Record(line, key, value)


_BRACKET_OR_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]', re.DOTALL)


def value_end(text: str, start: int) -> int | None:
    """The position just after the array or object that opens at ``text[start]``, found by counting its
    brackets outside strings (no recursion, so any depth); None when it is not closed (a cut file)."""
    depth = 0
    for token in _BRACKET_OR_STRING.finditer(text, start):
        mark = token.group()
        if mark in ("[", "{"):
            depth += 1
        elif mark in ("]", "}"):
            depth -= 1
            if depth == 0:
                return token.end()
    return None


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in _WS:
        pos += 1
    if pos >= len(text):
        raise ValueError("unexpected end of file")
    return pos
