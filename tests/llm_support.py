"""Real HTTP servers on 127.0.0.1 for the LLM client's tests: each answers its n-th POST as a test says
(misbehaving on purpose: redirects, endless or dripping replies, stalls, compressed bodies)."""

from __future__ import annotations

import json
import ssl
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from kgforge.core.quarantine import Quarantine
from kgforge.llm import LLMClient

COMPLETION = json.dumps({"choices": [{"message": {"role": "assistant", "content": "fine"}}]}).encode()


@contextmanager
def server(
    answer: Callable[[BaseHTTPRequestHandler, int], None],
    keep_body: bool = False,
    tls: ssl.SSLContext | None = None,
) -> Iterator[tuple[str, list[str]]]:
    """A server whose n-th POST is answered by ``answer(handler, n)``; yields its URL and the paths asked.
    With ``keep_body``, the handler has the request's last message as ``handler.prompt``; with ``tls``, it
    speaks HTTPS with that context."""
    asked: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 (http.server's name)
            body = self.rfile.read(int(self.headers["Content-Length"]))
            if keep_body:
                self.prompt = json.loads(body)["messages"][-1]["content"]
            asked.append(self.path)
            try:
                answer(self, len(asked))
            except (BrokenPipeError, ConnectionResetError):
                pass

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    if tls is not None:
        httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{httpd.server_address[1]}/v1", asked
    finally:
        httpd.shutdown()
        httpd.server_close()


def reply(handler: BaseHTTPRequestHandler, status: int = 200, body: bytes = COMPLETION, **headers: str) -> None:
    handler.send_response(status)
    for name, value in {"Content-Length": str(len(body)), **headers}.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def client(url: str, tmp_path: Path, timeout: float = 10.0) -> LLMClient:
    return LLMClient(url, "m", tmp_path / "cache", Quarantine(tmp_path / "rejected.jsonl"), timeout=timeout)


def ask(llm: LLMClient) -> str | None:
    return llm.ask([{"role": "user", "content": "hello"}], lambda content: content, "test")
