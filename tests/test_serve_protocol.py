"""`kgforge serve` as a SPARQL 1.1 Protocol endpoint, spoken to by a real HTTP client over 127.0.0.1.

Every answer is compared with what `kgforge query` (the same store, read directly) returns, so a format
that lost or invented a term would fail.
"""

from __future__ import annotations

import csv
import http.client
import io
import socket
import subprocess
import sys
import threading
import time
import xml.etree.ElementTree as ET
from urllib.parse import urlparse

import httpx
import pyoxigraph as ox
import pytest

from kgforge.core.resources import query_text
from kgforge.serve import ServeOptions
from kgforge.serve.runner import is_loopback
from kgforge.store.layout import domain_paths
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from tests.conftest import REPO
from tests.faults import (
    kill_at_random_point,
    open_files,
    orphans,
    reap,
    tagged_processes,
)
from tests.serve_support import (
    MARKUP_LABEL,
    build_demo,
    markup_kb,
    running_server,
    wait_search_ready,
)

LABELS = "SELECT ?s ?label WHERE { ?s rdfs:label ?label } ORDER BY ?s ?label"
FACTS_OF_FILMS = "CONSTRUCT { ?s ?p ?o } WHERE { ?p kg:kind kg:EntityValued . ?s ?p ?o }"
COUNT_ALL = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
RESULTS = "http://www.w3.org/2005/sparql-results#"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("serve-protocol") / "kg"
    build_demo(workdir, markup_kb(workdir.parent))
    return workdir


@pytest.fixture(scope="module")
def server(demo):
    with running_server(demo, timeout=30.0, max_rows=5000, workers=2) as base:
        yield base


@pytest.fixture(scope="module")
def client():
    with httpx.Client(timeout=60) as c:
        yield c


@pytest.fixture(scope="module")
def direct(demo):
    """What `kgforge query` returns for the same queries."""
    with QueryRunner(Snapshot.open("demo", demo)) as runner:
        labels = runner.query(LABELS)
        construct = runner.query(FACTS_OF_FILMS)
    rows = [(row["s"].value, row["label"].value, row["label"].language) for row in labels.rows]
    triples = {(t.subject.value, t.predicate.value, t.object.value) for t in construct.triples}
    return {"labels": rows, "triples": triples}


def get(client, server, query, accept="application/sparql-results+json", **params):
    return client.get(f"{server}/sparql", params={"query": query, **params}, headers={"Accept": accept})


# ---------------------------------------------------------------- result formats


def test_select_as_json_matches_the_store(client, server, direct):
    reply = get(client, server, LABELS)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith("application/sparql-results+json")
    data = reply.json()
    assert data["head"]["vars"] == ["s", "label"]
    got = [(b["s"]["value"], b["label"]["value"], b["label"].get("xml:lang")) for b in data["results"]["bindings"]]
    assert got == direct["labels"] and len(got) > 20


def test_select_as_xml_matches_the_store(client, server, direct):
    reply = get(client, server, LABELS, "application/sparql-results+xml")
    assert reply.headers["content-type"].startswith("application/sparql-results+xml")
    root = ET.fromstring(reply.content)
    got = []
    for result in root.iter(f"{{{RESULTS}}}result"):
        cells = {b.get("name"): b[0] for b in result.iter(f"{{{RESULTS}}}binding")}
        lang = cells["label"].get("{http://www.w3.org/XML/1998/namespace}lang")
        got.append((cells["s"].text, cells["label"].text, lang))
    assert got == direct["labels"]


