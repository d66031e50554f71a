"""Several languages on one graph: labels per language on one entity, text tagged with the language it is in,
Latin text kept as written, relation names matched whatever their case or width."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge import Domain
from kgforge.core.errors import SchemaError
from kgforge.core.schema import SourceSpec, load_schema
from kgforge.core.scripts import has_cjk
from kgforge.core.text import normalise_label, text_language
from kgforge.sources.schema_infer import infer_schema
from kgforge.store.languages import language_labels

FILMS_CSV = """name,name_en,type,rating,director
一声叹息,A Sigh,电影,7.5,冯小刚
冯小刚,Xiaogang Feng,人物,,
爱情神话,The Equation of Love & Death,电影,7.1,曹保平
曹保平,Baoping Cao,人物,,
"""


def test_latin_titles_keep_their_spaces_and_segmentation_spaces_go():
    assert normalise_label("The Equation of Love & Death") == "The Equation of Love & Death"
    assert normalise_label("周迅 主演 的 Love & Death 很 好看") == "周迅主演的Love & Death很好看"
    assert normalise_label("玛姬 · 格蕾斯") == "玛姬·格蕾斯"
    assert normalise_label("电影 ( 2016 )") == "电影(2016)"
    assert normalise_label("Tom ' s Spider - Man , Mr . Bean") == "Tom's Spider-Man, Mr. Bean"


latin_words = st.text(alphabet=st.characters(min_codepoint=ord("a"), max_codepoint=ord("z")), min_size=1, max_size=6)


@settings(max_examples=200, deadline=None)
@given(st.lists(latin_words, min_size=1, max_size=6), st.sampled_from([" ", " & ", " + ", " / ", ": "]))
def test_latin_text_joined_by_spaces_is_never_changed(words, joint):
    text = joint.join(words)
    assert normalise_label(text) == text


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=30))
def test_a_language_is_given_by_script_only_where_the_source_does_not_say(text):
    tag = text_language(text, "zh")
    assert tag in ("zh", "en")
    if has_cjk(text):
        assert tag == "zh"  # text with Han characters is never re-tagged in a Chinese source
    assert text_language(text, "en") in ("en", "zh")


def test_script_decides_untagged_text():
    assert text_language("Xun Zhou", "zh") == "en"
    assert text_language("周迅", "zh") == "zh"
    assert text_language("2016", "zh") == "zh"  # no letters: the source's own language
    assert text_language("178cm", "zh") == "zh"  # a measure, not English
    assert text_language("3 Idiots", "zh") == "en"
    assert text_language("周迅", "en") == "zh"
    assert text_language("Zhōu Xùn", "zh-Hans") == "en"


def _build_films(tmp_path: Path) -> Domain:
    source = tmp_path / "films.csv"
    source.write_text(FILMS_CSV, encoding="utf-8")
    domain = Domain("films", tmp_path / "kg")
    inferred = infer_schema("films", [SourceSpec("csv", str(source))])
    assert 'labels = { "name_en" = "en" }' in inferred.toml and 'language = "zh"' in inferred.toml
    assert '[relations."name_en"]' not in inferred.toml  # a label column is no relation
    schema = inferred.write(domain.paths.root / "schema.toml")
    domain.build([f"csv:{source}"], schema=str(schema.path))
    return domain


def _labels(domain: Domain) -> dict[str, set[tuple[str, str]]]:
    rows = domain.query("SELECT ?e ?l WHERE { ?e rdfs:label ?l }").rows
    found: dict[str, set[tuple[str, str]]] = {}
    for row in rows:
        found.setdefault(row["e"].value, set()).add((row["l"].value, row["l"].language))
    return found


def test_a_bilingual_csv_builds_one_entity_per_thing_with_both_labels(tmp_path):
    domain = _build_films(tmp_path)
    labels = _labels(domain)
    films = {iri: names for iri, names in labels.items() if ("爱情神话", "zh") in names}
    assert list(films.values()) == [{("爱情神话", "zh"), ("The Equation of Love & Death", "en")}]
    people = [names for names in labels.values() if ("冯小刚", "zh") in names]
    assert people == [{("冯小刚", "zh"), ("Xiaogang Feng", "en")}]
    assert not domain.query("SELECT ?s WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?p), 'name_en')) }").rows


def test_query_by_an_english_label_finds_the_entity_and_labels_rows_in_the_language_asked(tmp_path):
    domain = _build_films(tmp_path)
    report = domain.query(
        "SELECT ?film ?director WHERE { ?film kgr:director ?director }",
        film="The Equation of Love & Death",
        label_language="en",
    )
    assert [report.labels[row["director"].value] for row in report.rows] == ["Baoping Cao"]
    chinese = domain.query("SELECT ?film ?director WHERE { ?film kgr:director ?director }", film="A Sigh")
    assert [chinese.labels[row["director"].value] for row in chinese.rows] == ["冯小刚"]
    by_label = domain.query("SELECT ?f ?t WHERE { ?f rdfs:label ?t }", t="The Equation of Love & Death")
    assert len(by_label.rows) == 1 and by_label.rows[0]["t"].language == "en"


def test_english_names_of_a_chinese_corpus_are_english_and_keep_their_spaces(tmp_path):
    session = {
        "goal": [["再见", "", ""]],
        "conversation": ["你好"],
        "knowledge": [
            ["The Equation of Love & Death", "主演", "周迅"],
            ["The Equation of Love & Death", "Rating", "7.1"],
            ["周迅", "评论", "very good actress"],
        ],
    }
    source = tmp_path / "dev.txt"
    source.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    schema = tmp_path / "schema.toml"
    schema.write_text(
        'name = "rec"\nversion = 1\nlanguage = "zh"\n[relations.rating]\nzh = "评分"\nen = "rating"\n'
        'kind = "literal"\n[relations.star]\nzh = "主演"\nen = "stars"\nkind = "entity"\n',
        "utf-8",
    )
    domain = Domain("rec", tmp_path / "kg")
    domain.build([f"durecdial:{source}"], schema=str(schema))
    labels = {label for names in _labels(domain).values() for label in names}
    assert ("The Equation of Love & Death", "en") in labels and ("周迅", "zh") in labels
    literals = {
        (row["p"].value.rsplit("/", 1)[-1], row["o"].value, row["o"].language)
        for row in domain.query("SELECT ?p ?o WHERE { ?s ?p ?o FILTER(isLiteral(?o)) FILTER(?p != rdfs:label) }").rows
    }
    assert ("rating", "7.1", "zh") in literals  # "Rating" is the schema's rating; a number keeps the source's tag
    assert any(value == "very good actress" and lang == "en" for _, value, lang in literals)


@pytest.mark.parametrize("written", ["Rating", "RATING", "ｒａｔｉｎｇ", " rating ", "评分"])
def test_relation_names_match_whatever_their_case_or_width(tmp_path, written):
    schema = tmp_path / "schema.toml"
    schema.write_text(
        'name = "x"\nversion = 1\n[relations.rating]\nzh = "评分"\nen = "rating"\nkind = "literal"\n', "utf-8"
    )
    relation = load_schema(schema).relation_for(written)
    assert relation.declared and relation.id == "rating"


def test_wikidata_samples_give_one_entity_both_labels(tmp_path, shared):
    dump = shared("wikidata_json/wbgetentities-Q6-Q42-P31.wdtk.json")
    domain = Domain("wd", tmp_path / "kg")
    domain.build([f"wikidata:{dump}"])
    labels = _labels(domain)
    adams = [names for names in labels.values() if ("Douglas Adams", "en") in names]
    assert len(adams) == 1 and any(lang.startswith("zh") for _, lang in adams[0])
    report = domain.query("SELECT ?e ?n WHERE { ?e rdfs:label ?n }", n="Douglas Adams")
    assert len(report.rows) == 1 and isinstance(report.rows[0]["e"], ox.NamedNode)


ALIGN_SCHEMA = """name = "films"
version = 1
language = "zh"
type_relation = "type"

