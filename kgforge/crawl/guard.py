"""Where a crawl may connect, and for how long: the crawl's own hosts, no internal address, a deadline
on every response.

- :class:`HostPolicy` says which URLs a crawl may request: those on the hosts of its site (the start
  URL's host, and the real site's other hosts unless the spec points at a mirror); the fetcher checks
  every redirect against it before following it, so an open redirect cannot send the crawler to
  another host's ``/secret``.
- :class:`ConnectionGuard` works inside the HTTP connection. It resolves the host itself and connects
  only to addresses it has checked, so the address checked is the address connected to: a DNS answer
  that changes between a check and the connection (rebinding) changes nothing. Internal addresses
  (loopback, private, link-local, shared, reserved, multicast) are refused unless the crawl started on
  one. It also bounds each response as a whole: requests' timeouts bound each socket read, so a server
  sending a byte every few seconds would never time out; past the response's deadline the guard shuts
  its socket down, which ends any read at once.

Through an HTTP proxy (``HTTPS_PROXY`` …) the proxy resolves the names, so only addresses written in
URLs are checked; the deadline still applies. Through a SOCKS proxy neither the address check nor the
deadline applies (its connections are made by PySocks).
"""

from __future__ import annotations

import ipaddress
import math
import os
import socket
import threading
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from urllib3.connection import HTTPConnection, HTTPSConnection
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import (
    ConnectTimeoutError,
    NameResolutionError,
    NewConnectionError,
)

DEFAULT_PORTS = {"http": 80, "https": 443}
Origin = tuple[str, int]  # (host name lower-cased, port)


class AddressRefused(Exception):
    """A host resolved only to addresses the crawl may not connect to."""


def is_internal_address(address: str) -> bool:
    """Whether ``address`` (IPv4 or IPv6, IPv4-mapped included) is not a public unicast address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return not ip.is_global or ip.is_multicast


def resolve(host: str, port: int) -> list[str]:
    """The addresses ``host`` resolves to, in the resolver's order (an address literal resolves to itself)."""
    found = socket.getaddrinfo(host.strip("[]"), port, type=socket.SOCK_STREAM)
    return list(dict.fromkeys(str(info[4][0]) for info in found))


def host_is_internal(host: str) -> bool:
    """Whether ``host`` is, or resolves to, an internal address (False when it does not resolve)."""
    try:
        return any(is_internal_address(address) for address in resolve(host, 0))
    except (OSError, UnicodeError):
        return False


def origins(url: str) -> set[Origin]:
    """``url``'s (host, port); a default port stands for both 80 and 443, so a site's http→https redirect
    stays on its host."""
    parts = urlsplit(url)
    host = (parts.hostname or "").lower()
    port = parts.port or DEFAULT_PORTS.get(parts.scheme, 0)
    return {(host, 80), (host, 443)} if port in (80, 443) else {(host, port)}


@dataclass(frozen=True)
class HostPolicy:
    """The hosts a crawl may request, and whether internal addresses are open to it.

    ``hosts`` None means: only the host of the URL asked for (a redirect may not leave it).
    """

    hosts: frozenset[Origin] | None = None
    allow_internal: bool = True

    @classmethod
    def for_start(cls, start_url: str, also: Iterable[str] = (), allow_internal: bool | None = None) -> HostPolicy:
        """The policy of a crawl starting at ``start_url`` that may also visit the hosts (netlocs) in
        ``also``; internal addresses are open only if the start URL's host is one."""
        scheme = urlsplit(start_url).scheme
        allowed = origins(start_url).union(*(origins(f"{scheme}://{netloc}/") for netloc in also))
        if allow_internal is None:
            allow_internal = host_is_internal(urlsplit(start_url).hostname or "")
        return cls(frozenset(allowed), allow_internal)

    def refusal(self, url: str, asked_for: str) -> str | None:
        """Why ``url`` may not be requested in a fetch of ``asked_for`` (None when it may). Names are
        resolved only by the connection (see :class:`ConnectionGuard`); address literals are checked here."""
        parts = urlsplit(url)
        if parts.scheme not in DEFAULT_PORTS:
            return f"{url} is not an http or https URL"
        try:
            here = origins(url)
        except ValueError:
            return f"{url} has no valid port"
        allowed = self.hosts if self.hosts is not None else origins(asked_for)
        if not here & allowed:
            names = sorted(
                {f"{host}:{port}" for host, port in allowed if port not in (80, 443)}
                | {host for host, port in allowed if port in (80, 443)}
            )
            return f"{parts.netloc} is not one of the crawl's hosts ({', '.join(names)})"
        host = parts.hostname or ""
        if not self.allow_internal and _is_address(host) and is_internal_address(host):
            return f"{host} is an internal address and the crawl did not start on one"
        return None


