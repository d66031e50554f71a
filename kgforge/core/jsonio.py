"""Reading JSON inputs record by record, keeping the line of each record for error messages.

Damage costs only the records it touches. JSON Lines are read line by line, so a line that is not
UTF-8, not JSON or nested too deeply is one error record and the next line is read as usual. A JSON
array or object is decoded member by member; its bytes are decoded with each invalid byte kept as a
lone surrogate (``surrogateescape``), so a member holding one is an error record naming the byte, and
a file cut anywhere (inside a multi-byte character too) keeps every member before the cut.

Nesting is bounded: a record nested deeper than ``MAX_DEPTH`` levels is an error record, never a
``RecursionError`` (:func:`loads` is the one place JSON from an input is decoded). So is size
(:mod:`kgforge.core.limits`): a line is read with the record limit as its bound and a longer one is an error
record, as is a member of an array or object over it; a JSON array or object is read whole only within the
file limit. A JSON document ends at its closing bracket: text after it is an error record.

Text is checked here for every reader (:mod:`kgforge.core.text`'s policy): a record holding a lone surrogate
(a ``\\ud800`` escape) is an error record naming where it stands, or, with ``replace_invalid``, has it replaced
with U+FFFD, the count said in one warning per file.
"""

from __future__ import annotations

import bisect
import codecs
import json
import re
import warnings
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from kgforge.core import limits
from kgforge.core.errors import InputError
from kgforge.core.text import lone_surrogate, replace_lone_surrogates

JsonObject = dict[str, Any]
"""A JSON object as it is written or sent: a dataset's record, a document (Croissant, a card header, a model
file, a request body); not a result a caller reads fields of (that is a typed record, kgforge.core.records).
A public function returning one says so with this alias (tests/test_architecture.py reads the annotation)."""

MAX_DEPTH = 100  # levels of nested arrays and objects in one record; the corpora's records need fewer than 10
_decoder = json.JSONDecoder()
_WS = " \t\r\n"
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")  # an invalid byte, as ``surrogateescape`` decodes it
# the JSON escape of a surrogate: only a record whose text holds one can decode to a lone surrogate
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_ESCAPE_BYTES = re.compile(rb"\\u[dD][89a-fA-F]")
_NOT_WS = re.compile(r"[^ \t\r\n]")


class NestingError(ValueError):
    """A JSON value nested deeper than the reader follows."""


class LoneSurrogateError(ValueError):
    """Text holding a lone surrogate, refused by the text policy (see :class:`TextPolicy`)."""


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
    end = len(text) if end is None else end
    if isinstance(text, str):
        opening = text.count("[", start, end) + text.count("{", start, end)
    else:
        opening = text.count(b"[", start, end) + text.count(b"{", start, end)
    if opening <= max_depth:
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
        compact = (",", ":")
        try:
            return json.dumps(value, ensure_ascii=False, sort_keys=sort_keys, separators=compact).encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: JSON's own \\uXXXX escape keeps it exactly
            return json.dumps(value, ensure_ascii=True, sort_keys=sort_keys, separators=compact).encode("ascii")


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
    """JSON Lines: one record per non-blank line; a line that is not UTF-8, not JSON, nested too deeply, over
    the record limit or holding a lone surrogate becomes an error record (the byte offset of a bad byte in
    its reason) and costs only itself."""
    path = _present(path)
    text, seen = TextPolicy(path), False
    with open(path, "rb") as handle:
        for line in limits.lines(handle):
            raw, start = line.raw, line.offset
            if raw is None:
                seen = True
                yield Record(line.number, None, None, limits.record_too_large(line.size, "line"))
                continue
            if line.number == 1 and raw.startswith(codecs.BOM_UTF8):
                raw, start = raw[len(codecs.BOM_UTF8) :], start + len(codecs.BOM_UTF8)
            if not raw.strip():
                continue
            seen = True
            record = _json_line(raw, line.number, start)
            if _SURROGATE_ESCAPE_BYTES.search(raw):
                record = text.checked(record, raw[:200].decode("utf-8", "backslashreplace"))
            yield record
    if not seen:
        raise InputError(f"{path}:1: file is empty")
    text.finish()


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


