"""Running the app under uvicorn, loopback by default.

The listening socket is bound here, before uvicorn starts and before anything is announced, so a busy port
or a host that names no address of this machine is one clear error (naming ``--port`` or ``--host``), and
"reachable from other machines" is said only of an address that was really bound and is not loopback.

Each connection is held to deadlines uvicorn does not keep by itself (:class:`GuardedProtocol`): its
request headers must arrive within ``header_timeout`` seconds (from the connection, or from the end of
the previous answer on a kept-alive one); past ``max_connections`` open connections a new one is answered
503 and closed at once. The body has its own deadline in the app (``body_timeout``).
"""

from __future__ import annotations

import errno
import ipaddress
import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import uvicorn
from starlette.applications import Starlette
from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from kgforge.core.errors import KgforgeError
from kgforge.serve.app import create_app
from kgforge.serve.domain import ServeOptions
from kgforge.store.snapshot import Snapshot

log = logging.getLogger(__name__)
KEEP_ALIVE = 5  # seconds an idle kept-alive connection stays open (uvicorn's default, named here)


def _plain(status: str, text: str) -> bytes:
    """A whole HTTP/1.1 answer that closes its connection, for the protocol to write before any app runs."""
    body = text.encode()
    return (
        f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n"
        f"X-Content-Type-Options: nosniff\r\nContent-Length: {len(body)}\r\n\r\n"
    ).encode() + body


BUSY = _plain("503 Service Unavailable", "the server has too many open connections; try again\n")
TOO_SLOW = _plain("408 Request Timeout", "the request headers did not arrive in time\n")


class ServeError(KgforgeError):
    """The server cannot start where it was asked to listen (a busy port, an unknown host)."""


@dataclass(frozen=True)
class Listening:
    """Where a started server answers, and whether other machines can reach it."""

    url: str
    host: str
    port: int
    reachable_from_other_machines: bool


def is_loopback(host: str) -> bool:
    """Whether every address ``host`` names is a loopback address (127.0.0.0/8, ::1)."""
    try:
        infos = socket.getaddrinfo(host, None)
    except (socket.gaierror, UnicodeError):
        return False
    # an address is text (IPv6 maybe with a %scope), except IPv6's (int, bytes) in a Python built without IPv6
    # support, which this cannot read: not called loopback, so the server warns rather than stays silent
    return bool(infos) and all(
        isinstance(info[4][0], str) and ipaddress.ip_address(info[4][0].split("%")[0]).is_loopback for info in infos
    )


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to ``host``:``port``, or a ServeError saying which option to change."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (socket.gaierror, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, socket.gaierror) else str(exc)
        raise ServeError(f"--host {host!r} is not an address or a name this machine can resolve ({reason})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # a restart right after a stop reuses the port
    try:
        sock.bind(address)
    except OSError as exc:
        sock.close()
        raise ServeError(_bind_failure(host, port, exc)) from None
    return sock


def _bind_failure(host: str, port: int, exc: OSError) -> str:
    if exc.errno == errno.EADDRINUSE:
        return f"port {port} on {host} is already in use (another server?); choose a free one with --port"
    if exc.errno == errno.EACCES:
        return f"port {port} on {host} needs privileges this user lacks; choose one above 1023 with --port"
    if exc.errno == errno.EADDRNOTAVAIL:
        return f"--host {host}: no network interface of this machine has that address"
    return f"cannot listen on {host}:{port}: {exc.strerror or exc}"


def listening(sock: socket.socket, host: str | None = None) -> Listening:
    """Where ``sock`` answers: its URL with ``host`` as the user wrote it (``localhost`` stays a name), and
    whether the address really bound is reachable from other machines (not loopback)."""
    address, port = sock.getsockname()[:2]
    shown = host or address
    shown = f"[{shown}]" if ":" in shown else shown
    reachable = not ipaddress.ip_address(address.split("%")[0]).is_loopback
    return Listening(f"http://{shown}:{port}", address, port, reachable)


def serve(
    domain: str,
    workdir: Path | str | None = None,
    options: ServeOptions | None = None,
    sock: socket.socket | None = None,
    announce: Callable[[Listening], None] | None = None,
) -> None:
    """Serve ``domain`` until interrupted. The store must exist (a clear error otherwise, before binding);
    the address must be free (a ServeError otherwise, before anything is announced). ``announce`` is
    called once the socket is bound; without it a non-loopback address is logged as a warning."""
    options = options or ServeOptions()
    paths = Snapshot.open(domain, workdir).paths
    sock = sock if sock is not None else listen(options.host, options.port)
    where = listening(sock, options.host)
    if announce is not None:
        announce(where)
    elif where.reachable_from_other_machines:
        log.warning("listening on %s: the endpoint and explorer are reachable from other machines", where.host)
    server = uvicorn.Server(uvicorn_config(create_app(paths, options), options))
    server.run(sockets=[sock])


def uvicorn_config(app: Starlette, options: ServeOptions) -> uvicorn.Config:
    """How uvicorn runs the app: the connection deadlines and cap above, quiet logs, lifespan on."""
    protocol = type(
        "Guarded",
        (GuardedProtocol,),
        {"header_timeout": options.header_timeout, "max_connections": options.max_connections},
    )
    return uvicorn.Config(
        app,
        http=protocol,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=5,
        timeout_keep_alive=KEEP_ALIVE,
        lifespan="on",
    )


class GuardedProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol with a header deadline and a connection cap.

    uvicorn's own ``limit_concurrency`` answers 503 only once a request's headers are in, which a slow
    client never sends, so the cap is applied when a connection is made: past it, the connection that has
    waited longest for its request's headers (idle, or sending them slowly) is closed to make room, so
    idle connections cannot lock out a client that sends its request at once; only when every connection
    is busy with a request is the new one answered 503."""

    header_timeout: float = 10.0
    max_connections: int = 512
    _header_timer: Any = None
    _waiting_since = 0.0
    _began = False

    def connection_made(self, transport: Any) -> None:
        super().connection_made(transport)
        open_now = sum(1 for other in self.connections if not other.transport.is_closing())
        if open_now > self.max_connections and not self._make_room():
            transport.write(BUSY)
            transport.close()
            return
        self._arm()

    def _make_room(self) -> bool:
        """Close the connection that has waited longest for request headers; False when none is waiting."""
        waiting = [
            other
            for other in self.connections
            if other is not self and isinstance(other, GuardedProtocol) and other._awaiting_headers()
        ]
        if not waiting:
            return False
        oldest = min(waiting, key=lambda other: other._waiting_since)
        oldest._disarm()
        oldest.transport.close()
        return True

    def _awaiting_headers(self) -> bool:
        return self._header_timer is not None and not self.transport.is_closing()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def on_message_begin(self) -> None:
        self._began = True
        super().on_message_begin()

    def on_headers_complete(self) -> None:
        self._disarm()
        self._began = False
        super().on_headers_complete()

    def on_response_complete(self) -> None:
        pipelined = bool(self.pipeline)  # the next request's headers are already in: no deadline for them
        super().on_response_complete()
        if not pipelined and not self.transport.is_closing():
            self._arm()

    def _arm(self) -> None:
        self._disarm()
        self._waiting_since = self.loop.time()
        self._header_timer = self.loop.call_later(self.header_timeout, self._headers_too_slow)

    def _disarm(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _headers_too_slow(self) -> None:
        self._header_timer = None
        if self.transport.is_closing() or (self.cycle is not None and not self.cycle.response_complete):
            return
        if self._began:
            self.transport.write(TOO_SLOW)
        self.transport.close()
