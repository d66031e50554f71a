"""robots.txt per origin: fetched once (politely, through the cache), obeyed, Crawl-delay applied.

Unavailable robots.txt (any 4xx) allows everything; an unreachable one (5xx, network error)
disallows everything for this run, as RFC 9309 asks. Crawl-delay raises the host's delay to
``max(configured delay, Crawl-delay)``, up to ``CrawlConfig.max_crawl_delay``: a host asking for more
is not crawled faster than it asks, but not at all in this run (:meth:`Robots.capped`), so a
``Crawl-delay: 100000`` cannot stall a crawl silently.
"""

from __future__ import annotations

import threading
import time
import urllib.robotparser

from kgforge.crawl.cache import ResponseCache
from kgforge.crawl.encoding import decode_body
from kgforge.crawl.fetch import ROBOTS_TOKEN, Fetcher, host_of, parse_robots


class Robots:
    def __init__(self, fetcher: Fetcher, cache: ResponseCache, obey: bool = True) -> None:
        self.fetcher, self.cache, self.obey = fetcher, cache, obey
        self._rules: dict[str, urllib.robotparser.RobotFileParser | None] = {}
        self._notes: dict[str, str] = {}
        self._capped: dict[str, float] = {}
        self._lock = threading.Lock()
        self.fetched = 0  # robots.txt files fetched from the network (not from the cache)

    def allowed(self, url: str) -> bool:
        if not self.obey or url.endswith("/robots.txt"):
            return True
        rules = self.rules(host_of(url))
        return rules is not None and rules.can_fetch(ROBOTS_TOKEN, url)

    def notes(self) -> dict[str, str]:
        """Per origin: what robots.txt said (crawl delay, unreachable, absent)."""
        return dict(self._notes)

    def capped(self) -> dict[str, float]:
        """Origins whose Crawl-delay (the value) is above the cap: nothing is fetched from them."""
        return dict(self._capped)

    def rules(self, origin: str) -> urllib.robotparser.RobotFileParser | None:
        """The parsed robots.txt of ``origin``; None means everything is disallowed."""
        with self._lock:
            if origin not in self._rules:
                self._rules[origin] = self._load(origin)
            return self._rules[origin]

    def _load(self, origin: str) -> urllib.robotparser.RobotFileParser | None:
        url = origin + "/robots.txt"
        response = self.cache.get(url)
        max_age = self.fetcher.config.robots_max_age
        if response is None or time.time() - response.fetched_at > max_age:
            result = self.fetcher.fetch(url)
            self.fetched += 1
            if result.response is None and not result.blocked:
                self._notes[origin] = f"robots.txt unreachable ({result.error}): nothing fetched from this host"
                return None
            if result.response is not None:
                self.cache.put(result.response)
            response = result.response
        if response is None or response.status >= 400:
            self._notes[origin] = "no robots.txt: everything allowed"
            return parse_robots("")
        text = decode_body(response.body, response.content_type).text
        rules = parse_robots(text)
        delay = crawl_delay(text, ROBOTS_TOKEN)
        cap = self.fetcher.config.max_crawl_delay
        if delay and delay > cap:
            self._capped[origin] = delay
            self._notes[origin] = f"Crawl-delay {delay:g} s, above the {cap:g} s cap: nothing fetched from this host"
        elif delay:
            self.fetcher.pacer.set_min_delay(origin, float(delay))
            self._notes[origin] = f"Crawl-delay {delay:g} s"
        else:
            self._notes[origin] = "robots.txt obeyed"
        return rules


def crawl_delay(text: str, agent: str) -> float | None:
    """The Crawl-delay (seconds) that robots.txt ``text`` sets for ``agent``, fractions included.

    urllib.robotparser keeps only whole numbers and drops ``Crawl-delay: 0.5``. The group is
    chosen as robotparser chooses it: the first whose User-agent occurs in ``agent``, else ``*``.
    """
    groups: list[tuple[list[str], float | None]] = []
    agents: list[str] = []
    delay: float | None = None
    in_rules = False
    for raw in text.splitlines():
        field, _, value = raw.split("#", 1)[0].partition(":")
        field, value = field.strip().lower(), value.strip()
        if field == "user-agent":
            if in_rules:  # a User-agent after rules starts the next group
                groups.append((agents, delay))
                agents, delay, in_rules = [], None, False
            agents.append(value.lower())
        elif field and agents:
            in_rules = True
            if field == "crawl-delay":
                delay = _seconds(value)
    if agents:
        groups.append((agents, delay))
    token = agent.split("/")[0].lower()
    for names, seconds in groups:
        if any(name != "*" and name in token for name in names):
            return seconds
    return next((seconds for names, seconds in groups if "*" in names), None)


def _seconds(value: str) -> float | None:
    try:
        seconds = float(value)
    except ValueError:
        return None
    return seconds if 0 <= seconds < float("inf") else None