[types.film]
zh = "电影"
en = "film"

[types.person]
zh = "人物"
en = "person"

[relations.type]
zh = "类型"
en = "type"
kind = "literal"

[relations.director]
zh = "导演"
en = "director"
kind = "entity"

[relations.rating]
zh = "评分"
en = "rating"
kind = "literal"
"""
ALIGN_CSV = """name,name_en,type,director,rating
一声叹息,A Sigh,电影,冯小刚,7.5
冯小刚,Xiaogang Feng,人物,,
双城记,Twin Cities,电影,,7.0
双城记（2010）,Twin Cities,电影,,6.0
苏州河,,电影,,8.0
"""
ENGLISH_SESSIONS = [  # an English corpus names the same things in English only
    [["A Sigh", "director", "Xiaogang Feng"], ["A Sigh", "type", "film"], ["Xiaogang Feng", "type", "person"]],
    [["Twin Cities", "rating", "8.0"], ["Twin Cities", "type", "film"]],
    [["Painted Skin", "rating", "6.5"], ["Painted Skin", "type", "film"]],
    [["Sigh Person", "rating", "1"]],
]


def _bilingual_domain(tmp_path: Path) -> Domain:
    (tmp_path / "schema.toml").write_text(ALIGN_SCHEMA, "utf-8")
    (tmp_path / "films.csv").write_text(ALIGN_CSV, "utf-8")
    with open(tmp_path / "en.txt", "w", encoding="utf-8") as out:
        out.writelines(
            json.dumps({"goal": [], "knowledge": knowledge, "conversation": ["Hi"]}) + "\n"
            for knowledge in ENGLISH_SESSIONS
        )
    domain = Domain("films", tmp_path / "kg")
    domain.build(
        [f"csv:{tmp_path / 'films.csv'}", f"durecdial:{tmp_path / 'en.txt'}"], schema=str(tmp_path / "schema.toml")
    )
    return domain


def test_align_matches_english_only_names_with_type_checks_and_lists_ambiguous_and_missing(tmp_path):
    domain = _bilingual_domain(tmp_path)
    report = domain.align("en", write=True)
    assert report.base_language == "zh" and report.language == "en"
    assert report.matched == 2  # "A Sigh" and "Xiaogang Feng" of the English corpus are the CSV's entities
    assert report.ambiguous == {"Twin Cities": sorted(report.ambiguous["Twin Cities"])}
    assert len(report.ambiguous["Twin Cities"]) == 2  # two films have that English name: none is chosen
    assert report.missing["zh"] == ["Painted Skin", "Sigh Person"] and report.missing["en"] == ["苏州河"]
    assert json.loads(report.report_file.read_text("utf-8"))["matched"] == 2
    links = domain.query(
        "SELECT ?a ?b WHERE { GRAPH <https://kgforge.org/graph/derived/aligned/en> { ?a owl:sameAs ?b } }"
    ).rows
    assert len(links) == 2
    again = domain.align("en", write=True)  # re-running replaces the graph, it does not add to it
    assert again.matched == 2 and len(domain.query("SELECT ?a WHERE { ?a owl:sameAs ?b }").rows) == 2


def test_a_type_mismatch_is_refused_not_aligned(tmp_path):
    domain = _bilingual_domain(tmp_path)
    sessions = tmp_path / "more.txt"
    sessions.write_text(
        json.dumps(
            {
                "goal": [],
                "conversation": ["Hi"],
                "knowledge": [["Xiaogang Feng", "type", "film"], ["Xiaogang Feng", "rating", "3"]],
            }
        )
        + "\n",
        "utf-8",
    )
    other = Domain("films2", tmp_path / "kg")
    other.build([f"csv:{tmp_path / 'films.csv'}", f"durecdial:{sessions}"], schema=str(tmp_path / "schema.toml"))
    report = other.align("en")
    assert report.type_rejected == 1 and "Xiaogang Feng" in report.missing["zh"]
    assert domain.align("en").type_rejected == 0


def test_stats_give_the_parallel_kg_figures(tmp_path):
    source = tmp_path / "films.csv"
    source.write_text(FILMS_CSV + "苏州河,,电影,8.0,娄烨\n", encoding="utf-8")
    domain = Domain("films", tmp_path / "kg")
    schema = infer_schema("films", [SourceSpec("csv", str(source))]).write(domain.paths.root / "schema.toml")
    domain.build([f"csv:{source}"], schema=str(schema.path))
    parallel = domain.stats().languages
    assert parallel["languages"] == ["zh", "en"]
    # six entities: three films, three people; 苏州河 and 娄烨 have no English name
    assert parallel["entities"] == {"zh": 6, "en": 4, "both": 4, "all": 6}
    assert parallel["attributes"] == {"zh": 2, "en": 2, "both": 2, "all": 2}
    # rating and director of three films; the two facts of 苏州河 cannot be written in English
    assert parallel["triples"] == {"zh": 6, "en": 4, "both": 4, "all": 6}


def _label_frame(rows: list[tuple[str, str, str, bool]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"iri": pl.String, "label": pl.String, "lang": pl.String, "preferred": pl.Boolean}, orient="row"
    )


def test_the_fallback_chain_takes_each_step_in_order():
    frame = _label_frame(
        [
            ("e:own", "周迅", "zh", True),
            ("e:own", "Xun Zhou", "en-GB", True),  # 1. in the language
            ("e:alias", "葛优", "zh", True),
            ("e:alias", "You Ge", "en", False),  # 2. an alias in it
            ("e:linked", "霸王别姬", "zh", True),
            ("wd:Q1", "Farewell My Concubine", "en", True),  # 3. via sameAs
            ("e:plain", "Wong Kar-wai", "", True),  # 4. untagged
            ("e:script", "3 Idiots", "zh", True),  # 5. Latin script, tagged zh
            ("e:none", "苏州河", "zh", True),
            ("e:none", "苏州河", "", False),  # nothing English
            ("c:type", "人物", "en", True),  # tagged en, written in Han
        ]
    )
    chosen = language_labels(frame, "en", [("e:linked", "wd:Q1")])
    assert chosen.labels["e:own"] == "Xun Zhou" and "e:own" not in chosen.fell_back
    assert (chosen.labels["e:alias"], chosen.fell_back["e:alias"]) == ("You Ge", "alias")
    assert (chosen.labels["e:linked"], chosen.fell_back["e:linked"]) == ("Farewell My Concubine", "linked")
    assert chosen.fell_back["e:plain"] == "untagged" and chosen.fell_back["e:script"] == "script"
    assert chosen.lacking == {"e:none", "c:type"}
    assert chosen.counts() == {"language": 2, "alias": 1, "linked": 1, "untagged": 1, "script": 1, "lacking": 2}
    chinese = language_labels(frame, "zh")  # Chinese text writes a foreign name as it is spelled
    assert chinese.labels["wd:Q1"] == "Farewell My Concubine" and not chinese.lacking


label_rows = st.lists(
    st.tuples(
        st.sampled_from(["a", "b", "c", "d"]),
        st.sampled_from(["周迅", "Xun Zhou", "3 Idiots", "霸王别姬", "x"]),
        st.sampled_from(["zh", "en", "", "en-US", "ja"]),
        st.booleans(),
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None)
@given(label_rows, st.sampled_from(["en", "zh"]))
def test_every_labelled_iri_is_named_or_lacking_and_english_names_have_no_han(rows, language):
    chosen = language_labels(_label_frame(rows), language)
    iris = {iri for iri, *_ in rows}
    assert set(chosen.labels) | chosen.lacking == iris and not set(chosen.labels) & chosen.lacking
    assert all(label in {r[1] for r in rows if r[0] == iri} for iri, label in chosen.labels.items())
    if language == "en":
        assert not any(has_cjk(label) for label in chosen.labels.values())


def test_json_lines_and_a_declared_label_column_give_labels_in_their_language(tmp_path):
    source = tmp_path / "people.jsonl"
    source.write_text(
        "\n".join(
            json.dumps(record, ensure_ascii=False)
            for record in [
                {"name": "周迅", "english": "Xun Zhou", "title_ja": "ジョウ・シュン", "born": "1974"},
                {"name": "冯小刚", "english": ["Xiaogang Feng", "Feng Xiaogang"], "born": "1958"},
            ]
        )
        + "\n",
        encoding="utf-8",
    )
    schema = tmp_path / "schema.toml"
    schema.write_text(
        'name = "people"\nversion = 1\nlanguage = "zh"\n[options.records]\nlabels = { english = "en", '
        'title_ja = "ja" }\n[relations.born]\nzh = "出生"\nen = "born"\nkind = "literal"\n',
        "utf-8",
    )
    domain = Domain("people", tmp_path / "kg")
    domain.build([f"jsonl:{source}"], schema=str(schema))
    labels = _labels(domain)
    assert {("周迅", "zh"), ("Xun Zhou", "en"), ("ジョウ・シュン", "ja")} in labels.values()
    assert {("冯小刚", "zh"), ("Xiaogang Feng", "en"), ("Feng Xiaogang", "en")} in labels.values()
    assert not domain.query("SELECT ?s WHERE { ?s ?p ?o FILTER(CONTAINS(STR(?p), 'english')) }").rows


def test_a_bad_language_tag_in_the_label_columns_names_the_schema(tmp_path):
    source = tmp_path / "people.csv"
    source.write_text("name,english\n周迅,Xun Zhou\n", encoding="utf-8")
    schema = tmp_path / "schema.toml"
    schema.write_text('name = "people"\nversion = 1\n[options.records]\nlabels = { english = "not a tag!" }\n', "utf-8")
    with pytest.raises(SchemaError, match=r"schema.toml: \[options.records\] labels: not a valid language tag"):
        Domain("people", tmp_path / "kg").build([f"csv:{source}"], schema=str(schema))


def _linked_films(tmp_path: Path, wikidata_zh: bool = True) -> Domain:
    """Two films-domain entities, linked (``kgforge link``) to Wikidata entities that carry their English names
    and, with ``wikidata_zh``, their Chinese ones (else the domain's entities carry their English names too, by
    which they are linked)."""
    from kgforge.publish.link import link_domain

    rows = "name,type,director\n一声叹息,电影,冯小刚\n冯小刚,人物,\n"
    if not wikidata_zh:
        rows = "name,name_en,type,director\n一声叹息,A Sigh,电影,冯小刚\n冯小刚,Feng Xiaogang,人物,\n"
    (tmp_path / "films.csv").write_text(rows, "utf-8")
    zh = ('"一声叹息"@zh, ', '"冯小刚"@zh, ') if wikidata_zh else ("", "")
    (tmp_path / "wd.ttl").write_text(
        "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
        f'<http://www.wikidata.org/entity/Q1> rdfs:label {zh[0]}"A Sigh"@en .\n'
        f'<http://www.wikidata.org/entity/Q2> rdfs:label {zh[1]}"Feng Xiaogang"@en .\n',
        "utf-8",
    )
    domain = Domain("films", tmp_path / "kg")
    domain.init_schema([f"csv:{tmp_path / 'films.csv'}"], language="zh")  # a Chinese domain, whatever Wikidata says
    domain.build([f"csv:{tmp_path / 'films.csv'}", f"rdf:{tmp_path / 'wd.ttl'}"])
    assert link_domain("films", domain.workdir).linked == 2
    return domain


def test_an_entity_linked_to_wikidata_is_named_by_its_counterpart_in_english(tmp_path):
    from kgforge.exports.assemble import Context

    domain = _linked_films(tmp_path)
    report = domain.query("SELECT ?f ?d WHERE { ?f kgr:director ?d }", label_language="en")
    film, director = report.rows[0]["f"].value, report.rows[0]["d"].value
    assert (report.labels[film], report.labels[director]) == ("A Sigh", "Feng Xiaogang")
    labels = Context.open(domain.snapshot(), "en").labels
    assert labels.entity(film) == "A Sigh" and labels.chosen.fell_back[film] == "linked" and not labels.missing
    assert Context.open(domain.snapshot(), "zh").labels.entity(film) == "一声叹息"


def test_the_fact_ranker_names_entities_by_the_rule_the_labels_follow(tmp_path):
    """An English export writes 冯小刚 as Feng Xiaogang (its Wikidata partner's name): the ranker that chooses the
    facts counts it as named too, by the same rule (Snapshot.same_as_pairs), so the film's director fact is not
    left out as unnameable."""
    from kgforge.exports.assemble import Context
    from kgforge.exports.subgraph import FactRanker

    domain = _linked_films(tmp_path)
    ctx = Context.open(domain.snapshot(), "en")
    report = domain.query("SELECT ?f ?d WHERE { ?f kgr:director ?d }")
    film, director = report.rows[0]["f"].value, report.rows[0]["d"].value
    assert ctx.labels.entity(director) == "Feng Xiaogang"
    ranked = FactRanker(ctx.tables, ctx.schema, ctx.labels.chosen).of_subjects(pl.Series([film]))
    assert director in ranked["o"].to_list()
    own_only = language_labels(ctx.tables.labels, "en")  # the rule the ranker followed before: no sameAs pairs
    assert director not in FactRanker(ctx.tables, ctx.schema, own_only).of_subjects(pl.Series([film]))["o"].to_list()


def test_grounding_names_an_entity_without_a_name_of_its_own_by_its_partner_s(tmp_path):
    """A Wikidata entity with only an English name, linked to the domain's 冯小刚, is written 冯小刚 in a zh
    domain's grounded facts (the linked step of the same chain), and matched by its own names only."""
    from kgforge.grounding.index import GroundingIndex

    domain = _linked_films(tmp_path, wikidata_zh=False)
    snapshot = domain.snapshot()
    wikidata = "http://www.wikidata.org/entity/Q2"
    index = GroundingIndex.from_snapshot(snapshot)
    assert index.label(wikidata) == "冯小刚" and index.names[wikidata] == ["Feng Xiaogang"]
    assert GroundingIndex.from_tables(snapshot.tables(), snapshot.schema).label(wikidata) == "Feng Xiaogang"
    assert GroundingIndex.from_state(index.state()).label(wikidata) == "冯小刚"
