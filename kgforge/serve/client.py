"""Running a query against a SPARQL endpoint (``kgforge query --endpoint URL``), with the same bindings
and the same result shape as a query run on the store.

Bindings travel as ``$name=TERM`` parameters (N-Triples terms, as ``kgforge serve`` and RDF4J read them),
never pasted into the query text; an endpoint that does not know that convention ignores them, so they
are refused for it rather than silently dropped. A plain value (``--bind name=故宫``) is read as the local
store reads it (:func:`kgforge.store.labels.resolve_bindings`: the entity it labels, or a literal in the
domain's language), its lookups sent to the endpoint as substitutions too, the language taken from the
server's ``/api/status``. Results are read with pyoxigraph's own parsers.

``timeout`` is a total deadline for the whole exchange (label lookups, connecting, sending, the headers
and every byte of the answer): a server that answers a byte a second is cut off at it, not allowed one
more second per byte. Anything that is not a well-formed answer (not HTTP, not the media type it claims)
is a one-line QueryError. Redirects are not followed (the query, and its bindings, would go to a URL
the user did not name): the error names where it points. No proxy is used.
"""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from email.message import Message
from urllib.parse import urlencode, urlsplit, urlunsplit

import pyoxigraph as ox

from kgforge.core import checks
from kgforge.core.errors import QueryError, QueryTimeout
from kgforge.store.labels import language_variable, resolve_bindings
from kgforge.store.query import QueryResult, Term

ACCEPT = "application/sparql-results+json, application/n-triples;q=0.9"
BUILD_HEADER = "X-Kgforge-Build"
MAX_REPLY = 1 << 30  # bytes of one answer; a server past it is refused rather than read into memory whole
CHUNK = 1 << 16


def endpoint_query(
    url: str,
    sparql: str,
    bindings: Mapping[str, Term | str] | None = None,
    timeout: float = 60.0,
    domain: str = "the served domain",
    label_language: str | None = None,
) -> QueryResult:
    """``sparql`` POSTed to the endpoint at ``url`` with ``bindings`` substituted (a ``str`` is a plain
    value, read as the local store reads it); a QueryTimeout when it answers 503 or the whole exchange
    passes ``timeout`` seconds, a QueryError for any other refusal or a malformed answer. A query naming things
    in a language (``# Language: ?lang``) gets ``label_language`` (default: the served domain's) bound, as
    :meth:`kgforge.Domain.query` binds it."""
    checks.http_url(url, "--endpoint")
    checks.number(timeout, "timeout", above=True)
    deadline = Deadline(timeout)
    given: dict[str, Term | str] = dict(bindings or {})
    shown_in = language_variable(sparql, given)
    plain = any(isinstance(value, str) for value in given.values())
    language = label_language or (served_language(url, deadline) if shown_in or plain else "")
    if shown_in and language:
        given[shown_in] = ox.Literal(language)
    if plain:
        # resolve_bindings types its runner as the store's QueryRunner, of which it calls only ``query``, the
        # one method EndpointRunner has too (a runner protocol in kgforge.store.labels would say so)
        runner = EndpointRunner(url, deadline)
        terms = resolve_bindings(runner, sparql, given, language, domain)  # type: ignore[arg-type]
    else:  # every value is a term already
        terms = {name: value for name, value in given.items() if not isinstance(value, str)}
    return _query(url, sparql, terms, deadline)


@dataclass(frozen=True)
class Deadline:
    """One total time budget, shared by every request of one command."""

    seconds: float
    started: float = field(default_factory=time.monotonic)

    def left(self) -> float:
        return self.seconds - (time.monotonic() - self.started)

    def expired(self, url: str) -> QueryTimeout:
        return QueryTimeout(f"{url} did not answer within {self.seconds:g} s (the --timeout, a total deadline)")


class EndpointRunner:
    """What the label lookups of :mod:`kgforge.store.labels` ask of a query runner, over an endpoint."""

    def __init__(self, url: str, deadline: Deadline) -> None:
        self.url = url
        self.deadline = deadline

    def query(
        self, sparql: str, bindings: Mapping[str, Term] | None = None, timeout: float = 60.0, **_: object
    ) -> QueryResult:
        return _query(self.url, sparql, dict(bindings or {}), self.deadline)


def served_language(url: str, deadline: Deadline) -> str:
    """The language of the served domain's labels, from ``kgforge serve``'s ``/api/status`` (next to the
    endpoint); "" when the server does not say (a lookup then tries untagged labels and any language)."""
    parts = urlsplit(url)
    root = parts.path[: -len("/sparql")] if parts.path.endswith("/sparql") else parts.path.rsplit("/", 1)[0]
    status = urlunsplit((parts.scheme, parts.netloc, f"{root}/api/status", "", ""))
    reply = exchange("GET", status, None, {"Accept": "application/json"}, deadline)
    if reply.status != 200:
        return ""
    try:
        language = json.loads(reply.body).get("language", "")
    except (ValueError, AttributeError):
        return ""
    return language if isinstance(language, str) else ""


