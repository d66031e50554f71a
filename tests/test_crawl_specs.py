"""Every shipped site spec, pointed with --base-url at its fixture pages on a loopback server."""

from __future__ import annotations

import pytest

from kgforge.core.schema import load_schema
from kgforge.crawl import crawl, load_spec, read_records, site_names
from kgforge.crawl.loopback import LoopbackSite
from tests.crawl_support import TEST_CONFIG, douban_routes, fixture_pages, fixture_site

# site → (records expected, a record's name, facts it must have as (relation, value), its English name)
EXPECTED = {
    "douban_movie": (
        14,
        "霸王别姬",
        {
            ("director", "陈凯歌"),
            ("genre", "同性"),
            ("release_date", "1993"),
            ("country", "中国大陆"),
            ("country", "中国香港"),
            ("rating", "9.6"),
        },
        "Farewell My Concubine",
    ),
    "douban_music": (
        3,
        "叶惠美",
        {
            ("album_artist", "周杰伦"),
            ("genre", "流行"),
            ("release_date", "2003-07-31"),
            ("record_label", "索尼音乐"),
            ("track_count", "3"),
        },
        None,
    ),
    "mtime": (
        5,
        "陈凯歌",
        {("birth_date", "1952-08-12"), ("birth_place", "中国,北京"), ("occupation", "编剧"), ("height", "178cm")},
        "Chen Kaige",
    ),
    "qunar": (
        2,
        "故宫",
        {
            ("address", "北京市东城区景山前街4号"),
            ("ticket", "60元"),
            ("rating", "4.6"),
            ("opening_hours", "08:30-17:00"),
            ("nearby", "颐和园"),
        },
        "The Palace Museum",
    ),
    "wiki_infobox": (
        2,
        "活着",
        {
            ("director", "张艺谋"),
            ("starring", "葛优"),
            ("starring", "巩俐"),
            ("genre", "剧情"),
            ("release_date", "1994-05-18"),
        },
        "To Live",
    ),
}


def test_every_spec_is_tested():
    assert sorted(site_names()) == sorted(EXPECTED)


@pytest.mark.parametrize("site", sorted(EXPECTED))
def test_spec_relations_are_in_its_domain_schema(site):
    spec = load_spec(site)
    schema = load_schema(spec.domain)
    names = {f.relation for rule in spec.rules for f in rule.fields}
    names |= {rel for rule in spec.rules for box in rule.infoboxes for rel in box.labels.values() if rel}
    unknown = sorted(n for n in names - {"name", "name_en"} if n not in schema.relations)
    assert not unknown, f"{site}: relations missing from schemas/{spec.domain}.toml: {unknown}"
    types = {rule.entity_type for rule in spec.rules if rule.entity_type}
    assert types <= set(schema.types)


@pytest.mark.slow  # every shipped spec crawled with its delays
@pytest.mark.parametrize("site", sorted(EXPECTED))
def test_spec_crawls_its_fixture_site(site, tmp_path):
    extra = douban_routes() if site == "douban_movie" else {}
    with LoopbackSite(fixture_site(site), extra) as server:
        spec = load_spec(site, server.base_url)
        summary = crawl(spec, tmp_path / site, TEST_CONFIG, show_progress=False)
        fetched = server.paths()
    assert fetched[0] == "/robots.txt"
    served = fixture_pages(site)
    assert set(served) <= set(fetched), "every fixture page is reached by following links"
    assert summary.fetched >= len(served) - 1  # robots.txt is not a page
    records = list(read_records(tmp_path / site))
    count, name, facts, english = EXPECTED[site]
    assert len(records) == count
    record = next(r for r in records if r.name == name)
    assert facts <= {(f.relation, f.value) for f in record.facts}
    assert record.name_en == english
    assert record.url.startswith(server.base_url)  # --base-url: every link was kept on the mirror
    assert all(r.url.startswith(server.base_url) for r in records)
