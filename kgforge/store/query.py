"""SPARQL over a domain's store: values bound as substitutions, every query under a deadline, no
outbound request unless asked for.

Queries run in a worker process (``python -m kgforge.store.worker``, never a copy of the caller's
``__main__``) that holds its own read-only handle. pyoxigraph has no query timeout, so a query that runs
past its deadline is stopped by ending that process, and the caller gets a QueryTimeout, never a short
result. Oxigraph answers a ``SERVICE <http://…>`` clause by sending the query to that endpoint, and
pyoxigraph offers no switch to stop it, so the worker cannot open a network socket at all
(:mod:`kgforge.core.sandbox`) unless the query is run with ``allow_service``. Before that, a query with a
SERVICE clause is refused with a message that says how to allow it; that check parses the query
(rdflib's SPARQL parser) and can be fooled by a disguised clause, which then fails in the worker.
"""

from __future__ import annotations

import functools
import os
import re
import select
import signal
import subprocess
import tempfile
import time
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.core import checks
from kgforge.core.errors import ArgumentError, QueryError, QueryOutOfMemory, QueryTimeout, QueryWorkerDied
from kgforge.core.processes import module_command, module_env, read_frame, write_frame
from kgforge.core.registry import UnknownName
from kgforge.core.resources import query_path, shipped_queries
from kgforge.store.snapshot import Snapshot
from kgforge.store.sparql_text import PREFIXES as PREFIXES  # re-exported
from kgforge.store.sparql_text import code_of, explain_error
from kgforge.store.worker import EncodedTerm, Frame, decode, encode

DEFAULT_TIMEOUT = 60.0
Term = ox.NamedNode | ox.Literal | ox.BlankNode


@dataclass(frozen=True)
class QueryResult:
    """A finished query: SELECT gives ``variables`` and ``rows``; ASK a ``boolean``; CONSTRUCT ``triples``."""

    kind: str
    variables: list[str]
    rows: list[dict[str, Term]]
    boolean: bool | None = None
    triples: list[ox.Triple] | None = None
    truncated: bool = False  # a limit held back rows
    more_rows: int | None = None  # how many, when the worker could count them (worker.COUNT_REST_SECONDS)