def test_select_as_csv_matches_the_store(client, server, direct):
    reply = get(client, server, LABELS, "text/csv")
    assert reply.headers["content-type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(reply.text)))
    assert rows[0] == ["s", "label"]
    assert [tuple(r) for r in rows[1:]] == [(s, label) for s, label, _ in direct["labels"]]


def test_select_as_tsv_matches_the_store(client, server, direct):
    reply = get(client, server, LABELS, "text/tab-separated-values")
    assert reply.headers["content-type"].startswith("text/tab-separated-values")
    parsed = ox.parse_query_results(reply.content, format=ox.QueryResultsFormat.TSV)
    got = [(row["s"].value, row["label"].value, row["label"].language) for row in parsed]
    assert got == direct["labels"]


@pytest.mark.parametrize(
    "accept, fmt",
    [
        ("text/turtle", ox.RdfFormat.TURTLE),
        ("application/n-triples", ox.RdfFormat.N_TRIPLES),
        ("application/ld+json", ox.RdfFormat.JSON_LD),
        ("application/rdf+xml", ox.RdfFormat.RDF_XML),
    ],
)
def test_construct_in_each_rdf_format_matches_the_store(client, server, direct, accept, fmt):
    reply = get(client, server, FACTS_OF_FILMS, accept)
    assert reply.status_code == 200 and reply.headers["content-type"].startswith(accept)
    triples = {(t.subject.value, t.predicate.value, t.object.value) for t in ox.parse(reply.content, format=fmt)}
    assert triples == direct["triples"] and len(triples) >= 5


def test_ask_in_json_and_xml(client, server):
    yes = get(client, server, 'ASK { ?s rdfs:label "霸王别姬"@zh }').json()
    no = get(client, server, 'ASK { ?s rdfs:label "没有这部电影"@zh }').json()
    assert yes == {"head": {}, "boolean": True} and no["boolean"] is False
    xml = get(client, server, 'ASK { ?s rdfs:label "霸王别姬"@zh }', "application/sparql-results+xml")
    assert ET.fromstring(xml.content).find(f"{{{RESULTS}}}boolean").text == "true"


def test_format_parameter_overrides_accept(client, server, direct):
    reply = get(client, server, LABELS, "application/sparql-results+xml", format="csv")
    assert reply.headers["content-type"].startswith("text/csv")
    assert len(list(csv.reader(io.StringIO(reply.text)))) == len(direct["labels"]) + 1


def test_unacceptable_media_type_is_406(client, server):
    reply = get(client, server, LABELS, "image/png")
    assert reply.status_code == 406 and "image/png" in reply.text


def test_a_graph_format_for_a_select_query_is_406(client, server):
    reply = get(client, server, LABELS, "text/turtle")
    assert reply.status_code == 406 and "SELECT" in reply.text


# ---------------------------------------------------------------- GET and POST


def test_get_post_form_and_post_body_give_the_same_answer(client, server):
    headers = {"Accept": "text/tab-separated-values"}
    by_get = client.get(f"{server}/sparql", params={"query": LABELS}, headers=headers)
    by_form = client.post(f"{server}/sparql", data={"query": LABELS}, headers=headers)
    by_body = client.post(
        f"{server}/sparql", content=LABELS.encode(), headers={**headers, "Content-Type": "application/sparql-query"}
    )
    assert by_get.status_code == by_form.status_code == by_body.status_code == 200
    assert by_get.content == by_form.content == by_body.content


def test_post_of_another_type_is_415_and_no_query_is_400(client, server):
    assert client.post(f"{server}/sparql", content=b"x", headers={"Content-Type": "text/plain"}).status_code == 415
    missing = client.get(f"{server}/sparql")
    assert missing.status_code == 400 and "query" in missing.text


def test_syntax_error_is_400_with_the_parser_message(client, server):
    reply = get(client, server, "SELECT ?s WHERE { ?s ?p }")
    assert reply.status_code == 400 and "syntax" in reply.text.lower()


# ---------------------------------------------------------------- bindings, dataset


def test_bindings_are_substitutions(client, server):
    facts = client.get(
        f"{server}/sparql", params={"query": query_text("entity_facts"), "$name": '"霸王别姬"@zh'}
    ).json()["results"]["bindings"]
    assert {b["relation"]["value"] for b in facts} >= {"导演", "主演"}
    hostile = client.get(
        f"{server}/sparql", params={"query": query_text("entity_facts"), "$name": '"x\\" } UNION { ?s ?p ?o } #"@zh'}
    )
    assert hostile.status_code == 200 and hostile.json()["results"]["bindings"] == []


def test_a_binding_that_is_not_a_term_is_400(client, server):
    reply = client.get(f"{server}/sparql", params={"query": LABELS, "$s": "not a term"})
    assert reply.status_code == 400 and "N-Triples" in reply.text


def test_default_graph_uri_restricts_the_dataset(client, server):
    everything = int(get(client, server, COUNT_ALL).json()["results"]["bindings"][0]["n"]["value"])
    schema_only = int(
        get(client, server, COUNT_ALL, **{"default-graph-uri": "https://kgforge.org/graph/schema"}).json()["results"][
            "bindings"
        ][0]["n"]["value"]
    )
    assert 0 < schema_only < everything


# ---------------------------------------------------------------- kgforge query --endpoint


@pytest.mark.parametrize("fmt", ["--json", "csv"])
def test_query_command_gives_the_same_answer_from_the_endpoint(cli, demo, server, fmt):
    query = ["query", "demo", "--file", str(REPO / "queries" / "entity_facts.rq"), "--bind", "name@zh=霸王别姬"]
    options = ["--json"] if fmt == "--json" else ["--format", fmt]
    local = cli(*query, *options, "--workdir", str(demo))
    remote = cli(*query, *options, "--endpoint", f"{server}/sparql")
    assert remote.stdout == local.stdout and "陈凯歌" in remote.stdout


def test_query_command_construct_and_ask_from_the_endpoint(cli, demo, server):
    for text in (FACTS_OF_FILMS, 'ASK { ?s rdfs:label "霸王别姬"@zh }'):
        local = cli("query", "demo", text, "--workdir", str(demo))
        remote = cli("query", "demo", text, "--endpoint", f"{server}/sparql")
        assert sorted(remote.stdout.splitlines()) == sorted(local.stdout.splitlines()) and remote.stdout.strip()


@pytest.mark.slow  # waits out the endpoint's timeout
def test_query_command_reports_the_endpoint_timeout(cli, demo):
    with running_server(demo, timeout=1.0, workers=1) as base:
        result = cli(
            "query",
            "demo",
            "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }",
            "--endpoint",
            f"{base}/sparql",
            check=False,
        )
    assert result.returncode == 1 and "timeout" in result.stderr


# ---------------------------------------------------------------- read-only, SERVICE, bounds


@pytest.mark.parametrize("how", ["update-body", "update-form", "update-as-query"])
def test_updates_are_refused_with_403_and_change_nothing(client, server, how):
    before = get(client, server, COUNT_ALL).json()
    update = 'INSERT DATA { <http://example.org/x> <http://example.org/p> "injected" }'
    if how == "update-body":
        reply = client.post(
            f"{server}/sparql", content=update.encode(), headers={"Content-Type": "application/sparql-update"}
        )
    elif how == "update-form":
        reply = client.post(f"{server}/sparql", data={"update": update})
    else:
        reply = client.post(f"{server}/sparql", data={"query": update})
    assert reply.status_code == 403 and "read-only" in reply.text
    assert get(client, server, COUNT_ALL).json() == before


def test_service_clause_is_refused(client, server):
    reply = get(client, server, "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }")
    assert reply.status_code == 403 and "SERVICE" in reply.text


@pytest.mark.slow  # waits out a query timeout
def test_cartesian_product_is_stopped_at_the_timeout_and_the_server_goes_on(demo, client):
    with running_server(demo, timeout=1.5, workers=1) as base:
        started = time.monotonic()
        reply = get(client, base, "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i }")
        took = time.monotonic() - started
        assert reply.status_code == 503 and "1.5 s timeout" in reply.text
        assert took >= 1.5
        after = get(client, base, COUNT_ALL)  # the killed worker was replaced
        assert after.status_code == 200 and int(after.json()["results"]["bindings"][0]["n"]["value"]) > 0


def test_rows_past_max_rows_are_refused_not_cut(demo, client):
    with running_server(demo, max_rows=10, workers=1) as base:
        many = get(client, base, LABELS)
        assert many.status_code == 400 and "more than 10 rows" in many.text and "LIMIT" in many.text
        few = get(client, base, LABELS + " LIMIT 10")
        assert few.status_code == 200 and len(few.json()["results"]["bindings"]) == 10
        triples = get(client, base, "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o }", "text/turtle")
        assert triples.status_code == 400 and "more than 10 rows" in triples.text


# ---------------------------------------------------------------- CORS, loopback, explorer status


def test_cors_is_off_unless_asked_for(demo, client, server):
    origin = {"Origin": "http://elsewhere.example"}
    assert (
        "access-control-allow-origin"
        not in client.get(f"{server}/sparql", params={"query": COUNT_ALL}, headers=origin).headers
    )
    with running_server(demo, cors=("http://elsewhere.example",), workers=1) as base:
        allowed = client.get(f"{base}/sparql", params={"query": COUNT_ALL}, headers=origin)
        assert allowed.headers["access-control-allow-origin"] == "http://elsewhere.example"
        other = client.get(f"{base}/sparql", params={"query": COUNT_ALL}, headers={"Origin": "http://evil.example"})
        assert "access-control-allow-origin" not in other.headers


def test_loopback_is_the_default_and_recognised():
    assert ServeOptions().host == "127.0.0.1" and is_loopback("127.0.0.1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("8.8.8.8")


def test_serve_command_starts_on_loopback_and_answers(demo, cli_server):
    base = cli_server
    assert urlparse(base).hostname == "127.0.0.1"
    with httpx.Client(timeout=30) as c:
        assert c.get(f"{base}/sparql", params={"query": COUNT_ALL}).status_code == 200


@pytest.fixture
def cli_server(demo):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kgforge.cli import main; main()",
            "serve",
            "demo",
            "--workdir",
            str(demo),
            "--port",
            str(port),
            "--workers",
            "1",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{base}/api/status", timeout=2)
            break
        except httpx.TransportError as exc:
            if process.poll() is not None or time.monotonic() > deadline:
                process.kill()
                raise AssertionError(f"kgforge serve did not start: {process.communicate()[1]}") from exc
            time.sleep(0.2)
    yield base
    process.terminate()
    process.wait(30)


@pytest.mark.slow  # a real server killed and its workers waited for
def test_killed_server_leaves_no_worker_and_no_open_store(tmp_path):
    """SIGKILL runs no clean-up: the worker busy with a query must notice its server is gone by itself.
    (A store of its own: the module's server holds the shared one open.)"""
    demo = tmp_path / "kg"
    build_demo(demo, with_derived=False)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    tag = "serve-kill-test"
    base = f"http://127.0.0.1:{port}/sparql"
    endless = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l }"

    def busy() -> None:
        try:
            httpx.get(base, params={"query": endless}, timeout=60)
        except httpx.TransportError:  # the server is killed under it
            pass

    def serving() -> bool:  # the server answers, its two workers are up, one of them deep in a query
        try:
            answered = httpx.get(base, params={"query": COUNT_ALL}).status_code == 200
        except httpx.TransportError:
            return False
        if not answered or len(tagged_processes(tag)) < 3:
            return False
        threading.Thread(target=busy, daemon=True).start()
        time.sleep(0.5)
        return True

    try:
        run = kill_at_random_point(
            ["serve", "demo", "--workdir", str(demo), "--port", str(port), "--workers", "2"],
            seed=19,
            window=(0.2, 1.0),
            ready=serving,
            tag=tag,
        )
        assert run.killed
        assert orphans(tag) == []
        assert open_files(demo) == []
    finally:
        reap(tag)


def test_serve_refuses_a_domain_without_a_store(tmp_path, cli):
    result = cli("serve", "nothing", "--workdir", str(tmp_path), check=False)
    assert result.returncode == 1 and "kgforge build nothing" in result.stderr


# ---------------------------------------------------------------- explorer pages over plain HTTP


def search(client, server, text):
    wait_search_ready(client, server)
    return client.get(f"{server}/search", params={"q": text, "format": "json"}).json()["results"]


def test_search_exact_before_prefix_then_by_degree(client, server):
    hits = search(client, server, "霸王别姬")
    assert hits and all(h["exact"] for h in hits[:2])
    degrees = [h["degree"] for h in hits if h["exact"]]
    assert degrees == sorted(degrees, reverse=True)
    prefix = search(client, server, "霸王")
    assert [h["iri"] for h in prefix] == [h["iri"] for h in hits] and not any(h["exact"] for h in prefix)


def test_pages_escape_markup_labels_and_send_a_csp(client, server):
    hits = search(client, server, "<script")
    assert hits and hits[0]["label"] == MARKUP_LABEL
    for path, params in (("/search", {"q": "<script"}), ("/entity", {"iri": hits[0]["iri"]})):
        page = client.get(f"{server}{path}", params=params)
        assert page.status_code == 200 and "script-src" not in page.headers["content-security-policy"]
        assert "default-src 'self'" in page.headers["content-security-policy"]
        assert "&lt;script&gt;window.kgforgePwned" in page.text and "<script>window" not in page.text


def test_entity_page_of_an_unknown_iri_is_404_and_a_bad_iri_400(client, server):
    assert client.get(f"{server}/entity", params={"iri": "https://kgforge.org/entity/none"}).status_code == 404
    bad = client.get(f"{server}/entity", params={"iri": "not an iri"})
    assert bad.status_code == 400 and "IRI" in bad.text


# ---------------------------------------------------------------- static paths


@pytest.mark.parametrize(
    "path",
    [
        "/static/../kgforge/serve/app.py",
        "/static/../../pyproject.toml",
        "/static/%2e%2e/app.py",
        "/static/%2E%2E/%2E%2E/pyproject.toml",
        "/static/..%2fapp.py",
        "/static/..%2F..%2Fpyproject.toml",
        "/static/..\\app.py",
        "/static/..%5capp.py",
        "/static/vendor/../../app.py",
        "/static/vendor/%2e%2e/%2e%2e/app.py",
        "/static//etc/passwd",
        "/static/%2fetc%2fpasswd",
        "/static/%252e%252e/app.py",
        "/static/.%2e/app.py",
    ],
)
def test_static_paths_cannot_leave_the_asset_folder(server, path):
    target = urlparse(server)
    conn = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
    conn.putrequest("GET", path, skip_accept_encoding=True)  # sent byte for byte, no client normalisation
    conn.endheaders()
    reply = conn.getresponse()
    body = reply.read()
    conn.close()
    assert reply.status in (400, 404), (path, reply.status)
    assert b"import" not in body and b"root:" not in body and b"[project]" not in body


def test_static_assets_are_served(client, server):
    script = client.get(f"{server}/static/vendor/cytoscape.min.js")
    assert script.status_code == 200 and "javascript" in script.headers["content-type"]
    assert len(script.content) > 100_000
    assert client.get(f"{server}/static/style.css").headers["x-content-type-options"] == "nosniff"


def test_status_names_the_served_build(client, server, demo):
    status = client.get(f"{server}/api/status").json()
    assert status["build"] == domain_paths("demo", demo).store_link.resolve().name
    assert status["max_rows"] == 5000 and status["timeout_s"] == 30.0
