"""`kgforge translate --list` (issue 50, item 7): the to-do list for human translators, written without a model
(DuRecDial 2.0 was translated by people), keyed by the name with its IRI beside it; a name the graph has only
as an English alias comes proposed for review (never applied before a person says yes); `--apply` reads it."""

from __future__ import annotations

import json

import pytest

from kgforge import Domain
from kgforge.core.errors import InputError
from kgforge.languages.translate import COLUMNS
from tests.qa_support import chat_server
from tests.translate_support import dictionary_reply, films_domain, review_rows, write_rows

ALIAS = "Lou Ye"


@pytest.fixture
def films(tmp_path) -> Domain:
    return films_domain(tmp_path)


@pytest.fixture
def aliased(tmp_path) -> Domain:
    """The films domain where 娄烨 (no English label) has the English alias ``Lou Ye`` (a skos:altLabel)."""
    domain = films_domain(tmp_path)
    director = domain.query("SELECT ?e ?n WHERE { ?e rdfs:label ?n }", n="娄烨").rows[0]["e"].value
    alias = tmp_path / "alias.nt"
    alias.write_text(f'<{director}> <http://www.w3.org/2004/02/skos/core#altLabel> "{ALIAS}"@en .\n', encoding="utf-8")
    sources = [f"csv:{tmp_path / 'films.csv'}", f"rdf:{alias}"]
    domain.build(sources, schema=str(domain.paths.root / "schema.toml"))  # films_domain's source and schema
    return domain


def test_translate_without_a_model_writes_the_to_do_list(films, tmp_path, cli):
    todo = tmp_path / "todo.tsv"
    run = cli("translate", "films", "--out", str(todo), "--workdir", str(films.workdir))  # no --llm-url: refused before
    assert "no model asked" in run.stdout and f"--apply {todo}" in run.stdout
    assert todo.read_text(encoding="utf-8").splitlines()[0].split("\t") == list(COLUMNS)
    assert COLUMNS[:2] == ("source", "iri")  # keyed by the name a translator reads, its IRI beside it
    rows = review_rows(todo)
    listed = [(row["kind"], row["source"]) for row in rows]
    assert listed == [
        ("entity", "娄烨"),
        ("relation", "地区"),
        ("type", "人物"),
        ("type", "电影"),
        ("literal", "中国大陆"),
        ("literal", "剧情"),
        ("literal", "爱情"),
    ]  # by name within each kind; 周迅 has its English name already
    assert all(row["keep"] == "" and row["label"] == "" and row["note"].startswith("to translate") for row in rows)
    assert all(row["iri"].startswith("https://") for row in rows if row["kind"] != "literal")
    with pytest.raises(InputError, match="no row says keep = yes .7 rows: fill in the label"):
        films.apply_translations(todo, "en")  # nobody has translated anything yet: nothing replaces the graph
    for row in rows:
        if row["source"] in ("娄烨", "爱情"):
            row |= {"label": {"娄烨": "Lou Ye", "爱情": "romance"}[row["source"]], "keep": "yes"}
    write_rows(todo, rows)
    applied = json.loads(
        cli("translate", "films", "--apply", str(todo), "--workdir", str(films.workdir), "--json").stdout
    )
    assert applied["loaded"] == {"entity": 1, "relation": 0, "type": 0, "literal": 1} and applied["skipped"] == 5
    names = films.query("SELECT ?f ?d WHERE { ?f kgr:director ?d }", label_language="en").labels.values()
    assert "Lou Ye" in names
    both = cli(
        "translate", "films", "--list", "--out", str(todo), "--llm-url", "http://127.0.0.1:1/v1",
        "--workdir", str(films.workdir), check=False,
    )  # fmt: skip
    assert both.returncode == 2 and "--list asks no model" in both.stderr


def test_a_name_with_an_english_alias_is_proposed_for_review_never_applied_alone(aliased, tmp_path):
    todo = tmp_path / "todo.tsv"
    listed = aliased.translation_list("en", todo)
    assert listed.candidates == 1 and listed.proposed == 1 and not listed.asked_model
    rows = {row["source"]: row for row in review_rows(todo)}
    assert rows["娄烨"]["keep"] == "review" and rows["娄烨"]["label"] == ALIAS and "alias" in rows["娄烨"]["note"]
    with pytest.raises(InputError, match="still say review"):
        aliased.apply_translations(todo, "en")  # a proposal is never applied before a person's yes
    rows["娄烨"]["keep"] = "yes"
    write_rows(todo, list(rows.values()))
    assert aliased.apply_translations(todo, "en").loaded["entity"] == 1
    found = aliased.query(
        "SELECT ?e ?l WHERE { GRAPH <https://kgforge.org/graph/translated/en> { ?e rdfs:label ?l } }"
    ).rows
    assert [row["l"].value for row in found] == [ALIAS]


def test_a_model_is_not_asked_for_what_an_alias_already_proposes(aliased, tmp_path):
    review = tmp_path / "review.tsv"
    with chat_server(dictionary_reply) as server:
        proposed = aliased.translate("en", review, llm_url=server.url, llm_model="dict")
        asked = "".join(json.dumps(request, ensure_ascii=False) for request in server.requests)
    assert "娄烨" not in asked and "电影" in asked
    rows = {row["source"]: row for row in review_rows(review)}
    assert rows["娄烨"]["label"] == ALIAS and all(row["keep"] == "review" for row in rows.values())
    assert proposed.candidates == 1 and proposed.proposed == len(rows) and proposed.asked_model