def _is_address(host: str) -> bool:
    try:
        ipaddress.ip_address(host.split("%", 1)[0])
    except ValueError:
        return False
    return True


@dataclass
class _Response:
    """One response in progress: its deadline and the sockets carrying it (``owned``: duplicates to close)."""

    deadline: float
    sockets: list[socket.socket] = field(default_factory=list)
    owned: list[socket.socket] = field(default_factory=list)
    expired: bool = False


class ResponseDeadlines:
    """The deadline of the response each thread is fetching. A watchdog thread shuts down the sockets of
    a response past its deadline; the blocked read returns at once and :attr:`_Response.expired` tells
    the fetcher why. The watchdog ends after ``idle_seconds`` without a response in progress."""

    def __init__(self, idle_seconds: float = 10.0) -> None:
        self.idle_seconds = idle_seconds
        self._lock = threading.Condition()
        self._responses: dict[int, _Response] = {}
        self._watchdog: threading.Thread | None = None
        self._wakes_at = math.inf  # when the watchdog looks next (it need not be woken for a later deadline)

    @contextmanager
    def bound(self, seconds: float) -> Iterator[_Response]:
        """The current thread's next response must be complete within ``seconds``."""
        response = _Response(time.monotonic() + seconds)
        with self._lock:
            self._responses[threading.get_ident()] = response
            if self._watchdog is None:
                self._watchdog = threading.Thread(target=self._watch, name="crawl-deadlines", daemon=True)
                self._watchdog.start()
            elif response.deadline < self._wakes_at:
                self._lock.notify()
        try:
            yield response
        finally:
            with self._lock:
                self._responses.pop(threading.get_ident(), None)
                owned, response.sockets, response.owned = response.owned, [], []
            for duplicate in owned:
                duplicate.close()

    def remaining(self) -> float | None:
        """Seconds left to the current thread's response (None outside :meth:`bound`)."""
        with self._lock:
            response = self._responses.get(threading.get_ident())
        return None if response is None else max(0.0, response.deadline - time.monotonic())

    def attach(self, sock: socket.socket, duplicate: bool = False) -> None:
        """Count ``sock`` as carrying the current thread's response. ``duplicate`` for a socket TLS is
        about to wrap (which detaches it): a duplicate of its descriptor reaches the same connection."""
        with self._lock:
            response = self._responses.get(threading.get_ident())
            if response is None or sock.fileno() < 0:
                return
            if duplicate:
                sock = socket.socket(fileno=os.dup(sock.fileno()))
                response.owned.append(sock)
            response.sockets.append(sock)
            if response.expired:
                _shut(sock)

    def _watch(self) -> None:
        with self._lock:
            while True:
                now = time.monotonic()
                for response in self._responses.values():
                    if not response.expired and response.deadline <= now:
                        response.expired = True
                        for sock in response.sockets:
                            _shut(sock)
                waiting = [r.deadline for r in self._responses.values() if not r.expired]
                self._wakes_at = min(waiting, default=math.inf)
                if waiting:
                    self._lock.wait(timeout=self._wakes_at - now)
                elif not self._lock.wait(timeout=self.idle_seconds) and not self._responses:
                    self._watchdog = None
                    return


def _shut(sock: socket.socket) -> None:
    """End ``sock``'s connection in both directions; a read blocked on it returns at once. (The plain
    socket method, also for a TLS socket, whose own shutdown would unwrap it under the reading thread.)"""
    try:
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
    except OSError:  # closed already, or the other side hung up
        pass


