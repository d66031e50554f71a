"""What a reader of dialogue, knowledge and review files accepts: one policy, read by every reader.

A hostile or careless input must not take the machine's memory: a 10 MB file holding one session of a million
utterances grew ``corpus candidates`` to 24 GB, because cutting a session into samples is quadratic (each
sample holds the history before it). So every reader caps what it holds at once:

* **one record** (a JSON line, a member of a JSON array or object, a line of a text or CSV file): at most
  ``max_record_bytes`` (64 MiB; ``--max-record-mib``). Lines are read with that bound, so a file without a
  newline is never read whole into one line;
* **one dialogue**: at most ``max_utterances`` utterances (10,000; ``--max-utterances``). The corpora's
  longest dialogues have a few dozen; at 10,000 short utterances DuConv's cut into samples holds 25
  million history entries, which still fits in well under a GiB;
* **a file read whole** (a JSON array or object, a CSV or Parquet table, a workbook): at most
  ``max_file_bytes`` (1 GiB; ``--max-file-mib``), checked before it is read.

What is over a limit is one line naming the file, the line and the limit. ``replace_invalid``
(``--replace-invalid``) is the text policy of :mod:`kgforge.core.text`: lone surrogates are replaced with
U+FFFD (and counted) instead of refused.

The policy of a call is set by the API (``with reading(policy):``) and read by the readers it reaches
(:func:`current`), however deep, as :mod:`decimal` contexts are: a context variable, so a thread or task
keeps its own.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, NamedTuple

from kgforge.core.errors import ArgumentError, InputError

MIB = 1 << 20
MAX_RECORD_MIB = 64
MAX_UTTERANCES = 10_000
MAX_FILE_MIB = 1024


@dataclass(frozen=True)
class ReadPolicy:
    """Limits on what one reader holds at once, and what it does with text no encoder can write."""

    max_record_bytes: int = MAX_RECORD_MIB * MIB
    max_utterances: int = MAX_UTTERANCES
    max_file_bytes: int = MAX_FILE_MIB * MIB
    replace_invalid: bool = False  # lone surrogates become U+FFFD (counted) instead of refusing the record

    def __post_init__(self) -> None:
        for name in ("max_record_bytes", "max_utterances", "max_file_bytes"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ArgumentError(name, f"must be a whole number of at least 1, not {value!r}")

    @classmethod
    def of(
        cls,
        *,
        max_record_mib: int = MAX_RECORD_MIB,
        max_utterances: int = MAX_UTTERANCES,
        max_file_mib: int = MAX_FILE_MIB,
        replace_invalid: bool = False,
    ) -> ReadPolicy:
        """The policy the command-line options give (sizes in MiB)."""
        return cls(max_record_mib * MIB, max_utterances, max_file_mib * MIB, replace_invalid)


DEFAULT_POLICY = ReadPolicy()
_CURRENT: ContextVar[ReadPolicy | None] = ContextVar("kgforge_read_policy", default=None)


def current() -> ReadPolicy:
    """The policy of the call being run (the defaults outside any :func:`reading` block)."""
    return _CURRENT.get() or DEFAULT_POLICY


@contextmanager
def reading(policy: ReadPolicy | None) -> Iterator[ReadPolicy]:
    """Read with ``policy`` while the block runs (``None``: the one in force)."""
    if policy is None:
        yield current()
        return
    token = _CURRENT.set(policy)
    try:
        yield policy
    finally:
        _CURRENT.reset(token)


def _mib(size: int) -> str:
    return f"{size / MIB:,.0f} MiB" if size % MIB == 0 else f"{size:,} bytes"


def record_too_large(size: int, what: str = "record", at_least: bool = False) -> str:
    """Why a record of ``size`` bytes (``at_least``: or more) is refused."""
    limit = current().max_record_bytes
    more = " or more" if at_least else ""
    return (
        f"a {what} of {size:,} bytes{more}, over the limit of {_mib(limit)} for one record (--max-record-mib raises it)"
    )


def utterances_problem(count: int) -> str | None:
    """Why a dialogue of ``count`` utterances is refused, or None."""
    limit = current().max_utterances
    if count <= limit:
        return None
    return f"{count:,} utterances in one dialogue, over the limit of {limit:,} (--max-utterances raises it)"


class Line(NamedTuple):
    """One line of a file: its 1-based number, its byte offset, its bytes (None when over the record limit)
    and its size in bytes."""

    number: int
    offset: int
    raw: bytes | None
    size: int


def lines(handle: BinaryIO) -> Iterator[Line]:
    """The lines of ``handle``, each read with the record limit as its bound: a longer line is passed over
    (read on in bounded pieces to its end) and given as ``raw=None``, so no line is ever held whole beyond it."""
    limit = current().max_record_bytes
    number = offset = 0
    while True:
        raw = handle.readline(limit + 1)
        if not raw:
            return
        number += 1
        size = len(raw)
        if size > limit and not raw.endswith(b"\n"):
            while not raw.endswith(b"\n"):
                raw = handle.readline(MIB)
                if not raw:
                    break
                size += len(raw)
            yield Line(number, offset, None, size)
        else:
            yield Line(number, offset, raw, size)
        offset += size


def read_whole(path: Path | str, what: str = "file") -> bytes:
    """The bytes of ``path``, a file that is read whole: an InputError naming it when it holds more than the
    policy's ``max_file_bytes`` (checked as it is read, so a file that grows, or a device, is never read on)."""
    path = Path(path)
    limit = current().max_file_bytes
    with open(path, "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(file_too_large(path, limit, what))
    return data


def read_whole_text(path: Path | str, what: str = "file") -> str:
    """The UTF-8 text of ``path``, read whole under the same limit as :func:`read_whole`; an InputError naming
    the file when it is missing, unreadable, not UTF-8 or over the limit."""
    try:
        return read_whole(path, what).decode("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the {what} ({exc.__class__.__name__}: {exc})") from None


def check_whole(path: Path | str, what: str = "file") -> Path:
    """``path``, when its size is within ``max_file_bytes`` (for a file a library reads whole: Parquet,
    a workbook); an InputError naming it otherwise."""
    path = Path(path)
    limit = current().max_file_bytes
    if path.stat().st_size > limit:
        raise InputError(file_too_large(path, limit, what))
    return path


def file_too_large(path: Path, limit: int, what: str) -> str:
    return f"{path}: a {what} over the limit of {_mib(limit)} for a file read whole (--max-file-mib raises it)"
