"""Polite HTTP fetching: per-host pacing, robots.txt, retries with backoff, timeouts, size limits.

What Scrapy users expect, on requests: an honest User-Agent; per host at most ``max(delay,
Crawl-delay)`` between request starts (plus optional jitter) and at most ``per_host_concurrency``
requests at once; ``Retry-After`` obeyed on 429/503 and exponential backoff on 5xx and network
errors, a capped number of attempts; connect and read timeouts and a deadline on each whole response
(connect, headers and body together, however slowly they trickle in); a response size limit;
redirects followed by hand so loops are detected and every hop is checked against the crawl's hosts
and robots.txt. Where a crawl may connect is :mod:`kgforge.crawl.guard`'s business.
"""

from __future__ import annotations

import email.utils
import random
import threading
import time
import urllib.robotparser
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any
from urllib.parse import urljoin, urlsplit

import requests

from kgforge.core import checks
from kgforge.core.version import __version__
from kgforge.crawl.cache import CachedResponse
from kgforge.crawl.guard import (
    AddressRefused,
    ConnectionGuard,
    HostPolicy,
    guarded_session,
)

ROBOTS_TOKEN = "kgforge"
RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
BLOCK_STATUSES = frozenset({401, 403})
REDIRECT_STATUSES = frozenset({301, 302, 303, 307, 308})


def default_user_agent(contact: str = "https://github.com/kgforge/kgforge") -> str:
    return f"{ROBOTS_TOKEN}/{__version__} (+{contact}; knowledge-graph research crawler)"


@dataclass(frozen=True)
class CrawlConfig:
    """Politeness and robustness settings; the defaults are those of a careful crawler."""

    delay: float = 1.0  # seconds between request starts to one host; Crawl-delay raises it
    jitter: float = 0.1  # each wait is multiplied by a random factor in [1, 1 + jitter]
    per_host_concurrency: int = 1
    workers: int = 4  # fetching threads over all hosts
    obey_robots: bool = True
    max_retries: int = 3  # attempts after the first, on 429 / 5xx / network errors
    backoff_base: float = 1.0  # seconds; doubled on every retry unless Retry-After says otherwise
    backoff_max: float = 120.0
    connect_timeout: float = 10.0
    read_timeout: float = 30.0  # longest silence while reading
    total_timeout: float = 120.0  # longest time for one whole response: connect, headers and body
    max_crawl_delay: float = 60.0  # a host whose robots.txt asks for more is left for --resume
    max_bytes: int = 5 * 1024 * 1024
    max_redirects: int = 10
    cache_max_age: float | None = None  # seconds; None: cached pages never expire
    robots_max_age: float = 24 * 3600.0
    user_agent: str = field(default_factory=default_user_agent)

    def __post_init__(self) -> None:
        for name in ("delay", "jitter", "backoff_base", "backoff_max", "max_crawl_delay", "robots_max_age"):
            checks.number(getattr(self, name), f"CrawlConfig.{name}")
        for name in ("connect_timeout", "read_timeout", "total_timeout"):
            checks.number(getattr(self, name), f"CrawlConfig.{name}", above=True)
        checks.optional(checks.number, self.cache_max_age, "CrawlConfig.cache_max_age")
        for name in ("per_host_concurrency", "workers", "max_bytes"):
            checks.whole(getattr(self, name), f"CrawlConfig.{name}", 1)
        for name in ("max_retries", "max_redirects"):
            checks.whole(getattr(self, name), f"CrawlConfig.{name}", 0)

    @classmethod
    def impolite(cls, **changes: Any) -> CrawlConfig:  # any field's value, checked by __post_init__
        """No delay, no robots, many connections: for benchmarks against one's own server."""
        base = cls(delay=0.0, jitter=0.0, per_host_concurrency=8, workers=8, obey_robots=False, backoff_base=0.05)
        return replace(base, **changes)


class FetchError(Exception):
    """A page that could not be fetched; ``retry`` says whether trying again may help."""

    def __init__(self, message: str, retry: bool = False, status: int | None = None, wait: float | None = None) -> None:
        super().__init__(message)
        self.retry = retry
        self.status = status
        self.wait = wait


@dataclass
class FetchResult:
    url: str
    response: CachedResponse | None
    attempts: int
    error: str | None = None
    blocked: bool = False  # the host answered 401/403 or kept answering 429
    status: int | None = None  # the HTTP status of the last answer, when there was no usable one

    @property
    def ok(self) -> bool:
        return self.response is not None and self.error is None


