"""Every command in the language asked: exports refuse or report what lacks a label, `translate` proposes labels
through a real OpenAI-compatible server on 127.0.0.1, a person's review is applied as its own named graph, and
then goals and exports in English hold no Chinese character."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.core.errors import InputError
from kgforge.core.schema import SourceSpec
from kgforge.core.scripts import has_cjk
from kgforge.exports.assemble import ExportCheckError
from kgforge.qa.graph import QAGraph
from kgforge.sources.schema_infer import infer_schema
from tests.qa_support import chat_server
from tests.translate_support import dictionary_reply, films_domain, review_rows, write_films, write_rows


@pytest.fixture
def films(tmp_path: Path) -> Domain:
    return films_domain(tmp_path)


def cjk_strings(value: object) -> list[str]:
    if isinstance(value, str):
        return [value] if has_cjk(value) else []
    if isinstance(value, dict):
        return [s for v in value.values() for s in cjk_strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in cjk_strings(v)]
    return []


def test_an_english_export_names_what_lacks_a_label_and_mixes_only_when_allowed(films, tmp_path):
    goals = tmp_path / "goals.jsonl"
    films.goals(6, goals, one_step_ratio=1.0, language="en")
    with pytest.raises(
        ExportCheckError, match=r"no en label for https://kgforge.org/class/type\d \(it has '(电影|人物)'\)"
    ):
        films.export(goals, tmp_path / "en.jsonl", fmt="duconv", language="en")
    report = films.export(goals, tmp_path / "en.jsonl", fmt="duconv", language="en", allow_mixed=True).as_dict()
    assert (
        set(report["labels"]["mixed"].values()) <= {"电影", "人物", "娄烨", "地区"}
        and report["labels"]["mixed_count"] >= 2
    )


def test_translate_proposes_a_review_file_and_applying_it_makes_english_exports_whole(films, tmp_path):
    review = tmp_path / "review.tsv"
    with chat_server(dictionary_reply) as server:
        proposed = films.translate("en", review, llm_url=server.url, llm_model="dict")
        asked = len(server.requests)
        again = films.translate("en", tmp_path / "again.tsv", llm_url=server.url, llm_model="dict")
        assert len(server.requests) == asked  # the second run comes from the cache
    assert again.llm["cache_hits"] == asked and again.proposed == proposed.proposed
    rows = review_rows(review)
    by_source = {row["source"]: row for row in rows}
    assert {"娄烨", "电影", "人物", "剧情", "爱情", "地区", "中国大陆"} <= set(by_source)
    assert by_source["娄烨"]["kind"] == "entity" and by_source["电影"]["kind"] == "type"
    assert by_source["地区"]["kind"] == "relation" and by_source["地区"]["label"] == "region"
    assert by_source["爱情"]["kind"] == "literal" and by_source["爱情"]["label"] == "romance"
    assert "周迅" not in by_source  # it has its English name from the name_en column
    assert all(row["keep"] == "review" for row in rows)  # nothing the model says is approved by itself
    unreviewed = tmp_path / "unreviewed.tsv"
    write_rows(unreviewed, rows)
    with pytest.raises(InputError, match=rf"no row says keep = yes \({len(rows)} still say review"):
        films.apply_translations(unreviewed, "en")
    for row in rows:
        row["keep"] = "yes"  # the reviewer accepts the proposals
    by_source["娄烨"]["label"] = "Lou Ye"  # but prefers the usual order of this director's name
    by_source["剧情"]["keep"] = "no"  # and leaves one value out
    write_rows(review, rows)

    applied = films.apply_translations(review, "en")
    assert applied.loaded["entity"] == 1 and applied.loaded["type"] == 2 and applied.loaded["relation"] == 1
    assert applied.skipped == 1
    manifest = json.loads((films.paths.store_link.resolve() / "manifest.json").read_text("utf-8"))
    entry = manifest["graphs"][applied.graph]
    assert entry["kind"] == "translated" and entry["provenance"] == "translated"
    labels = films.query("SELECT ?e ?l WHERE { GRAPH <https://kgforge.org/graph/translated/en> { ?e rdfs:label ?l } }")
    assert {row["l"].value for row in labels.rows} == {"Lou Ye", "film", "person", "region"}
    assert films.query("SELECT ?e ?n WHERE { ?e rdfs:label ?n }", n="娄烨").rows  # the source label is untouched

    goals = tmp_path / "goals.jsonl"
    report = films.goals(8, goals, one_step_ratio=1.0, language="en").as_dict()
    assert report["labels"]["mixed_count"] == 0
    assert not [s for line in goals.read_text("utf-8").splitlines() for s in cjk_strings(json.loads(line)["goal"])]
    # the value the reviewer kept out has no English form: an English export says so, and writes it only when
    # mixing is allowed, listing it
    with pytest.raises(ExportCheckError, match=r"no en form of the value '剧情' \(genre\)"):
        films.export(goals, tmp_path / "en.jsonl", fmt="duconv", language="en")
    export = films.export(goals, tmp_path / "en.jsonl", fmt="duconv", language="en", allow_mixed=True).as_dict()
    assert export["labels"]["missing_count"] == 0 and export["labels"]["mixed_count"] == 0
    assert export["labels"]["values_mixed"] == {"剧情": "https://kgforge.org/relation/genre"}
    written = [json.loads(line) for line in (tmp_path / "en.jsonl").read_text("utf-8").splitlines()]
    left = {s for record in written for s in cjk_strings(record)}
    assert left <= {"剧情", "领域"}  # 领域 is the DuConv layout's own key for type facts
    assert any(triple[1] == "genre" and triple[2] == "romance" for r in written for triple in r["knowledge"])
    assert any(triple[1:] == ["region", "Mainland China"] for r in written for triple in r["knowledge"])
    directors = films.query("SELECT ?f ?d WHERE { ?f kgr:director ?d }", label_language="en")
    assert {"Lou Ye", "Xun Zhou"} <= set(directors.labels.values())  # query labels in the language asked
    qa_names = QAGraph.load(films.snapshot(), "en").labels  # qa --lang en names entities by the same chain
    assert {"Lou Ye", "Xun Zhou", "The Equation of Love & Death"} <= set(qa_names.values())
    assert not {"娄烨", "周迅"} & set(qa_names.values())


def test_a_bad_review_row_names_the_file_and_line_and_loads_nothing(films, tmp_path):
    review = tmp_path / "review.tsv"
    with chat_server(dictionary_reply) as server:
        films.translate("en", review, llm_url=server.url, llm_model="dict")
    rows = review_rows(review)
    rows[1]["label"], rows[1]["keep"] = "", "yes"
    write_rows(review, rows)
    before = films.paths.store_link.resolve()
    with pytest.raises(InputError, match=re.escape(f"{review}: line 3: keep is yes but the label is empty")):
        films.apply_translations(review, "en")
    assert films.paths.store_link.resolve() == before


def test_a_malformed_model_reply_leaves_rows_for_the_reviewer(films, tmp_path):
    review = tmp_path / "review.tsv"
    with chat_server(lambda prompt: "I cannot do that") as server:
        proposed = films.translate("en", review, llm_url=server.url, llm_model="broken")
    assert proposed.proposed == 0 and proposed.unanswered == sum(proposed.items.values())
    assert all(row["keep"] == "" and "quarantined" in row["note"] for row in review_rows(review))
    assert (films.paths.quarantine / "translate-llm.jsonl").is_file()


def test_the_cli_proposes_and_applies(films, tmp_path, cli):
    review = tmp_path / "review.tsv"
    workdir = str(films.workdir)
    with chat_server(dictionary_reply) as server:
        out = cli(
            "translate",
            "films",
            "--lang",
            "en",
            "--out",
            str(review),
            "--llm-url",
            server.url,
            "--llm-model",
            "dict",
            "--workdir",
            workdir,
            "--json",
        ).stdout
    assert json.loads(out)["proposed"] >= 5
    write_rows(review, [{**row, "keep": "yes"} for row in review_rows(review)])  # a person's review
    applied = json.loads(
        cli("translate", "films", "--lang", "en", "--apply", str(review), "--workdir", workdir, "--json").stdout
    )
    assert applied["graph"] == "https://kgforge.org/graph/translated/en" and applied["quads"] > 0
    neither = cli("translate", "films", "--workdir", workdir, check=False)
    assert neither.returncode == 2 and "--out FILE" in neither.stderr


def test_serve_pages_name_entities_in_the_language_asked(tmp_path):
    import httpx

    from tests.serve_support import running_server

    source = tmp_path / "films.csv"
    write_films(source)
    demo = Domain("demo", tmp_path / "kg")
    schema = infer_schema("demo", [SourceSpec("csv", str(source))]).write(demo.paths.root / "schema.toml")
    demo.build([f"csv:{source}"], schema=str(schema.path))
    film = demo.query("SELECT ?e ?n WHERE { ?e rdfs:label ?n }", n="A Sigh").rows[0]["e"].value
    with running_server(demo.workdir) as base, httpx.Client(timeout=60) as client:
        chinese = client.get(f"{base}/entity", params={"iri": film}).text
        english = client.get(f"{base}/entity", params={"iri": film, "lang": "en"}).text
        graph = client.get(f"{base}/api/neighbours", params={"iri": film, "lang": "en"}).json()
        bad = client.get(f"{base}/entity", params={"iri": film, "lang": "not a tag!"})
    assert "<title>一声叹息" in chinese and "<title>A Sigh" in english
    assert "Xun Zhou" in english and "周迅" in chinese  # the star's name, on the same page
    assert graph["center"]["label"] == "A Sigh" and "Xun Zhou" in {n["label"] for n in graph["nodes"]}
    assert bad.status_code == 400
