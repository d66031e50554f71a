"""End to end: a real HTTP server on 127.0.0.1 serving Douban-shaped pages, crawled politely,
then loaded into a real store with `kgforge build`."""

from __future__ import annotations

import json
import shutil
from collections import Counter

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.vocab import PROV_SOURCE, RDFS_LABEL, SKOS_ALT_LABEL, relation_iri
from kgforge.crawl import crawl, load_spec, read_records
from kgforge.crawl.cache import ResponseCache
from kgforge.crawl.engine import Crawler
from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.loopback import LoopbackSite, Static
from kgforge.crawl.robots import crawl_delay
from kgforge.demo.site import demo_crawl
from tests.crawl_support import (
    BROKEN,
    CLI_SETTINGS,
    DISALLOWED,
    DOUBAN,
    GBK_AS_GB2312,
    LOOP,
    NO_CHARSET,
    OVERSIZED,
    SERVER_ERROR,
    SITES,
    STALLS,
    TEST_CONFIG,
    TOO_MANY,
    douban_routes,
)

EXPECTED_ORDER = [
    "/robots.txt",
    "/top250",
    "/subject/1292052/",
    "/subject/1291546/",
    "/subject/1292720/",
    "/top250?start=3&filter=",
    "/celebrity/1047973/",
    "/celebrity/1054521/",
    "/celebrity/1054534/",
    "/celebrity/1023040/",
    "/celebrity/1003494/",
    "/celebrity/1050265/",
    TOO_MANY,
    TOO_MANY,
    SERVER_ERROR,
    SERVER_ERROR,
    GBK_AS_GB2312,
    NO_CHARSET,
    BROKEN,
    STALLS,
    STALLS,
    LOOP,
    LOOP + "?from=loop",
    OVERSIZED,
    "/celebrity/1000000/",
    "/celebrity/1031876/",
]


@pytest.fixture(scope="module")
def crawled(tmp_path_factory):
    folder = tmp_path_factory.mktemp("crawl") / "douban_movie"
    with LoopbackSite(DOUBAN, douban_routes()) as site:
        crawler = Crawler(load_spec("douban_movie", site.base_url), folder, TEST_CONFIG, show_progress=False)
        summary = crawler.run()
        log = list(site.log)
        starts = [start for start, _ in crawler.fetcher.request_log]
        yield summary, log, folder, site, starts


@pytest.mark.slow  # waits out robots.txt crawl delays
def test_fetch_order_follows_discovery_and_robots(crawled):
    summary, log, _, _, _ = crawled
    assert [entry.path for entry in log] == EXPECTED_ORDER
    assert DISALLOWED not in {entry.path for entry in log}
    assert all(entry.user_agent.startswith("kgforge/") and "+http" in entry.user_agent for entry in log)
    assert summary.skipped == 1 and summary.frontier["skipped"] == 1


@pytest.mark.slow  # the module's crawl waits out robots.txt crawl delays
def test_spacing_between_requests(crawled):
    _, log, _, _, starts = crawled
    # The delay spaces request starts, as Scrapy's DOWNLOAD_DELAY does. The server's arrival times are not
    # a measure of it: a request the loaded machine sends late arrives close to the next one, on time.
    # Both clocks are this process's monotonic clock, so each arrival is checked against its start.
    assert len(starts) == len(log)
    assert all(arrived.time >= started for arrived, started in zip(log, starts, strict=True))
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= TEST_CONFIG.delay - 1e-9
    retry_after = [b.time - a.time for a, b in zip(log, log[1:], strict=False) if a.path == b.path == TOO_MANY]
    assert retry_after and retry_after[0] >= 1.0  # Retry-After: 1 obeyed
    backoff = [b.time - a.time for a, b in zip(log, log[1:], strict=False) if a.path == b.path == SERVER_ERROR]
    assert backoff and backoff[0] >= TEST_CONFIG.backoff_base


@pytest.mark.slow  # the module's crawl waits out robots.txt crawl delays
def test_failures_are_named_and_counted(crawled):
    summary, _, _, _, _ = crawled
    reasons = {f["url"].split("127.0.0.1", 1)[1].split("/", 1)[1]: f["reason"] for f in summary.failures}
    assert "timed out reading" in reasons[STALLS.lstrip("/")]
    assert "redirect loop" in reasons[LOOP.lstrip("/")]
    assert "exceeds the 200,000-byte limit" in reasons[OVERSIZED.lstrip("/")]
    assert reasons["celebrity/1000000/"] == "HTTP 404"
    assert summary.failed == 5
    assert summary.retries == 3  # one each for the 429, the 500 and the stalled page
    assert summary.fetched == 18 and summary.cached == 0


