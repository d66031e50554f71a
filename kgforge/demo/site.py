"""The README demo's crawl: a tiny Douban-shaped site served on 127.0.0.1 by the demo itself.

``with serve_demo_site() as base_url:`` serves the bundled pages (two films of the Top 250 list and
their directors and stars) until the block ends; ``demo_crawl(workdir)`` crawls them politely with
the ``douban_movie`` spec and builds the ``film`` domain from the crawl. Nothing leaves the machine.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from kgforge.core.records import Record
from kgforge.core.schema import SourceSpec
from kgforge.crawl.engine import CrawlSummary, crawl, crawl_dir_for
from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.loopback import LoopbackSite
from kgforge.crawl.spec import load_spec
from kgforge.publish.transaction import BuildSummary, build
from kgforge.store.layout import domain_paths

DEMO_SITE = Path(__file__).resolve().parent / "demo_site"
DEMO_DELAY = 0.2  # seconds between requests: polite even to our own loopback server


@contextmanager
def serve_demo_site() -> Iterator[str]:
    """Serve the bundled demo pages on an ephemeral loopback port; yields the base URL."""
    with LoopbackSite(DEMO_SITE) as site:
        yield site.base_url


@dataclass(frozen=True)
class DemoCrawl(Record):
    """The demo site crawled (pages fetched, cached, failed) and the domain built from the crawl."""

    crawl: CrawlSummary
    build: BuildSummary


def demo_crawl(workdir: Path | str, domain: str = "film", show_progress: bool = True) -> DemoCrawl:
    """Serve the demo site, crawl it into ``workdir``, build ``domain`` from it; returns both summaries."""
    spec_name = "douban_movie"
    with serve_demo_site() as base_url:
        spec = load_spec(spec_name, base_url)
        folder = crawl_dir_for(domain_paths(domain, workdir).root, spec_name)
        summary = crawl(spec, folder, CrawlConfig(delay=DEMO_DELAY), restart=True, show_progress=show_progress)
    built = build(
        domain, [SourceSpec("crawl", spec_name)], workdir, show_progress=show_progress, use_schema_sources=False
    )
    return DemoCrawl(summary, built)
