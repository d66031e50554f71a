"""Helpers shared by the crawl tests: the fixture sites and their scripted misbehaviour."""

from __future__ import annotations

import json
from pathlib import Path

from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.loopback import Route, Sequence, Stall, Static
from kgforge.demo.site import DEMO_SITE

SITES = Path(__file__).resolve().parent / "fixtures" / "sites"
# The Douban fixture site: the bundled demo site's pages, plus and overridden by the fixture's own
# (more list pages, the misbehaving pages). Pass it to LoopbackSite as it is.
DOUBAN = (DEMO_SITE, SITES / "douban_movie")
MAX_BYTES = 200_000
# Fast but still polite settings for tests: 50 ms between requests, short timeouts.
TEST_CONFIG = CrawlConfig(delay=0.05, read_timeout=0.5, max_retries=1, backoff_base=0.2, max_bytes=MAX_BYTES)
CLI_SETTINGS = ["--delay", "0.05", "--read-timeout", "0.5", "--retries", "1", "--max-bytes", str(MAX_BYTES)]

TOO_MANY = "/subject/1291561/"  # 429 with Retry-After: 1, then the page
SERVER_ERROR = "/subject/1292063/"  # 500, then the page
GBK_AS_GB2312 = "/subject/1291841/"
NO_CHARSET = "/subject/1292224/"
BROKEN = "/subject/1295644/"
STALLS = "/subject/1300267/"  # headers and 12 bytes, then silence
LOOP = "/subject/1292001/"
OVERSIZED = "/subject/1292213/"
DISALLOWED = "/subject/1291549/"


def fixture_site(site: str) -> tuple[Path, ...]:
    """The folders serving a spec's fixture site, in LoopbackSite's layering order."""
    return DOUBAN if site == "douban_movie" else (SITES / site,)


def fixture_pages(site: str) -> list[str]:
    """Paths of the pages (not redirects) the fixture site's routes.json files serve."""
    table: dict = {}
    for folder in fixture_site(site):
        table.update(json.loads((folder / "routes.json").read_text(encoding="utf-8")))
    return [path for path, entry in table.items() if "redirect" not in entry]


def douban_routes() -> dict[str, Route]:
    """Fresh scripted routes (each Sequence remembers how often it answered)."""
    page = lambda name: (DOUBAN[-1] / name).read_bytes()  # noqa: E731
    return {
        TOO_MANY: Sequence(
            [
                Static(b"slow down", 429, {"Retry-After": "1", "Content-Type": "text/plain"}),
                Static(page("subject_1291561.html")),
            ]
        ),
        SERVER_ERROR: Sequence(
            [Static(b"internal error", 500, {"Content-Type": "text/plain"}), Static(page("subject_1292063.html"))]
        ),
        STALLS: Stall(max_seconds=20),
        OVERSIZED: Static(b"<html><body>" + b"x" * (MAX_BYTES + 100_000)),
    }