@pytest.mark.slow  # the module's crawl waits out robots.txt crawl delays
def test_records_from_cache_decode_and_survive_broken_html(crawled):
    _, _, folder, _, _ = crawled
    records = {r.url.split("127.0.0.1", 1)[1].split("/", 1)[1]: r for r in read_records(folder)}
    gbk = records[GBK_AS_GB2312.lstrip("/")]
    assert ResponseCache(folder / "cache").get(gbk.url).encoding == "gb18030 (header, 0 replaced)"
    assert any("喆" in f.value and "镕" in f.value for f in gbk.facts)  # GBK-only characters survive
    assert any("气球" in f.value for f in records[NO_CHARSET.lstrip("/")].facts)
    broken = records[BROKEN.lstrip("/")]
    assert broken.name == "这个杀手不太冷" and broken.name_en == "Léon"
    by_relation = Counter(f.relation for f in broken.facts)
    assert by_relation["genre"] == 3 and by_relation["director"] == 1 and by_relation["language"] == 3
    assert any(BROKEN in w and "'rating'" in w for w in broken.warnings)
    shawshank = records["subject/1292052/"]
    assert shawshank.name == "肖申克的救赎" and shawshank.name_en == "The Shawshank Redemption"
    starring = [f for f in shawshank.facts if f.relation == "starring"]
    assert [f.value for f in starring] == ["蒂姆·罗宾斯", "摩根·弗里曼"]
    assert starring[0].target_url.endswith("/celebrity/1054521/")


@pytest.mark.slow  # crawls the demo site twice, with its delays
def test_crawling_again_reuses_the_cache(crawled, tmp_path):
    _, _, folder, site, _ = crawled
    again = tmp_path / "again"
    shutil.copytree(folder, again)
    site.routes.update(douban_routes())
    site.log.clear()
    summary = crawl(load_spec("douban_movie", site.base_url), again, TEST_CONFIG, show_progress=False)
    # Only what failed last time (and so was never cached) goes to the network again.
    assert site.paths() == [STALLS, STALLS, LOOP, LOOP + "?from=loop", OVERSIZED]
    assert summary.cached == 18 and summary.fetched == 0 and summary.failed == 5


def test_cache_max_age_refetches_old_pages(tmp_path):
    with LoopbackSite(SITES / "qunar") as site:
        spec = load_spec("qunar", site.base_url)
        first = crawl(spec, tmp_path / "q", TEST_CONFIG, show_progress=False)
        kept = crawl(spec, tmp_path / "q", TEST_CONFIG, show_progress=False)
        expired = crawl(spec, tmp_path / "q", CrawlConfig(delay=0.05, cache_max_age=0), show_progress=False)
    assert (first.fetched, kept.fetched, kept.cached, expired.fetched) == (4, 0, 4, 4)


@pytest.mark.slow  # waits out robots.txt crawl delays
@pytest.mark.parametrize("delay", ["1", "0.5"])
def test_crawl_delay_from_robots_spaces_requests(tmp_path, delay):
    robots = Static(
        f"User-agent: *\nDisallow: /subject/1291549/\nCrawl-delay: {delay}\n".encode(),
        200,
        {"Content-Type": "text/plain"},
    )
    with LoopbackSite(DOUBAN, {**douban_routes(), "/robots.txt": robots}) as site:
        crawler = Crawler(
            load_spec("douban_movie", site.base_url), tmp_path / "c", TEST_CONFIG, limit=3, show_progress=False
        )
        summary = crawler.run()
        log = list(site.log)
    assert [e.path for e in log] == ["/robots.txt", "/top250", "/subject/1292052/", "/subject/1291546/"]
    starts = [start for start, _ in crawler.fetcher.request_log]
    # max(delay 0.05, Crawl-delay) between starts; urllib.robotparser would have dropped "0.5"
    assert min(b - a for a, b in zip(starts, starts[1:], strict=False)) >= float(delay) - 1e-9
    assert all(arrived.time >= started for arrived, started in zip(log, starts, strict=True))
    assert summary.robots[f"{site.base_url}"] == f"Crawl-delay {delay} s"
    assert summary.pending > 0  # the limit left pages for --resume


@given(
    st.sampled_from(["kgforge", "KGForge", "*"]),
    st.decimals(0, 60, places=2).map(str),
    st.decimals(0, 60, places=2).map(str),
)
def test_crawl_delay_takes_fractions_from_the_group_that_applies(ours: str, mine: str, other: str) -> None:
    text = (
        f"User-agent: otherbot\nCrawl-delay: {other}\n\nUser-agent: {ours}\nDisallow: /x # note\nCrawl-delay: {mine}\n"
    )
    assert crawl_delay(text, "kgforge/0.1") == float(mine)
    assert crawl_delay(text.replace(f"User-agent: {ours}", "User-agent: nobody"), "kgforge/0.1") is None
    assert crawl_delay("User-agent: *\nCrawl-delay: soon\n", "kgforge") is None


