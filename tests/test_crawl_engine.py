"""Crawler parts on their own: decoding, the cache's file names, the frontier, fetch limits, robots."""

from __future__ import annotations

import codecs
import threading
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.crawl import crawl, load_spec
from kgforge.crawl.cache import CachedResponse, ResponseCache
from kgforge.crawl.encoding import canonical_codec, decode_body
from kgforge.crawl.fetch import CrawlConfig, Fetcher, HostPacer, parse_retry_after
from kgforge.crawl.frontier import Frontier
from kgforge.crawl.loopback import LoopbackSite, Redirect, Static, Stream
from kgforge.crawl.robots import Robots
from kgforge.crawl.spec import (
    Field,
    Infobox,
    Page,
    PageRule,
    Record,
    SiteSpec,
    extract,
    parse_html,
)
from tests.crawl_support import DOUBAN, TEST_CONFIG

GBK_TEXT = "《教父》的导演是科波拉。和喆哥一起重温，镕铸了一个时代的经典。北京市东城区景山前街四号。" * 3


def test_gb2312_label_decodes_gbk_only_characters():
    decoded = decode_body(GBK_TEXT.encode("gbk"), "text/html; charset=gb2312")
    assert decoded.text == GBK_TEXT and decoded.encoding == "gb18030" and decoded.replacements == 0
    assert canonical_codec("GBK") == canonical_codec("gb2312") == "gb18030"


def test_missing_or_wrong_charset_is_detected_from_bytes():
    body = f"<html><body><p>{GBK_TEXT}</p></body></html>".encode("gbk")
    for content_type in ("text/html", "text/html; charset=utf-8"):
        decoded = decode_body(body, content_type)
        assert GBK_TEXT in decoded.text and decoded.source == "detected"


def test_meta_charset_and_bom():
    body = '<meta charset="gbk"><p>镕</p>'.encode("gbk")
    assert decode_body(body, "text/html").source == "meta"
    assert decode_body(codecs.BOM_UTF8 + "镕".encode(), "text/html; charset=gbk").text == "镕"


def test_undecodable_bytes_are_replaced_and_counted():
    decoded = decode_body("正常文字".encode() + b"\xff\xfe\xfa" + "结尾".encode(), "text/html; charset=utf-8")
    assert decoded.text.startswith("正常文字") and decoded.text.endswith("结尾") and decoded.replacements >= 1


@given(
    st.binary(max_size=400),
    st.sampled_from(
        ["", "text/html", "text/html; charset=gb2312", "text/html; charset=no-such-codec", "text/html; charset=utf-8"]
    ),
)
@settings(max_examples=150, deadline=None)
def test_decoding_never_raises(body, content_type):
    assert isinstance(decode_body(body, content_type).text, str)


@given(st.text(min_size=0, max_size=300))
@settings(max_examples=300, deadline=None)
def test_no_url_escapes_the_cache_folder(url):
    root = Path("/tmp/kgforge-cache-root")
    path = ResponseCache(root).meta_path(url)
    assert path.resolve().is_relative_to(root.resolve()) and path.parent.parent.parent == root


def test_hostile_urls_round_trip_inside_the_cache(tmp_path):
    cache = ResponseCache(tmp_path / "cache")
    hostile = [
        "http://x/../../../etc/passwd",
        "../../outside",
        "/absolute/path",
        "http://x/%2e%2e/%2e%2e/",
        "file:///etc/passwd",
        "http://x/\x00nul",
        "http://x/" + "a" * 5000,
        "http://x/\ud800",
    ]
    for i, url in enumerate(hostile):
        cache.put(CachedResponse(url, url, 200, {"content-type": "text/html"}, f"body {i}".encode()))
        assert cache.get(url).body == f"body {i}".encode()
    written = [p for p in (tmp_path).rglob("*") if p.is_file()]
    assert written and all(p.resolve().is_relative_to((tmp_path / "cache").resolve()) for p in written)


def test_frontier_persists_order_and_state(tmp_path):
    frontier = Frontier(tmp_path / "f.sqlite")
    added = frontier.add([("http://h/a", "list"), ("http://h/b", "item"), ("http://h/a", "list")])
    assert [row.url for row in added] == ["http://h/a", "http://h/b"]
    frontier.finish("http://h/a", "done", 200, links=[("http://h/c", "item"), ("http://h/b", "item")])
    frontier.close()
    reopened = Frontier(tmp_path / "f.sqlite")
    assert [(r.url, r.seq) for r in reopened.pending()] == [("http://h/b", 2), ("http://h/c", 3)]
    assert reopened.counts() == {"pending": 2, "done": 1, "failed": 0, "skipped": 0}
    assert reopened.pages("done")[0].status == 200


def test_retry_after_forms():
    assert parse_retry_after("7") == 7.0
    soon = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 30))
    assert 25 <= parse_retry_after(soon) <= 31
    assert parse_retry_after("soon") is None and parse_retry_after(None) is None


def test_size_limit_without_content_length_and_redirect_limits():
    config = CrawlConfig(delay=0, max_bytes=50_000, max_redirects=2, max_retries=0)
    routes = {
        "/big": Stream(200_000),
        "/r1": Redirect("/r2"),
        "/r2": Redirect("/r3"),
        "/r3": Redirect("/r4"),
        "/r4": Static(b"end"),
    }
    with LoopbackSite(routes=routes) as site:
        fetcher = Fetcher(config)
        big = fetcher.fetch(site.base_url + "/big")
        chain = fetcher.fetch(site.base_url + "/r1")
    assert big.response is None and "exceeds the 50,000-byte limit" in big.error
    assert chain.response is None and "more than 2 redirects" in chain.error


