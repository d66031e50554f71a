"""What every answer of the server carries, and which requests it refuses before any route sees them.

* Every response (errors, 404s and the framework's own 500 included) carries
  ``X-Content-Type-Options: nosniff`` and a Content-Security-Policy with ``frame-ancestors 'none'``, so no
  answer is sniffed into a script or framed by another site.
* The Host header must name this server (421 otherwise): a DNS-rebinding page reaches a loopback server
  under a name its attacker controls, so only the names the server knows are answered — ``localhost``,
  the ``--host`` it was started with (on ``0.0.0.0``/``::``, this machine's own host name), and each
  ``--allowed-host``. An IP address in Host is always answered: an address cannot be rebound.
* Nothing a page on another site sends may run a query: a request to ``/sparql`` (any method) and any POST
  whose ``Origin`` is another origin than the server's own (and not one ``--cors`` allows), or which a
  browser marks ``Sec-Fetch-Site: cross-site``/``same-site`` without such an Origin, is refused with 403.
  A cross-site HTML form can only send the "simple" content types (a form-encoded POST is one), so the
  content type alone cannot tell a form from a tool; Origin and Sec-Fetch-Site can, and command-line
  clients send neither.
"""

from __future__ import annotations

import ipaddress
import socket

from starlette.datastructures import Headers, MutableHeaders
from starlette.responses import PlainTextResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

FRAME_ANCESTORS = "frame-ancestors 'none'"
QUERY_PATHS = ("/sparql",)  # the routes that run a client's query text
SAME_SITE_OK = ("same-origin", "none")  # "none": typed into the address bar or opened from a bookmark


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
        if host is not None and not self.host_allowed(host):
            return 421, (
                f"Host {host!r} is not a name this server answers to (a defence against DNS rebinding); "
                f"start it with --allowed-host {_name(host) or 'NAME'} to add it"
            )
        if (scope["path"] in QUERY_PATHS or scope["method"] == "POST") and self.cross_site(scope, headers):
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
            origin = origin.rstrip("/").lower()
            if "*" in self.cors or origin in self.cors:
                return False
            return origin != f"{scope.get('scheme', 'http')}://{headers.get('host', '').lower()}"
        return headers.get("sec-fetch-site", "none").lower() not in SAME_SITE_OK


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


def _name(host: str) -> str:
    """The host name of a Host header or an address (port and IPv6 brackets off, lower case, no final dot)."""
    host = host.strip().lower()
    if host.startswith("["):
        return host[1 : host.find("]")] if "]" in host else host[1:]
    if host.count(":") == 1:
        host = host.partition(":")[0]
    return host.rstrip(".")
