"""Polite, resumable crawling of start entities and their structured and unstructured knowledge.

- :mod:`~kgforge.crawl.fetch`: requests with per-host pacing, retries, timeouts, size limits;
- :mod:`~kgforge.crawl.robots`: robots.txt and Crawl-delay (capped);
- :mod:`~kgforge.crawl.guard`: the crawl's own hosts only (redirects included), no internal address
  unless the crawl started on one, a deadline on every whole response;
- :mod:`~kgforge.crawl.cache` / :mod:`~kgforge.crawl.frontier`: raw responses on disk and the
  SQLite frontier that makes ``--resume`` possible after a kill;
- :mod:`~kgforge.crawl.encoding`: GB2312/GBK as GB18030, charset detection from the bytes;
- :mod:`~kgforge.crawl.spec`: declarative site specs (``crawlers/<site>.py``) and extraction;
- :mod:`~kgforge.crawl.engine`: the crawl loop and re-parsing from the cache;
- :mod:`~kgforge.crawl.loopback`: a loopback HTTP server for tests, benchmarks and the demo.
"""

from kgforge.crawl.engine import (
    CrawlError,
    CrawlSummary,
    crawl,
    crawl_dir_for,
    read_records,
)
from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.spec import Record, SiteSpec, load_spec, site_names

__all__ = [
    "CrawlConfig",
    "CrawlError",
    "CrawlSummary",
    "Record",
    "SiteSpec",
    "crawl",
    "crawl_dir_for",
    "load_spec",
    "read_records",
    "site_names",
]
