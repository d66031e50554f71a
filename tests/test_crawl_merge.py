"""Clean-up steps from the schema, cross-site merging and bilingual names (two sites must agree)."""

from __future__ import annotations

import json

import pyoxigraph as ox
import pytest

from kgforge.core.errors import SchemaError
from kgforge.core.vocab import PROV_SOURCE, RDFS_LABEL, SKOS_ALT_LABEL, entity_iri
from kgforge.crawl.cleanup import CleanupOptions, clean
from kgforge.crawl.loopback import LoopbackSite
from kgforge.crawl.merge import merge
from kgforge.crawl.spec import Fact, Record
from tests.crawl_support import CLI_SETTINGS, DOUBAN, SITES, douban_routes


def film(site: str, name: str, year: str, en: str | None = None, *facts: tuple[str, str]) -> Record:
    record = Record(site, f"http://{site}/{name}/{year}", "movie", "film", year, name, en)
    record.facts = [Fact("release_date", year)] + [Fact(r, v) for r, v in facts]
    return record


def test_rating_symbols_cut_points():
    options = CleanupOptions.from_options(
        {
            "rating_symbols": {
                "relation": "rating",
                "target": "reputation",
                "cuts": [6.0, 8.0],
                "symbols": ["差", "一般", "好"],
            }
        }
    )
    records = [film("s", f"f{v}", "2000", None, ("rating", v)) for v in ("5.9", "6.0", "7.99", "8.0", "9.7分")]
    out = clean(records, options, set(), set())
    symbols = [next(f.value for f in r.facts if f.relation == "reputation") for r in out.records]
    assert symbols == ["差", "一般", "一般", "好", "好"]


def test_word_list_and_min_triples():
    options = CleanupOptions.from_options({"min_triples": 3, "drop_text_words": ["微信"]})
    rich = film("s", "a", "2000", None, ("comment", "好看"), ("comment", "加微信领资源"), ("genre", "剧情"))
    poor = film("s", "b", "2000", None, ("comment", "加微信"))
    linked = Record("s", "http://s/p", "celebrity", "star", "p", "某人")  # not a start entity: kept
    out = clean([rich, poor, linked], options, {"comment"}, {"movie"})
    assert [r.name for r in out.records] == ["a", "某人"]
    assert [f.value for f in rich.facts if f.relation == "comment"] == ["好看"]
    reasons = [d.reason for d in out.dropped]
    assert reasons[0] == "text contains the dropped word '微信'" and "min_triples = 3" in reasons[-1]


@pytest.mark.parametrize(
    "bad, key",
    [
        ({"min_triples": -1}, "min_triples"),
        ({"drop_text_words": "微信"}, "drop_text_words"),
        ({"rating_symbols": {"cuts": [8, 6], "symbols": ["a", "b", "c"]}}, "cuts"),
        ({"rating_symbols": {"cuts": [6], "symbols": ["a"]}}, "symbols"),
    ],
)
def test_bad_clean_up_settings_name_the_key(bad, key):
    with pytest.raises(SchemaError, match=key):
        CleanupOptions.from_options(bad)


def test_merge_decides_names_and_splits_conflicting_years():
    records = [
        film("douban", "霸王别姬", "1993", "Farewell My Concubine"),
        film("mtime", "霸王别姬", "1993", "Farewell my concubine"),
        film("wiki", "霸王别姬", "1993", "Adieu ma concubine"),
        film("douban", "活着", "1994", "To Live"),
        film("mtime", "活着", "1994", "Lifetimes"),
        film("douban", "小妇人", "1994", "Little Women"),
        film("mtime", "小妇人", "2019", "Little Women"),
    ]
    result = merge(records)
    farewell = result.by_url["http://douban/霸王别姬/1993"]
    assert farewell is result.by_url["http://wiki/霸王别姬/1993"] and farewell.iri == entity_iri("霸王别姬")
    assert farewell.english == "Farewell My Concubine"  # two sites agree (case aside); the third is an alternative
    assert result.by_url["http://douban/活着/1994"].english is None
    women = {result.by_url[f"http://{s}/小妇人/{y}"].iri for s, y in (("douban", "1994"), ("mtime", "2019"))}
    assert len(women) == 2 and entity_iri("小妇人") not in women
    report = result.report()
    assert [e.name for e in report.english_unresolved] == ["活着", "小妇人", "小妇人"]  # one site each
    assert report.ambiguous_names[0]["values"] == ["1994", "2019"]
    assert list(report.as_dict()) == [
        "english_accepted",
        "english_unresolved",
        "merged_across_sites",
        "ambiguous_names",
    ]
    assert report.as_dict()["english_unresolved"][0] == {
        "entity": report.english_unresolved[0].entity,
        "name": "活着",
        "type": report.english_unresolved[0].type,
        "candidates": report.english_unresolved[0].candidates,
        "decision": "kept as alternative labels",
    }


@pytest.mark.slow  # crawls two loopback sites with their delays and builds
def test_two_crawled_sites_build_one_graph_each_with_merged_entities(cli, workdir):
    with LoopbackSite(DOUBAN, douban_routes()) as douban, LoopbackSite(SITES / "mtime") as mtime:
        for site, server in (("douban_movie", douban), ("mtime", mtime)):
            cli("crawl", site, "--base-url", server.base_url, *CLI_SETTINGS, "--workdir", str(workdir), "--json")
        urls = {"douban_movie": douban.base_url, "mtime": mtime.base_url}
    built = json.loads(
        cli(
            "build",
            "film",
            "--source",
            "crawl:douban_movie",
            "--source",
            "crawl:mtime",
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    graphs = {s["kind"] + ":" + s["path"]: s["graph"] for s in built["sources"]}
    assert graphs == {
        "crawl:douban_movie": "https://kgforge.org/graph/crawl/douban_movie",
        "crawl:mtime": "https://kgforge.org/graph/crawl/mtime",
    }
    store = ox.Store.read_only(str(workdir / "film" / "store" / "oxigraph"))

    def values(name: str, predicate: str) -> set[tuple[str, str | None]]:
        quads = store.quads_for_pattern(ox.NamedNode(entity_iri(name)), ox.NamedNode(predicate), None, None)
        return {(q.object.value, getattr(q.object, "language", None)) for q in quads}

    assert values("霸王别姬", PROV_SOURCE) == {
        (urls["douban_movie"] + "/subject/1291546/", None),
        (urls["mtime"] + "/12231/", None),
    }
    assert ("Farewell My Concubine", "en") in values("霸王别姬", RDFS_LABEL)
    assert ("Leslie Cheung", "en") in values("张国荣", RDFS_LABEL)
    chen = values("陈凯歌", RDFS_LABEL)
    assert not [v for v in chen if v[1] == "en"]
    assert values("陈凯歌", SKOS_ALT_LABEL) == {("Kaige Chen", "en"), ("Chen Kaige", "en")}
    report = json.loads((workdir / "film" / "raw" / "crawl" / "names_report.json").read_text(encoding="utf-8"))
    unresolved = {e["name"]: e["candidates"] for e in report["english_unresolved"]}
    assert unresolved["陈凯歌"] == {"douban_movie": "Kaige Chen", "mtime": "Chen Kaige"}
    assert unresolved["巩俐"] == {"douban_movie": "Li Gong", "mtime": "Gong Li"}
    assert {e["name"] for e in report["english_accepted"]} >= {"霸王别姬", "肖申克的救赎", "张国荣"}
    merged = {e["name"] for e in report["merged_across_sites"]}
    assert {"霸王别姬", "肖申克的救赎", "陈凯歌", "张国荣", "巩俐"} <= merged
