"""A small threaded HTTP server on 127.0.0.1 serving a folder of pages, with scripted misbehaviour.

Used by the tests, the benchmark and the README demo: it logs every request (time, method, path,
User-Agent) so a test can assert what was fetched, in which order and how far apart. A site
folder holds ``routes.json`` mapping ``path?query`` to ``{"file": ..., "status": ..., "headers": {...}}``;
routes added in code can answer 429 then 200, stall mid-body, drip headers or body a byte at a
time, redirect in a loop or to another host, and so on. ``LoopbackSite(host="127.0.0.2")`` serves
on another loopback address: to a crawler, another host.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

Handler = BaseHTTPRequestHandler


@dataclass(frozen=True)
class LoggedRequest:
    time: float  # time.monotonic() when the request line arrived
    path: str
    user_agent: str
    method: str = "GET"


class Route:
    """Answers one path. Subclasses write the whole response through ``handler``."""

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        raise NotImplementedError


@dataclass
class Static(Route):
    body: bytes
    status: int = 200
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": "text/html; charset=utf-8"})

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        handler.send_response(self.status)
        for name, value in self.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(self.body)))
        handler.end_headers()
        handler.wfile.write(self.body)


@dataclass
class Redirect(Route):
    location: str
    status: int = 302

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        Static(b"", self.status, {"Location": self.location}).serve(handler, stop)


@dataclass
class Sequence(Route):
    """The n-th request gets the n-th route; the last one repeats."""

    routes: list[Route]
    served: int = 0

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        route = self.routes[min(self.served, len(self.routes) - 1)]
        self.served += 1
        route.serve(handler, stop)


@dataclass
class Stall(Route):
    """Sends the headers and the start of a body, then never finishes (until the server stops)."""

    prefix: bytes = b"<html><body>"
    declared_length: int = 100_000
    max_seconds: float = 30.0

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Content-Length", str(self.declared_length))
        handler.end_headers()
        handler.wfile.write(self.prefix)
        handler.wfile.flush()
        stop.wait(self.max_seconds)
        handler.close_connection = True


@dataclass
class Stream(Route):
    """A body of ``size`` bytes without Content-Length (ends when the connection closes)."""

    size: int
    chunk: bytes = b"<p>" + b"x" * 1021

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "text/html; charset=utf-8")
        handler.send_header("Connection", "close")
        handler.end_headers()
        handler.close_connection = True
        sent = 0
        try:
            while sent < self.size and not stop.is_set():
                handler.wfile.write(self.chunk)
                sent += len(self.chunk)
        except (BrokenPipeError, ConnectionResetError):
            return


@dataclass
class Drip(Route):
    """A response sent one byte every ``interval`` seconds: from the status line on (``phase="headers"``,
    a header that never ends) or after complete headers (``phase="body"``, a body that never ends).
    Each byte arrives well within any read timeout; only a deadline on the whole response ends it."""

    phase: str = "body"
    interval: float = 0.5
    max_seconds: float = 60.0

    def serve(self, handler: Handler, stop: threading.Event) -> None:
        handler.close_connection = True
        if self.phase == "headers":
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nX-Drip: "
        else:
            head = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: 100000\r\n\r\n<html>"
        handler.wfile.write(head)
        end = time.monotonic() + self.max_seconds
        try:
            while time.monotonic() < end and not stop.wait(self.interval):
                handler.wfile.write(b"x")
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            return


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        # Clients that hang up (timeouts, size limits, a killed crawl) are expected here.
        return


class LoopbackSite:
    """``with LoopbackSite(folder) as site: site.base_url`` — served until the block ends.

    ``folder`` may be a tuple of site folders layered in order (a later folder's routes override an
    earlier one's), so a test site can extend the bundled demo site without copying its pages."""

    def __init__(
        self,
        folder: Path | tuple[Path, ...] | None = None,
        routes: dict[str, Route] | None = None,
        host: str = "127.0.0.1",
    ) -> None:
        folders = folder if isinstance(folder, tuple) else (folder,) if folder else ()
        self.routes: dict[str, Route] = {}
        for layer in folders:
            self.routes.update(load_routes(layer))
        self.routes.update(routes or {})
        self.host = host
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._server is None:
            raise RuntimeError("the site is not being served")
        host, port = self._server.server_address[:2]
        assert isinstance(host, str)  # an AF_INET server's address: (host, port)
        return f"http://{host}:{port}"

    def paths(self) -> list[str]:
        with self._lock:
            return [entry.path for entry in self.log]

    def start(self) -> LoopbackSite:
        site = self

        class _Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out at once: no 40 ms delayed-ACK stalls

            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                with site._lock:
                    site.log.append(
                        LoggedRequest(time.monotonic(), self.path, self.headers.get("User-Agent", ""), self.command)
                    )
                    route = site.routes.get(self.path)
                if route is None:
                    Static(b"<html><body>not found</body></html>", 404).serve(self, site._stop)
                else:
                    route.serve(self, site._stop)

            def do_POST(self) -> None:  # noqa: N802 (a SPARQL SERVICE call posts its query)
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                self.do_GET()

            def log_message(self, format: str, *args: object) -> None:
                return

        self._server = _QuietServer((self.host, 0), _Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> LoopbackSite:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def load_routes(folder: Path) -> dict[str, Route]:
    """``routes.json`` of a site folder: ``{"/path?query": {"file": "page.html", ...}}``."""
    folder = Path(folder)
    table = json.loads((folder / "routes.json").read_text(encoding="utf-8"))
    routes: dict[str, Route] = {}
    for path, entry in table.items():
        if "redirect" in entry:
            routes[path] = Redirect(entry["redirect"], entry.get("status", 302))
            continue
        headers = entry.get("headers", {"Content-Type": "text/html; charset=utf-8"})
        routes[path] = Static((folder / entry["file"]).read_bytes(), entry.get("status", 200), headers)
    return routes


@contextmanager
def serve_folder(folder: Path | tuple[Path, ...], extra: dict[str, Route] | None = None) -> Iterator[LoopbackSite]:
    with LoopbackSite(folder, extra) as site:
        yield site


def wait_for(predicate: Callable[[], bool], timeout: float, interval: float = 0.02) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(interval)
    return predicate()