class HostPacer:
    """Spaces request starts to each host and limits requests in flight per host."""

    def __init__(self, delay: float, concurrency: int, jitter: float = 0.0) -> None:
        self.delay, self.concurrency, self.jitter = delay, concurrency, jitter
        self._lock = threading.Lock()
        self._next: dict[str, float] = {}
        self._last: dict[str, float] = {}
        self._delays: dict[str, float] = {}
        self._slots: dict[str, threading.Semaphore] = {}

    def set_min_delay(self, host: str, seconds: float) -> None:
        """Raise ``host``'s delay (Crawl-delay); it applies from the last request already made."""
        with self._lock:
            self._delays[host] = max(self.delay, seconds)
            if host in self._last:
                self._next[host] = max(self._next.get(host, 0.0), self._last[host] + self._delays[host])

    def delay_for(self, host: str) -> float:
        with self._lock:
            return self._delays.get(host, self.delay)

    def defer(self, host: str, seconds: float) -> None:
        """No request to ``host`` starts before ``seconds`` from now (Retry-After, backoff)."""
        with self._lock:
            self._next[host] = max(self._next.get(host, 0.0), time.monotonic() + seconds)

    def slot(self, host: str) -> threading.Semaphore:
        with self._lock:
            return self._slots.setdefault(host, threading.Semaphore(self.concurrency))

    def wait_turn(self, host: str) -> float:
        """Block until a request to ``host`` may start; book the start and return its time.

        The next turn counts from the time a thread actually wakes, not from the time it was due: a
        thread the loaded machine wakes late must not bring the following request closer to it.
        """
        while True:
            with self._lock:
                now = time.monotonic()
                due = self._next.get(host, 0.0)
                if now >= due:
                    gap = self._delays.get(host, self.delay)
                    if gap and self.jitter:
                        gap *= 1 + random.uniform(0, self.jitter)
                    self._next[host] = now + gap
                    self._last[host] = now
                    return now
            time.sleep(due - now)


def host_of(url: str) -> str:
    parts = urlsplit(url)
    return f"{parts.scheme}://{parts.netloc}".lower()


