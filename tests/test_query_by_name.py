"""`kgforge query` as a newcomer meets it: shipped queries by name from any directory, entities bound by
their label, labels beside IRIs, prefixed names instead of cut columns, a row limit that says what it held
back, progress on a slow query, and SPARQL errors that say what to do."""

from __future__ import annotations

import csv
import io
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge import Domain
from kgforge.core.vocab import entity_iri
from kgforge.store.query import parse_binding
from kgforge.store.sparql_text import PREFIXES, expand, shorten

KB = {
    "故宫": [
        ["故宫", "地址", "北京市东城区景山前街4号"],
        ["故宫", "周边景点", "天坛"],
        ["故宫", "周边景点", "景山公园"],
    ],
    "天坛": [["天坛", "地址", "北京市东城区天坛路甲1号"], ["天坛", "周边景点", "故宫"]],
}
# Two entities that share a label, from an RDF source: a plain-label binding must refuse to pick one.
TWO_WALLS = """@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
<http://example.org/wall1> a <http://example.org/Site> ; rdfs:label "长城"@zh .
<http://example.org/wall2> a <http://example.org/Film> ; rdfs:label "长城"@zh .
"""
GUGONG = entity_iri("故宫")


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    from tests.conftest import run_cli

    folder = tmp_path_factory.mktemp("named")
    (folder / "kb_travel.json").write_text(json.dumps(KB, ensure_ascii=False), encoding="utf-8")
    (folder / "walls.ttl").write_text(TWO_WALLS, encoding="utf-8")
    run_cli(
        "build",
        "travel",
        "--source",
        f"kdconv:{folder / 'kb_travel.json'}",
        "--source",
        f"rdf:{folder / 'walls.ttl'}",
        "--no-schema-sources",
        "--workdir",
        str(folder / "kg"),
    )
    return folder / "kg"


