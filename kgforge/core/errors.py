"""Exceptions a user can act on. Each message names the file, line, URL or lock involved."""

import errno
import re


class KgforgeError(Exception):
    """Base class: the CLI prints these as one clean line and exits non-zero."""


class SchemaError(KgforgeError):
    """A domain schema file is missing or invalid."""


class InputError(KgforgeError):
    """An input file cannot be read at all (empty, wrong top-level type, not found)."""


class StoreLockedError(KgforgeError):
    """Another kgforge process holds the domain's write lock."""


class StoreMissingError(KgforgeError):
    """No store has been built for the domain yet."""


class StoreDamagedError(KgforgeError):
    """The published store cannot be opened: its files are damaged (or gone); the message says how to rebuild it."""


class BuildError(KgforgeError):
    """A build failed its checks; the previous store is left in place."""


class QueryError(KgforgeError):
    """A SPARQL query failed, or ran past its timeout."""


class QueryTimeout(QueryError):
    """A SPARQL query ran past its deadline and was stopped."""


class ArgumentError(KgforgeError):
    """A value given to a command or a library function is malformed or out of range.

    ``what`` names the argument (``--dim``, ``EmbedConfig.dim``); ``problem`` says what is wrong with
    the value on its own, so the command line can print it after click's "Invalid value for '--dim':".
    """

    def __init__(self, what: str, problem: str) -> None:
        super().__init__(f"{what}: {problem}")
        self.what, self.problem = what, problem


class OutputRefused(ArgumentError):
    """A path a user asked a command to write is a device, a link, the wrong kind, or inside kgforge's own
    layout (``kgforge.core.output``): a bad argument, refused before anything is written (exit 2)."""


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, caught by a long job that kept something: the message says what and how to go on
    (``interrupted: checkpoint kept at …; rerun with --resume``). Still a KeyboardInterrupt, so code
    that lets Ctrl-C through lets this through too."""


class QueryWorkerDied(QueryError):
    """The process running a query ended before it answered (killed from outside, crashed)."""


class QueryOutOfMemory(QueryWorkerDied):
    """A query needed more memory than its worker's cap allows; the worker was stopped (a server answers 503)."""


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)
# how Rust's io::Error, RocksDB and SQLite (the crawl frontier) say it, in their messages only
_DISK_FULL_WORDS = ("No space left on device", "os error 28", "Disk quota exceeded", "database or disk is full")
_PART_SUFFIX = re.compile(r"\.part\d*(\.\d+)?$")


def describe_os_error(exc: BaseException, rerun: str = "rerun the same command") -> str:
    """One line for an OSError that reached the user: what failed on which file, and for a full disk
    what was kept (every write goes to a temporary file renamed into place, so the published files are
    the previous ones) and what to do."""
    # a write goes to NAME.part<pid>.<thread> first: name the file the user knows
    names = (getattr(exc, "filename", None), getattr(exc, "filename2", None))
    where = " -> ".join(_PART_SUFFIX.sub("", str(name)) for name in names if name is not None)
    what = getattr(exc, "strerror", None) or str(exc) or type(exc).__name__
    if is_disk_full(exc):
        return (
            f"no space left on device{f' writing {where}' if where else ''}: the published files are the "
            f"previous ones and the unfinished ones were removed; free some space and {rerun}"
        )
    return f"{where}: {what}" if where else what


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc``, or an exception it was raised from or while handling, says the disk (or the
    user's quota) is full. Rust libraries (polars, Oxigraph's RocksDB) raise it as an OSError without an
    errno, saying so only in their message; torch raises a RuntimeError while handling the OSError, SQLite
    an OperationalError."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in _DISK_FULL:
            return True
        text = str(current)
        if any(words in text for words in _DISK_FULL_WORDS):
            return True
        current = current.__cause__ or current.__context__
    return False
