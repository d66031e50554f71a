"""What every answer of the server carries, and which requests it refuses before any route sees them.

* Every response (errors, 404s and the framework's own 500 included) carries
  ``X-Content-Type-Options: nosniff`` and a Content-Security-Policy with ``frame-ancestors 'none'``, so no
  answer is sniffed into a script or framed by another site.
* Every request names the server it is for: a missing or empty Host header is 400 (HTTP/1.1 requires one,
  and without it the checks below have nothing to compare).
* The Host header must name this server (421 otherwise): a DNS-rebinding page reaches a loopback server
  under a name its attacker controls, so only the names the server knows are answered — ``localhost``,
  the ``--host`` it was started with (on ``0.0.0.0``/``::``, this machine's own host name), and each
  ``--allowed-host``. An IP address in Host is always answered: an address cannot be rebound.
* Nothing a page on another site sends may run a query: a request to ``/sparql`` (any method) and any
  state-changing one (POST and every method but GET, HEAD and OPTIONS) whose ``Origin`` is another origin
  than the server's own (and not one ``--cors`` allows) is refused with 403; without an Origin, so is one a
  browser marks ``Sec-Fetch-Site: cross-site``/``same-site``, and one whose ``Referer`` is another origin's
  page (an older browser, or one that leaves Origin off, still says where the request came from). A
  cross-site HTML form can only send the "simple" content types (a form-encoded POST is one), so the
  content type alone cannot tell a form from a tool; Origin, Sec-Fetch-Site and Referer can, and
  command-line clients send none of them.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = "frame-ancestors 'none'"
QUERY_PATHS = ("/sparql",)  # the routes that run a client's query text
SAME_SITE_OK = ("same-origin", "none")  # "none": typed into the address bar or opened from a bookmark
SAFE_METHODS = ("GET", "HEAD", "OPTIONS")  # the methods that change nothing (every other one is checked)


class Hygiene:
    """ASGI middleware over the whole app (outside Starlette's error handler, so its 500s are covered)."""

    def __init__(self, app: ASGIApp, host: str, allowed_hosts: tuple[str, ...], cors: tuple[str, ...]) -> None:
        self.app = app
        self.any_host = "*" in allowed_hosts
        self.hosts = {"localhost", *(_name(h) for h in (host, *allowed_hosts) if h != "*"), *_own_names(host)}
        self.cors = frozenset(o.rstrip("/").lower() for o in cors)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def send_hardened(message: Message) -> None:
            if message["type"] == "http.response.start":
                harden(MutableHeaders(scope=message))
            await send(message)

        refusal = self.refusal(scope)
        if refusal is not None:
            status, text = refusal
            await PlainTextResponse(text + "\n", status_code=status)(scope, receive, send_hardened)
            return
        await self.app(scope, receive, send_hardened)

    def refusal(self, scope: Scope) -> tuple[int, str] | None:
        headers = Headers(scope=scope)
        host = headers.get("host")
        if host is None or not _name(host):
            return 400, "the request has no Host header naming this server (HTTP/1.1 requires one)"
        if not self.host_allowed(host):
            return 421, (
                f"Host {host!r} is not a name this server answers to (a defence against DNS rebinding); "
                f"start it with --allowed-host {_name(host) or 'NAME'} to add it"
            )
        if (scope["path"] in QUERY_PATHS or scope["method"] not in SAFE_METHODS) and self.cross_site(scope, headers):
            return 403, (
                "a page from another site may not run queries here (cross-site request refused); "
                "start the server with --cors ORIGIN to let that origin's pages call the endpoint"
            )
        return None

    def host_allowed(self, host: str) -> bool:
        name = _name(host)
        if self.any_host or not name or name in self.hosts:
            return True
        try:
            ipaddress.ip_address(name)
        except ValueError:
            return False
        return True

    def cross_site(self, scope: Scope, headers: Headers) -> bool:
        origin = headers.get("origin")
        if origin is not None:
            return not self.same_or_allowed(origin, scope, headers)
        if headers.get("sec-fetch-site", "none").lower() not in SAME_SITE_OK:
            return True
        referer = headers.get("referer")
        return referer is not None and not self.same_or_allowed(_origin_of(referer), scope, headers)

    def same_or_allowed(self, origin: str, scope: Scope, headers: Headers) -> bool:
        """Whether ``origin`` (``scheme://host[:port]``) is the server's own or one ``--cors`` allows."""
        origin = origin.rstrip("/").lower()
        if "*" in self.cors or origin in self.cors:
            return True
        return origin == f"{scope.get('scheme', 'http')}://{headers.get('host', '').lower()}"


def harden(headers: MutableHeaders) -> None:
    """``nosniff`` and ``frame-ancestors 'none'`` on one response's headers (a page's own CSP is kept)."""
    headers["X-Content-Type-Options"] = "nosniff"
    policy = headers.get("content-security-policy")
    if policy is None:
        headers["Content-Security-Policy"] = FRAME_ANCESTORS
    elif "frame-ancestors" not in policy:
        headers["Content-Security-Policy"] = f"{policy}; {FRAME_ANCESTORS}"
    headers.setdefault("X-Frame-Options", "DENY")  # browsers that predate frame-ancestors


def _own_names(host: str) -> set[str]:
    """This machine's own names, for a server listening on every interface: its name is set by the local
    administrator and DNS, not by a web page, so it cannot be a rebinding name."""
    if host not in ("0.0.0.0", "::", ""):
        return set()
    return {_name(socket.gethostname()), _name(socket.getfqdn())} - {""}


def _origin_of(url: str) -> str:
    """The origin (``scheme://host[:port]``) of a Referer; ``null`` when it has none (not an http(s) URL)."""
    try:
        parts = urlsplit(url.strip())
        netloc = parts.netloc.rpartition("@")[2]  # user information is no part of an origin
    except ValueError:
        return "null"
    if parts.scheme.lower() not in ("http", "https") or not netloc:
        return "null"
    return f"{parts.scheme}://{netloc}".lower()


def _name(host: str) -> str:
    """The host name of a Host header or an address (port and IPv6 brackets off, lower case, no final dot)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")
