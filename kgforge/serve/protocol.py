"""The SPARQL 1.1 Protocol, read-only: what a request asks for, and which media type answers it.

* ``GET /sparql?query=…``, ``POST`` with ``application/x-www-form-urlencoded`` (``query=…``) or with the
  query as the body (``application/sparql-query``); ``default-graph-uri`` and ``named-graph-uri`` as the
  protocol defines them (without them every query sees the union of the domain's graphs, as
  ``kgforge query`` does).
* Updates (an ``update`` parameter, ``application/sparql-update``) are refused with 403.
* Variables are bound as SEP-0007 substitutions with ``$name=TERM`` parameters, TERM in N-Triples syntax
  (``$topic=<https://…>``, ``$name="故宫"@zh``), as RDF4J's protocol does: values are never pasted
  into the query text.
* Before a query reaches a worker, its text is checked here (:func:`check_query_text`): nesting deeper
  than :data:`MAX_NESTING` brackets and an invalid ``\\u``/``\\U`` escape are refused with 400, so a
  client's mistake never costs a worker process (Oxigraph's parser recurses once per bracket).
* Results: JSON, XML, CSV or TSV for SELECT/ASK; Turtle, N-Triples, JSON-LD or RDF/XML for
  CONSTRUCT/DESCRIBE; chosen by ``Accept`` or by a ``format`` parameter (``json``, ``turtle``, …).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, overload
from urllib.parse import parse_qsl

import pyoxigraph as ox

from kgforge.serve.worker import encode_term
from kgforge.store.sparql_text import NOT_CODE, code_of

# Far above any query a person or a generator writes (the shipped ones nest 4 deep), far below the depth at
# which Oxigraph's recursive parser overflows its stack and takes the worker process with it (thousands).
MAX_NESTING = 200
OPENING, CLOSING = "({[", ")}]"
# A codepoint escape: an odd number of backslashes (an even number is escaped backslashes), u or U, and
# up to the digits it needs (fewer means it is malformed).
_ESCAPE = re.compile(r"(?<!\\)(?:\\\\)*\\(u[0-9A-Fa-f]{0,4}|U[0-9A-Fa-f]{0,8})")

RESULTS_TYPES = {
    "json": ("application/sparql-results+json", "application/json"),
    "xml": ("application/sparql-results+xml", "application/xml", "text/xml"),
    "csv": ("text/csv",),
    "tsv": ("text/tab-separated-values",),
}
GRAPH_TYPES = {
    "turtle": ("text/turtle", "application/x-turtle"),
    "ntriples": ("application/n-triples", "text/plain"),
    "jsonld": ("application/ld+json",),
    "rdfxml": ("application/rdf+xml",),
}
CONTENT_TYPES = {
    "json": "application/sparql-results+json",
    "xml": "application/sparql-results+xml",
    "csv": "text/csv; charset=utf-8",
    "tsv": "text/tab-separated-values; charset=utf-8",
    "turtle": "text/turtle; charset=utf-8",
    "ntriples": "application/n-triples",
    "jsonld": "application/ld+json",
    "rdfxml": "application/rdf+xml",
}
FORM = "application/x-www-form-urlencoded"
QUERY_BODY = "application/sparql-query"
UPDATE_BODY = "application/sparql-update"


class ProtocolError(Exception):
    """A request the endpoint refuses; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass
class QueryRequest:
    sparql: str
    results_format: str | None
    graph_format: str | None
    bindings: dict[str, tuple] = field(default_factory=dict)
    default_graphs: list[str] = field(default_factory=list)
    named_graphs: list[str] = field(default_factory=list)


def read_request(method: str, content_type: str, query_string: str, body: bytes, accept: str) -> QueryRequest:
    """The query a protocol request carries, or a ProtocolError (400, 403, 406, 415)."""
    params = parse_qsl(query_string, keep_blank_values=True)
    media = content_type.split(";")[0].strip().lower()
    if method == "POST":
        if media == UPDATE_BODY:
            raise _read_only()
        if media == FORM:
            params += parse_qsl(_text(body), keep_blank_values=True)
            _refuse_updates(params)
            sparql = _one(params, "query")
        elif media == QUERY_BODY:
            if any(name == "query" for name, _ in params):
                raise ProtocolError(400, "a direct POST carries the query as its body, not also as a parameter")
            sparql = _text(body)
        else:
            raise ProtocolError(415, f"POST a query as {FORM} (query=…) or as {QUERY_BODY}; got {media or 'no type'}")
    else:
        _refuse_updates(params)
        sparql = _one(params, "query")
    _refuse_updates(params)
    fmt = _one(params, "format", required=False)
    results_format, graph_format = negotiate(accept, fmt)
    return QueryRequest(
        sparql=sparql,
        results_format=results_format,
        graph_format=graph_format,
        bindings={name[1:]: parse_term(value, name) for name, value in params if name.startswith("$")},
        default_graphs=[parse_iri(v, "default-graph-uri") for n, v in params if n == "default-graph-uri"],
        named_graphs=[parse_iri(v, "named-graph-uri") for n, v in params if n == "named-graph-uri"],
    )


def check_query_text(sparql: str) -> None:
    """A ProtocolError (400) for a query nested deeper than :data:`MAX_NESTING` or holding an invalid
    codepoint escape; both found by a scan of the text, without a parse."""
    depth = nesting_depth(sparql)
    if depth > MAX_NESTING:
        raise ProtocolError(
            400,
            f"the query nests brackets {depth} deep; this endpoint takes at most {MAX_NESTING} "
            "(write the pattern flatter)",
        )
    bad = invalid_escape(sparql)
    if bad is not None:
        escape, line, column = bad
        raise ProtocolError(
            400,
            f"invalid escape \\{escape} at line {line}, column {column}: \\u takes 4 hex "
            "digits and \\U 8, naming a Unicode code point (at most 10FFFF, not a surrogate)",
        )


