"""One crawl of a site spec into a domain's folder, as `kgforge crawl` runs it, with the records its pages hold.

It lives here, not in :mod:`kgforge.api`, so the command (and a script crawling) loads the crawler alone, not
every stage: a crawl's start is quick, and a kill early in it leaves a frontier to ``--resume``.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.crawl.engine import CrawlSummary, crawl, crawl_dir_for, read_records
from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.spec import load_spec
from kgforge.store.layout import domain_paths


@dataclass(frozen=True)
class CrawlReport:
    """What a crawl fetched (:class:`~kgforge.crawl.CrawlSummary`: fetched, cached, failed, pending, robots, …) and
    the records its pages hold; ``as_dict()`` is the summary's fields then ``domain``, ``records`` and
    ``field_warnings``, as `kgforge crawl --json` prints them."""

    site: str
    base_url: str
    domain: str
    folder: Path  # <workdir>/<domain>/raw/crawl/<site>: the cache `kgforge build --source crawl:SITE` parses
    summary: CrawlSummary
    records: int
    field_warnings: tuple[str, ...]

    def as_dict(self) -> dict[str, Any]:
        return dict(
            self.summary.as_dict(), domain=self.domain, records=self.records, field_warnings=list(self.field_warnings)
        )


def crawl_site(
    site: str,
    *,
    domain: str | None = None,
    workdir: Path | str | None = None,
    base_url: str | None = None,
    config: CrawlConfig | None = None,
    limit: int | None = None,
    resume: bool = False,
    restart: bool = False,
    progress: bool = False,
) -> CrawlReport:
    """Crawl the site spec ``site`` (:func:`site_names`) politely into ``domain`` (default: the spec's), or a
    mirror at ``base_url``; pages are cached, so ``resume=True`` after a kill fetches nothing twice."""
    spec = load_spec(site, base_url)
    domain = domain or spec.domain
    folder = crawl_dir_for(domain_paths(domain, workdir).root, site)
    summary = crawl(
        spec, folder, config or CrawlConfig(), limit=limit, resume=resume, restart=restart, show_progress=progress
    )
    records = list(read_records(folder, spec))
    return CrawlReport(
        site, spec.base_url, domain, folder, summary, len(records), tuple(w for r in records for w in r.warnings)
    )
