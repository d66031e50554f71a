"""The ASGI app: the SPARQL endpoint and the explorer, over one domain.

Why an ASGI app over pyoxigraph rather than Oxigraph's own server: see ``docs/serve.md``. In short, the
server must pick up a rebuilt store without a restart, bound rows, refuse SERVICE calls, add kgforge's
prefixes and serve the explorer from the same process, none of which ``oxigraph serve-read-only`` does.

Around every route: :mod:`kgforge.serve.hygiene` (security headers, Host allow-list, cross-site refusal);
here, a query's text is screened before a worker sees it (nesting, escapes, SERVICE), a request body has a
deadline, and every error becomes a plain answer without the server's paths.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route
from starlette.types import ASGIApp

from kgforge.core.errors import KgforgeError, QueryError, QueryOutOfMemory, QueryTimeout, StoreMissingError
from kgforge.serve import assets, explorer, stages
from kgforge.serve.domain import (
    ServedDomain,
    ServedQueryError,
    ServeOptions,
    VersionGone,
)
from kgforge.serve.hygiene import Hygiene
from kgforge.serve.pool import WorkerDied
from kgforge.serve.protocol import CONTENT_TYPES, ProtocolError, check_query_text, read_request
from kgforge.store.layout import DomainPaths
from kgforge.store.query import PREFIXES
from kgforge.store.sparql_text import explain_error

MAX_BODY = 1 << 20  # a request body past 1 MiB is refused (413) as soon as it is seen to be
SYNTAX_ERROR = "SPARQL syntax error: "  # how the worker words Oxigraph's parser errors


def create_app(paths: DomainPaths, options: ServeOptions) -> Starlette:
    domain = ServedDomain(paths, options)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await domain.start()
        try:
            yield
        finally:
            await domain.close()

    middleware = (
        [
            Middleware(
                CORSMiddleware,
                allow_origins=list(options.cors),
                allow_methods=["GET", "POST"],
                allow_headers=["Content-Type", "Accept"],
                expose_headers=["X-Kgforge-Build"],
            )
        ]
        if options.cors
        else []
    )
    routes = [
        Route("/sparql", guarded(domain, sparql_endpoint), methods=["GET", "POST"]),
        Route("/api/status", guarded(domain, status), methods=["GET"]),
        *[Route(path, guarded(domain, handler), methods=["GET"]) for path, handler in explorer.ROUTES],
        Route("/static/{path:path}", assets.serve, methods=["GET"]),
    ]
    app = HardenedApp(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.domain = domain
    app.state.options = options
    return app


class HardenedApp(Starlette):
    """Starlette with :class:`Hygiene` around its whole stack, error handler included, so even the
    framework's own 500 carries the security headers and no request slips past the Host check. ``state.options``
    is the :class:`ServeOptions` (host, allowed hosts, CORS) it applies; ``kgforge collect`` serves its app on it too."""

    def build_middleware_stack(self) -> ASGIApp:
        options: ServeOptions = self.state.options
        return Hygiene(super().build_middleware_stack(), options.host, options.allowed_hosts, options.cors)


Handler = Callable[[ServedDomain, Request], Awaitable[Response]]


def guarded(domain: ServedDomain, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` with the server's errors turned into clear answers: 503 past the timeout, the
    worker's status for a refused query, and one retry on the new build when a request's build was
    removed under it (two rebuilds during one request)."""

    async def endpoint(request: Request) -> Response:
        try:
            try:
                return await handler(domain, request)
            except (VersionGone, stages.VersionMoved):
                return await handler(domain, request)
        except ProtocolError as exc:
            return _text(domain, exc.status, str(exc))
        except ServedQueryError as exc:
            return _text(domain, exc.status, str(exc))
        except (QueryTimeout, TimeoutError) as exc:
            return _text(
                domain, 503, str(exc) or f"the request ran past the server's {domain.options.timeout:g} s timeout"
            )
        except (QueryOutOfMemory, WorkerDied, StoreMissingError) as exc:
            return _text(domain, 503, str(exc))
        except QueryError as exc:  # the pool's other ways for a worker to fail (ran out of memory, …): not the client's
            return _text(domain, 503, f"the query could not be answered: {exc}")
        except KgforgeError as exc:  # a stage the explorer calls refused (goals, related): its own words
            return _text(domain, 500, str(exc))

    return endpoint


