"""The server's parsers and bounds on their own: bindings, Accept negotiation, the row budget, the asset
list, the vendored browser libraries. Property-based where the input is text from a client."""

from __future__ import annotations

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.serve import vendor
from kgforge.serve.assets import STATIC, asset_files
from kgforge.serve.protocol import (
    GRAPH_TYPES,
    RESULTS_TYPES,
    ProtocolError,
    negotiate,
    parse_term,
    read_request,
)
from kgforge.serve.worker import LineBudget, RowLimit, decode_term, serialized

TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)
LANGS = st.sampled_from(["zh", "en", "zh-hans", "en-gb", "de"])


@st.composite
def terms(draw) -> ox.NamedNode | ox.Literal:
    kind = draw(st.sampled_from(["iri", "plain", "lang", "typed"]))
    if kind == "iri":
        return ox.NamedNode("https://kgforge.org/entity/name/" + draw(st.text("abcdef0123456789", min_size=1)))
    if kind == "lang":
        return ox.Literal(draw(TEXT), language=draw(LANGS))
    if kind == "typed":
        return ox.Literal(str(draw(st.integers())), datatype=ox.NamedNode("http://www.w3.org/2001/XMLSchema#integer"))
    return ox.Literal(draw(TEXT))


@given(terms())
def test_a_binding_reads_back_the_term_it_was_written_from(term):
    assert decode_term(parse_term(str(term))) == term


@given(TEXT)
def test_a_binding_is_a_term_or_a_400(text):
    try:
        parse_term(text)
    except ProtocolError as exc:
        assert exc.status == 400


@given(st.text(max_size=80))
def test_negotiation_names_known_formats_or_refuses_with_406(accept):
    try:
        results, graph = negotiate(accept, None)
    except ProtocolError as exc:
        assert exc.status == 406
        return
    assert results in (*RESULTS_TYPES, None) and graph in (*GRAPH_TYPES, None)
    assert results is not None or graph is not None


@pytest.mark.parametrize(
    "accept, expected",
    [
        ("", ("json", "turtle")),
        ("*/*", ("json", "turtle")),
        ("text/csv", ("csv", None)),
        ("text/turtle;q=0.5, application/sparql-results+xml", ("xml", "turtle")),
        ("application/sparql-results+json;q=0.1, text/tab-separated-values;q=0.9", ("tsv", None)),
        ("text/*", ("xml", "turtle")),
        ("application/ld+json", (None, "jsonld")),
    ],
)
def test_negotiation_prefers_by_quality(accept, expected):
    assert negotiate(accept, None) == expected


@given(st.integers(0, 60), st.integers(1, 50))
@settings(max_examples=60)
def test_the_row_budget_refuses_exactly_the_results_past_the_limit(rows, limit):
    store = ox.Store()
    store.bulk_extend(
        [
            ox.Quad(ox.NamedNode(f"http://e/{i}"), ox.NamedNode("http://e/p"), ox.Literal(f"a\nb{i}"))
            for i in range(rows)
        ]
    )
    request = {"results_format": "json", "graph_format": "turtle"}
    try:
        out = serialized(store.query("SELECT ?s ?o WHERE { ?s ?p ?o }"), request, limit)
    except RowLimit:
        assert rows > limit
        return
    assert rows <= limit and out.rows == rows
    parsed = ox.parse_query_results(out.body, format=ox.QueryResultsFormat.JSON)
    assert sorted(r["o"].value for r in parsed) == sorted(f"a\nb{i}" for i in range(rows))


def test_line_budget_stops_the_writer_mid_result():
    budget = LineBudget(3)
    budget.write(b"h\n1\n")
    with pytest.raises(RowLimit):
        budget.write(b"2\n3\n")
    assert budget.value() == b"h\n1\n"


@given(st.text(max_size=60))
def test_no_asset_name_leads_outside_the_static_folder(name):
    found = asset_files().get(name)
    assert found is None or found.resolve().is_relative_to(STATIC)


def test_updates_are_refused_however_they_arrive():
    for method, media, query, body in [
        ("POST", "application/sparql-update", "", b"CLEAR ALL"),
        ("POST", "application/x-www-form-urlencoded", "", b"update=CLEAR+ALL"),
        ("GET", "", "update=CLEAR+ALL", b""),
    ]:
        with pytest.raises(ProtocolError) as refused:
            read_request(method, media, query, body, "")
        assert refused.value.status == 403


def test_vendored_browser_libraries_match_their_record():
    assert vendor.check() == []
    assert {"cytoscape.min.js", "codemirror.js", "sparql.js"} <= set(
        vendor.PACKAGES["cytoscape@3.34.4"].values()
    ) | set(vendor.PACKAGES["codemirror@5.65.21"].values())
