"""Hostile names round-trip through build, query (--bind) and export-rdf, and never alter a query."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest
import rdflib
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.jsonio import iter_json_container
from kgforge.core.quads import QuadWriter, literal_term
from kgforge.core.text import normalise_label, text_language
from kgforge.core.vocab import RDFS_LABEL, entity_iri

HOSTILE = [
    'He said "hi"',
    "back\\slash \\n not a newline",
    "two\nlines\r\nand CRLF",
    "brace } close { open",
    "hash # comment",
    '"} . ?s ?p ?o . FILTER(true) #',
    "tab\there",
    '《故宫》·"紫禁城"',
]


@pytest.fixture
def hostile_store(tmp_path: Path, workdir: Path, cli) -> Path:
    kb = {
        name: [[name, "地址", f"addr of {name}"], [name, "周边景点", HOSTILE[(i + 1) % len(HOSTILE)]]]
        for i, name in enumerate(HOSTILE)
    }
    source = tmp_path / "kb_travel.json"
    source.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    cli("build", "travel", "--source", f"kdconv:{source}", "--workdir", str(workdir))
    return workdir


@pytest.mark.parametrize("name", HOSTILE)
def test_bound_names_find_exactly_their_entity(hostile_store, cli, name):
    tag = text_language(name, "zh")  # a Latin-script name of a Chinese source is imported as English
    out = cli(
        "query",
        "travel",
        "--workdir",
        str(hostile_store),
        "--format",
        "json",
        "--bind",
        f"name@{tag}={name}",
        "SELECT ?name ?e ?addr WHERE { ?e rdfs:label ?name ; kgr:address ?addr }",
    ).stdout
    rows = json.loads(out)["results"]["bindings"]
    assert [(r["e"]["value"], r["addr"]["value"]) for r in rows] == [(entity_iri(name), f"addr of {name}")]


def test_injection_attempts_match_nothing(hostile_store, cli):
    for attack in ['x" } UNION { ?e ?p ?name } #', "x> } UNION { ?e ?p ?name", "' OR 1=1 --"]:
        out = cli(
            "query",
            "travel",
            "--workdir",
            str(hostile_store),
            "--format",
            "json",
            "--bind",
            f"name@zh={attack}",
            "SELECT ?name ?e WHERE { ?e rdfs:label ?name }",
        ).stdout
        assert json.loads(out)["results"]["bindings"] == []


def test_bound_iri_must_be_an_iri(hostile_store, cli):
    result = cli(
        "query",
        "travel",
        "--workdir",
        str(hostile_store),
        "--bind",
        "e=<not an iri>",
        "SELECT ?e WHERE { ?e ?p ?o }",
        check=False,
    )
    assert result.returncode == 1 and "invalid IRI" in result.stderr


@pytest.mark.parametrize("fmt", ["nq", "trig", "nt", "ttl"])
def test_export_rdf_round_trips_every_name(hostile_store, cli, tmp_path, fmt):
    out = tmp_path / f"travel.{fmt}"
    report = json.loads(
        cli(
            "export-rdf", "travel", "--format", fmt, "--out", str(out), "--workdir", str(hostile_store), "--json"
        ).stdout
    )
    parsed = list(
        ox.parse(
            path=str(out),
            format={
                "nq": ox.RdfFormat.N_QUADS,
                "trig": ox.RdfFormat.TRIG,
                "nt": ox.RdfFormat.N_TRIPLES,
                "ttl": ox.RdfFormat.TURTLE,
            }[fmt],
        )
    )
    assert len(parsed) == report["statements"]
    labels = {(q.object.value, q.object.language) for q in parsed if q.predicate.value == RDFS_LABEL}
    assert {(name, text_language(name, "zh")) for name in HOSTILE} <= labels
    if fmt == "ttl":  # the small-export interop path: rdflib reads what we write
        graph = rdflib.Graph().parse(str(out), format="turtle")
        assert {str(o) for o in graph.objects(predicate=rdflib.RDFS.label)} >= set(HOSTILE)


@pytest.mark.parametrize(
    ("given", "name"), [("turtle", "ttl"), ("N-Triples", "nt"), ("nquads", "nq"), ("TriG", "trig")]
)
def test_export_rdf_takes_the_formats_common_names(hostile_store, cli, tmp_path, given, name):
    out = tmp_path / "travel.rdf"
    report = json.loads(
        cli(
            "export-rdf", "travel", "--format", given, "--out", str(out), "--workdir", str(hostile_store), "--json"
        ).stdout
    )
    assert report["format"] == name and report["statements"] > 0 and out.stat().st_size


def test_export_rdf_names_the_closest_format_for_a_typo(hostile_store, cli, tmp_path):
    result = cli(
        "export-rdf",
        "travel",
        "--format",
        "turtel",
        "--out",
        str(tmp_path / "x"),
        "--workdir",
        str(hostile_store),
        check=False,
    )
    assert result.returncode == 2
    assert "unknown RDF format 'turtel'; did you mean 'ttl'? known RDF formats: nq, nt, trig, ttl" in result.stderr
    assert not (tmp_path / "x").exists()


@settings(max_examples=200, deadline=None)
@given(value=st.text(), lang=st.sampled_from([None, "zh", "en", "zh-hant"]))
def test_written_literals_parse_back_unchanged(tmp_path_factory, value, lang):
    path = tmp_path_factory.mktemp("q") / "x.nq"
    with QuadWriter(path, "https://kgforge.org/graph/t") as writer:
        writer.literal("https://kgforge.org/entity/x", RDFS_LABEL, value, lang=lang)
    [quad] = list(ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS))
    assert quad.object.value == value and (quad.object.language or None) == lang
    assert quad.graph_name.value == "https://kgforge.org/graph/t"


def test_lone_surrogates_are_refused_not_written():
    with pytest.raises(UnicodeEncodeError):
        literal_term("bad \ud800 value")


json_keys = st.text(min_size=1, max_size=8)
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(json_keys, inner, max_size=3),
    max_leaves=8,
)


@pytest.mark.slow  # hypothesis members through the reader and the store
@settings(max_examples=150, deadline=None)
@given(data=st.dictionaries(json_keys, json_values, min_size=1, max_size=6), indent=st.sampled_from([None, 0, 2]))
def test_json_members_come_back_with_their_lines(tmp_path_factory, data, indent):
    path = tmp_path_factory.mktemp("j") / "doc.json"
    text = json.dumps(data, ensure_ascii=False, indent=indent)
    path.write_text(text, encoding="utf-8")
    records = list(iter_json_container(path, dict))
    assert [(r.key, r.value) for r in records] == list(data.items())
    lines = text.split("\n")
    for record in records:
        assert json.dumps(record.key, ensure_ascii=False) in lines[record.line - 1]


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_normalisation_is_idempotent_and_keeps_latin_word_spaces(text):
    once = normalise_label(text)
    assert normalise_label(once) == once
    assert normalise_label(text, segmented=False) == normalise_label(normalise_label(text, segmented=False), False)
    words = "Sarab Neelam 3 Idiots"
    assert normalise_label(words) == words
