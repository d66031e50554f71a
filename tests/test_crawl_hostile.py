"""A hostile server cannot lead the crawler astray: slow drips end at the response deadline, a huge
Crawl-delay is capped with a warning, redirects stay on the crawl's hosts, internal addresses stay shut.

Wall time appears only as a generous upper bound (3x the configured deadline); without the deadline
these responses would run until the server gives up (60 s), so the bound cannot pass by luck.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import replace
from pathlib import Path

import pytest

from kgforge.core.errors import ArgumentError
from kgforge.crawl import crawl, load_spec
from kgforge.crawl.cache import ResponseCache
from kgforge.crawl.fetch import CrawlConfig, Fetcher
from kgforge.crawl.guard import (
    AddressRefused,
    ConnectionGuard,
    HostPolicy,
    guarded_session,
    is_internal_address,
)
from kgforge.crawl.loopback import Drip, LoopbackSite, Redirect, Static
from kgforge.crawl.robots import Robots
from tests.crawl_support import CLI_SETTINGS, DOUBAN, TEST_CONFIG

DEADLINE = 2.0
SECRET = b"<html><body><h1>the other host's secret</h1></body></html>"
TOP = "/subject/1292052/"  # the first detail page the Douban fixture's list page links to


def cached_bodies(crawl_dir: Path) -> list[bytes]:
    return [p.read_bytes() for p in (crawl_dir / "cache" / "bodies").rglob("*") if p.is_file()]


@pytest.mark.slow  # waits out a dripping server
@pytest.mark.parametrize("phase", ["headers", "body"])
def test_a_response_dripped_byte_by_byte_is_abandoned_at_the_total_deadline(phase):
    config = CrawlConfig(delay=0, read_timeout=5, total_timeout=DEADLINE, max_retries=0)
    with LoopbackSite(routes={"/drip": Drip(phase, interval=0.3)}) as site:
        started = time.monotonic()
        result = Fetcher(config).fetch(site.base_url + "/drip")
        took = time.monotonic() - started
    assert result.response is None
    assert f"{DEADLINE:g} s" in result.error and "/drip" in result.error
    assert took < 3 * DEADLINE  # each byte came within the 5 s read timeout: only the deadline stops it


@pytest.mark.slow  # waits out a dripping server
def test_the_crawl_command_bounds_a_dripping_start_page(cli, tmp_path):
    """The issue's repro: --read-timeout 5 --retries 0 against a body sent at a byte a time ran past 330 s."""
    with LoopbackSite(DOUBAN, {"/top250": Drip("body", interval=0.3)}) as site:
        started = time.monotonic()
        result = cli(
            "crawl",
            "douban_movie",
            "--base-url",
            site.base_url,
            "--delay",
            "0.05",
            "--read-timeout",
            "5",
            "--retries",
            "0",
            "--total-timeout",
            str(DEADLINE),
            "--workdir",
            str(tmp_path),
            "--json",
            timeout=120,
        )
        took = time.monotonic() - started
    report = json.loads(result.stdout)
    assert [f["url"] for f in report["failures"]] == [site.base_url + "/top250"]
    assert f"{DEADLINE:g} s" in report["failures"][0]["reason"]
    assert took < 3 * DEADLINE + 10  # + the start of a Python process that imports the crawler


def test_a_huge_crawl_delay_is_capped_with_a_warning_and_coverage_reported_partial(cli, tmp_path):
    robots = Static(b"User-agent: *\nCrawl-delay: 100000\n", 200, {"Content-Type": "text/plain"})
    with LoopbackSite(DOUBAN, {"/robots.txt": robots}) as site:
        result = cli(
            "crawl",
            "douban_movie",
            "--base-url",
            site.base_url,
            *CLI_SETTINGS,
            "--workdir",
            str(tmp_path),
            "--json",
            timeout=60,
        )
        assert site.paths() == ["/robots.txt"]  # no request at the pace the site forbids
    report = json.loads(result.stdout)
    assert report["skipped"] == 1 and report["fetched"] == 0
    [partial] = report["partial"]
    assert site.base_url in partial and "100000" in partial and "--max-crawl-delay" in partial
    assert site.base_url in result.stderr and "Crawl-delay 100000" in result.stderr  # the warning
    # Skipped as from a blocked host, so --resume (with a higher cap, or once the site relents) takes it up.
    frontier = tmp_path / "film" / "raw" / "crawl" / "douban_movie" / "frontier.sqlite"
    with sqlite3.connect(frontier) as db:
        [(state, reason)] = db.execute("SELECT state, reason FROM pages").fetchall()
    assert state == "skipped" and reason.startswith("host blocked") and "Crawl-delay" in reason


