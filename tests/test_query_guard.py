"""`kgforge query` makes no outbound request unless asked: SERVICE is refused without --allow-service,
found by parsing the query (a SERVICE in a comment or a string is not one); and its arguments are
checked before anything runs (timeout, language tags, a query file that is not text)."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.core.errors import ArgumentError, QueryError
from kgforge.crawl.loopback import LoopbackSite, Static
from kgforge.store.query import (
    QueryRunner,
    parse_binding,
    read_query_file,
    uses_service,
)
from kgforge.store.snapshot import Snapshot

SPARQL_JSON = {"Content-Type": "application/sparql-results+json"}
EMPTY_RESULTS = json.dumps({"head": {"vars": ["x"]}, "results": {"bindings": []}}).encode()


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("kg")
    kb = workdir / "kb_travel.json"
    facts = {"故宫": [["故宫", "地址", "北京市东城区景山前街4号"]]}
    kb.write_text(json.dumps(facts, ensure_ascii=False), encoding="utf-8")
    run_cli("build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir))
    return workdir


@pytest.fixture
def endpoint():
    with LoopbackSite(routes={"/sparql": Static(EMPTY_RESULTS, 200, SPARQL_JSON)}) as site:
        yield site


def service_query(site: LoopbackSite) -> str:
    return f"SELECT ?x WHERE {{ SERVICE <{site.base_url}/sparql> {{ ?x ?p ?o }} }}"


def test_service_is_refused_without_allow_service(store, endpoint, cli):
    result = cli("query", "travel", service_query(endpoint), "--workdir", str(store), check=False)
    assert result.returncode == 1 and "SERVICE" in result.stderr and "--allow-service" in result.stderr
    assert endpoint.paths() == []  # nothing left the machine
    with QueryRunner(Snapshot.open("travel", store)) as runner, pytest.raises(QueryError, match="allow_service"):
        runner.query(service_query(endpoint))
    assert endpoint.paths() == []


def test_allow_service_lets_the_call_through(store, endpoint, cli):
    result = cli(
        "query", "travel", service_query(endpoint), "--allow-service", "--workdir", str(store), "--format", "json"
    )
    assert json.loads(result.stdout)["results"]["bindings"] == []
    assert [(r.method, r.path) for r in endpoint.log] == [("POST", "/sparql")]


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { ?s ?p ?o # SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o }\n }",
        'SELECT * WHERE { ?s ?p "SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o }" }',
        "SELECT * WHERE { ?s ?p '''\nSERVICE <http://127.0.0.1:9/s> {}''' }",
        "PREFIX service: <http://example.org/> SELECT * WHERE { ?s service:SERVICE ?o }",
        "SELECT * WHERE { <http://example.org/SERVICE> ?p ?o }",
        "SELECT ?SERVICE WHERE { ?SERVICE ?p ?o }",
    ],
)
def test_service_words_that_are_not_a_service_call_are_allowed(query):
    assert not uses_service(query)


@pytest.mark.parametrize(
    "query",
    [
        "SELECT * WHERE { SERVICE <http://127.0.0.1:9/sparql> { ?s ?p ?o } }",
        "select * where { optional { service silent ?endpoint { ?s ?p ?o } } }",
        "ASK { ?s ?p ?o FILTER EXISTS { SeRvIcE <http://a.example/> { ?s ?p ?o } } }",
        "SELECT * WHERE { { SELECT ?s WHERE { SERVICE <http://a.example/> { ?s ?p ?o } } } }",
        # Syntax rdflib's parser does not know (SPARQL 1.2 triple terms): still found, by the token scan.
        "SELECT * WHERE { <<( ?s ?p ?o )>> ?q ?r . SERVICE <http://a.example/> { ?s ?p ?o } }",
    ],
)
def test_every_service_call_is_found(query):
    assert uses_service(query)


def test_sparql_12_syntax_without_service_still_runs(store):
    assert not uses_service("SELECT * WHERE { ?s ?p ?o FILTER(?o != <<( ?s ?p 'SERVICE' )>>) } # SERVICE")


@pytest.mark.parametrize("timeout", ["nan", "inf", "-1", "0"])
def test_timeout_must_be_a_finite_positive_number(store, cli, timeout):
    result = cli(
        "query", "travel", "SELECT * WHERE { ?s ?p ?o }", "--timeout", timeout, "--workdir", str(store), check=False
    )
    assert result.returncode == 2 and "--timeout" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1
    with QueryRunner(Snapshot.open("travel", store)) as runner, pytest.raises(ArgumentError, match="timeout"):
        runner.query("SELECT * WHERE { ?s ?p ?o }", timeout=float(timeout))


def test_bad_language_tag_in_bind_is_one_clear_error(store, cli):
    result = cli(
        "query", "travel", "SELECT ?x WHERE { ?s ?p ?x }", "--bind", "x@zh-!!=v", "--workdir", str(store), check=False
    )
    assert result.returncode == 1 and "zh-!!" in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(QueryError, match="language tag"):
        parse_binding("x@zh-!!=v")
    assert parse_binding("x@zh-Hans=故宫") == ("x", ox.Literal("故宫", language="zh-hans"))


def test_a_binary_query_file_is_refused_naming_file_and_offset(store, cli, tmp_path):
    binary = tmp_path / "query.rq"
    binary.write_bytes(b"SELECT * WHERE { ?s ?p ?o }\n\x7fELF\x02\x01\xd0\xff\x00\x00")
    result = cli("query", "travel", "--file", str(binary), "--workdir", str(store), check=False)
    assert result.returncode == 1 and str(binary) in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(QueryError, match="byte 34"):
        read_query_file(binary)
    nul = tmp_path / "nul.rq"
    nul.write_bytes(b"SELECT * WHERE { ?s ?p ?o }\x00")
    with pytest.raises(QueryError, match="NUL"):
        read_query_file(nul)
