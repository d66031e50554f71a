"""One HTTP POST to a model's endpoint, bounded as a whole.

The standard library's ``http.client`` does the protocol; this module holds it to :class:`Deadline`: the
connection is made with the time left as its timeout, and a watchdog shuts the socket down when the deadline
passes, which wakes any read or write that is waiting (a server that sends 60 bytes and stalls, or drips a
byte a second, in the headers or in the body). The reply is read up to a cap and decoded (``gzip``,
``deflate``) up to the same cap, so a small compressed reply cannot inflate past it. A proxy named by
``http_proxy`` / ``https_proxy`` (and ``no_proxy``) is used as the operating system's tools use it.
"""

from __future__ import annotations

import base64
import functools
import http.client
import os
import socket
import ssl
import threading
import time
import urllib.request
import zlib
from dataclasses import dataclass
from email.message import Message
from typing import Any
from urllib.parse import SplitResult, unquote, urlsplit

from kgforge.llm.errors import LLMError
from kgforge.llm.limits import Deadline

ACCEPT_ENCODING = "gzip, deflate"  # both decoded below, under the reply cap
_READ = 1 << 16


@dataclass(frozen=True)
class HttpReply:
    """A reply: its status, headers and body (decoded from its Content-Encoding)."""

    status: int
    headers: Message
    body: bytes


def post(url: str, body: bytes, headers: dict[str, str], deadline: Deadline, max_bytes: int) -> HttpReply:
    """POST ``body`` to ``url`` and read the reply, all of it before ``deadline``; LLMError otherwise (no
    answer, a reply over ``max_bytes`` as sent or decoded, an encoding that cannot be read)."""
    parts = urlsplit(url)
    watchdog = _Watchdog(deadline)
    try:
        connection, target, extra = _connection(parts, deadline, watchdog)
        with watchdog:
            try:
                sent = {"Accept-Encoding": ACCEPT_ENCODING, **headers, **extra}
                connection.request("POST", target, body=body, headers=sent)
                response = connection.getresponse()
                data = _read_body(response, deadline, max_bytes)
            except (OSError, http.client.HTTPException) as exc:
                if deadline.passed:  # the watchdog cut it off: say so, not how the cut looked
                    raise deadline.error() from None
                raise LLMError(f"{deadline.where}: {str(exc) or type(exc).__name__}") from None
            finally:
                connection.close()
    finally:
        watchdog.cancel()
    return HttpReply(response.status, response.headers, data)


class _Watchdog:
    """Shuts the connection's socket down when the deadline passes (waking a read blocked on it); used as the
    connection's ``_create_connection``, so it holds the socket from the moment it exists."""

    def __init__(self, deadline: Deadline) -> None:
        self._deadline = deadline
        self._lock = threading.Lock()
        self._guard: socket.socket | None = None  # a duplicate of the socket: TLS wrapping detaches the original
        self._timer = threading.Timer(max(deadline.end - time.monotonic(), 0.0), self._fire)
        self._timer.daemon = True

    def __enter__(self) -> _Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.cancel()

    def create_connection(self, address: tuple[str, int], timeout: Any, source_address: Any = None) -> socket.socket:
        sock = socket.create_connection(address, self._deadline.left(), source_address)
        with self._lock:
            self._guard = sock.dup()
        return sock

    def _fire(self) -> None:
        with self._lock:
            if self._guard is not None:
                try:
                    self._guard.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass  # already closed by the other end

    def cancel(self) -> None:
        self._timer.cancel()
        with self._lock:
            if self._guard is not None:
                self._guard.close()
                self._guard = None


def _connection(
    parts: SplitResult, deadline: Deadline, watchdog: _Watchdog
) -> tuple[http.client.HTTPConnection, str, dict[str, str]]:
    """A connection to ``parts``' host (or the proxy for it), the request target to send, and the headers a
    plain-HTTP proxy wants beside the request's own."""
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise LLMError(f"{deadline.where}: not an http:// or https:// address")
    target = parts.path or "/"
    if parts.query:
        target += "?" + parts.query
    proxy = _proxy_for(parts, deadline)
    host, port = (proxy.hostname, proxy.port) if proxy else (parts.hostname, parts.port)
    assert host is not None  # checked above, and the proxy's by _proxy_for
    connection: http.client.HTTPConnection
    if parts.scheme == "https":
        connection = http.client.HTTPSConnection(host, port, timeout=deadline.left(), context=_tls())
        if proxy:
            connection.set_tunnel(parts.hostname, parts.port, headers=_proxy_headers(proxy))
    else:
        connection = http.client.HTTPConnection(host, port, timeout=deadline.left())
        if proxy:  # a plain-HTTP proxy takes the whole address as the target
            target = parts.geturl()
    connection._create_connection = watchdog.create_connection  # type: ignore[attr-defined]
    return connection, target, _proxy_headers(proxy) if proxy and parts.scheme == "http" else {}


