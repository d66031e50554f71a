"""A query worker: one process of the server's pool, answering one query at a time over its pipes.

pyoxigraph has no query timeout, so the server runs every query in a process like this one and ends
the process when the query outlives its deadline. The worker holds one read-only handle per store
version it was asked about (the two most recent), so a query names the build folder it must read and
sees that build entirely, whatever the ``store`` link points at meanwhile.

It runs as ``python -m kgforge.serve.worker PARENT_PID [MEMORY_BYTES]``, kgforge's own module (the
server's ``__main__`` is never imported here), closes its own network access before it reads a request
(:mod:`kgforge.core.sandbox`: the server never runs SERVICE clauses) and caps its memory when given a cap.

Frames on stdin/stdout are :mod:`kgforge.core.processes` frames. Replies are ``("ok", payload)``,
``("error", status, message)``, ``("memory", message)`` when a query needed more than the cap allows, or
``("gone", message)`` when the build folder asked for no longer exists. Kept light on purpose: it imports
pyoxigraph and nothing heavy.
"""

from __future__ import annotations

import os
import sys
from collections import OrderedDict
from dataclasses import asdict, dataclass
from typing import Any, overload

import pyoxigraph as ox

from kgforge.core.errors import StoreDamagedError
from kgforge.core.lifeline import die_with
from kgforge.core.processes import read_frame, write_frame
from kgforge.core.sandbox import close_network, limit_memory
from kgforge.store.oxigraph import read_only_store

KEEP_VERSIONS = 2
RESULTS_FORMATS = {
    "json": ox.QueryResultsFormat.JSON,
    "xml": ox.QueryResultsFormat.XML,
    "csv": ox.QueryResultsFormat.CSV,
    "tsv": ox.QueryResultsFormat.TSV,
}
GRAPH_FORMATS = {
    "turtle": ox.RdfFormat.TURTLE,
    "ntriples": ox.RdfFormat.N_TRIPLES,
    "jsonld": ox.RdfFormat.JSON_LD,
    "rdfxml": ox.RdfFormat.RDF_XML,
}
Term = ox.NamedNode | ox.Literal | ox.BlankNode


class RowLimit(Exception):
    """The result has more rows than the request allows."""


class NotAcceptable(Exception):
    """The client accepts no media type that can hold this kind of result."""


class LineBudget:
    """A binary output that keeps what is written and stops the writer past ``limit`` lines.

    SPARQL TSV writes one line per solution after a header line, N-Triples one line per triple, and
    both escape line breaks inside values, so counting newlines counts rows as they are produced: an
    oversized result is stopped early instead of being built whole in memory.

    pyoxigraph's serializers call only ``write`` (and ``flush``) on the output they are given, but their stub
    types it as ``IO[bytes]``, which this is not: the two calls that pass one name the error code they ignore."""

    def __init__(self, limit: int) -> None:
        self.parts: list[bytes] = []
        self.lines = 0
        self.limit = limit

    def write(self, data: bytes) -> int:
        self.lines += data.count(b"\n")
        if self.lines > self.limit:
            raise RowLimit
        self.parts.append(bytes(data))
        return len(data)

    def flush(self) -> None:
        pass

    def value(self) -> bytes:
        return b"".join(self.parts)


@overload
def encode_term(term: Term | ox.Triple) -> tuple: ...
@overload
def encode_term(term: Term | ox.Triple | None) -> tuple | None: ...
def encode_term(term: Term | ox.Triple | None) -> tuple | None:
    """A term as plain tuples (the explorer's rows), ``None`` for an unbound variable."""
    if term is None:
        return None
    if isinstance(term, ox.NamedNode):
        return ("iri", term.value)
    if isinstance(term, ox.BlankNode):
        return ("bnode", term.value)
    if isinstance(term, ox.Literal):
        return ("lit", term.value, term.language, term.datatype.value)
    return ("triple", str(term))


def decode_term(encoded: tuple) -> Term:
    kind = encoded[0]
    if kind == "iri":
        return ox.NamedNode(encoded[1])
    if kind == "bnode":
        return ox.BlankNode(encoded[1])
    _, value, language, datatype = encoded
    return ox.Literal(value, language=language) if language else ox.Literal(value, datatype=ox.NamedNode(datatype))


