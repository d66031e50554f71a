"""The collection site: the workers' chat page, the admin view and the JSON API, on ``kgforge serve``'s stack.

Around every route: :class:`kgforge.serve.app.HardenedApp` (security headers, Host allow-list, no cross-site
POST) and, in the runner, the connection deadlines and cap. Here:

* every API call carries ``Authorization: Bearer TOKEN``; a token is looked up by digest and compared in
  constant time (:class:`kgforge.collect.folder.Tokens`) and is never logged or echoed; unknown: 401;
* each worker has a rate limit (:class:`kgforge.collect.service.Buckets`): past it, 429 with Retry-After;
* a request body is read under serve's deadline and size cap, must be a JSON object (415, 400 otherwise);
* pages are rendered by Jinja2 with autoescaping, under the explorer's Content-Security-Policy (scripts from
  this server only); the script puts text into the page with ``textContent`` only; no page or answer may be
  cached, and none sends a Referer (the token is in the page's address until the script takes it out).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from kgforge.collect.export import encoded, layout_for, session_records
from kgforge.collect.i18n import STRINGS, page_language
from kgforge.collect.journal import JournalBroken
from kgforge.collect.records import CollectError, Refused, SessionView
from kgforge.serve import assets
from kgforge.serve.app import HardenedApp, read_body
from kgforge.serve.domain import ServeOptions
from kgforge.serve.explorer import CSP
from kgforge.serve.protocol import ProtocolError

if TYPE_CHECKING:
    from kgforge.collect.service import CollectService

HERE = Path(__file__).resolve().parent
STATIC = HERE / "static"
TEMPLATES = Environment(loader=FileSystemLoader(HERE / "templates"), autoescape=select_autoescape(default=True))
PRIVATE = {"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"}
LONGEST_WAIT = 25.0  # seconds a GET of a session may wait for a change (a long poll)


def create_collect_app(service: CollectService, options: ServeOptions) -> Starlette:
    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        try:
            yield
        finally:
            service.close()

    def api(
        handler: Callable[[CollectService, Request, str], Awaitable[Any]],
    ) -> Callable[[Request], Awaitable[Response]]:
        async def endpoint(request: Request) -> Response:
            try:
                worker = _worker(service, request)
                result = await handler(service, request, worker)
            except Refused as exc:
                return _refusal(exc)
            except ProtocolError as exc:
                return _refusal(Refused(exc.status, str(exc)))
            except JournalBroken as exc:
                return _refusal(Refused(503, str(exc)))
            return JSONResponse(result.as_dict(), headers=PRIVATE)

        return endpoint

    async def static(request: Request) -> Response:
        return await assets.serve_from(STATIC, request)

    routes = [
        Route("/", lambda _: RedirectResponse("/collect", status_code=303), methods=["GET"]),
        Route("/collect", _pages(service, worker_page), methods=["GET"]),
        Route("/collect/admin", _pages(service, admin_page), methods=["GET"]),
        Route("/collect/admin/export", _pages(service, admin_export), methods=["GET"]),
        Route("/api/collect/join", api(join), methods=["POST"]),
        Route("/api/collect/session/{sid}", api(session), methods=["GET"]),
        Route("/api/collect/session/{sid}/turn", api(turn), methods=["POST"]),
        Route("/api/collect/session/{sid}/finish", api(finish), methods=["POST"]),
        Route("/api/collect/progress", _admin_api(service), methods=["GET"]),
        Route("/collect/static/{path:path}", static, methods=["GET"]),
        Route("/static/{path:path}", assets.serve, methods=["GET"]),
    ]
    app = HardenedApp(routes=routes, lifespan=lifespan)
    app.state.options = options
    app.state.service = service
    return app


def _refusal(exc: Refused) -> JSONResponse:
    headers = dict(PRIVATE)
    if exc.status == 401:
        headers["WWW-Authenticate"] = "Bearer"
    if exc.status == 429:
        headers["Retry-After"] = str(max(1, round(getattr(exc, "retry_after", 1))))
    return JSONResponse({"error": str(exc)}, status_code=exc.status, headers=headers)


def _bearer(request: Request) -> str:
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Refused(401, "send your token as 'Authorization: Bearer TOKEN'")
    return token.strip()


def _worker(service: CollectService, request: Request) -> str:
    worker = service.worker(_bearer(request))
    if worker is None:
        raise Refused(401, "this token is not a worker's of this collection")
    _limit(service, worker)
    return worker


def _limit(service: CollectService, key: str) -> None:
    wait = service.limits.take(key)
    if wait is not None:
        refused = Refused(429, f"too many requests; try again in {wait:.1f} s")
        refused.retry_after = wait  # type: ignore[attr-defined]
        raise refused


async def _json(request: Request) -> dict[str, Any]:
    if request.headers.get("content-type", "").split(";")[0].strip().lower() != "application/json":
        raise Refused(415, "send the body as application/json")
    try:
        body = json.loads(await read_body(request))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError):
        raise Refused(400, "the body is not JSON") from None
    if not isinstance(body, dict):
        raise Refused(400, "the body must be a JSON object")
    return body


# ---------------------------------------------------------------- the API


async def join(service: CollectService, request: Request, worker: str) -> Any:
    return await service.collection.join(worker)


async def session(service: CollectService, request: Request, worker: str) -> Any:
    sid = request.path_params["sid"]
    try:
        since = int(request.query_params.get("since", "-1"))
        wait = float(request.query_params.get("wait", "0"))
    except ValueError:
        raise Refused(400, "'since' must be a whole number and 'wait' a number of seconds") from None
    if wait > 0:
        return await service.collection.wait(worker, sid, since, min(wait, LONGEST_WAIT))
    return service.collection.view(worker, sid)


async def turn(service: CollectService, request: Request, worker: str) -> Any:
    body = await _json(request)
    return await service.collection.turn(
        worker, request.path_params["sid"], body.get("text"), body.get("facts", []), body.get("step")
    )


async def finish(service: CollectService, request: Request, worker: str) -> Any:
    return await service.collection.finish(worker, request.path_params["sid"])


def _admin_api(service: CollectService) -> Callable[[Request], Awaitable[Response]]:
    async def progress(request: Request) -> Response:
        try:
            if not service.is_admin(_bearer(request)):
                raise Refused(401, "this token is not the collection's admin token")
            _limit(service, "admin")
        except Refused as exc:
            return _refusal(exc)
        return JSONResponse(service.collection.progress().as_dict(), headers=PRIVATE)

    return progress


# ---------------------------------------------------------------- pages

Page = Callable[["CollectService", Request, str], Awaitable[Response]]


def _pages(service: CollectService, page: Page) -> Callable[[Request], Awaitable[Response]]:
    async def endpoint(request: Request) -> Response:
        lang = page_language(request.query_params.get("lang"), request.headers.get("accept-language", ""))
        try:
            return await page(service, request, lang)
        except Refused as exc:
            return render("message.html", lang, exc.status, message=str(exc))

    return endpoint


def render(template: str, lang: str, status: int = 200, **context: Any) -> HTMLResponse:
    html = TEMPLATES.get_template(template).render(lang=lang, t=STRINGS[lang], **context)
    return HTMLResponse(html, status_code=status, headers={**PRIVATE, "Content-Security-Policy": CSP})


async def worker_page(service: CollectService, request: Request, lang: str) -> Response:
    """The chat page. With a token that names a worker in a session, the session is in the page as the server
    renders it (the script carries on from there); without one, the script finds the token it kept."""
    token = request.query_params.get("token")
    view: SessionView | None = None
    if token is not None:
        worker = service.worker(token)
        if worker is None:
            raise Refused(403, STRINGS[lang]["bad_token"])
        _limit(service, worker)
        sid = service.collection.active.get(worker)
        if sid is not None and service.collection.sessions[sid].durable:
            view = service.collection.view(worker, sid)
    data = {"lang": lang, "strings": STRINGS[lang], "view": view.as_dict() if view else None}
    return render("collect.html", lang, view=view, data=data, style=service.style.name)


def _admin(service: CollectService, request: Request) -> None:
    if not service.is_admin(request.query_params.get("token", "")):
        raise Refused(403, "this page needs the collection's admin token (DIR/admin.token)")
    _limit(service, "admin")


async def admin_page(service: CollectService, request: Request, lang: str) -> Response:
    _admin(service, request)
    progress = service.collection.progress()
    return render(
        "admin.html",
        lang,
        progress=progress,
        formats=list(service.style.exports),
        token=request.query_params["token"],
        domain=service.settings.domain,
    )


async def admin_export(service: CollectService, request: Request, lang: str) -> Response:
    """The finished sessions as ``collect export`` writes them, made now."""
    _admin(service, request)
    fmt = request.query_params.get("format", next(iter(service.style.exports)))
    try:
        layout = layout_for(service.style, fmt)
    except CollectError as exc:
        raise Refused(400, str(exc)) from None
    finished = service.collection.collected()
    body = await asyncio.to_thread(lambda: encoded(layout, session_records(service.style, fmt, finished)))
    name = f"collected-{fmt.lower()}.{'json' if layout.container == 'array' else 'jsonl'}"
    return Response(
        body,
        media_type="application/json" if layout.container == "array" else "application/x-ndjson",
        headers={**PRIVATE, "Content-Disposition": f'attachment; filename="{name}"'},
    )