def _proxy_for(parts: SplitResult, deadline: Deadline) -> SplitResult | None:
    address = urllib.request.getproxies().get(parts.scheme)
    if not address or urllib.request.proxy_bypass(parts.netloc):
        return None
    proxy = urlsplit(address if "://" in address else "http://" + address)
    if proxy.scheme != "http" or not proxy.hostname:
        raise LLMError(
            f"{deadline.where}: the {parts.scheme} proxy {proxy.hostname or address} is not an http:// proxy"
        )
    return proxy


def _proxy_headers(proxy: SplitResult) -> dict[str, str]:
    """The proxy's credentials (``http://user:password@proxy:3128``) as a Proxy-Authorization header."""
    if proxy.username is None:
        return {}
    credentials = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}".encode()
    return {"Proxy-Authorization": "Basic " + base64.b64encode(credentials).decode("ascii")}


def _tls() -> ssl.SSLContext:
    """The system's certificate store (``SSL_CERT_FILE`` / ``SSL_CERT_DIR`` as OpenSSL reads them), and
    certifi's where it is installed, as ``requests`` would: made once per setting, shared by every thread."""
    return _tls_context(os.environ.get("SSL_CERT_FILE"), os.environ.get("SSL_CERT_DIR"))


@functools.cache
def _tls_context(cert_file: str | None, cert_dir: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    try:
        import certifi  # lazy: only for https endpoints
    except ImportError:
        return context
    context.load_verify_locations(certifi.where())
    return context


def _read_body(response: http.client.HTTPResponse, deadline: Deadline, max_bytes: int) -> bytes:
    decoder = Decoder(response.getheader("Content-Encoding") or "", max_bytes, deadline.where)
    received = 0
    while chunk := response.read1(_READ):
        received += len(chunk)
        if received > max_bytes:
            raise LLMError(f"{deadline.where}: {too_large(max_bytes)}")
        decoder.feed(chunk)
        deadline.left()
    if response.length:  # the connection ended (or was cut at the deadline) before the promised length
        if deadline.passed:
            raise deadline.error()
        raise LLMError(f"{deadline.where}: the reply ended {response.length} bytes short of its Content-Length")
    return decoder.finish()


def too_large(max_bytes: int) -> str:
    return f"the reply is larger than {max_bytes >> 20} MiB; not read further"


class Decoder:
    """A reply body's bytes as sent -> as meant (identity, gzip or deflate), refusing more than ``limit``
    decoded bytes as it goes: a gzip bomb is stopped at the cap, never inflated whole."""

    def __init__(self, encoding: str, limit: int, where: str) -> None:
        self.encoding = encoding.strip().lower()
        self.limit = limit
        self.where = where
        self._parts: list[bytes] = []
        self._size = 0
        self._fed = False
        if self.encoding in ("", "identity"):
            self._inflate = None
        elif self.encoding in ("gzip", "x-gzip"):
            self._inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
        elif self.encoding == "deflate":
            self._inflate = zlib.decompressobj(zlib.MAX_WBITS)
        else:
            raise LLMError(f"{where}: the reply's Content-Encoding {encoding!r} is not one kgforge reads")

    def feed(self, data: bytes) -> None:
        if self._inflate is None:
            self._add(data)
            return
        try:
            self._inflate_all(data)
        except zlib.error as exc:
            if self.encoding == "deflate" and not self._fed:  # some servers send deflate without its zlib header
                self._inflate = zlib.decompressobj(-zlib.MAX_WBITS)
                self._fed = True
                self.feed(data)
                return
            raise LLMError(f"{self.where}: the reply is not valid {self.encoding} ({exc})") from None
        self._fed = True

    def _inflate_all(self, data: bytes) -> None:
        assert self._inflate is not None
        while data:
            self._add(self._inflate.decompress(data, self.limit - self._size + 1))
            data = self._inflate.unconsumed_tail
        if self._inflate.unused_data:
            raise LLMError(f"{self.where}: bytes after the end of the {self.encoding} reply")

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size > self.limit:
            raise LLMError(f"{self.where}: {too_large(self.limit)} (decoded)")
        self._parts.append(piece)

    def finish(self) -> bytes:
        if self._inflate is not None:
            try:
                self._add(self._inflate.flush())
            except zlib.error as exc:
                raise LLMError(f"{self.where}: the reply is not valid {self.encoding} ({exc})") from None
            if not self._inflate.eof:
                raise LLMError(f"{self.where}: the {self.encoding} reply is cut short")
        return b"".join(self._parts)