def _query(url: str, sparql: str, bindings: Mapping[str, Term], deadline: Deadline) -> QueryResult:
    data = {"query": sparql, **{f"${name.lstrip('?$')}": str(term) for name, term in bindings.items()}}
    reply = exchange(
        "POST",
        url,
        urlencode(data).encode(),
        {"Accept": ACCEPT, "Content-Type": "application/x-www-form-urlencoded"},
        deadline,
    )
    if reply.status == 503:
        raise QueryTimeout(f"{url}: {reply.text()}")
    if 300 <= reply.status < 400:  # not followed: the query would go where the endpoint's owner did not say
        raise QueryError(
            f"{url} answered {reply.status}, a redirect to {reply.headers.get('Location') or 'nowhere'}: "
            "give that URL to --endpoint if it is the one you mean"
        )
    if reply.status != 200:
        raise QueryError(f"{url} answered {reply.status}: {reply.text(keep_lines=BUILD_HEADER in reply.headers)}")
    if bindings and BUILD_HEADER not in reply.headers:
        raise QueryError(
            f"{url} is not a kgforge endpoint: it would ignore the bindings ($name parameters); "
            "write the values into the query instead"
        )
    return _result(url, reply)


@dataclass(frozen=True)
class Reply:
    status: int
    headers: Message
    body: bytes

    def text(self, keep_lines: bool = False, limit: int = 500) -> str:
        """The body as text for a message: a kgforge server's own words as they are (a syntax error's caret
        line included), anything else on one line."""
        text = self.body.decode("utf-8", errors="replace").strip()
        if not keep_lines:
            text = " ".join(text.split())
        return text if len(text) <= limit else text[:limit] + " …"


def exchange(method: str, url: str, body: bytes | None, headers: dict[str, str], deadline: Deadline) -> Reply:
    """One HTTP request and its whole answer within what is left of ``deadline``.

    The socket's own timeout bounds each wait; a timer shuts the socket down when the deadline passes,
    which ends a read that bytes keep trickling into."""
    left = deadline.left()
    if left <= 0:
        raise deadline.expired(url)
    parts = urlsplit(url)
    kind = http.client.HTTPSConnection if parts.scheme == "https" else http.client.HTTPConnection
    connection = kind(parts.hostname or "", parts.port, timeout=left)
    cut = threading.Event()

    def shut() -> None:
        cut.set()
        if connection.sock is not None:
            try:
                connection.sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    timer = threading.Timer(left, shut)
    timer.daemon = True
    timer.start()
    try:
        target = urlunsplit(("", "", parts.path or "/", parts.query, ""))
        connection.request(method, target, body=body, headers=headers)
        response = connection.getresponse()
        data = _read(response, url)
        if cut.is_set():
            raise deadline.expired(url)
        return Reply(response.status, response.headers, data)
    except (OSError, http.client.HTTPException) as exc:
        if cut.is_set() or isinstance(exc, TimeoutError):
            raise deadline.expired(url) from None
        if isinstance(exc, http.client.HTTPException):
            raise QueryError(
                f"{url} did not answer in HTTP ({type(exc).__name__}: {' '.join(str(exc).split())[:200]})"
            ) from None
        raise QueryError(f"cannot reach the endpoint {url}: {exc.strerror or exc}") from None
    finally:
        timer.cancel()
        connection.close()


def _read(response: http.client.HTTPResponse, url: str) -> bytes:
    chunks, size = [], 0
    while chunk := response.read(CHUNK):
        size += len(chunk)
        if size > MAX_REPLY:
            raise QueryError(f"{url} answered more than {MAX_REPLY >> 20} MiB: refused (add LIMIT to the query)")
        chunks.append(chunk)
    return b"".join(chunks)


def _result(url: str, reply: Reply) -> QueryResult:
    media = (reply.headers.get("Content-Type") or "").split(";")[0].strip().lower()
    try:
        if media in ("application/sparql-results+json", "application/json"):
            return _solutions(ox.parse_query_results(reply.body, format=ox.QueryResultsFormat.JSON))
        if media in ("application/n-triples", "text/plain"):
            triples = [quad.triple for quad in ox.parse(reply.body, format=ox.RdfFormat.N_TRIPLES)]
            return QueryResult("construct", [], [], triples=triples)
    except (SyntaxError, ValueError, UnicodeError) as exc:
        detail = " ".join(str(exc).split())[:200]
        raise QueryError(f"{url} answered {media} that does not parse as such: {detail}") from None
    raise QueryError(f"{url} answered in {media or 'no media type'}, not SPARQL JSON results or N-Triples")


def _solutions(parsed: ox.QuerySolutions | ox.QueryBoolean) -> QueryResult:
    if isinstance(parsed, ox.QueryBoolean):
        return QueryResult("ask", [], [], boolean=bool(parsed))
    variables = [v.value for v in parsed.variables]
    rows = [{v: row[v] for v in variables if row[v] is not None} for row in parsed]  # parsed as it is read
    return QueryResult("select", variables, rows)