class QueryRunner:
    """Runs queries against one domain's store in a worker process, each under a deadline.

    The worker is ``python -m kgforge.store.worker``: kgforge's own module, so the caller's ``__main__``
    (a script without a guard, ``python -``, a notebook) is never imported again. It cannot open a
    network connection unless the query is run with ``allow_service`` (then a second worker, started
    with its network, runs it). ``memory_limit`` (bytes) caps each worker's data; a query that needs
    more ends with :class:`QueryOutOfMemory`."""

    def __init__(self, snapshot: Snapshot, *, memory_limit: int | None = None) -> None:
        self.snapshot = snapshot  # the build every query of this runner reads
        self.store_dir = str(snapshot.store_dir)
        snapshot.store()  # a damaged store: one line here (StoreDamagedError), not a worker's traceback
        self.memory_limit = memory_limit if memory_limit is not None else memory_limit_from_environment()
        self._workers: dict[bool, _Worker] = {}

    @property
    def isolation(self) -> str | None:
        """How the network is closed to queries: "seccomp", "namespace", or None (no worker yet, or
        neither could be installed on this system)."""
        worker = self._workers.get(False)
        return worker.isolation if worker else None

    def query(
        self,
        sparql: str,
        bindings: Mapping[str, Term] | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        allow_service: bool = False,
        *,
        limit: int = 0,
        waiting: Callable[[float], None] | None = None,
    ) -> QueryResult:
        """Run ``sparql`` with ``bindings`` substituted, stopped after ``timeout`` seconds. A query with a
        SERVICE clause (which makes this machine call the endpoint it names) needs ``allow_service``;
        without it the worker has no network, whatever the query says.
        ``limit`` (0: all) keeps the first rows of a SELECT only, the rest counted, not kept;
        ``waiting(elapsed_seconds)`` is called a few times a second while the query runs."""
        checks.number(timeout, "timeout", above=True)
        checks.whole(limit, "limit", minimum=0)
        if not allow_service and uses_service(sparql):
            raise QueryError(
                "the query has a SERVICE clause, which would send requests to the endpoint it "
                "names: refused (pass --allow-service, or allow_service=True, to let it through)"
            )
        encoded = {name.lstrip("?$"): encode(term) for name, term in (bindings or {}).items()}
        status, payload = self._ask(("query", sparql, encoded, limit), timeout, waiting, network=allow_service)
        if status == "syntax":
            raise QueryError(explain_error(payload, sparql))
        if status == "error":
            raise QueryError(payload)
        return _to_result(payload)

    def labels(self, iris: list[str], language: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, str]:
        """A label for each of ``iris`` that has one (``language`` first, then untagged), in one round trip."""
        status, payload = self._ask(("labels", list(iris), language), timeout, None, network=False)
        if status != "ok":
            raise QueryError(payload)
        found: dict[str, str] = payload  # the worker's labels(): IRI -> label
        return found

    def _ask(
        self, message: Frame, timeout: float, waiting: Callable[[float], None] | None, *, network: bool
    ) -> tuple[str, Any]:
        started = time.monotonic()
        worker = self._workers.get(network)
        if worker is None or not worker.alive():
            worker = self._workers[network] = _Worker(
                self.store_dir, network, self.memory_limit, started + timeout, timeout
            )
        try:
            status, payload = worker.ask(message, started + timeout, timeout, waiting)
        except (QueryTimeout, QueryWorkerDied):
            self._workers.pop(network, None)
            raise
        if status == "memory":
            raise QueryOutOfMemory(f"{payload} ({_megabytes(self.memory_limit)}): stopped")
        return status, payload

    def close(self) -> None:
        for worker in self._workers.values():
            worker.close()
        self._workers.clear()

    def __enter__(self) -> QueryRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


MEMORY_VARIABLE = "KGFORGE_QUERY_MEMORY_MB"


def memory_limit_from_environment() -> int | None:
    """The query worker's memory cap in bytes from ``$KGFORGE_QUERY_MEMORY_MB`` (unset or 0: no cap)."""
    text = os.environ.get(MEMORY_VARIABLE, "").strip()
    if not text:
        return None
    try:
        megabytes = int(text)
    except ValueError:
        raise ArgumentError(f"${MEMORY_VARIABLE}", f"expected a whole number of MiB, got {text!r}") from None
    checks.whole(megabytes, f"${MEMORY_VARIABLE}", 0)
    return megabytes * 2**20 or None


def _megabytes(limit: int | None) -> str:
    return f"cap {limit / 2**20:g} MiB" if limit else "no cap set"