@pytest.fixture
def query(store, cli, tmp_path):
    """``kgforge query travel ARGS`` from a directory that is not the checkout."""

    def run(*args: str, check: bool = False, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
        return cli(
            "query",
            "travel",
            *args,
            "--workdir",
            str(store),
            cwd=tmp_path,
            check=check,
            env={"COLUMNS": "200", **(env or {})},
        )

    return run


def _csv(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_a_shipped_query_by_name_with_an_entity_bound_by_its_label(query):
    out = query("goal_one_step", "--bind", "a=故宫", "--format", "csv", check=True).stdout
    rows = _csv(out)
    assert {row["b_label"] for row in rows} == {"天坛", "景山公园"}
    assert {row["a"] for row in rows} == {GUGONG} and {row["a_label"] for row in rows} == {"故宫"}


def test_a_missing_query_says_what_to_give(query):
    result = query()
    assert result.returncode == 1
    assert "give a query: the name of a shipped query" in result.stderr and "goal_two_step" in result.stderr
    assert "not both" not in result.stderr


def test_an_unknown_query_name_gets_did_you_mean_and_the_names(query):
    result = query("goal_two_stp", "--bind", "a=故宫")
    assert result.returncode == 1
    assert "did you mean 'goal_two_step'?" in result.stderr and "entity_facts" in result.stderr


def test_a_relative_file_under_queries_resolves_to_the_shipped_one_from_anywhere(query):
    out = query("--file", "queries/entity_facts.rq", "--bind", "name=故宫", "--format", "csv", check=True).stdout
    assert {"天坛", "景山公园"} <= {row["value"] for row in _csv(out)}


def test_queries_lists_each_shipped_query_with_its_description(cli, tmp_path):
    out = json.loads(cli("queries", "--json", cwd=tmp_path).stdout)
    assert out["goal_two_step"].startswith("Two-step (associated) goal paths")
    assert out["transition_2hop"].endswith(
        "(e.g. film -主演- star -代表作- film), each hop an entity-valued fact "
        "in either direction, the three topics distinct"
    )


def test_a_label_two_entities_share_is_an_error_listing_both(query):
    result = query("goal_one_step", "--bind", "a=长城")
    assert result.returncode == 1
    assert "2 entities have the label '长城' in travel" in result.stderr
    assert "<http://example.org/wall1> (<http://example.org/Site>)" in result.stderr
    assert "<http://example.org/wall2> (<http://example.org/Film>)" in result.stderr


def test_a_label_no_entity_has_is_an_error_with_the_closest(query):
    result = query("goal_one_step", "--bind", "a=故官")
    assert result.returncode == 1
    assert "no entity has the label '故官' in travel; did you mean 故宫?" in result.stderr


def test_quoted_and_tagged_values_stay_literals(query):
    quoted = query("goal_one_step", "--bind", 'a="故宫"', check=True).stdout
    assert "0 row(s)" in quoted  # a plain string is no subject
    tagged = query(
        "SELECT ?name ?e WHERE { ?e rdfs:label ?name }", "--bind", "name@zh=天坛", "--format", "csv", check=True
    ).stdout
    assert [row["e_label"] for row in _csv(tagged)] == ["天坛"]


def test_a_plain_label_of_a_label_variable_takes_the_domain_language(query):
    out = query(
        "SELECT ?name ?e WHERE { ?e rdfs:label ?name }", "--bind", "name=天坛", "--format", "csv", check=True
    ).stdout
    assert [row["e"] for row in _csv(out)] == [entity_iri("天坛")]


def test_the_table_shows_labels_and_prefixed_names_never_an_ellipsis(query):
    out = query("goal_one_step", "--bind", "a=故宫", env={"COLUMNS": "70"}, check=True).stdout
    assert "…" not in out
    assert "kgr:nearby" in out and "周边景点" in out and "天坛" in out
    assert "https://kgforge.org/" not in out


def test_the_table_stops_at_the_limit_and_says_how_many_more(query):
    result = query("SELECT ?s ?o WHERE { ?s kgr:nearby ?o }", "--limit", "1", check=True)
    assert "1 row(s)" in result.stdout
    assert "2 more rows not shown (first 1 printed); --limit 0 for all" in result.stderr
    every = query("SELECT ?s ?o WHERE { ?s kgr:nearby ?o }", "--format", "csv", check=True)
    assert len(_csv(every.stdout)) == 3 and "more rows" not in every.stderr
    one = json.loads(
        query("SELECT ?s ?o WHERE { ?s kgr:nearby ?o }", "--format", "json", "--limit", "1", check=True).stdout
    )
    assert len(one["results"]["bindings"]) == 1 and one["more_rows"] == 2
    assert one["head"]["vars"] == ["s", "s_label", "o", "o_label"]


def test_an_unknown_prefix_names_it_and_the_known_ones(query):
    result = query("SELECT * WHERE { ?s foo:bar ?o }")
    assert result.returncode == 1
    assert "unknown prefix 'foo:'" in result.stderr and "kgr:" in result.stderr
    assert "declare it with PREFIX foo:" in result.stderr and "\\u{" not in result.stderr


@pytest.mark.parametrize(
    "update",
    [
        "INSERT DATA { <http://a.example/s> <http://a.example/p> 1 }",
        "PREFIX ex: <http://a.example/> DELETE WHERE { ?s ex:p ?o }",
        "CLEAR ALL",
    ],
)
def test_an_update_says_the_store_is_read_only(query, update):
    result = query(update)
    assert result.returncode == 1
    assert "the store is read-only here" in result.stderr and "kgforge build" in result.stderr
    assert "expected CONSTRUCT" not in result.stderr


def test_a_syntax_error_shows_line_column_and_the_line(query):
    result = query("SELECT * WHERE {\n  ?s ?p ?o .\n  FILTER(?o = ) }")
    assert result.returncode == 1
    assert "line 3, column " in result.stderr and "FILTER(?o = ) }" in result.stderr


SLOW = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?b ?c . ?d ?e ?f . ?g ?h ?i . ?j ?k ?l . ?m ?n2 ?o . ?p ?q ?r }"


@pytest.mark.slow  # waits out a slow query
def test_a_slow_query_shows_progress_on_a_terminal_only(store, tmp_path):
    args = [
        sys.executable,
        "-c",
        "from kgforge.cli import main; main()",
        "query",
        "travel",
        SLOW,
        "--timeout",
        "3",
        "--workdir",
        str(store),
    ]
    leader, follower = pty.openpty()
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=follower, cwd=tmp_path, timeout=120)
    os.close(follower)
    seen = b""
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    os.close(leader)
    assert done.returncode == 1 and "querying… 1 s" in seen.decode("utf-8", "replace")
    piped = subprocess.run(args, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert "timeout" in piped.stderr and "querying" not in piped.stderr


def test_domain_query_takes_a_name_a_label_and_a_limit(store):
    report = Domain("travel", workdir=store).query("goal_one_step", a="故宫", limit=1)
    assert len(report.rows) == 1 and report.truncated and report.more_rows == 2  # 天坛 both ways, 景山公园
    assert report.label(report.rows[0]["a"]) == "故宫"
    assert report.as_dict()["rows"][0]["a_label"] == "故宫"


@given(
    st.text(st.characters(blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=30),
    st.sampled_from([*PREFIXES.values(), "http://example.org/", "urn:x:"]),
)
def test_a_shortened_iri_expands_back(local, namespace):
    iri = namespace + local
    assert expand(shorten(iri)) == iri
    extra = {**PREFIXES, "ex": "http://example.org/"}
    assert expand(shorten(iri, extra), extra) == iri


@given(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True),
    st.text(st.characters(blacklist_categories=("Cs",)), max_size=20),
)
def test_bindings_parse_to_what_was_typed(name, value):
    assert parse_binding(f"{name}@zh={value}") == (name, ox.Literal(value, language="zh"))
    assert parse_binding(f'{name}="{value}"') == (name, ox.Literal(value))
    plain = parse_binding(f"{name}={value}")
    if not (value.startswith("<") and value.endswith(">") and len(value) > 2) and not (
        len(value) >= 2 and value[0] == value[-1] == '"'
    ):
        assert plain == (name, value)


def test_the_table_shortens_with_the_query_own_prefixes(query):
    out = query("PREFIX ex: <http://example.org/> SELECT ?w WHERE { ?w a ex:Site }", check=True).stdout
    assert "长城 (ex:wall1)" in out and "http://example.org/" not in out


def test_a_label_that_matches_nothing_where_a_label_is_bound_says_did_you_mean(query):
    # ?name stands as the object of rdfs:label in entity_facts: a typo used to bind a literal that matched nothing
    result = query("entity_facts", "--bind", "name=故工")
    assert result.returncode == 1, result.stdout
    assert "no entity has the label '故工' in travel; did you mean 故宫?" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_label_that_exists_still_binds_where_a_label_is_bound(query):
    rows = _csv(query("entity_facts", "--bind", "name=天坛", "--format", "csv", check=True).stdout)
    assert {"故宫", "北京市东城区天坛路甲1号"} <= {row["value"] for row in rows}


def test_a_binding_the_shipped_query_requires_left_out_is_named(query):
    result = query("entity_facts")
    assert result.returncode == 1, result.stdout
    assert "entity_facts binds ?name; give --bind name=…" in result.stderr
    two = query("dialogue_subgraph", "--bind", "a=故宫")
    assert "dialogue_subgraph binds ?b; give --bind b=…" in two.stderr and two.returncode == 1
    either = query("goal_two_step")
    assert "goal_two_step binds ?a or ?b; give --bind a=…" in either.stderr and either.returncode == 1
    assert query("goal_two_step", "--bind", "b=天坛").returncode == 0  # either topic will do


def test_a_required_binding_left_out_fails_in_python_too(store):
    from kgforge.store.labels import MissingBinding

    with pytest.raises(MissingBinding, match=r"entity_facts binds \?name"):
        Domain("travel", store).query("entity_facts")
    assert Domain("travel", store).query("entity_facts", name="故宫").rows


def test_every_required_variable_a_shipped_query_declares_is_in_its_text():
    from kgforge.core.resources import shipped_queries
    from kgforge.store.labels import required_variables

    declared = {entry.name: required_variables(entry.obj.read_text(encoding="utf-8")) for entry in shipped_queries()}
    assert declared["entity_facts"] == (("name",),) and declared["dialogue_subgraph"] == (("a",), ("b",))
    assert declared["goal_two_step"] == (("a", "b"),)  # one topic bound lists its partners
    assert declared["goal_one_step"] == ()  # either topic may be left unbound to enumerate
    for name, groups in declared.items():
        text = shipped_queries().get(name).read_text(encoding="utf-8")
        body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
        assert all(f"?{v}" in body for group in groups for v in group), name


@pytest.mark.slow  # builds the real travel KB
def test_a_typo_in_a_label_on_the_real_travel_kb_says_did_you_mean(cli, shared, tmp_path):
    kb = shared("kdconv/travel/kb_travel.json")
    workdir = str(tmp_path / "kg")
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", workdir)
    typo = cli("query", "travel", "entity_facts", "--bind", "name=故工", "--workdir", workdir, check=False)
    assert typo.returncode == 1 and typo.stdout == ""
    assert "no entity has the label '故工' in travel; did you mean 故宫" in typo.stderr
    found = _csv(
        cli("query", "travel", "entity_facts", "--bind", "name=故宫", "--format", "csv", "--workdir", workdir).stdout
    )
    assert len(found) == 11  # the answer the typo must not silently replace with nothing