class ConnectionGuard:
    """What every connection of a crawl checks: the address it connects to, and its response deadline."""

    def __init__(self, allow_internal: bool = True, deadlines: ResponseDeadlines | None = None) -> None:
        self.allow_internal = allow_internal
        self.deadlines = deadlines or ResponseDeadlines()

    def through_proxy(self) -> ConnectionGuard:
        """The guard of connections to a proxy: any proxy address (often an internal one), same deadlines."""
        return ConnectionGuard(allow_internal=True, deadlines=self.deadlines)

    def addresses(self, host: str, port: int) -> list[str]:
        """The addresses of ``host`` this crawl may connect to, in the resolver's order; AddressRefused
        when there are none."""
        found = resolve(host, port)
        usable = found if self.allow_internal else [a for a in found if not is_internal_address(a)]
        if not usable:
            raise AddressRefused(
                f"{host} resolves to {', '.join(found)}: internal address, refused (a crawl "
                "may connect to internal addresses only when its start URL is one)"
            )
        return usable


def _guarded_connection(base: type[HTTPConnection], guard: ConnectionGuard) -> type[HTTPConnection]:
    class GuardedConnection(base):  # type: ignore[valid-type, misc]
        _dns_host: str  # urllib3's, as its HTTPConnection sets them (its base is not known to the checker here)
        timeout: float | None

        def _new_conn(self) -> socket.socket:
            host = self._dns_host
            try:
                addresses = guard.addresses(host, self.port)
            except socket.gaierror as exc:
                raise NameResolutionError(host, self, exc) from exc
            timeout, remaining = self.timeout, guard.deadlines.remaining()
            if remaining is not None and (timeout is None or isinstance(timeout, (int, float))):
                self.timeout = remaining if timeout is None else min(timeout, remaining)
            failure: Exception | None = None
            try:
                for address in addresses:
                    self._dns_host = address  # connect to the address checked, never a fresh lookup
                    try:
                        sock = super()._new_conn()
                    except (NewConnectionError, ConnectTimeoutError) as exc:
                        failure = exc
                        continue
                    guard.deadlines.attach(sock, duplicate=isinstance(self, HTTPSConnection))
                    return sock
            finally:
                self._dns_host, self.timeout = host, timeout
            assert failure is not None
            raise failure

        def request(self, *args: Any, **kwargs: Any) -> None:
            if self.sock is not None:  # a kept-alive connection: this response rides on its socket
                guard.deadlines.attach(self.sock)
            super().request(*args, **kwargs)

    return GuardedConnection


def _guarded_pools(guard: ConnectionGuard) -> dict[str, type[HTTPConnectionPool]]:
    return {
        "http": type(
            "GuardedHTTPConnectionPool",
            (HTTPConnectionPool,),
            {"ConnectionCls": _guarded_connection(HTTPConnection, guard)},
        ),
        "https": type(
            "GuardedHTTPSConnectionPool",
            (HTTPSConnectionPool,),
            {"ConnectionCls": _guarded_connection(HTTPSConnection, guard)},
        ),
    }


class GuardedAdapter(HTTPAdapter):
    """requests' adapter with every connection (direct, or to a proxy) going through ``guard``."""

    def __init__(self, guard: ConnectionGuard, **kwargs: Any) -> None:
        self.guard = guard
        super().__init__(**kwargs)

    def init_poolmanager(self, *args: Any, **kwargs: Any) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = _guarded_pools(self.guard)

    def proxy_manager_for(self, proxy: str, **proxy_kwargs: Any) -> Any:
        manager = super().proxy_manager_for(proxy, **proxy_kwargs)
        if not proxy.lower().startswith("socks"):  # a SOCKS proxy's pools connect their own way
            manager.pool_classes_by_scheme = _guarded_pools(self.guard.through_proxy())
        return manager


def guarded_session(guard: ConnectionGuard) -> requests.Session:
    """A requests session whose connections go through ``guard``."""
    session = requests.Session()
    adapter = GuardedAdapter(guard)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    return session
