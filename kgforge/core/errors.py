"""Exceptions a user can act on. Each message names the file, line, URL or lock involved."""


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


class QueryWorkerDied(QueryError):
    """The process running a query ended before it answered (killed from outside, crashed)."""


class QueryOutOfMemory(QueryWorkerDied):
    """A query needed more memory than its worker's cap allows; the worker was stopped (a server answers 503)."""
