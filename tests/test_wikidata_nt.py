"""Wikidata truthy N-Triples: the real Q8 sample and generated lines with escapes, blank nodes and damage."""

from __future__ import annotations

import bz2
import gzip
import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.schema import load_schema
from kgforge.core.vocab import RDFS_LABEL, SKOS_ALT_LABEL, relation_iri
from kgforge.sources.wikidata.entity import WikidataConfig
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.nt import parse_nt_batch, subject_boundary, unescape
from kgforge.sources.wikidata.passes import read_journal, run_resumable
from kgforge.sources.wikidata.pipeline import PassSpec
from tests.test_wikidata import build_source, objects
from tests.test_wikidata_dump import EXPECTED_LEVELS, graph_entities

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"


def test_real_q8_truthy_sample(workdir: Path, shared) -> None:
    store, source = build_source(workdir, "wikidata-nt", shared("wikidata_rdf/Q8_happiness.truthy.nt"))
    q8 = WD + "Q8"
    # \u escapes decoded; the zh chain picks zh-hans over zh-hant; en as is
    assert objects(store, q8, RDFS_LABEL) == {
        ox.Literal("快乐", language="zh-hans"),
        ox.Literal("happiness", language="en"),
    }
    assert ox.Literal("欢乐", language="zh-hans") in objects(store, q8, SKOS_ALT_LABEL)
    assert objects(store, q8, WDT + "P31") == {ox.NamedNode(WD + q) for q in ("Q331769", "Q9415", "Q60539479")}
    assert objects(store, q8, WDT + "P646") == {ox.Literal("/m/016pp7")}
    assert not objects(store, q8, "http://www.wikidata.org/prop/direct-normalized/P646")
    assert source["counts"]["statements"] == 93 and source["counts"]["label_duplicates"] == 274


def test_generated_lines_blank_nodes_escapes_and_damage(workdir: Path, tmp_path: Path) -> None:
    lines = [
        '<http://wikiba.se/ontology#Dump> <http://schema.org/softwareVersion> "1.0.0" .',
        f"<{WD}Q1> <{WDT}P57> <{WD}Q2> .",
        f'<{WD}Q1> <{WDT}P1476> "\\u57CE\\u5E02\\u4E4B\\u8857 \\U0001F3AC \\"quoted\\""@zh .',
        f'<{WD}Q1> <{WDT}P577> "1931-01-01T00:00:00Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .',
        f"<{WD}Q1> <{WDT}P170> _:b0f3a .",
        f"<{WD}Q1> <{WDT}P31> this is not a triple",
        f'<{WD}Q1> <{RDFS_LABEL}> "City Streets"@en .',
        f'<{WD}Q2> <{RDFS_LABEL}> "Rouben Mamoulian"@en .',
    ]
    path = tmp_path / "truthy.nt.gz"
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data)[:-8])  # cut short: the gzip trailer (CRC, size) is gone
    store, source = build_source(workdir, "wikidata-nt", path)
    q1 = WD + "Q1"
    assert objects(store, q1, relation_iri("director")) == {ox.NamedNode(WD + "Q2")}
    assert objects(store, q1, WDT + "P1476") == {ox.Literal('城市之街 🎬 "quoted"', language="zh")}
    (unknown,) = objects(store, q1, WDT + "P170")
    assert unknown.value.startswith("https://kgforge.org/.well-known/genid/")
    assert objects(store, WD + "Q2", RDFS_LABEL) == {ox.Literal("Rouben Mamoulian", language="en")}
    entries = [json.loads(line) for line in (workdir / "film" / source["quarantine_file"]).read_text().splitlines()]
    offset = sum(len(line) + 1 for line in lines[:5])
    assert entries[0]["location"] == f"line 6 (byte {offset})"
    assert any(e["location"] == "end of dump" for e in entries)


