"""Wikidata full RDF dumps (latest-all.ttl): the real Q42 sample and generated dumps with damage."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox

from kgforge.core.quads import XSD
from kgforge.core.schema import load_schema
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, class_iri
from kgforge.sources.wikidata.entity import WikidataConfig
from kgforge.sources.wikidata.passes import read_journal, run_resumable
from kgforge.sources.wikidata.pipeline import PassSpec
from kgforge.sources.wikidata.ttl import block_boundary, parse_ttl_batch
from tests.test_wikidata import build_source, objects
from tests.test_wikidata_dump import EXPECTED_LEVELS, graph_entities
from tests.test_wikidata_nt import truthy_lines

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS, PQ = P + "statement/", P + "qualifier/"
WIKIBASE = "http://wikiba.se/ontology#"
HEADER = (
    "@prefix wd: <http://www.wikidata.org/entity/> .\n"
    "@prefix data: <https://www.wikidata.org/wiki/Special:EntityData/> .\n"
    "@prefix schema: <http://schema.org/> .\n\n"
)


def node(qid: str) -> ox.NamedNode:
    return ox.NamedNode(WD + qid)


def test_real_q42_full_dump(workdir: Path, shared) -> None:
    store, source = build_source(workdir, "wikidata-ttl", shared("wikidata_rdf/Q42.all.ttl"))
    q42 = WD + "Q42"
    assert objects(store, q42, RDFS_LABEL) == {
        ox.Literal("道格拉斯·亚当斯", language="zh-hans"),
        ox.Literal("Douglas Adams", language="en"),
    }
    assert objects(store, q42, WDT + "P31") == {node("Q5")}
    assert ox.NamedNode(class_iri("star")) in objects(store, q42, RDF_TYPE)
    # best rank only: residence Q159288 (normal, outranked by preferred) is neither a fact nor a statement node
    assert objects(store, q42, WDT + "P551") == {node("Q84"), node("Q909993")}
    statements = objects(store, q42, P + "P551")
    assert statements and all(node("Q159288") not in objects(store, s.value, PS + "P551") for s in statements)
    (qualified,) = [s for s in statements if node("Q909993") in objects(store, s.value, PS + "P551")]
    start = ox.Literal("1957-01-01T00:00:00Z", datatype=ox.NamedNode(XSD + "dateTime"))  # as the dump writes times
    assert objects(store, qualified.value, PQ + "P580") == {start}
    assert objects(store, qualified.value, WIKIBASE + "rank") == {ox.NamedNode(WIKIBASE + "PreferredRank")}
    # no references, full values or sitelinks
    assert not list(store.quads_for_pattern(None, ox.NamedNode("http://schema.org/about"), None, None))
    assert not list(store.quads_for_pattern(None, ox.NamedNode(PQ + "value/P580"), None, None))
    assert source["quarantined"] == 0 and source["counts"]["statement_nodes"] >= 1


def ttl_dump(entities: list[dict], broken: str | None = None) -> str:
    """A dump in the full dump's shape: prefixes, then a ``data:Q…`` block per entity (N-Triples lines are Turtle)."""
    blocks = []
    for item in entities:
        lines = truthy_lines([item]) if item["id"] != broken else [f"<{WD}{broken}> <{WDT}P1> ."]
        blocks.append(
            f"data:{item['id']} a schema:Dataset ;\n\tschema:about wd:{item['id']} .\n\n" + "\n".join(lines) + "\n"
        )
    return HEADER + "\n".join(blocks)


def test_a_broken_block_is_quarantined_and_the_others_land(workdir: Path, tmp_path: Path) -> None:
    path = tmp_path / "all.ttl"
    path.write_text(ttl_dump(graph_entities(), broken="Q3"), encoding="utf-8")
    store, source = build_source(workdir, "wikidata-ttl", path)
    subjects = {q.subject.value.removeprefix(WD) for q in store.quads_for_pattern(None, None, None, None)}
    assert "Q3" not in subjects and {"Q1", "Q2", "Q4"} <= subjects
    entries = [json.loads(line) for line in (workdir / "film" / source["quarantine_file"]).read_text().splitlines()]
    [entry] = entries
    line = path.read_text(encoding="utf-8").splitlines().index("data:Q3 a schema:Dataset ;") + 1
    assert entry["location"].startswith(f"line {line} (byte ") and "bad Turtle block" in entry["reason"]


def test_seeded_selection_matches_the_json_expansion(tmp_path: Path) -> None:
    path = tmp_path / "all.ttl"
    path.write_text(ttl_dump(graph_entities()), encoding="utf-8")
    for hops in (1, 3):
        store, _ = build_source(
            tmp_path / f"kg{hops}", "wikidata-ttl", path, seeds=["Q1"], hops=hops, fanout_cap=3, exclude=["P1344"]
        )
        subjects = {
            q.subject.value.removeprefix(WD)
            for q in store.quads_for_pattern(None, None, None, None)
            if q.subject.value.startswith(WD)
        }
        assert subjects == set().union(*EXPECTED_LEVELS[: hops + 1])


def test_workers_small_batches_and_resume_give_the_same_journal(tmp_path: Path) -> None:
    path = tmp_path / "all.ttl"
    path.write_text(ttl_dump(graph_entities() * 20), encoding="utf-8")
    header = HEADER.encode()
    spec = PassSpec(
        "ttl-extract", WikidataConfig.from_schema(load_schema("film")), None, parse_ttl_batch, block_boundary, header
    )
    whole = run_resumable(path, spec, tmp_path / "whole")
    parallel = run_resumable(path, spec, tmp_path / "parallel", workers=2, batch_bytes=1_500)
    stopped = run_resumable(path, spec, tmp_path / "state", batch_bytes=1_500, stop_after_batches=4)
    assert 0 < len(list(read_journal(stopped.journal))) < len(list(read_journal(whole.journal)))
    resumed = run_resumable(path, spec, tmp_path / "state", batch_bytes=1_500)
    assert resumed.resumed_from > 0
    expected = list(read_journal(whole.journal))
    assert list(read_journal(parallel.journal)) == expected == list(read_journal(resumed.journal))
    assert whole.counts["entities"] == len(graph_entities()) * 20
