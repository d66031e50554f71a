"""The ASGI app: the SPARQL endpoint and the explorer, over one domain.

Why an ASGI app over pyoxigraph rather than Oxigraph's own server: see ``docs/serve.md``. In short, the
server must pick up a rebuilt store without a restart, bound rows, refuse SERVICE calls, add kgforge's
prefixes and serve the explorer from the same process, none of which ``oxigraph serve-read-only`` does.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

from kgforge.core.errors import QueryOutOfMemory, QueryTimeout
from kgforge.serve import assets, explorer, kg
from kgforge.serve.domain import (
    ServedDomain,
    ServedQueryError,
    ServeOptions,
    VersionGone,
)
from kgforge.serve.pool import WorkerDied
from kgforge.serve.protocol import CONTENT_TYPES, ProtocolError, read_request

MAX_BODY = 1 << 20  # a request body past 1 MiB is refused (413) as soon as it is seen to be


def create_app(paths: kg.DomainPaths, options: ServeOptions) -> Starlette:
    domain = ServedDomain(paths, options)

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        await domain.start()
        try:
            yield
        finally:
            await domain.close()

    middleware = [Middleware(CORSMiddleware, allow_origins=list(options.cors), allow_methods=["GET", "POST"],
                             allow_headers=["Content-Type", "Accept"], expose_headers=["X-Kgforge-Build"])
                  ] if options.cors else []
    routes = [
        Route("/sparql", guarded(domain, sparql_endpoint), methods=["GET", "POST"]),
        Route("/api/status", guarded(domain, status), methods=["GET"]),
        *[Route(path, guarded(domain, handler), methods=["GET"]) for path, handler in explorer.ROUTES],
        Route("/static/{path:path}", assets.serve, methods=["GET"]),
    ]
    app = Starlette(routes=routes, middleware=middleware, lifespan=lifespan)
    app.state.domain = domain
    return app


Handler = Callable[[ServedDomain, Request], Awaitable[Response]]


def guarded(domain: ServedDomain, handler: Handler) -> Callable[[Request], Awaitable[Response]]:
    """``handler`` with the server's errors turned into clear answers: 503 past the timeout, the
    worker's status for a refused query, and one retry on the new build when a request's build was
    removed under it (two rebuilds during one request)."""

    async def endpoint(request: Request) -> Response:
        try:
            try:
                return await handler(domain, request)
            except (VersionGone, kg.VersionMoved):
                return await handler(domain, request)
        except ProtocolError as exc:
            return _text(exc.status, str(exc))
        except ServedQueryError as exc:
            return _text(exc.status, str(exc))
        except (QueryTimeout, TimeoutError) as exc:
            return _text(503, str(exc) or f"the request ran past the server's {domain.options.timeout:g} s timeout")
        except QueryOutOfMemory as exc:  # the query's needs, not the server's fault: try a smaller one
            return _text(503, str(exc))
        except WorkerDied as exc:
            return _text(500, str(exc))
        except kg.StoreMissingError as exc:
            return _text(503, str(exc))
        except kg.KgforgeError as exc:  # a stage the explorer calls refused (goals, related): its own words
            return _text(500, str(exc))

    return endpoint


def _text(status: int, message: str) -> PlainTextResponse:
    return PlainTextResponse(message + "\n", status_code=status)


async def sparql_endpoint(domain: ServedDomain, request: Request) -> Response:
    body = await _body(request) if request.method == "POST" else b""
    query = read_request(request.method, request.headers.get("content-type", ""), request.url.query, body,
                         request.headers.get("accept", ""))
    if not query.sparql.strip():
        raise ProtocolError(400, "the query is empty")
    if kg.has_service_clause(query.sparql):
        raise ProtocolError(403, "the query has a SERVICE clause, which would make this server send requests to "
                                 "the endpoint it names: refused")
    deadline = domain.deadline()
    version = domain.current()
    message = {"kind": "protocol", "sparql": query.sparql, "bindings": query.bindings,
               "results_format": query.results_format, "graph_format": query.graph_format,
               "default_graphs": query.default_graphs, "named_graphs": query.named_graphs,
               "max_rows": domain.options.max_rows, "output_prefixes": kg.PREFIXES}
    try:
        payload = await domain.run(version, message, deadline)
    except ServedQueryError as exc:
        if exc.status == 400 and kg.is_update(query.sparql):
            raise ProtocolError(403, "this endpoint is read-only: SPARQL updates are refused") from None
        raise
    return Response(payload["body"], media_type=CONTENT_TYPES[payload["format"]],
                    headers={"X-Kgforge-Build": version.id, "Vary": "Accept"})


async def _body(request: Request) -> bytes:
    """The request body, refused with 413 once it passes MAX_BODY (announced or streamed); kept on the
    request, so a retry on a newer build (see :func:`guarded`) reads it again."""
    if hasattr(request.state, "body"):
        return request.state.body
    too_big = ProtocolError(413, f"the request body is larger than {MAX_BODY} bytes")
    announced = request.headers.get("content-length", "0")
    if not announced.isdigit() or int(announced) > MAX_BODY:
        raise too_big
    chunks, size = [], 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > MAX_BODY:
            raise too_big
        chunks.append(chunk)
    request.state.body = b"".join(chunks)
    return request.state.body


async def status(domain: ServedDomain, request: Request) -> Response:
    """The build being served and whether its search index is ready (for scripts and tests)."""
    version = domain.current()
    return JSONResponse({"domain": domain.paths.domain, "build": version.id, "search_ready": version.index is not None,
                         "timeout_s": domain.options.timeout,
                         "max_rows": domain.options.max_rows, "workers": domain.options.workers,
                         "time": time.time()})
