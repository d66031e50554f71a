"""Linking dataset entities to Wikidata / XLORE counterparts: exact names, types, ambiguity, the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.vocab import OWL_SAME_AS, entity_iri
from kgforge.demo.wikidata_dump import demo_entities, entity, write_dump
from kgforge.publish.transaction import check_store
from kgforge.sources.matching import Named, link, name_key
from kgforge.store.layout import domain_paths
from kgforge.store.snapshot import Snapshot

WD = "http://www.wikidata.org/entity/"


def test_label_beats_alias_and_ties_are_ambiguous() -> None:
    report = link(
        [Named("film", ("城市之街",)), Named("star", ("巩俐",), types=frozenset({"star"})), Named("x", ("同名",))],
        [
            Named("Q1", ("城市之街",)),
            Named("Q2", ("Other",), ("城市之街",)),  # alias only: loses to Q1's label
            Named("Q3", ("巩俐",), types=frozenset({"film"})),  # wrong type: never linked
            Named("Q4", ("Gong Li", "巩俐"), types=frozenset({"star"})),
            Named("Q5", ("同名",)),
            Named("Q6", ("同名",)),
        ],
    )
    assert report.linked == {"film": "Q1", "star": "Q4"}
    assert report.ambiguous == {"x": ["Q5", "Q6"]}
    assert report.type_rejected == 1


def test_a_traditional_name_links_to_its_simplified_twin() -> None:
    report = link(
        [Named("a", ("霧城之夜",)), Named("b", ("臺北故事",), ("青梅竹馬",))],
        [Named("Q1", ("雾城之夜",)), Named("Q2", ("青梅竹马",)), Named("Q3", ("Fog City Night",))],
    )
    assert report.linked == {"a": "Q1", "b": "Q2"}
    assert name_key("霧城之夜") == name_key("雾城之夜") != name_key("Fog City Night")


def test_disambiguated_names_and_normal_forms() -> None:
    report = link(
        [Named("a", ("霸王别姬（1993年陈凯歌执导电影）",)), Named("b", ("ＣＩＴＹ streets",))],
        [Named("Q1", ("霸王别姬",)), Named("Q2", ("City Streets",))],
    )
    assert report.linked == {"a": "Q1", "b": "Q2"}
    assert name_key("出生 日期") == name_key("出生日期")


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.sampled_from("abcdef"),
        st.lists(st.sampled_from(["甲", "乙", "丙", "Ding"]), min_size=1, max_size=2),
        min_size=1,
    ),
    st.dictionaries(st.sampled_from(["Q1", "Q2", "Q3", "Q4"]), st.sampled_from(["甲", "乙", "丙", "ding", "戊"])),
)
def test_never_guesses(entities: dict[str, list[str]], candidates: dict[str, str]) -> None:
    report = link([Named(k, tuple(v)) for k, v in entities.items()], [Named(q, (n,)) for q, n in candidates.items()])
    for key, qid in report.linked.items():
        same = [q for q, n in candidates.items() if name_key(n) in {name_key(x) for x in entities[key]}]
        assert same == [qid]  # linked only when exactly one counterpart carries one of its names
    for qids in report.ambiguous.values():
        assert len(qids) > 1
    assert set(report.linked) | set(report.ambiguous) | set(report.unmatched) == set(entities)


@pytest.mark.slow  # builds, imports a dump and links through the CLI
def test_cli_import_with_seed_labels_then_link(cli, workdir: Path, tmp_path: Path, shared) -> None:
    cli(
        "build",
        "film",
        "--no-schema-sources",
        "--source",
        f"kdconv-dialogues:{shared('kdconv/film/dev.json')}",
        "--workdir",
        str(workdir),
    )
    dump = write_dump(
        tmp_path / "demo.json.bz2",
        [*demo_entities(), entity("Q2000001", {"zh-hans": "巩俐", "en": "Gong Li (namesake)"}, {"P31": ["Q5"]})],
    )
    result = json.loads(
        cli(
            "import",
            "wikidata",
            str(dump),
            "--domain",
            "film",
            "--seed-labels",
            "--hops",
            "1",
            "--seed",
            "Q2000001",
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    counts = result["source"]["counts"]
    assert counts["seed_names_linked"] >= 3 and counts["seed_names_ambiguous"] == 1  # 巩俐 twice in the dump
    assert check_store(Snapshot.open("film", workdir)).ok  # the import extended a copy of the built store
    report = json.loads(cli("link", "film", "--workdir", str(workdir), "--json").stdout)
    assert report["linked"] >= 3 and report["ambiguous"] >= 1
    store = Snapshot.open("film", workdir).store()
    same = {
        (q.subject.value, q.object.value) for q in store.quads_for_pattern(None, ox.NamedNode(OWL_SAME_AS), None, None)
    }
    assert (entity_iri("陈凯歌"), WD + "Q1000014") in same
    assert (entity_iri("霸王别姬"), WD + "Q1000002") in same
    assert not any(s == entity_iri("巩俐") for s, _ in same)  # two Wikidata 巩俐: reported, not linked
    full = json.loads((workdir / "film" / "links-report.json").read_text())
    assert sorted(full["ambiguous"]["巩俐"]["candidates"]) == [WD + "Q1000016", WD + "Q2000001"]
    # linking again replaces its graph instead of adding a second one
    cli("link", "film", "--workdir", str(workdir))
    manifest = json.loads(domain_paths("film", workdir).manifest.read_text())
    assert sum(1 for e in manifest["graphs"].values() if e.get("kind") == "links") == 1
    assert any(g.endswith("/kdconv-dialogues/dev") for g in manifest["graphs"])
    # the new build extended a copy of the old one: every graph holds what the manifest says, no link twice
    assert check_store(Snapshot.open("film", workdir)).ok
    relinked = Snapshot.open("film", workdir).store()
    assert {
        (q.subject.value, q.object.value)
        for q in relinked.quads_for_pattern(None, ox.NamedNode(OWL_SAME_AS), None, None)
    } == same
    assert len(relinked) == len(store)