class Worker:
    def __init__(self, prefixes: dict[str, str]) -> None:
        self.prefixes = prefixes
        self.stores: OrderedDict[str, ox.Store] = OrderedDict()

    def store(self, build: str) -> ox.Store:
        if build not in self.stores:
            self.stores[build] = read_only_store(os.path.join(build, "oxigraph"))  # damaged: one line
            while len(self.stores) > KEEP_VERSIONS:
                self.stores.popitem(last=False)  # only this one query runs here: nothing else holds it
        self.stores.move_to_end(build)
        return self.stores[build]

    def handle(self, request: dict[str, Any]) -> tuple:
        try:
            store = self.store(request["build"])
        except (OSError, StoreDamagedError) as exc:
            return ("gone", f"{request['build']}: {exc}")
        try:
            result = store.query(
                request["sparql"],
                prefixes=self.prefixes,
                use_default_graph_as_union=not request.get("default_graphs"),
                default_graph=[ox.NamedNode(g) for g in request.get("default_graphs") or []] or None,
                named_graphs=[ox.NamedNode(g) for g in request.get("named_graphs") or []] or None,
                substitutions={ox.Variable(k): decode_term(v) for k, v in request.get("bindings", {}).items()},
            )
            if request["kind"] == "rows":
                return ("ok", _rows(result, request["max_rows"]))
            # plain data over the pipe: the worker runs as __main__, where the server cannot unpickle its classes
            return ("ok", asdict(serialized(result, request, request["max_rows"])))
        except NotAcceptable as exc:
            return ("error", 406, str(exc))
        except RowLimit:
            return (
                "error",
                400,
                f"the result has more than {request['max_rows']} rows, the server's limit: "
                "add LIMIT (and OFFSET to page through it)",
            )
        except SyntaxError as exc:
            return ("error", 400, f"SPARQL syntax error: {exc}")
        except MemoryError:
            return ("memory", "the query needed more memory than the query worker's cap")
        except PermissionError as exc:  # the only thing a read-only query is refused: a socket (SERVICE)
            return (
                "error",
                403,
                f"the query has a SERVICE clause, and this server sends no requests to other "
                f"endpoints: refused ({exc})",
            )
        except (OSError, ValueError, TypeError, RuntimeError) as exc:
            return ("error", 400, f"{type(exc).__name__}: {exc}")


def _rows(result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples, max_rows: int) -> dict[str, Any]:
    """A SELECT result as encoded rows (for the explorer's pages), at most ``max_rows``."""
    if not isinstance(result, ox.QuerySolutions):
        raise TypeError("the explorer runs SELECT queries only")
    variables = [v.value for v in result.variables]
    out: list[list[tuple | None]] = []
    for solution in result:
        if len(out) == max_rows:
            raise RowLimit
        out.append([encode_term(solution[v]) for v in variables])
    return {"variables": variables, "rows": out}


@dataclass(frozen=True)
class Serialized:
    """A query's result as the endpoint sends it: the query form, the format, its bytes, and its row count."""

    form: str  # select, ask or graph (CONSTRUCT/DESCRIBE)
    format: str  # a key of RESULTS_FORMATS or GRAPH_FORMATS
    body: bytes
    rows: int  # solutions, or triples of a graph (1 for ASK)


def serialized(
    result: ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples, request: dict[str, Any], max_rows: int
) -> Serialized:
    """The result in the format the client asked for, written by pyoxigraph's own serialisers.

    Rows are counted in pyoxigraph's TSV (or N-Triples) output as it is written; a result within the
    limit is then parsed back and written in the requested format when that is another one."""
    if isinstance(result, ox.QueryBoolean):
        fmt = _format(request, "results_format", "ASK")
        return Serialized("ask", fmt, _returned(result.serialize(format=RESULTS_FORMATS[fmt])), 1)
    if isinstance(result, ox.QuerySolutions):
        fmt = _format(request, "results_format", "SELECT")
        budget = LineBudget(max_rows + 1)  # the header line, then one line per solution
        result.serialize(budget, format=ox.QueryResultsFormat.TSV)  # type: ignore[arg-type]  # see LineBudget
        body = budget.value()
        if fmt != "tsv":
            parsed = ox.parse_query_results(body, format=ox.QueryResultsFormat.TSV)
            body = _returned(parsed.serialize(format=RESULTS_FORMATS[fmt]))
        return Serialized("select", fmt, body, budget.lines - 1)
    fmt = _format(request, "graph_format", "CONSTRUCT/DESCRIBE")
    budget = LineBudget(max_rows)
    result.serialize(budget, format=ox.RdfFormat.N_TRIPLES)  # type: ignore[arg-type]  # see LineBudget
    body = budget.value()
    if fmt != "ntriples":
        body = _returned(
            ox.serialize(
                ox.parse(body, format=ox.RdfFormat.N_TRIPLES),
                format=GRAPH_FORMATS[fmt],
                prefixes=request.get("output_prefixes") if fmt == "turtle" else None,
            )
        )
    return Serialized("graph", fmt, body, budget.lines)


def _returned(data: bytes | None) -> bytes:
    """What a pyoxigraph serializer given no output returns: the bytes (its stub types the result ``bytes |
    None`` for both cases, None being what it returns after writing to an output)."""
    assert data is not None  # no output was given
    return data


def _format(request: dict[str, Any], key: str, form: str) -> str:
    fmt = request.get(key)
    if fmt is None:
        raise NotAcceptable(f"none of the requested media types can hold a {form} result")
    return fmt


def main() -> None:
    parent, memory = int(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 0
    if close_network() is None:  # first: before any thread exists
        print(
            "kgforge serve: this system allows neither a seccomp filter nor a network namespace; query "
            "workers keep network access, and only the SERVICE check of the query text guards it",
            file=sys.stderr,
        )
    die_with(parent)  # a server killed without clean-up must not leave its workers holding the store
    if memory:
        limit_memory(memory)
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the reply pipe
    worker = Worker(read_frame(inbox))
    while True:
        try:
            request = read_frame(inbox)
        except EOFError:
            return
        write_frame(outbox, worker.handle(request))


if __name__ == "__main__":
    main()