@settings(max_examples=200, deadline=None)
@given(st.text(st.characters(blacklist_categories=("Cs",)), max_size=30))
def test_unescape_inverts_ntriples_escaping(text: str) -> None:
    escaped = "".join(
        f"\\u{ord(c):04X}"
        if 0x80 <= ord(c) <= 0xFFFF
        else f"\\U{ord(c):08X}"
        if ord(c) > 0xFFFF
        else {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(c, c)
        for c in text
    )
    assert unescape(escaped) == text


def truthy_lines(entities: list[dict]) -> list[str]:
    """The truthy N-Triples a Wikibase dumper would write for these entities (item values, labels)."""
    lines = []
    for item in entities:
        subject = f"<{WD}{item['id']}>"
        for lang, term in item["labels"].items():
            lines.append(f'{subject} <{RDFS_LABEL}> "{term["value"]}"@{lang} .')
        for pid, statements in item["claims"].items():
            ranks = {s["rank"] for s in statements}
            best = "preferred" if "preferred" in ranks else "normal"
            for statement in statements:
                if statement["rank"] == best:
                    lines.append(f"{subject} <{WDT}{pid}> <{WD}{statement['mainsnak']['datavalue']['value']['id']}> .")
    return lines


@pytest.mark.slow  # builds the same selection from two dump formats
def test_selection_on_truthy_nt_matches_the_json_expansion(tmp_path: Path) -> None:
    path = tmp_path / "graph.nt.bz2"
    path.write_bytes(bz2.compress(("\n".join(truthy_lines(graph_entities())) + "\n").encode()))
    for hops in (1, 2, 3):
        store, source = build_source(
            tmp_path / f"kg{hops}", "wikidata-nt", path, seeds=["Q1"], hops=hops, fanout_cap=3, exclude=["P1344"]
        )
        subjects = {
            q.subject.value.removeprefix(WD)
            for q in store.quads_for_pattern(None, None, None, None)
            if q.subject.value.startswith(WD)
        }
        assert subjects == set().union(*EXPECTED_LEVELS[: hops + 1])
    _, source = build_source(tmp_path / "kg-class", "wikidata-nt", path, seed_classes=["Q11424"], hops=0)
    assert source["counts"]["class_closure_size"] == 3 and source["counts"]["selected_entities"] == 1


def nt_spec(mode: str = "nt-extract") -> PassSpec:
    return PassSpec(
        mode, WikidataConfig.from_schema(load_schema("film")), parser=parse_nt_batch, align=subject_boundary
    )


subject_lines = st.lists(st.tuples(st.integers(1, 30), st.integers(1, 12)), min_size=1, max_size=40).map(
    lambda groups: [f'<{WD}Q{q}> <{WDT}P{k}> "v{k}" .' for q, n in groups for k in range(n)]
)


@settings(max_examples=100, deadline=None)
@given(subject_lines, st.integers(40, 600))
def test_aligned_blocks_never_split_a_subject(tmp_path_factory, lines: list[str], size: int) -> None:
    path = tmp_path_factory.mktemp("nt") / "dump.nt"
    path.write_text("\n".join(lines) + "\n")
    blocks = [block for _, _, block in DumpReader(path).blocks(size, subject_boundary)]
    assert b"".join(blocks) == path.read_bytes()
    for before, after in zip(blocks, blocks[1:]):
        assert before.rstrip(b"\n").rsplit(b"\n", 1)[-1].split(b" ", 1)[0] != after.split(b" ", 1)[0]


def test_the_real_sample_in_small_batches_and_workers_matches_one_pass(tmp_path: Path, shared) -> None:
    sample = shared("wikidata_rdf/Q8_happiness.truthy.nt")
    whole = run_resumable(sample, nt_spec(), tmp_path / "whole", workers=0)
    small = run_resumable(sample, nt_spec(), tmp_path / "small", workers=2, batch_bytes=4_000)
    assert list(read_journal(whole.journal)) == list(read_journal(small.journal))
    assert small.counts["statements"] == 93 and small.counts["entities"] == whole.counts["entities"] >= 1


def test_a_killed_nt_import_resumes_from_its_checkpoint(tmp_path: Path) -> None:
    path = tmp_path / "graph.nt.gz"
    lines = truthy_lines(graph_entities()) * 40  # the same subjects again and again: many groups
    path.write_bytes(gzip.compress(("\n".join(lines) + "\n").encode()))
    fresh = run_resumable(path, nt_spec(), tmp_path / "fresh", batch_bytes=2_000)
    stopped = run_resumable(path, nt_spec(), tmp_path / "state", batch_bytes=2_000, stop_after_batches=3)
    assert 0 < len(list(read_journal(stopped.journal))) < len(list(read_journal(fresh.journal)))
    resumed = run_resumable(path, nt_spec(), tmp_path / "state", batch_bytes=2_000)
    assert resumed.resumed_from > 0
    assert list(read_journal(resumed.journal)) == list(read_journal(fresh.journal))
    assert resumed.counts["statements"] == fresh.counts["statements"]