def _text(domain: ServedDomain, status: int, message: str) -> PlainTextResponse:
    """A one-line (or, for a syntax error, caret-marked) plain answer, without the server's own paths."""
    return PlainTextResponse(public(domain, message) + "\n", status_code=status)


def public(domain: ServedDomain, message: str) -> str:
    """``message`` with the server's workdir written as ``<workdir>``: a client has no business knowing
    where the server keeps its files (messages from the stages name them for a local user)."""
    workdir = domain.paths.workdir
    for path in sorted({str(workdir.resolve()), str(workdir.absolute()), str(workdir)}, key=len, reverse=True):
        if path not in (".", ""):
            message = message.replace(path, "<workdir>")
    return message


async def sparql_endpoint(domain: ServedDomain, request: Request) -> Response:
    body = await read_body(request) if request.method == "POST" else b""
    query = read_request(
        request.method,
        request.headers.get("content-type", ""),
        request.url.query,
        body,
        request.headers.get("accept", ""),
    )
    if not query.sparql.strip():
        raise ProtocolError(400, "the query is empty")
    await asyncio.to_thread(screen, query.sparql)  # rdflib's parse of a 1 MiB query takes a while: off the loop
    deadline = domain.deadline()
    version = domain.current()
    message = {
        "kind": "protocol",
        "sparql": query.sparql,
        "bindings": query.bindings,
        "results_format": query.results_format,
        "graph_format": query.graph_format,
        "default_graphs": query.default_graphs,
        "named_graphs": query.named_graphs,
        "max_rows": domain.options.max_rows,
        "output_prefixes": PREFIXES,
    }
    try:
        payload = await domain.run(version, message, deadline)
    except ServedQueryError as exc:
        if exc.status == 400:
            raise await asyncio.to_thread(refusal, exc, query.sparql) from None
        raise
    return Response(
        payload["body"],
        media_type=CONTENT_TYPES[payload["format"]],
        headers={"X-Kgforge-Build": version.id, "Vary": "Accept"},
    )


def screen(sparql: str) -> None:
    """What is refused before a worker sees the query: too deep, a bad escape (400), SERVICE (403)."""
    check_query_text(sparql)
    if stages.has_service_clause(sparql):
        raise ProtocolError(
            403,
            "the query has a SERVICE clause, which would make this server send requests to "
            "the endpoint it names: refused",
        )


def refusal(error: ServedQueryError, sparql: str) -> ProtocolError | ServedQueryError:
    """A worker's 400 as the client should read it: an update is a 403, a syntax error gets the words
    `kgforge query` prints for the same mistake (an unknown prefix named, with the known ones)."""
    if stages.is_update(sparql):
        return ProtocolError(403, "this endpoint is read-only: SPARQL updates are refused")
    if str(error).startswith(SYNTAX_ERROR):
        return ProtocolError(400, explain_error(str(error).removeprefix(SYNTAX_ERROR), sparql))
    return error


async def read_body(request: Request) -> bytes:
    """The request body, refused with 413 once it passes MAX_BODY (announced or streamed); kept on the
    request, so a retry on a newer build (see :func:`guarded`) reads it again."""
    if hasattr(request.state, "body"):
        return request.state.body
    too_big = ProtocolError(413, f"the request body is larger than {MAX_BODY} bytes")
    announced = request.headers.get("content-length", "0")
    if not announced.isdigit() or int(announced) > MAX_BODY:
        raise too_big
    chunks, size = [], 0
    limit = request.app.state.options.body_timeout
    try:
        async with asyncio.timeout(limit):  # a body dribbled a byte at a time must not hold a connection for ever
            async for chunk in request.stream():
                size += len(chunk)
                if size > MAX_BODY:
                    raise too_big
                chunks.append(chunk)
    except TimeoutError:
        raise ProtocolError(408, f"the request body did not arrive within {limit:g} s") from None
    request.state.body = b"".join(chunks)
    return request.state.body


async def status(domain: ServedDomain, request: Request) -> Response:
    """The build being served and whether its search index is ready (for scripts and tests)."""
    version = domain.current()
    language = await asyncio.to_thread(lambda: version.snapshot.language)
    return JSONResponse(
        {
            "domain": domain.paths.domain,
            "build": version.id,
            "search_ready": version.index is not None,
            "language": language,
            "timeout_s": domain.options.timeout,
            "max_rows": domain.options.max_rows,
            "workers": domain.options.workers,
            "time": time.time(),
        }
    )
