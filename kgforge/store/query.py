"""SPARQL over a domain's store: values bound as substitutions, every query under a deadline, no
outbound request unless asked for.

Queries run in a worker process that holds its own read-only handle. pyoxigraph has no query
timeout, so a query that runs past its deadline is stopped by ending that process, and the caller
gets a QueryTimeout, never a short result. Oxigraph answers a ``SERVICE <http://…>`` clause by
sending the query to that endpoint, and pyoxigraph 0.5 offers no switch or handler to stop it, so a
query with a SERVICE clause is refused before it runs unless ``allow_service`` is given; the
clause is found by parsing the query (rdflib's SPARQL parser), not by searching its text.
"""

from __future__ import annotations

import functools
import multiprocessing as mp
import os
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.core import checks
from kgforge.core.errors import ArgumentError, QueryError, QueryTimeout
from kgforge.core.lifeline import die_with
from kgforge.core.registry import UnknownName
from kgforge.core.resources import query_path, shipped_queries
from kgforge.core.vocab import RDFS_LABEL
from kgforge.store.layout import DomainPaths
from kgforge.store.oxigraph import read_only_store
from kgforge.store.sparql_text import PREFIXES, code_of, explain_error

DEFAULT_TIMEOUT = 60.0
Term = ox.NamedNode | ox.Literal | ox.BlankNode
COUNT_REST_SECONDS = 2.0  # how long the worker keeps counting the rows past a limit before it says "more than"


@dataclass(frozen=True)
class QueryResult:
    """A finished query: SELECT gives ``variables`` and ``rows``; ASK a ``boolean``; CONSTRUCT ``triples``."""

    kind: str
    variables: list[str]
    rows: list[dict[str, Term]]
    boolean: bool | None = None
    triples: list[ox.Triple] | None = None
    truncated: bool = False  # a limit held back rows
    more_rows: int | None = None  # how many, when the worker could count them within COUNT_REST_SECONDS


def _encode(term: Term) -> tuple:
    if isinstance(term, ox.NamedNode):
        return ("iri", term.value)
    if isinstance(term, ox.BlankNode):
        return ("bnode", term.value)
    return ("lit", term.value, term.language, term.datatype.value)


def _decode(encoded: tuple) -> Term:
    if encoded[0] == "iri":
        return ox.NamedNode(encoded[1])
    if encoded[0] == "bnode":
        return ox.BlankNode(encoded[1])
    _, value, lang, datatype = encoded
    return ox.Literal(value, language=lang) if lang else ox.Literal(value, datatype=ox.NamedNode(datatype))


def _run(store: ox.Store, sparql: str, bindings: dict[str, tuple], limit: int) -> tuple:
    substitutions = {ox.Variable(name): _decode(term) for name, term in bindings.items()}
    result = store.query(sparql, use_default_graph_as_union=True, substitutions=substitutions,
                         prefixes=PREFIXES)
    if isinstance(result, ox.QuerySolutions):
        variables = [v.value for v in result.variables]
        rows = []
        for row in result:
            if limit and len(rows) == limit:
                return ("select", variables, rows, *_count_rest(result))
            rows.append({v: _encode(row[v]) for v in variables if row[v] is not None})
        return ("select", variables, rows, False, None)
    if isinstance(result, ox.QueryBoolean):
        return ("ask", bool(result))
    return ("construct", [tuple(_encode(t) for t in (tr.subject, tr.predicate, tr.object)) for tr in result])


def _count_rest(solutions: ox.QuerySolutions) -> tuple[bool, int | None]:
    """Past a limit, one row is already taken: count the rest without keeping them, for a short while."""
    counted, stop = 1, time.monotonic() + COUNT_REST_SECONDS
    for counted, _ in enumerate(solutions, 2):
        if counted % 1024 == 0 and time.monotonic() > stop:
            return True, None
    return True, counted


def _labels(store: ox.Store, iris: list[str], language: str) -> dict[str, str]:
    """One label per IRI: in ``language``, else untagged, else the first in code order; index lookups only."""
    label = ox.NamedNode(RDFS_LABEL)
    found = {}
    for iri in iris:
        candidates = [q.object for q in store.quads_for_pattern(ox.NamedNode(iri), label, None)
                      if isinstance(q.object, ox.Literal)]
        if candidates:
            found[iri] = min(candidates, key=lambda lit: (_language_rank(lit.language, language), lit.value)).value
    return found


def _language_rank(tag: str | None, language: str) -> int:
    if tag and language and (tag == language or tag.startswith(language + "-")):
        return 0
    return 1 if not tag else 2