class _Worker:
    """One ``kgforge.store.worker`` process and its pipes; a deadline applies to its start as well."""

    def __init__(
        self, store_dir: str, network: bool, memory_limit: int | None, deadline: float, timeout: float
    ) -> None:
        flags = (["--network"] if network else []) + (["--memory", str(memory_limit)] if memory_limit else [])
        self.memory_limit = memory_limit
        self.stderr = tempfile.TemporaryFile()  # what a dying worker says, for the message (never the terminal)
        self.process = subprocess.Popen(
            module_command("kgforge.store.worker", str(os.getpid()), store_dir, *flags),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self.stderr,
            env=module_env(),
            close_fds=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None  # both PIPE
        self._requests, self._replies = self.process.stdin, self.process.stdout
        status, payload = self._reply(deadline, timeout, None, "starting")
        if status != "ready":
            self.kill()
            raise QueryError(payload)
        self.isolation: str | None = payload
        if not network and payload is None:
            warnings.warn(
                "this system allows neither a seccomp filter nor a network namespace: queries run "
                "with network access, and only the query-text check refuses SERVICE clauses",
                RuntimeWarning,
                stacklevel=5,
            )

    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(
        self, message: Frame, deadline: float, timeout: float, waiting: Callable[[float], None] | None
    ) -> tuple[str, Any]:
        try:
            write_frame(self._requests, message)
        except (BrokenPipeError, OSError):
            pass  # the worker is gone: reading its reply says how
        return self._reply(deadline, timeout, waiting, "running the query")

    def _reply(
        self, deadline: float, timeout: float, waiting: Callable[[float], None] | None, doing: str
    ) -> tuple[str, Any]:
        poller = select.poll()
        poller.register(self._replies, select.POLLIN)
        started = time.monotonic()
        while not poller.poll(max(min(0.25, deadline - time.monotonic()), 0) * 1000):
            if time.monotonic() >= deadline:
                self.kill()
                raise QueryTimeout(f"query ran past its {timeout:g} s timeout and was stopped")
            if waiting is not None:
                waiting(time.monotonic() - started)
        try:
            reply: tuple[str, Any] = read_frame(self._replies)  # (status, payload)
            return reply
        except EOFError:
            raise self._death(doing) from None

    def _death(self, doing: str) -> QueryWorkerDied:
        try:
            code = self.process.wait(timeout=5)  # its reply pipe closed: it has ended, or is ending
        except subprocess.TimeoutExpired:
            self.process.kill()
            code = self.process.wait()
        said = self._last_words()
        self.kill()
        if self.memory_limit and code in (-signal.SIGABRT, -signal.SIGSEGV, -signal.SIGKILL):
            return QueryOutOfMemory(
                f"the query worker ran out of memory while {doing} (cap "
                f"{self.memory_limit / 2**20:g} MiB) and was stopped"
            )
        how = f"killed by signal {-code}" if code < 0 else f"exit status {code}"
        return QueryWorkerDied(f"the query worker died while {doing} ({how}{': ' + said if said else ''})")

    def _last_words(self) -> str:
        self.stderr.seek(0, os.SEEK_END)
        self.stderr.seek(max(0, self.stderr.tell() - 4096))
        lines = self.stderr.read().decode("utf-8", "replace").strip().splitlines()
        return lines[-1].strip() if lines else ""

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        for pipe in (self._requests, self._replies, self.stderr):
            try:
                pipe.close()
            except OSError:
                pass

    def close(self) -> None:
        if self.alive():
            try:
                write_frame(self._requests, None)
                self.process.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
        self.kill()


def _to_result(payload: Frame) -> QueryResult:
    if payload[0] == "select":
        _, variables, rows, truncated, more = payload
        return QueryResult(
            "select",
            variables,
            [{k: decode(v) for k, v in row.items()} for row in rows],
            truncated=truncated,
            more_rows=more,
        )
    if payload[0] == "ask":
        return QueryResult("ask", [], [], boolean=payload[1])
    triples = [_triple(triple) for triple in payload[1]]
    return QueryResult("construct", [], [], triples=triples)


def _triple(encoded: tuple[EncodedTerm, ...]) -> ox.Triple:
    s, p, o = (decode(t) for t in encoded)
    assert not isinstance(s, ox.Literal) and isinstance(p, ox.NamedNode)  # as the worker encoded a triple
    return ox.Triple(s, p, o)


def parse_binding(spec: str) -> tuple[str, Term | str]:
    """``VAR=VALUE`` from the command line.

    ``VAR=<http://…>`` binds an IRI; ``VAR@zh=故宫`` a language-tagged literal; ``VAR="故宫"`` a plain
    string literal, exactly as typed; ``VAR=故宫`` a plain value, returned as ``str`` for
    :func:`kgforge.store.labels.resolve_bindings` to read by where ``VAR`` stands in the query (an
    entity's label, or a literal). The value is never pasted into the query text.
    """
    name, sep, value = spec.partition("=")
    if not sep or not name:
        raise QueryError(f"--bind expects VAR=VALUE, got {spec!r}")
    name, _, lang = name.lstrip("?$").partition("@")
    if lang:
        try:
            checks.language_tag(lang, f"--bind {name}")
        except ArgumentError as exc:
            raise QueryError(str(exc)) from None
        return name, ox.Literal(value, language=lang)
    if value.startswith("<") and value.endswith(">") and len(value) > 2:
        try:
            return name, ox.NamedNode(value[1:-1])
        except ValueError as exc:
            raise QueryError(f"--bind {name}: invalid IRI {value}: {exc}") from exc
    if len(value) >= 2 and value[0] == value[-1] == '"':
        return name, ox.Literal(value[1:-1])
    return name, value


MAX_QUERY_FILE_BYTES = 1 << 20  # a query longer than this is not one a person wrote; the store would parse it


def read_query_file(path: Path) -> str:
    """The text of a query file: UTF-8 text, or a QueryError naming the file and the byte at fault."""
    try:
        with open(path, "rb") as handle:  # read at most one byte past the cap: /dev/zero is a "file" too
            data = handle.read(MAX_QUERY_FILE_BYTES + 1)
    except OSError as exc:
        raise QueryError(f"cannot read query file {path}: {exc}") from exc
    if len(data) > MAX_QUERY_FILE_BYTES:
        raise QueryError(f"{path}: larger than {MAX_QUERY_FILE_BYTES >> 20} MiB; a query file holds SPARQL text")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise QueryError(
            f"{path}: not a UTF-8 text file (byte {exc.start} is {data[exc.start : exc.start + 1]!r}); "
            "a query file holds SPARQL text"
        ) from None
    if "\x00" in text:
        raise QueryError(f"{path}: NUL byte at offset {data.index(0)}: a binary file, not SPARQL text")
    return text


_QUERY_NAME = re.compile(r"[\w.-]+")


def load_query(query: str = "", file: Path | str | None = None) -> str:
    """The SPARQL text to run: ``query`` is SPARQL text or a shipped query's name (``goal_two_step``);
    ``file`` a path, or (when no such file exists) ``queries/<name>.rq`` naming a shipped query."""
    if query and file:
        raise QueryError("give a query (a name or SPARQL text) or --file PATH, not both")
    if file:
        path = Path(file)
        if not path.exists() and path.suffix in ("", ".rq") and path.stem in shipped_queries():
            path = query_path(path.stem)
        return read_query_file(path)
    query = query.strip()
    if not query:
        raise QueryError(
            f"give a query: the name of a shipped query ({', '.join(shipped_queries().names())}; "
            "`kgforge queries` says what each returns), SPARQL text, or --file PATH"
        )
    if _QUERY_NAME.fullmatch(query):
        try:
            return read_query_file(query_path(query))
        except UnknownName as exc:
            raise QueryError(f"{exc} (`kgforge queries` says what each returns; SPARQL text works too)") from None
    return query


_SERVICE_WORD = re.compile(r"(?<![\w:?$])service(?![\w:])", re.IGNORECASE)


@functools.lru_cache(maxsize=256)
def uses_service(sparql: str) -> bool:
    """Whether ``sparql`` has a SERVICE clause anywhere (nested groups, subqueries, EXISTS included).

    rdflib's SPARQL 1.1 parser decides. A query it cannot parse (SPARQL 1.2 syntax that Oxigraph
    accepts) is judged by its tokens instead: with comments, strings and IRIs taken out as SPARQL's
    lexer takes them, SERVICE standing as a word of its own (not ``?service``, not ``ex:SERVICE``)
    counts as one."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        return _has_service_pattern(parseQuery(sparql))
    except (ParseBaseException, RecursionError, ValueError):  # ValueError: an escape rdflib cannot expand (\U00110000)
        return _SERVICE_WORD.search(code_of(sparql)) is not None


def _has_service_pattern(node: Any) -> bool:
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(node, CompValue) and node.name == "ServiceGraphPattern":
        return True
    if isinstance(node, dict):
        return any(_has_service_pattern(value) for value in node.values())
    if isinstance(node, (list, tuple)) or hasattr(node, "asList"):
        return any(_has_service_pattern(item) for item in node)
    return False


def term_text(term: Term | None) -> str:
    """A term as a person reads it: an IRI as is, a literal by its value."""
    return "" if term is None else term.value
