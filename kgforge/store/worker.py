"""The query worker behind :class:`kgforge.store.query.QueryRunner`: ``python -m kgforge.store.worker``.

pyoxigraph has no query timeout, so queries run in this process, which the caller ends when a query
outlives its deadline. It is started as kgforge's own module (never through multiprocessing, which
would import the caller's ``__main__`` again: :mod:`kgforge.core.processes`), holds one read-only
handle on the store, and answers one request at a time in frames on stdin/stdout.

Before it opens the store it closes its own network access unless started with ``--network``
(:mod:`kgforge.core.sandbox`) and caps its memory when given ``--memory BYTES``. Its first frame says
how that went: ``("ready", isolation)`` (``isolation``: ``"seccomp"``, ``"namespace"`` or ``None``) or
``("error", message)``. Replies: ``("ok", payload)``, ``("syntax", message)``, ``("error", message)``,
``("memory", message)``. Kept light: it imports pyoxigraph and kgforge's leaves, nothing heavy.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Any

import pyoxigraph as ox

from kgforge.core.errors import StoreDamagedError
from kgforge.core.lifeline import die_with
from kgforge.core.processes import read_frame, write_frame
from kgforge.core.sandbox import close_network, limit_memory
from kgforge.core.scripts import fits_script
from kgforge.core.vocab import OWL_SAME_AS, RDFS_LABEL
from kgforge.store.oxigraph import read_only_store
from kgforge.store.sparql_text import PREFIXES

COUNT_REST_SECONDS = 2.0  # how long the worker keeps counting the rows past a limit before it says "more than"
Term = ox.NamedNode | ox.Literal | ox.BlankNode
# a term as it crosses the pipe: ("iri", iri), ("bnode", id) or ("lit", value, language, datatype)
EncodedTerm = tuple[str, str] | tuple[str, str, str | None, str]
# one frame of the worker's protocol, pickled between the processes: a request (answer's `message`) or a
# reply (run's, read back by kgforge.store.query._to_result), each a tuple led by its kind
Frame = tuple[Any, ...]


def encode(term: Term) -> EncodedTerm:
    if isinstance(term, ox.NamedNode):
        return ("iri", term.value)
    if isinstance(term, ox.BlankNode):
        return ("bnode", term.value)
    return ("lit", term.value, term.language, term.datatype.value)


def decode(encoded: EncodedTerm) -> Term:
    if len(encoded) == 2:
        kind, value = encoded
        return ox.NamedNode(value) if kind == "iri" else ox.BlankNode(value)
    _, value, lang, datatype = encoded
    return ox.Literal(value, language=lang) if lang else ox.Literal(value, datatype=ox.NamedNode(datatype))


def run(store: ox.Store, sparql: str, bindings: dict[str, EncodedTerm], limit: int) -> Frame:
    substitutions: dict[ox.Variable, Term | ox.Triple] = {
        ox.Variable(name): decode(term) for name, term in bindings.items()
    }
    result = store.query(sparql, use_default_graph_as_union=True, substitutions=substitutions, prefixes=PREFIXES)
    if isinstance(result, ox.QuerySolutions):
        variables = [v.value for v in result.variables]
        rows: list[dict[str, EncodedTerm]] = []
        for row in result:
            if limit and len(rows) == limit:
                return ("select", variables, rows, *_count_rest(result))
            rows.append({v: encode(row[v]) for v in variables if row[v] is not None})
        return ("select", variables, rows, False, None)
    if isinstance(result, ox.QueryBoolean):
        return ("ask", bool(result))
    return ("construct", [tuple(encode(t) for t in (tr.subject, tr.predicate, tr.object)) for tr in result])


def _count_rest(solutions: ox.QuerySolutions) -> tuple[bool, int | None]:
    """Past a limit, one row is already taken: count the rest without keeping them, for a short while."""
    counted, stop = 1, time.monotonic() + COUNT_REST_SECONDS
    for counted, _ in enumerate(solutions, 2):
        if counted % 1024 == 0 and time.monotonic() > stop:
            return True, None
    return True, counted


def labels(store: ox.Store, iris: list[str], language: str) -> dict[str, str]:
    """One label per IRI by the chain of :mod:`kgforge.store.languages`, with index lookups only: in
    ``language``, else an ``owl:sameAs`` partner's in it, else untagged, else one in a script the language
    reads, else the first in code order."""
    found = {}
    for iri in iris:
        candidates = _labels_of(store, iri)
        if not candidates:
            continue
        best = min(candidates, key=lambda lit: (_language_rank(lit, language), lit.value))
        if _language_rank(best, language) > 0:
            linked = [
                lit
                for partner in _partners(store, iri)
                for lit in _labels_of(store, partner)
                if _language_rank(lit, language) == 0
            ]
            best = min(linked, key=lambda lit: lit.value) if linked else best
        found[iri] = best.value
    return found


_LABEL = ox.NamedNode(RDFS_LABEL)
_SAME_AS = ox.NamedNode(OWL_SAME_AS)


def _labels_of(store: ox.Store, iri: str) -> list[ox.Literal]:
    return [
        q.object for q in store.quads_for_pattern(ox.NamedNode(iri), _LABEL, None) if isinstance(q.object, ox.Literal)
    ]


def _partners(store: ox.Store, iri: str) -> set[str]:
    node = ox.NamedNode(iri)
    out = {q.object.value for q in store.quads_for_pattern(node, _SAME_AS, None) if isinstance(q.object, ox.NamedNode)}
    return out | {
        q.subject.value for q in store.quads_for_pattern(None, _SAME_AS, node) if not isinstance(q.subject, ox.Triple)
    }


def _language_rank(literal: ox.Literal, language: str) -> int:
    tag = (literal.language or "").lower()
    wanted = language.lower()
    if tag and wanted and (tag == wanted or tag.startswith(wanted + "-")):
        return 0
    if not fits_script(literal.value, language):
        return 3
    return 1 if not tag else 2


def explain(exc: Exception) -> str:
    message = f"{type(exc).__name__}: {exc}"
    if "SELECT projection" in str(exc):
        message += (
            " (a variable given with --bind must also appear in the SELECT clause: "
            "bindings are SPARQL substitutions, SEP-0007, not text pasted into the query)"
        )
    return message


NETWORK_CLOSED = (
    "a SERVICE call was blocked: this query worker has no network access (pass --allow-service, "
    "or allow_service=True, to let SERVICE clauses call the endpoints they name)"
)


def answer(store: ox.Store, message: Frame, network_closed: bool = False) -> Frame:
    kind, *args = message
    try:
        return ("ok", labels(store, *args) if kind == "labels" else run(store, *args))
    except SyntaxError as exc:
        return ("syntax", str(exc))
    except MemoryError:
        return ("memory", "the query needed more memory than the worker's cap")
    except PermissionError as exc:  # the only thing a read-only query is refused: a socket (SERVICE)
        return ("error", f"{NETWORK_CLOSED} ({exc})" if network_closed else explain(exc))
    except (OSError, ValueError, TypeError, RuntimeError, RecursionError) as exc:
        return ("error", explain(exc))


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m kgforge.store.worker")
    parser.add_argument("parent", type=int, help="the pid this worker dies with")
    parser.add_argument("store", help="the Oxigraph store folder, opened read-only")
    parser.add_argument("--network", action="store_true", help="keep network access (SERVICE clauses)")
    parser.add_argument("--memory", type=int, default=0, help="cap on the worker's data, in bytes (0: none)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> None:
    args = _arguments(sys.argv[1:] if argv is None else argv)
    isolation = None if args.network else close_network()  # first: before any thread exists
    die_with(args.parent)  # a query still running when its caller is killed must not hold the store open
    inbox, outbox = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # nothing but frames on the reply pipe
    if args.memory:
        limit_memory(args.memory)
    try:
        store = read_only_store(args.store)
    except (OSError, StoreDamagedError) as exc:
        write_frame(outbox, ("error", str(exc)))
        return
    write_frame(outbox, ("ready", isolation))
    while True:
        try:
            message = read_frame(inbox)
        except EOFError:  # the caller is gone
            return
        if message is None:
            return
        write_frame(outbox, answer(store, message, network_closed=isolation is not None))


if __name__ == "__main__":
    main()