class TextPolicy:
    """The text policy (:mod:`kgforge.core.text`) over one file's records: a record holding a lone surrogate
    is refused, or (``replace_invalid``) has it replaced, counted for one warning at the file's end."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.replace = limits.current().replace_invalid
        self.count = 0
        self.first_line = 0

    def value(self, value: Any, line: int) -> Any:
        """``value`` (read on ``line``) with its lone surrogates replaced; a :class:`LoneSurrogateError`
        naming the first one when they are refused."""
        if self.replace:
            value, count = replace_lone_surrogates(value)
            if count:
                self.count += count
                self.first_line = self.first_line or line
            return value
        where = lone_surrogate(value)
        if where is not None:
            raise LoneSurrogateError(
                f"lone surrogate {where}: text no UTF-8 writer can encode (--replace-invalid replaces it with U+FFFD)"
            )
        return value

    def checked(self, record: Record, excerpt: str) -> Record:
        """``record`` under the policy: its key and value cleaned, or an error record saying why not."""
        if record.error:
            return record
        try:
            return Record(record.line, self.value(record.key, record.line), self.value(record.value, record.line))
        except LoneSurrogateError as exc:
            return Record(record.line, None, None, str(exc), excerpt)

    def finish(self) -> None:
        """Say how many surrogates were replaced (a warning, the command line's one ``warning:`` line), placed
        at the input's first one and given every time: each reading of a file replaces its own."""
        if self.count:
            warnings.warn_explicit(
                f"{self.path}: {self.count:,} lone surrogate{'s' if self.count > 1 else ''} replaced with U+FFFD "
                f"(--replace-invalid), the first on line {self.first_line}",
                RuntimeWarning,
                str(self.path),
                self.first_line,
                module=__name__,
                registry=None,
            )


class _Document:
    """A whole file's text, with invalid bytes kept as lone surrogates; positions map to lines and byte offsets."""

    def __init__(self, path: Path) -> None:
        data = limits.read_whole(_present(path), "JSON document")
        if not data.strip():
            raise InputError(f"{path}:1: file is empty")
        self.text = data.decode("utf-8-sig", "surrogateescape")
        self._bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
        self._newlines = [m.start() for m in re.finditer("\n", self.text)]
        self._bad = [m.start() for m in _ESCAPED_BYTE.finditer(self.text)]
        self._escapes = [m.start() for m in _SURROGATE_ESCAPE.finditer(self.text)]
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
        return _first_in(self._bad, start, end)

    def escapes_surrogate(self, start: int, end: int) -> bool:
        """Whether ``text[start:end]`` holds a surrogate's JSON escape (so its value may hold a lone one)."""
        return _first_in(self._escapes, start, end) is not None

    def size(self, start: int, end: int) -> int:
        """Bytes of ``text[start:end]`` in the file (exact where they could be over the record limit)."""
        if (end - start) * 4 <= limits.current().max_record_bytes or end - start > limits.current().max_record_bytes:
            return end - start
        return self.byte_offset(end) - self.byte_offset(start)

    def excerpt(self, start: int, end: int) -> str:
        return shown(self.text[start : min(end, start + 200)])

    def error(self, start: int, reason: str) -> Record:
        """The error record of what stands from ``start``: its line, ``reason`` and the text there."""
        return Record(self.line_of(start), None, None, reason, self.excerpt(start, start + 200))


def _first_in(positions: list[int], start: int, end: int) -> int | None:
    """The first of the sorted ``positions`` in ``[start, end)``, or None."""
    index = bisect.bisect_left(positions, start)
    return positions[index] if index < len(positions) and positions[index] < end else None


def iter_json_container(path: Path, expect: type) -> Iterator[Record]:
    """Members of a top-level JSON object (``expect=dict``) or array (``expect=list``).

    Each member is decoded on its own, so its line is known. A member holding invalid UTF-8, nested
    deeper than ``MAX_DEPTH``, over the record limit or holding a lone surrogate is an error record and the
    next member is read. A syntax error stops the file there: the members before it are kept and the error
    is yielded as a final error record; so is text after the closing bracket.
    """
    doc = _Document(path)
    text = TextPolicy(Path(path))
    yield from _members(doc, expect, text)
    text.finish()


def _members(doc: _Document, expect: type, policy: TextPolicy) -> Iterator[Record]:
    text = doc.text
    opener, closer = ("{", "}") if expect is dict else ("[", "]")
    pos = _skip_ws(text, 0)
    if text[pos] != opener:
        kind = "object" if expect is dict else "array"
        raise InputError(
            f"{policy.path}:{doc.line_of(pos)}: top-level JSON must be an {kind}, found {shown(text[pos])!r}"
        )
    try:
        pos = _skip_ws(text, pos + 1)
    except ValueError as exc:
        raise InputError(f"{policy.path}:{doc.line_of(pos)}: {exc}") from exc
    if text[pos : pos + 1] == closer:
        yield from _after_close(doc, pos + 1, closer)
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
                yield _member(doc, policy, start, value_start, pos, key, value)
            pos = _skip_ws(text, pos)
            sep = text[pos : pos + 1]
            if sep == ",":
                pos = _skip_ws(text, pos + 1)
                continue
            if sep == closer:
                yield from _after_close(doc, pos + 1, closer)
                return
            raise ValueError(f"expected ',' or {closer!r}")
        except (ValueError, json.JSONDecodeError) as exc:
            where = getattr(exc, "pos", pos)
            message = getattr(exc, "msg", str(exc))
            reason = f"{message}" if isinstance(exc, NestingError) else f"malformed JSON: {message}"
            yield doc.error(
                start, f"{reason} (byte offset {doc.byte_offset(where)}); the rest of the file was not read"
            )
            return


def _after_close(doc: _Document, pos: int, closer: str) -> Iterator[Record]:
    """An error record for any text after the document's closing bracket (a JSON file holds one value: what
    follows is a second file pasted on, or damage), else nothing."""
    found = _NOT_WS.search(doc.text, pos)
    if found is not None:
        at = found.start()
        yield doc.error(at, f"malformed JSON: text after the closing {closer!r} (byte offset {doc.byte_offset(at)})")


def _member(
    doc: _Document, policy: TextPolicy, start: int, value_start: int, end: int, key: str | None, value: Any
) -> Record:
    """The record of the member ``text[start:end]``: its value, or why it cannot be used."""
    line = doc.line_of(start)
    bad = doc.first_bad_byte(start, end)
    if bad is not None:
        return Record(line, None, None, f"not UTF-8 at byte offset {doc.byte_offset(bad)}", doc.excerpt(start, end))
    size = doc.size(start, end)
    if size > limits.current().max_record_bytes:
        return Record(line, None, None, limits.record_too_large(size, at_least=True), doc.excerpt(start, end))
    try:
        check_depth(value, doc.text, MAX_DEPTH, value_start, end)
    except NestingError as exc:
        return Record(line, None, None, str(exc), doc.excerpt(start, end))
    record = Record(line, key, value)
    return policy.checked(record, doc.excerpt(start, end)) if doc.escapes_surrogate(start, end) else record


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
