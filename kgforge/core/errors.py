"""Exceptions a user can act on. Each message names the file, line, URL or lock involved."""

import errno


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


class Interrupted(KeyboardInterrupt):
    """Ctrl-C, caught by a long job that kept something: the message says what and how to go on
    (``interrupted: checkpoint kept at …; rerun with --resume``). Still a KeyboardInterrupt, so code
    that lets Ctrl-C through lets this through too."""


_DISK_FULL = (errno.ENOSPC, errno.EDQUOT)


def describe_os_error(exc: OSError) -> str:
    """One line for an OSError that reached the user: what failed on which file, and for a full disk
    what was kept (every write goes to a temporary file renamed into place, so the published files are
    the previous ones) and what to do."""
    where = " -> ".join(str(name) for name in (exc.filename, exc.filename2) if name is not None)
    what = exc.strerror or str(exc) or type(exc).__name__
    if exc.errno in _DISK_FULL:
        return (f"{what} writing {where or 'a file'}: the previously published files are unchanged and the "
                "unfinished ones were removed; free some space and rerun the same command")
    return f"{where}: {what}" if where else what
