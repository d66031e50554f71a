"""Stages that add one source (import, link) keep every declaration of the schema graph, and `check` notices
a schema graph that lacks the declaration of a relation facts use.

The film domain built from KdConv's film dialogues declares relations its schema file does not name
(全球票房, …) in the schema graph; a Wikidata import must not drop them, or `entity_facts` loses those facts."""

from __future__ import annotations

import csv
import io
import json
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.core.vocab import KIND, SCHEMA_GRAPH, unmapped_relation_iri
from kgforge.store.layout import domain_paths, published_build

DIALOGUES = "kdconv/film/dev.json"
WIKIDATA = "wikidata_json/Q2262932_city_streets_film.converted.json"
BOX_OFFICE = "全球票房"


def _facts(cli, workdir: Path) -> list[dict[str, str]]:
    out = cli(
        "query", "film", "entity_facts", "--bind", "name=辛德勒的名单", "--format", "csv", "--workdir", str(workdir)
    ).stdout
    return list(csv.DictReader(io.StringIO(out)))


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    from tests.conftest import run_cli, shared_file

    workdir = tmp_path_factory.mktemp("schema") / "kg"
    run_cli("build", "film", "--source", f"kdconv-dialogues:{shared_file(DIALOGUES)}", "--workdir", str(workdir))
    return workdir


@pytest.fixture
def film(built, tmp_path) -> Path:
    copy = tmp_path / "kg"
    shutil.copytree(built, copy, symlinks=True)
    return copy


@pytest.mark.slow  # builds the real KdConv film graph and imports a dump into it
def test_a_wikidata_import_keeps_the_relations_the_schema_file_does_not_declare(film, cli, shared):
    before = _facts(cli, film)
    assert len(before) == 22 and BOX_OFFICE in {row["relation"] for row in before}
    built = json.loads(cli("check", "film", "--workdir", str(film), "--json").stdout)["graphs"][SCHEMA_GRAPH]
    report = json.loads(
        cli("import", "wikidata", "-d", "film", str(shared(WIKIDATA)), "--workdir", str(film), "--json").stdout
    )
    # was 333 -> 160: every relation the schema file does not declare lost its labels and kind
    # (333: KdConv's IMDb评分 and imdb评分 are one relation, names matching whatever their case)
    assert (built, report["graphs"][SCHEMA_GRAPH]) == (333, 337)
    after = _facts(cli, film)
    assert BOX_OFFICE in {row["relation"] for row in after} and len(after) == 22
    assert '"ok": true' in cli("check", "film", "--workdir", str(film), "--json").stdout


def test_link_keeps_the_schema_graph(film, cli, shared):
    cli("import", "wikidata", "-d", "film", str(shared(WIKIDATA)), "--workdir", str(film))
    schema = json.loads(cli("check", "film", "--workdir", str(film), "--json").stdout)["graphs"][SCHEMA_GRAPH]
    report = json.loads(cli("link", "film", "--workdir", str(film), "--json").stdout)
    after = json.loads(cli("check", "film", "--workdir", str(film), "--json").stdout)
    assert after["graphs"][SCHEMA_GRAPH] == schema and after["ok"], report


def test_check_names_a_relation_facts_use_that_the_schema_graph_does_not_declare(film, cli):
    store = ox.Store(str(published_build(domain_paths("film", film)) / "oxigraph"))
    relation = ox.NamedNode(unmapped_relation_iri(BOX_OFFICE))
    store.remove(
        ox.Quad(
            relation,
            ox.NamedNode(KIND),
            next(iter(store.quads_for_pattern(relation, ox.NamedNode(KIND), None, ox.NamedNode(SCHEMA_GRAPH)))).object,
            ox.NamedNode(SCHEMA_GRAPH),
        )
    )
    store.flush()
    del store
    result = cli("check", "film", "--workdir", str(film), check=False)
    assert "MISMATCH" in result.stdout
    assert f"1 relation(s) that facts use have no kind or label there (<{relation.value}>)" in result.stdout