class Fetcher:
    """Fetches URLs politely; ``allowed`` says whether robots.txt lets a URL be fetched, ``policy`` which
    hosts it may reach (by default: a redirect may not leave the host of the URL asked for)."""

    def __init__(
        self, config: CrawlConfig, allowed: Callable[[str], bool] = lambda url: True, policy: HostPolicy | None = None
    ) -> None:
        self.config = config
        self.allowed = allowed
        self.policy = policy or HostPolicy()
        self.guard = ConnectionGuard(allow_internal=self.policy.allow_internal)
        self.pacer = HostPacer(config.delay, config.per_host_concurrency, config.jitter)
        self._local = threading.local()
        self.request_log: list[tuple[float, str]] = []  # (monotonic start, url) of every request

    def _session(self) -> requests.Session:
        session = getattr(self._local, "session", None)
        if session is None:
            session = guarded_session(self.guard)
            session.headers.update(
                {"User-Agent": self.config.user_agent, "Accept": "text/html,application/xhtml+xml;q=0.9,*/*;q=0.5"}
            )
            self._local.session = session
        return session

    def fetch(self, url: str) -> FetchResult:
        """GET ``url`` with retries; never raises for HTTP or network trouble."""
        host = host_of(url)
        attempts = 0
        while True:
            attempts += 1
            try:
                response = self._get_with_redirects(url)
                return FetchResult(url, response, attempts)
            except FetchError as exc:
                if exc.status in BLOCK_STATUSES:
                    return FetchResult(url, None, attempts, str(exc), blocked=True, status=exc.status)
                if not exc.retry or attempts > self.config.max_retries:
                    blocked = exc.status == 429
                    note = f" (gave up after {attempts} attempts)" if exc.retry else ""
                    return FetchResult(url, None, attempts, f"{exc}{note}", blocked=blocked, status=exc.status)
                self.pacer.defer(host, self._backoff(attempts, exc.wait))

    def _backoff(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return min(retry_after, self.config.backoff_max)
        wait = self.config.backoff_base * 2 ** (attempt - 1)
        return min(wait * (1 + random.uniform(0, 0.1)), self.config.backoff_max)

    def _get_with_redirects(self, url: str) -> CachedResponse:
        refusal = self.policy.refusal(url, asked_for=url)
        if refusal is not None:
            raise FetchError(f"{url} refused: {refusal}")
        chain = [url]
        current = url
        started = time.time()
        while True:
            status, headers, body = self._get_once(current)
            if status in REDIRECT_STATUSES and "location" in headers:
                target = urljoin(current, headers["location"]).split("#", 1)[0]
                refusal = self.policy.refusal(target, asked_for=url)
                if refusal is not None:
                    raise FetchError(f"redirect from {current} to {target} refused: {refusal}")
                if target in chain:
                    raise FetchError("redirect loop: " + " -> ".join(chain + [target]))
                if len(chain) > self.config.max_redirects:
                    raise FetchError(f"more than {self.config.max_redirects} redirects: " + " -> ".join(chain))
                if not self.allowed(target):
                    raise FetchError(f"redirected to {target}, which robots.txt disallows")
                chain.append(target)
                current = target
                continue
            if status in RETRY_STATUSES:
                raise FetchError(
                    f"HTTP {status} from {current}",
                    retry=True,
                    status=status,
                    wait=parse_retry_after(headers.get("retry-after")),
                )
            if status in BLOCK_STATUSES:
                raise FetchError(f"HTTP {status} from {current}: the site refuses this crawler", status=status)
            return CachedResponse(
                url=url,
                final_url=current,
                status=status,
                headers=headers,
                body=body,
                fetched_at=started,
                elapsed=round(time.time() - started, 3),
            )

    def _get_once(self, url: str) -> tuple[int, dict[str, str], bytes]:
        host = host_of(url)
        slot = self.pacer.slot(host)
        with slot:
            self.request_log.append((self.pacer.wait_turn(host), url))
            with self.guard.deadlines.bound(self.config.total_timeout) as response:
                try:
                    status, headers, body = self._request(url)
                except requests.RequestException as exc:
                    self._raise_late(url, response.expired)
                    raise _network_error(url, exc, self.config.read_timeout) from None
                except AddressRefused as exc:
                    raise FetchError(f"{url} refused: {exc}") from None
                self._raise_late(url, response.expired)  # a cut-off response may look complete
                return status, headers, body

    def _request(self, url: str) -> tuple[int, dict[str, str], bytes]:
        with self._session().get(
            url, stream=True, allow_redirects=False, timeout=(self.config.connect_timeout, self.config.read_timeout)
        ) as resp:
            headers = {k.lower(): v for k, v in resp.headers.items()}
            body = b"" if resp.status_code in REDIRECT_STATUSES else self._read_body(resp, url)
            return resp.status_code, headers, body

    def _raise_late(self, url: str, expired: bool) -> None:
        if expired:
            raise FetchError(
                f"{url}: no complete response within {self.config.total_timeout:g} s (connect, "
                "headers and body together); abandoned",
                retry=True,
            )

    def _read_body(self, resp: requests.Response, url: str) -> bytes:
        limit = self.config.max_bytes
        declared = resp.headers.get("content-length", "")
        if declared.isdigit() and int(declared) > limit:
            raise FetchError(f"{url}: response of {int(declared):,} bytes exceeds the {limit:,}-byte limit")
        chunks, size = [], 0
        for chunk in resp.iter_content(65536):
            size += len(chunk)
            if size > limit:
                raise FetchError(f"{url}: response exceeds the {limit:,}-byte limit (stopped at {size:,} bytes)")
            chunks.append(chunk)
        return b"".join(chunks)


def _network_error(url: str, exc: requests.RequestException, read_timeout: float) -> FetchError:
    if isinstance(exc, requests.Timeout):
        return FetchError(f"timed out fetching {url}: {exc.__class__.__name__}", retry=True)
    if "timed out" in str(exc):
        return FetchError(f"timed out reading {url}: no data for {read_timeout:g} s", retry=True)
    return FetchError(f"network error fetching {url}: {_short(exc)}", retry=True)


def parse_retry_after(value: str | None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or an HTTP date)."""
    if not value:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def parse_robots(text: str) -> urllib.robotparser.RobotFileParser:
    parser = urllib.robotparser.RobotFileParser()
    parser.parse(text.splitlines())
    return parser


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) < 300 else text[:300] + "…"