def test_403_blocks_the_host_without_retrying():
    with LoopbackSite(routes={"/no": Static(b"go away", 403)}) as site:
        result = Fetcher(CrawlConfig(delay=0, max_retries=3)).fetch(site.base_url + "/no")
        assert site.paths() == ["/no"]
    assert result.blocked and "refuses" in result.error


@pytest.mark.slow  # waits out an unreachable robots.txt
def test_unreachable_robots_txt_disallows_everything(tmp_path):
    with LoopbackSite(routes={"/robots.txt": Static(b"down", 503)}) as site:
        fetcher = Fetcher(CrawlConfig(delay=0, max_retries=1, backoff_base=0.01))
        robots = Robots(fetcher, ResponseCache(tmp_path))
        assert not robots.allowed(site.base_url + "/page")
        assert "unreachable" in robots.notes()[site.base_url]
    with LoopbackSite() as site:  # 404: no robots.txt, everything allowed
        robots = Robots(Fetcher(CrawlConfig(delay=0)), ResponseCache(tmp_path))
        assert robots.allowed(site.base_url + "/page")


def test_missing_field_and_broken_markup_warn_with_url_and_field():
    rule = PageRule(
        "item",
        match=r"^/item/(\d+)",
        entity_type="film",
        fields=(Field("name", "h1"), Field("rating", "strong.rating_num")),
        infoboxes=(Infobox(rows="#info", lines=True),),
    )
    spec = SiteSpec("t", "film", "http://t", (("/", "list"),), (rule,))
    html = "<h1>霸王别姬<div id='info'><span class='pl'>导演</span>: 陈凯歌<br><span>类型: 剧情<br>语言: 汉语"
    record = extract(spec, rule, Page("http://t/item/1", parse_html(html), spec))
    assert isinstance(record, Record) and record.site_id == "1"
    assert record.name.startswith("霸王别姬")
    assert {(f.relation, f.value) for f in record.facts} >= {("导演", "陈凯歌"), ("类型", "剧情"), ("语言", "汉语")}
    assert record.warnings == ["http://t/item/1: field 'rating': nothing matches 'strong.rating_num'"]


def test_a_refusing_host_is_left_alone_until_resume(tmp_path):
    with LoopbackSite(DOUBAN, {"/subject/1292052/": Static(b"forbidden", 403)}) as site:
        spec = load_spec("douban_movie", site.base_url)
        summary = crawl(spec, tmp_path / "c", TEST_CONFIG, show_progress=False)
        assert site.paths() == ["/robots.txt", "/top250", "/subject/1292052/"]  # nothing after the 403
        assert summary.failed == 1 and summary.skipped == 0 and summary.pending >= 3  # left for --resume
        host = site.base_url.lower()
        assert summary.given_up[host]["pages_left"] == summary.pending
        assert any(note.startswith(f"gave up on {host} (") for note in summary.partial)
        site.routes.pop("/subject/1292052/")
        site.routes["/subject/1291546/"] = Static(b"<h1>x</h1>")
        resumed = crawl(spec, tmp_path / "c", TEST_CONFIG, resume=True, limit=4, show_progress=False)
    assert site.paths()[3] == "/subject/1291546/"  # the pages left pending came back on --resume
    assert resumed.fetched >= 1


def test_a_host_given_up_after_429s_says_so_and_leaves_its_pages_for_resume(tmp_path, cli):
    """Every answer a 429: the crawl gives up on the host, says so on stderr with --resume as the way on, and
    leaves the page that got the 429s and every later page of the host pending (not skipped, not failed)."""
    import json

    limited = {"/subject/1292052/": Static(b"slow down", 429, {"Retry-After": "0"})}
    with LoopbackSite(DOUBAN, limited) as site:
        result = cli(
            "crawl",
            "douban_movie",
            "--base-url",
            site.base_url,
            "--workdir",
            str(tmp_path),
            "--delay",
            "0.05",
            "--retries",
            "1",
            "--json",
            check=False,
        )
        assert site.paths() == ["/robots.txt", "/top250", "/subject/1292052/", "/subject/1292052/"]
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    host = site.base_url.lower()
    assert report["failed"] == 0 and report["skipped"] == 0
    assert report["pending"] == report["given_up"][host]["pages_left"] >= 4
    said = " ".join(result.stderr.split())
    assert f"warning: gave up on {host} (HTTP 429" in said
    assert (
        f"its {report['pending']:,} page(s) not fetched are left pending; run the same crawl again with "
        "--resume to fetch them"
    ) in said


def test_pacer_turns_taken_by_many_threads_are_a_full_delay_apart():
    pacer, host, turns = HostPacer(delay=0.02, concurrency=4, jitter=0.5), "http://127.0.0.1:1", []

    def take_turns() -> None:
        for _ in range(5):
            turns.append(pacer.wait_turn(host))
            time.sleep(0.001)  # a turn's work; the other threads' waits overlap it

    threads = [threading.Thread(target=take_turns) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    turns.sort()
    assert len(turns) == 20
    assert min(b - a for a, b in zip(turns, turns[1:], strict=False)) >= 0.02 - 1e-9
