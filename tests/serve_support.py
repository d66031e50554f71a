"""Shared parts of the `kgforge serve` tests: a real demo domain on disk and the real server on 127.0.0.1.

The server runs in a thread of the test process (uvicorn, configured as `kgforge serve` configures it, on a
socket bound to a free loopback port), its query workers are real processes, and the tests talk to it over
HTTP as any client would.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import uvicorn
from starlette.applications import Starlette

from kgforge.derive import derive
from kgforge.publish.transaction import build, parse_source
from kgforge.serve import ServeOptions, create_app
from kgforge.serve.runner import uvicorn_config
from kgforge.store.layout import domain_paths
from tests.conftest import REQUIRE_SHARED

MARKUP_LABEL = "<script>window.kgforgePwned = 1</script><b>粗体</b>"
FAREWELL = "https://kgforge.org/entity/name/3538fc389d2b129f6844"  # 霸王别姬 in the demo domain


def write_kb(path: Path, entities: dict[str, list[tuple[str, str]]]) -> Path:
    """A KdConv ``kb_<domain>.json``: entity name → [(relation, value)]."""
    kb = {name: [[name, relation, value] for relation, value in facts] for name, facts in entities.items()}
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def markup_kb(folder: Path) -> Path:
    """A film whose name is markup, linked to a demo film, so it is searchable and has a neighbour."""
    facts = [("领域", "电影"), ("主演", "巩俐"), ("类型", "剧情")]
    return write_kb(folder / "kb_markup.json", {MARKUP_LABEL: facts})


def build_demo(workdir: Path, *extra: Path, with_derived: bool = True) -> str:
    """Build the demo domain (plus ``extra`` KdConv files) into ``workdir``; return the build id."""
    build("demo", [parse_source(f"kdconv:{path}") for path in extra], workdir=workdir, show_progress=False)
    if with_derived:
        derive("demo", workdir)
    return domain_paths("demo", workdir).store_link.resolve().name


def free_socket() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


@contextmanager
def running_server(workdir: Path, **options: object) -> Iterator[str]:
    """The real app over the demo domain in ``workdir``; yields its base URL, stops it on exit."""
    served = ServeOptions(**options)
    with serving(create_app(domain_paths("demo", workdir), served), served) as base:
        yield base


@contextmanager
def serving(app: Starlette, options: ServeOptions) -> Iterator[str]:
    """``app`` under uvicorn as the commands configure it, in a thread, on a free loopback port; yields its base
    URL, stops it on exit (`kgforge serve`'s app, `kgforge collect`'s)."""
    sock = free_socket()
    server = uvicorn.Server(uvicorn_config(app, options))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


def chromium_path() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        message = "Debian's chromium is not installed (apt-get install -y chromium; .ci/run installs it)"
        if REQUIRE_SHARED or os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return found


@contextmanager
def chromium(artifacts: Path) -> Iterator[object]:
    """Headless Chromium (Debian's) through Playwright, screenshots going to ``artifacts``."""
    from playwright.sync_api import sync_playwright

    executable = chromium_path()
    artifacts.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=["--no-sandbox"])
        yield browser
        browser.close()


def wait_search_ready(client, base: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not client.get(f"{base}/api/status").json()["search_ready"]:
        if time.monotonic() > deadline:
            raise AssertionError("the search index never became ready")
        time.sleep(0.1)