def _worker(store_dir: str, conn: Any, parent: int) -> None:
    die_with(parent)  # a query still running when its caller is killed must not hold the store open
    store = ox.Store.read_only(store_dir)
    while True:
        try:
            message = conn.recv()
        except EOFError:  # the caller is gone
            return
        if message is None:
            return
        kind, *args = message
        try:
            conn.send(("ok", _labels(store, *args) if kind == "labels" else _run(store, *args)))
        except SyntaxError as exc:
            conn.send(("syntax", str(exc)))
        except (OSError, ValueError, TypeError, RuntimeError) as exc:
            conn.send(("error", _explain(exc)))


def _explain(exc: Exception) -> str:
    message = f"{type(exc).__name__}: {exc}"
    if "SELECT projection" in str(exc):
        message += (" (a variable given with --bind must also appear in the SELECT clause: "
                    "bindings are SPARQL substitutions, SEP-0007, not text pasted into the query)")
    return message


class QueryRunner:
    """Runs queries against one domain's store in a worker process, each under a deadline."""

    def __init__(self, paths: DomainPaths) -> None:
        self.store_dir = str(paths.oxigraph_dir().resolve())
        read_only_store(self.store_dir, paths)  # a damaged store: one line here, not a worker's traceback
        self._process: mp.Process | None = None
        self._conn: Any = None

    def _start(self) -> None:
        context = mp.get_context("spawn")
        parent, child = context.Pipe()
        self._process = context.Process(target=_worker, args=(self.store_dir, child, os.getpid()), daemon=True)
        self._process.start()
        child.close()
        self._conn = parent

    def query(self, sparql: str, bindings: Mapping[str, Term] | None = None,
              timeout: float = DEFAULT_TIMEOUT, allow_service: bool = False, *, limit: int = 0,
              waiting: Callable[[float], None] | None = None) -> QueryResult:
        """Run ``sparql`` with ``bindings`` substituted, stopped after ``timeout`` seconds. A query with a
        SERVICE clause (which makes this machine call the endpoint it names) needs ``allow_service``.
        ``limit`` (0: all) keeps the first rows of a SELECT only, the rest counted, not kept;
        ``waiting(elapsed_seconds)`` is called a few times a second while the query runs."""
        checks.number(timeout, "timeout", above=True)
        checks.whole(limit, "limit", minimum=0)
        if not allow_service and uses_service(sparql):
            raise QueryError("the query has a SERVICE clause, which would send requests to the endpoint it "
                             "names: refused (pass --allow-service, or allow_service=True, to let it through)")
        encoded = {name.lstrip("?$"): _encode(term) for name, term in (bindings or {}).items()}
        status, payload = self._ask(("query", sparql, encoded, limit), timeout, waiting)
        if status == "syntax":
            raise QueryError(explain_error(payload, sparql))
        if status == "error":
            raise QueryError(payload)
        return _to_result(payload)

    def labels(self, iris: list[str], language: str, timeout: float = DEFAULT_TIMEOUT) -> dict[str, str]:
        """A label for each of ``iris`` that has one (``language`` first, then untagged), in one round trip."""
        status, payload = self._ask(("labels", list(iris), language), timeout, None)
        if status != "ok":
            raise QueryError(payload)
        return payload

    def _ask(self, message: tuple, timeout: float, waiting: Callable[[float], None] | None) -> tuple[str, Any]:
        if self._process is None or not self._process.is_alive():
            self._start()
        self._conn.send(message)
        started = time.monotonic()
        while not self._conn.poll(min(0.25, max(started + timeout - time.monotonic(), 0))):
            elapsed = time.monotonic() - started
            if elapsed >= timeout:
                self._kill()
                raise QueryTimeout(f"query ran past its {timeout:g} s timeout and was stopped")
            if waiting is not None:
                waiting(elapsed)
        try:
            return self._conn.recv()
        except EOFError:
            self._kill()
            raise QueryError("the query worker died while running the query") from None

    def _kill(self) -> None:
        if self._process is not None:
            self._process.kill()
            self._process.join()
        self._process = None

    def close(self) -> None:
        if self._process is not None and self._process.is_alive():
            self._conn.send(None)
            self._process.join(timeout=5)
            self._kill()

    def __enter__(self) -> "QueryRunner":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _to_result(payload: tuple) -> QueryResult:
    if payload[0] == "select":
        _, variables, rows, truncated, more = payload
        return QueryResult("select", variables, [{k: _decode(v) for k, v in row.items()} for row in rows],
                           truncated=truncated, more_rows=more)
    if payload[0] == "ask":
        return QueryResult("ask", [], [], boolean=payload[1])
    triples = [ox.Triple(*(_decode(t) for t in triple)) for triple in payload[1]]
    return QueryResult("construct", [], [], triples=triples)


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
        raise QueryError(f"{path}: not a UTF-8 text file (byte {exc.start} is {data[exc.start:exc.start + 1]!r}); "
                         "a query file holds SPARQL text") from None
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
        raise QueryError(f"give a query: the name of a shipped query ({', '.join(shipped_queries().names())}; "
                         "`kgforge queries` says what each returns), SPARQL text, or --file PATH")
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