SCHEMA = """
extends = "film"
name = "film"
version = 1

[options.crawl]
min_triples = 5
drop_text_words = ["微信", "公众号"]
rating_symbols = { relation = "rating", target = "reputation", cuts = [6.0, 8.0], symbols = ["口碑很差", "口碑一般", "口碑很好"] }
"""


@pytest.mark.slow  # crawls a loopback site with its delays, then builds
def test_crawl_then_build_into_store(cli, workdir, tmp_path):
    schema = tmp_path / "film_crawl.toml"
    schema.write_text(SCHEMA, encoding="utf-8")
    with LoopbackSite(DOUBAN, douban_routes()) as site:
        out = cli(
            "crawl", "douban_movie", "--base-url", site.base_url, *CLI_SETTINGS, "--workdir", str(workdir), "--json"
        )
        base = site.base_url
    crawl_result = json.loads(out.stdout)
    assert crawl_result["fetched"] == 18 and crawl_result["failed"] == 5 and crawl_result["records"] == 14
    assert any(BROKEN in w and "'plot'" in w for w in crawl_result["field_warnings"])
    built = cli(
        "build", "film", "--source", "crawl:douban_movie", "--schema", str(schema), "--workdir", str(workdir), "--json"
    )
    summary = json.loads(built.stdout)
    assert "warning" in built.stderr and BROKEN in built.stderr
    source = summary["sources"][0]
    assert source["graph"] == "https://kgforge.org/graph/crawl/douban_movie"
    assert source["counts"]["dropped by clean-up"] == 2  # one dirty comment, one sparse start entity
    quarantine = (workdir / "film" / source["quarantine_file"]).read_text(encoding="utf-8")
    assert "微信" in quarantine and "min_triples" in quarantine and "/subject/1292720/" in quarantine

    store = ox.Store.read_only(str(workdir / "film" / "store" / "oxigraph"))
    graph = ox.NamedNode(source["graph"])

    def named(label: str) -> list[ox.NamedNode]:
        quads = store.quads_for_pattern(None, ox.NamedNode(RDFS_LABEL), ox.Literal(label, language="zh"), graph)
        return [q.subject for q in quads]

    def objects(subject_label: str, predicate: str) -> set[str]:
        found = store.quads_for_pattern(named(subject_label)[0], ox.NamedNode(predicate), None, graph)
        return {q.object.value for q in found}

    assert objects("肖申克的救赎", PROV_SOURCE) == {f"{base}/subject/1292052/"}
    assert objects("肖申克的救赎", relation_iri("reputation")) == {"口碑很好"}
    assert objects("肖申克的救赎", SKOS_ALT_LABEL) == {"The Shawshank Redemption"}  # one site only
    comments = objects("肖申克的救赎", relation_iri("comment"))
    assert "希望让人自由。" in comments and not any("微信" in c for c in comments)
    plot = list(store.quads_for_pattern(None, ox.NamedNode(relation_iri("plot")), None, graph))
    assert plot and all(q.object.language == "zh" for q in plot)
    assert objects("蒂姆·罗宾斯", relation_iri("birth_date")) == {"1958-10-16"}
    starring = ox.NamedNode(relation_iri("starring"))
    assert list(store.quads_for_pattern(named("肖申克的救赎")[0], starring, named("蒂姆·罗宾斯")[0], graph))
    assert not named("阿甘正传")  # a sparse start entity, dropped by min_triples


def test_schema_listed_crawl_source_crawls_then_loads(cli, workdir, tmp_path):
    with LoopbackSite(SITES / "qunar") as site:
        schema = tmp_path / "travel_crawl.toml"
        schema.write_text(
            f"""extends = "travel"
name = "travel"

[[sources]]
kind = "crawl"
path = "qunar"
base_url = "{site.base_url}"
delay = 0.05
""",
            encoding="utf-8",
        )
        built = json.loads(cli("build", "travel", "--schema", str(schema), "--workdir", str(workdir), "--json").stdout)
        assert site.paths()[:2] == ["/robots.txt", "/p-cs299914-beijing-jingdian"]
    assert built["graphs"]["https://kgforge.org/graph/crawl/qunar"] > 20
    assert built["sources"][0]["counts"]["records_ok"] == 2
    # A second build re-parses the cached crawl: no server needed any more.
    again = json.loads(cli("build", "travel", "--schema", str(schema), "--workdir", str(workdir), "--json").stdout)
    assert again["graphs"] == built["graphs"]


@pytest.mark.slow  # crawls the demo site politely, with its delays
def test_demo_site_crawl_builds_a_store(tmp_path):
    result = demo_crawl(tmp_path / "kg", show_progress=False)
    assert result.crawl.fetched == 9 and result.crawl.failed == 0
    assert result.build.graphs["https://kgforge.org/graph/crawl/douban_movie"] > 100