def nesting_depth(sparql: str) -> int:
    """How deep ``(``, ``{`` and ``[`` nest in ``sparql``, outside its strings, IRIs and comments."""
    depth = deepest = 0
    for char in code_of(sparql):
        if char in OPENING:
            depth += 1
            deepest = max(deepest, depth)
        elif char in CLOSING:
            depth = max(depth - 1, 0)
    return deepest


def invalid_escape(sparql: str) -> tuple[str, int, int] | None:
    """The first malformed ``\\u``/``\\U`` escape outside comments, with its line and column (from 1)."""
    without_comments = NOT_CODE.sub(lambda m: " " * len(m.group()) if m.group().startswith("#") else m.group(), sparql)
    for match in _ESCAPE.finditer(without_comments):
        escape = match.group(1)
        if len(escape) == (5 if escape[0] == "u" else 9):
            point = int(escape[1:], 16)
            if point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF:
                continue
        start = match.start(1) - 1
        line = sparql.count("\n", 0, start) + 1
        return escape, line, start - (sparql.rfind("\n", 0, start) + 1) + 1
    return None


def _refuse_updates(params: list[tuple[str, str]]) -> None:
    if any(name in ("update", "using-graph-uri", "using-named-graph-uri") for name, _ in params):
        raise _read_only()


def _read_only() -> ProtocolError:
    return ProtocolError(
        403, "this endpoint is read-only: SPARQL updates are refused (rebuild the domain with `kgforge build` instead)"
    )


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(400, f"the request body is not UTF-8 (byte {exc.start})") from None


@overload
def _one(params: list[tuple[str, str]], name: str, required: Literal[True] = True) -> str: ...
@overload
def _one(params: list[tuple[str, str]], name: str, required: Literal[False]) -> str | None: ...
def _one(params: list[tuple[str, str]], name: str, required: bool = True) -> str | None:
    values = [v for n, v in params if n == name]
    if len(values) > 1:
        raise ProtocolError(400, f"the {name!r} parameter is given {len(values)} times; give it once")
    if not values:
        if required:
            raise ProtocolError(
                400,
                f"no {name!r} parameter: send the SPARQL query as query=… (GET or form POST) "
                f"or as the body of a POST with Content-Type {QUERY_BODY}",
            )
        return None
    return values[0]


def parse_term(text: str, name: str = "term") -> tuple:
    """An N-Triples term (``<iri>``, ``"lit"``, ``"lit"@zh``, ``"1"^^<…#integer>``) as the worker's encoding."""
    try:
        quads = list(ox.parse(f"<urn:s> <urn:p> {text.strip()} .".encode(), format=ox.RdfFormat.N_TRIPLES))
    except (SyntaxError, ValueError) as exc:
        raise ProtocolError(
            400, f'{name}: {text!r} is not an N-Triples term (<iri>, "text", "text"@zh, "1"^^<datatype>): {exc}'
        ) from None
    if len(quads) != 1:
        raise ProtocolError(400, f"{name}: {text!r} is not one N-Triples term")
    return encode_term(quads[0].object)


def parse_iri(text: str, name: str) -> str:
    """``text`` if it is an absolute IRI, else a ProtocolError (400) naming the parameter."""
    try:
        return ox.NamedNode(text).value
    except ValueError as exc:
        raise ProtocolError(400, f"{name}: {text!r} is not an absolute IRI: {exc}") from None


def negotiate(accept: str, fmt: str | None) -> tuple[str | None, str | None]:
    """The best results format and the best graph format the client takes (None: none it takes)."""
    if fmt is not None:
        name = fmt.lower()
        if name in RESULTS_TYPES:
            return name, "turtle"
        if name in GRAPH_TYPES:
            return "json", name
        raise ProtocolError(400, f"format={fmt!r}: choose one of {', '.join([*RESULTS_TYPES, *GRAPH_TYPES])}")
    ranges = _media_ranges(accept or "*/*")
    results, graph = _best(ranges, RESULTS_TYPES, "json"), _best(ranges, GRAPH_TYPES, "turtle")
    if results is None and graph is None:
        offered = ", ".join(t for types in (*RESULTS_TYPES.values(), *GRAPH_TYPES.values()) for t in types)
        raise ProtocolError(406, f"Accept: {accept} names no media type this endpoint writes ({offered})")
    return results, graph


def _media_ranges(accept: str) -> list[tuple[str, float]]:
    ranges = []
    for position, item in enumerate(accept.split(",")):
        media, *params = (part.strip() for part in item.split(";"))
        quality = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip() == "q":
                try:
                    quality = float(value)
                except ValueError:
                    quality = 0.0
        if media and quality > 0:
            ranges.append((media.lower(), quality, position))
    ranges.sort(key=lambda r: (-r[1], r[0].count("*"), r[2]))
    return [(media, quality) for media, quality, _ in ranges]


def _best(ranges: list[tuple[str, float]], formats: dict[str, tuple[str, ...]], default: str) -> str | None:
    for media, _ in ranges:
        if media == "*/*":
            return default
        for name, types in formats.items():
            if media in types:
                return name
            if media.endswith("/*") and any(t.startswith(media[:-1]) for t in types):
                return default if formats[default][0].startswith(media[:-1]) else name
    return None
