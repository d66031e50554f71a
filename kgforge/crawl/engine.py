"""The crawl loop: frontier → polite fetch (or cache) → links → frontier, committed page by page.

``crawl(spec, crawl_dir, ...)`` fetches a site into ``crawl_dir`` (``cache/`` and
``frontier.sqlite``); ``read_records(crawl_dir)`` turns the cached detail pages into records
without any network access, so extraction can be re-run as often as the spec changes.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.progress import progress_bar
from kgforge.crawl.cache import CachedResponse, ResponseCache
from kgforge.crawl.encoding import Decoded, decode_body
from kgforge.crawl.fetch import CrawlConfig, Fetcher, host_of
from kgforge.crawl.frontier import Frontier, PageRow
from kgforge.crawl.guard import HostPolicy
from kgforge.crawl.robots import Robots
from kgforge.crawl.spec import (
    Page,
    Record,
    SiteSpec,
    extract,
    links,
    load_spec,
    parse_html,
)

BLOCKED = "host blocked"
DISALLOWED = "disallowed by robots.txt"


class CrawlError(KgforgeError):
    """A crawl cannot start or continue (unfinished frontier, base URL changed, ...)."""


@dataclass
class Outcome:
    row: PageRow
    state: str
    status: int | None = None
    from_cache: bool = False
    reason: str | None = None
    links: list[tuple[str, str]] = field(default_factory=list)
    attempts: int = 0
    blocked: bool = False
    size: int = 0
    replacements: int = 0  # undecodable bytes replaced while decoding the page


@dataclass
class CrawlSummary:
    site: str
    base_url: str
    crawl_dir: str
    fetched: int = 0  # responses fetched from the network in this run (any status)
    cached: int = 0  # responses served from the cache in this run
    failed: int = 0  # pages with no usable response (HTTP error, timeout, loop, too large)
    skipped: int = 0
    pending: int = 0  # left for a later --resume (limit reached, host given up)
    given_up: dict[str, dict[str, Any]] = field(default_factory=dict)  # host -> {"reason", "pages_left"}
    retries: int = 0
    bytes: int = 0
    replaced_characters: int = 0  # bytes no encoding could decode (U+FFFD), over all fetched pages
    seconds: float = 0.0
    robots: dict[str, str] = field(default_factory=dict)
    failures: list[dict[str, str]] = field(default_factory=list)
    partial: list[str] = field(default_factory=list)  # why coverage is partial (a capped Crawl-delay)
    frontier: dict[str, int] = field(default_factory=dict)
    resumed: bool = False

    @property
    def pages_per_second(self) -> float:
        done = self.fetched + self.cached
        return round(done / self.seconds, 2) if self.seconds else 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__, pages_per_second=self.pages_per_second)


def crawl_dir_for(domain_root: Path, site: str) -> Path:
    return Path(domain_root) / "raw" / "crawl" / site


class Crawler:
    def __init__(
        self,
        spec: SiteSpec,
        crawl_dir: Path,
        config: CrawlConfig | None = None,
        limit: int | None = None,
        show_progress: bool = True,
    ) -> None:
        self.spec = spec
        self.dir = Path(crawl_dir)
        self.config = config or CrawlConfig()
        self.limit = limit
        self.show_progress = show_progress
        self.cache = ResponseCache(self.dir / "cache")
        self.fetcher = Fetcher(
            self.config,
            allowed=lambda url: self.robots.allowed(url),
            policy=HostPolicy.for_start(spec.base_url, also=spec.scope_hosts()),
        )
        self.robots = Robots(self.fetcher, self.cache, obey=self.config.obey_robots)
        self.blocked: dict[str, str] = {}  # hosts given up in this run (401/403, or 429 after every retry)

    def run(self, resume: bool = False, restart: bool = False) -> CrawlSummary:
        frontier = Frontier(self.dir / "frontier.sqlite")
        try:
            summary = CrawlSummary(self.spec.name, self.spec.base_url, str(self.dir), resumed=resume)
            queue = self._prepare(frontier, resume, restart)
            self.cache.remove_stale_temporaries()
            started = time.perf_counter()
            self._loop(frontier, queue, summary)
            summary.seconds = round(time.perf_counter() - started, 3)
            summary.robots = self.robots.notes()
            summary.partial = [
                capped_note(origin, delay, self.config.max_crawl_delay)
                for origin, delay in self.robots.capped().items()
            ]
            summary.partial += [
                given_up_note(host, gave["reason"], gave["pages_left"]) for host, gave in summary.given_up.items()
            ]
            summary.frontier = frontier.counts()
            summary.pending = summary.frontier["pending"]
            return summary
        finally:
            frontier.close()

    def _prepare(self, frontier: Frontier, resume: bool, restart: bool) -> list[PageRow]:
        counts = frontier.counts()
        known = sum(counts.values())
        previous_base = frontier.get_meta("base_url")
        if resume and known:
            if previous_base and previous_base != self.spec.base_url:
                raise CrawlError(
                    f"the crawl in {self.dir} was made against {previous_base}, not "
                    f"{self.spec.base_url}; resume with --base-url {previous_base} or use --restart"
                )
            frontier.requeue_skipped(BLOCKED)
            return frontier.pending()
        if counts["pending"] and not restart:
            raise CrawlError(
                f"an unfinished crawl of {self.spec.name} is in {self.dir} ({counts['pending']} pages "
                "pending): pass --resume to continue it, or --restart to begin again (cached pages "
                "are reused either way)"
            )
        frontier.reset()
        frontier.set_meta("site", self.spec.name)
        frontier.set_meta("base_url", self.spec.base_url)
        frontier.set_meta("started", time.strftime("%Y-%m-%dT%H:%M:%S%z"))
        return frontier.add(self.spec.start_urls())

    def _loop(self, frontier: Frontier, queue: list[PageRow], summary: CrawlSummary) -> None:
        queues: dict[str, deque[PageRow]] = {}
        for row in queue:
            queues.setdefault(host_of(row.url), deque()).append(row)
        inflight: dict[Future, PageRow] = {}
        per_host: dict[str, int] = {}
        finished = frontier.finished()
        with (
            progress_bar(self.show_progress) as progress,
            ThreadPoolExecutor(self.config.workers, thread_name_prefix="crawl") as pool,
        ):
            task = progress.add_task(
                f"crawl {self.spec.name}", total=self._total(finished, queues, inflight), completed=finished
            )
            while True:
                for row in self._ready(queues, per_host, len(inflight), finished):
                    per_host[host_of(row.url)] = per_host.get(host_of(row.url), 0) + 1
                    inflight[pool.submit(self._visit, row)] = row
                if not inflight:
                    break
                done, _ = wait(inflight, return_when=FIRST_COMPLETED)
                for future in done:
                    row = inflight.pop(future)
                    per_host[host_of(row.url)] -= 1
                    outcome = future.result()
                    for new in self._record(frontier, outcome, summary):
                        queues.setdefault(host_of(new.url), deque()).append(new)
                    finished += 1
                    progress.update(task, completed=finished, total=self._total(finished, queues, inflight))

    def _total(self, finished: int, queues: dict[str, deque[PageRow]], inflight: dict) -> int:
        total = finished + len(inflight) + sum(len(q) for q in queues.values())
        return min(total, self.limit) if self.limit else total

    def _ready(
        self, queues: dict[str, deque[PageRow]], per_host: dict[str, int], busy: int, finished: int
    ) -> Iterator[PageRow]:
        """Rows that may start now: within the limit, the worker pool and each host's concurrency."""
        slots = self.config.workers * 2 - busy
        for host, rows in queues.items():
            while rows and slots > 0 and per_host.get(host, 0) < self.config.per_host_concurrency:
                if self.limit is not None and finished + busy >= self.limit:
                    return
                slots -= 1
                busy += 1
                yield rows.popleft()

    def _visit(self, row: PageRow) -> Outcome:
        """Runs in a worker thread: robots, cache or network, then the links of the page."""
        host = host_of(row.url)
        if host in self.blocked:  # left pending: --resume asks the host again
            return Outcome(row, "pending", reason=f"{BLOCKED}: {self.blocked[host]}")
        if not self.robots.allowed(row.url):
            return Outcome(row, "skipped", reason=DISALLOWED)
        crawl_delay = self.robots.capped().get(host)
        if crawl_delay is not None:  # skipped as from a blocked host: --resume takes it up again
            return Outcome(
                row, "skipped", reason=f"{BLOCKED}: robots.txt asks for Crawl-delay {crawl_delay:g} s, above the cap"
            )
        response, from_cache, attempts = self._cached(row.url), True, 0
        decoded = None
        if response is None:
            result = self.fetcher.fetch(row.url)
            attempts, from_cache = result.attempts, False
            if result.response is None:
                # a host that kept answering 429 asks to come back later: this page waits for --resume too
                later = result.blocked and result.status == 429
                return Outcome(
                    row,
                    "pending" if later else "failed",
                    reason=result.error,
                    attempts=attempts,
                    blocked=result.blocked,
                )
            response = result.response
            decoded = decode_body(response.body, response.content_type)
            response.encoding = f"{decoded.encoding} ({decoded.source}, {decoded.replacements} replaced)"
            self.cache.put(response)
        if response.status >= 400:
            return Outcome(row, "failed", response.status, from_cache, f"HTTP {response.status}", attempts=attempts)
        found = self._links(row, response, decoded)
        return Outcome(
            row,
            "done",
            response.status,
            from_cache,
            links=found,
            attempts=attempts,
            size=len(response.body),
            replacements=decoded.replacements if decoded else 0,
        )

    def _cached(self, url: str) -> CachedResponse | None:
        response = self.cache.get(url)
        max_age = self.config.cache_max_age
        if response is not None and max_age is not None and time.time() - response.fetched_at > max_age:
            return None
        return response

    def _links(self, row: PageRow, response: CachedResponse, decoded: Decoded | None) -> list[tuple[str, str]]:
        rule = self.spec.rule(row.kind)
        if not rule.follow:
            return []
        decoded = decoded or decode_body(response.body, response.content_type)
        page = Page(response.final_url, parse_html(decoded.text), self.spec)
        return links(self.spec, rule, page)

    def _record(self, frontier: Frontier, outcome: Outcome, summary: CrawlSummary) -> list[PageRow]:
        host = host_of(outcome.row.url)
        if outcome.blocked:
            self.blocked[host] = outcome.reason or "refused"
        state = outcome.state
        summary.retries += max(outcome.attempts - 1, 0)
        if state == "pending":  # the page stays in the frontier as it was
            gave = summary.given_up.setdefault(host, {"reason": self.blocked.get(host, ""), "pages_left": 0})
            gave["pages_left"] += 1
            return []
        if state == "skipped":
            summary.skipped += 1
        elif state == "failed":
            summary.failed += 1
            summary.failures.append({"url": outcome.row.url, "reason": outcome.reason or ""})
        if outcome.status is not None:  # a response arrived, from the cache or the network
            summary.cached += outcome.from_cache
            summary.fetched += not outcome.from_cache
        summary.bytes += outcome.size
        summary.replaced_characters += outcome.replacements
        return frontier.finish(
            outcome.row.url, state, outcome.status, outcome.from_cache, outcome.reason, outcome.links
        )