def test_a_crawl_delay_within_the_cap_is_obeyed(tmp_path):
    robots = Static(b"User-agent: *\nCrawl-delay: 0.3\n", 200, {"Content-Type": "text/plain"})
    with LoopbackSite(routes={"/robots.txt": robots}) as site:
        fetcher = Fetcher(replace(TEST_CONFIG, max_crawl_delay=0.5))
        rules = Robots(fetcher, ResponseCache(tmp_path))
        assert rules.allowed(site.base_url + "/a") and rules.capped() == {}
    assert fetcher.pacer.delay_for(site.base_url) == 0.3


@pytest.mark.slow  # waits out a refused redirect
@pytest.mark.parametrize("other_host", ["127.0.0.1", "127.0.0.2"])  # another port, another address
def test_a_redirect_to_another_host_is_refused_and_logged(tmp_path, other_host):
    with (
        LoopbackSite(routes={"/secret/102": Static(SECRET)}, host=other_host) as other,
        LoopbackSite(DOUBAN, {TOP: Redirect(other.base_url + "/secret/102")}) as site,
    ):
        summary = crawl(
            load_spec("douban_movie", site.base_url), tmp_path / "c", TEST_CONFIG, limit=4, show_progress=False
        )
        assert other.paths() == []  # not even its robots.txt
    [failure] = [f for f in summary.failures if f["url"] == site.base_url + TOP]
    assert other.base_url + "/secret/102" in failure["reason"] and "refused" in failure["reason"]
    assert SECRET not in cached_bodies(tmp_path / "c")


def test_a_redirect_to_a_private_address_is_refused_without_connecting(tmp_path):
    metadata = "http://169.254.169.254/latest/meta-data/"
    with LoopbackSite(DOUBAN, {TOP: Redirect(metadata)}) as site:
        started = time.monotonic()
        summary = crawl(
            load_spec("douban_movie", site.base_url),
            tmp_path / "c",
            replace(TEST_CONFIG, connect_timeout=30),
            limit=4,
            show_progress=False,
        )
        took = time.monotonic() - started
    [failure] = [f for f in summary.failures if f["url"] == site.base_url + TOP]
    assert metadata in failure["reason"] and "refused" in failure["reason"]
    assert took < 30  # refused before any connection attempt (which would wait out the connect timeout)


def test_internal_addresses_are_refused_unless_the_start_url_is_one():
    with LoopbackSite(routes={"/": Static(b"<h1>inside</h1>")}) as site:
        port = site.base_url.rsplit(":", 1)[1]
        by_name = f"http://localhost:{port}/"
        strict = HostPolicy.for_start(by_name, allow_internal=False)  # as if the crawl had started elsewhere
        result = Fetcher(CrawlConfig(delay=0, max_retries=0), policy=strict).fetch(by_name)
        assert site.paths() == []
        assert result.response is None and "localhost" in result.error and "127.0.0.1" in result.error
        started_inside = HostPolicy.for_start(site.base_url)
        assert started_inside.allow_internal
        assert Fetcher(CrawlConfig(delay=0), policy=started_inside).fetch(site.base_url + "/").ok
    assert not HostPolicy.for_start("http://93.184.215.14/").allow_internal
    for address in (
        "127.0.0.1",
        "10.1.2.3",
        "192.168.0.1",
        "169.254.169.254",
        "::1",
        "fe80::1",
        "::ffff:127.0.0.1",
        "100.64.0.1",
        "0.0.0.0",
        "224.0.0.1",
    ):
        assert is_internal_address(address), address
    assert not is_internal_address("93.184.215.14") and not is_internal_address("2606:4700::1111")


def test_the_address_connected_to_is_checked_not_only_the_name():
    """The check sits in the connection itself, on the very address it connects to, so a name that
    resolved to a public address at the pre-check and to an internal one a moment later (DNS
    rebinding) is still refused."""
    with LoopbackSite(routes={"/": Static(b"<h1>inside</h1>")}) as site:
        session = guarded_session(ConnectionGuard(allow_internal=False))
        with pytest.raises(AddressRefused, match="127.0.0.1"):
            session.get(site.base_url + "/", timeout=5)
        assert site.paths() == []
        assert guarded_session(ConnectionGuard(allow_internal=True)).get(site.base_url + "/", timeout=5).ok


def test_stale_temporary_files_of_a_killed_crawl_are_removed(tmp_path):
    crawl_dir = tmp_path / "c"
    stale = crawl_dir / "cache" / "meta" / "ab" / "abc.json.part999999999.1"  # no such pid
    stale.parent.mkdir(parents=True)
    stale.write_bytes(b"half")
    with LoopbackSite(DOUBAN) as site:
        crawl(load_spec("douban_movie", site.base_url), crawl_dir, TEST_CONFIG, limit=1, show_progress=False)
    assert not stale.exists()


def test_crawl_settings_are_checked_in_the_library():
    for bad in (
        {"delay": -1.0},
        {"per_host_concurrency": 0},
        {"total_timeout": float("nan")},
        {"read_timeout": float("inf")},
        {"max_crawl_delay": -5.0},
        {"max_retries": -1},
    ):
        with pytest.raises(ArgumentError):
            CrawlConfig(**bad)
