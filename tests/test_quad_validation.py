"""Validation before the load: every term is checked by the store's own rules where it is written, a bad
one is quarantined with file, line and reason, and the rest loads."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.quads import (
    MAX_TERM_BYTES,
    QuadWriter,
    check_iri,
    check_lang,
    literal_term,
)
from kgforge.core.vocab import RDFS_LABEL, entity_iri, relation_iri
from tests.test_wikidata import build_source, objects
from tests.test_xlore import I, film_dump

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
GRAPH = "https://kgforge.org/graph/t"


def _quarantined(workdir: Path, source: dict) -> list[dict]:
    text = (workdir / "film" / source["quarantine_file"]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def test_bytes_ff_fe_inside_an_xlore_iri_are_quarantined_and_the_rest_loads(workdir, tmp_path):
    folder = film_dump(tmp_path / "xlore")
    infobox = folder / "xlore.instance.infobox.ttl"
    infobox.write_bytes(
        infobox.read_bytes()
        + f"<{I}bd".encode()
        + b"\xff\xfe"
        + f"i9> <http://xlore.org/property/p12> <{I}bdi3> .\n".encode()
        + f"<{I}bdi7> <http://xlore.org/property/p12> <{I}bdi3> .\n".encode()
    )
    store, source = build_source(workdir, "xlore", folder)
    [entry] = [e for e in _quarantined(workdir, source) if "UTF-8" in e["reason"]]
    lines = infobox.read_bytes().splitlines()
    assert entry["source"] == str(folder) and entry["location"].startswith(f"{infobox.name} line {len(lines) - 1} ")
    assert "byte offset" in entry["reason"]  # the bytes are refused as they are read, before any IRI is made
    assert objects(store, I + "bdi7", relation_iri("director")) == {ox.NamedNode(I + "bdi3")}  # the next line
    assert objects(store, I + "bdi1", relation_iri("director")) == {ox.NamedNode(I + "bdi3")}


def test_bytes_ff_fe_inside_a_truthy_nt_iri_are_quarantined_and_the_rest_loads(workdir, tmp_path):
    lines = [
        f"<{WD}Q1> <{WDT}P57> <{WD}Q2> .".encode(),
        f"<{WD}Q1> <{WDT}P57> <{WD}Q".encode() + b"\xff\xfe" + b"3> .",
        f'<{WD}Q1> <{RDFS_LABEL}> "City Streets"@en .'.encode(),
    ]
    path = tmp_path / "truthy.nt"
    path.write_bytes(b"\n".join(lines) + b"\n")
    store, source = build_source(workdir, "wikidata-nt", path)
    [entry] = _quarantined(workdir, source)
    assert entry["location"].startswith("line 2 ") and "not UTF-8" in entry["reason"]
    assert objects(store, WD + "Q1", relation_iri("director")) == {ox.NamedNode(WD + "Q2")}
    assert objects(store, WD + "Q1", RDFS_LABEL) == {ox.Literal("City Streets", language="en")}


def test_a_value_over_the_limit_is_quarantined_not_a_memory_error(workdir, tmp_path):
    huge = "长" * (16 * 2**20 // 3 + 1)  # over Oxigraph's 16 MiB parser buffer as UTF-8
    assert len(huge.encode("utf-8")) > 16 * 2**20 > MAX_TERM_BYTES
    kb = {
        "霸王别姬": [["霸王别姬", "导演", "陈凯歌"], ["霸王别姬", "Information", huge]],
        "活着": [["活着", "导演", "张艺谋"]],
    }
    path = tmp_path / "kb.json"
    path.write_text(json.dumps(kb, ensure_ascii=False, indent=1), encoding="utf-8")
    store, source = build_source(workdir, "kdconv", path)
    [entry] = _quarantined(workdir, source)
    assert entry["location"] == "line 2" and "MiB" in entry["reason"] and "limit" in entry["reason"]
    directed = store.quads_for_pattern(None, ox.NamedNode(relation_iri("director")), None, None)
    assert len(list(directed)) == 2  # both films' other facts landed
    assert not objects(store, entity_iri("霸王别姬"), relation_iri("information"))
    assert source["counts"]["quads_refused"] == 1


@pytest.mark.parametrize(
    "iri",
    [
        "http://x/a b",
        "http://x/\ufffd\ufffd",
        "http://x:abc/",
        "http://x/%zz",
        "urn:x#a#b",
        "http://ex.org/a|b",
        "no-scheme",
        "http://x/\ud800",
    ],
)
def test_check_iri_refuses_what_the_store_refuses(iri):
    with pytest.raises(ValueError):
        ox.NamedNode(iri)
    with pytest.raises(ValueError):
        check_iri(iri)


@pytest.mark.parametrize("lang", ["a", "x", "en-US-x", "123", "abcdefghi", "zh_CN"])
def test_check_lang_refuses_what_the_store_refuses(lang):
    with pytest.raises(ValueError):
        ox.Literal("v", language=lang)
    with pytest.raises(ValueError):
        check_lang(lang)


@pytest.mark.slow  # hypothesis terms through the writer and Oxigraph's parser
@settings(max_examples=300, deadline=None)
@given(
    subject=st.text(max_size=12),
    value=st.text(max_size=12),
    lang=st.sampled_from([None, "zh", "en-US", "a", "x-y", "zh-hans-", "i-klingon"]),
    datatype=st.sampled_from([None, "http://www.w3.org/2001/XMLSchema#date", "http://x/a b"]),
)
def test_what_the_writer_takes_the_store_parses_unchanged(tmp_path_factory, subject, value, lang, datatype):
    """For any terms, the writer either refuses the quad (quarantined) or writes a line Oxigraph reads back
    as exactly those terms: nothing it writes can fail the load."""
    iri = "https://kgforge.org/entity/" + subject
    refused: list[tuple[str, str]] = []
    path = tmp_path_factory.mktemp("q") / "x.nq"
    with QuadWriter(path, GRAPH, on_reject=lambda reason, quad: refused.append((reason, quad))) as writer:
        written = writer.literal(iri, RDFS_LABEL, value, lang=lang, datatype=None if lang else datatype)
        linked = writer.iri(iri, RDFS_LABEL + "x", "http://x/" + value)
    parsed = list(ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS))
    assert len(parsed) == written + linked and len(refused) == 2 - len(parsed)
    for quad in parsed:
        assert quad.subject == ox.NamedNode(iri) and quad.graph_name == ox.NamedNode(GRAPH)
    if written:
        expected = (
            ox.Literal(value, language=lang)
            if lang
            else (ox.Literal(value, datatype=ox.NamedNode(datatype)) if datatype else ox.Literal(value))
        )
        assert parsed[0].object == expected
    for reason, quad in refused:
        assert reason and quad


def test_a_writer_without_quarantine_raises_rather_than_write_a_bad_quad(tmp_path):
    with QuadWriter(tmp_path / "x.nq", GRAPH) as writer:
        with pytest.raises(ValueError, match="code point"):
            writer.iri("http://x/a b", RDFS_LABEL, "http://x/b")
        assert writer.iri("http://x/a", RDFS_LABEL, "http://x/b")
    assert len((tmp_path / "x.nq").read_text(encoding="utf-8").splitlines()) == 1


def test_literal_term_refuses_values_over_the_limit():
    assert literal_term("x" * 100) == '"' + "x" * 100 + '"'
    with pytest.raises(ValueError, match="limit"):
        literal_term('"' * (MAX_TERM_BYTES // 2 + 1))  # the escaped form counts