def capped_note(origin: str, delay: float, cap: float) -> str:
    return (
        f"coverage partial: robots.txt of {origin} asks for Crawl-delay {delay:g} s, above the {cap:g} s cap "
        "(--max-crawl-delay); its pages were skipped: raise the cap and --resume to crawl it at that pace"
    )


def given_up_note(host: str, reason: str, pages_left: int) -> str:
    return (
        f"gave up on {host} ({reason}): its {pages_left:,} page(s) not fetched are left pending; run the same "
        "crawl again with --resume to fetch them once the host answers again"
    )


def crawl(
    spec: SiteSpec,
    crawl_dir: Path,
    config: CrawlConfig | None = None,
    limit: int | None = None,
    resume: bool = False,
    restart: bool = False,
    show_progress: bool = True,
) -> CrawlSummary:
    """Crawl ``spec``'s site into ``crawl_dir``; see :class:`Crawler`."""
    return Crawler(spec, crawl_dir, config, limit, show_progress).run(resume=resume, restart=restart)


def crawled_spec(crawl_dir: Path, spec: SiteSpec | None = None) -> SiteSpec:
    """The spec a crawl in ``crawl_dir`` was made with (its site and base URL from the frontier)."""
    frontier = Frontier(Path(crawl_dir) / "frontier.sqlite")
    try:
        site, base = frontier.get_meta("site"), frontier.get_meta("base_url")
    finally:
        frontier.close()
    if site is None:
        raise CrawlError(f"no crawl in {crawl_dir}: run `kgforge crawl SITE` first")
    return (spec or load_spec(site)).with_base_url(base)


def read_records(crawl_dir: Path, spec: SiteSpec | None = None) -> Iterator[Record]:
    """Records of the crawl's detail pages, in discovery order, from the cache only."""
    spec = crawled_spec(crawl_dir, spec)
    cache = ResponseCache(Path(crawl_dir) / "cache")
    frontier = Frontier(Path(crawl_dir) / "frontier.sqlite")
    try:
        rows = frontier.pages("done")
    finally:
        frontier.close()
    for row in rows:
        rule = spec.rule(row.kind)
        response = cache.get(row.url) if rule.entity_type else None
        if response is None:
            continue
        page = Page(response.final_url, parse_html(decode_body(response.body, response.content_type).text), spec)
        record = extract(spec, rule, page)
        if record is not None:
            record.url = row.url
            yield record
