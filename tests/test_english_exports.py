"""One English path (issue 50, item 3): every layout's ``--lang en`` export of DuRecDial goals is English
throughout — goal types, the user profile, the situation (spaced as English writes it), relation names and
values — or the export refuses naming what lacks English; a value with no English form is listed and passes only
with ``--allow-mixed`` (said in the coverage line); the parallel en twin takes the reviewed translations the
single-language export takes; ``query --lang en`` names relations and values in English, each value once."""

from __future__ import annotations

import csv
import io
import json
import re
import unicodedata

import polars as pl
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from kgforge.core.scripts import CJK_CLASS, has_cjk
from kgforge.store.languages import literal_forms
from tests.conftest import run_cli
from tests.durecdial_sessions import run_readers
from tests.test_export_parallel import TURTLE

# every layout a goal can be written in, with how to read its records back
GOAL_LAYOUTS = [
    ("durecdial", "lic2020-sample"),
    ("durecdial", "resource-sample"),
    ("durecdial", "v2"),
    ("sheet", "tsv"),
    ("sheet", "csv"),
    ("jsonl", "generic"),
    ("parquet", "generic"),
    ("duconv", "sample"),  # a DuRecDial sequence about one topic is no DuConv goal: --skip-invalid writes the rest
]
MARKS = {"durecdial": ("『", "』"), "duconv": ("领域",)}  # each layout's own words, written in every language


def build(root, turtle: str, name: str = "en"):
    (root / "kg.ttl").write_text(turtle, encoding="utf-8")
    workdir = root / "kg"
    run_cli(
        "build", name, "--source", f"rdf:{root / 'kg.ttl'}", "--schema", "durecdial", "--no-schema-sources",
        "--workdir", str(workdir),
    )  # fmt: skip
    return workdir


@pytest.fixture(scope="module")
def english(tmp_path_factory):
    """The bilingual graph (every name and value in Han characters with its English form) and six DuRecDial
    goal sequences drawn on it in Chinese."""
    root = tmp_path_factory.mktemp("english")
    workdir = build(root, TURTLE)
    goals = root / "goals.jsonl"
    run_cli("goals", "en", "--style", "durecdial", "--n", "6", "--out", str(goals), "--workdir", str(workdir))
    return workdir, goals


def export(workdir, goals, out, *extra, domain="en", check=True):
    result = run_cli(
        "export", domain, "--goals", str(goals), "--out", str(out), "--workdir", str(workdir), *extra, check=check
    )
    return result


def records_of(path, fmt: str, layout: str) -> list:
    """Every record an export wrote, as data (a sheet's JSON cells parsed; Parquet through polars)."""
    if fmt == "parquet":
        return pl.read_parquet(path).to_dicts()
    text = path.read_text(encoding="utf-8")
    if fmt == "sheet":
        rows = list(csv.DictReader(io.StringIO(text, newline=""), delimiter="\t" if layout == "tsv" else ","))
        return [dict(row, goal=json.loads(row["goal"]), knowledge=json.loads(row["knowledge"])) for row in rows]
    return [json.loads(line) for line in text.splitlines()]


def strings(value, where=""):
    """Every string in ``value``, keys included, with where it is."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield f"{where}.{key} (key)", str(key)
            yield from strings(item, f"{where}.{key}")
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from strings(item, f"{where}[{i}]")


def not_english(records, fmt: str, allowed: set[str] = frozenset()) -> list[tuple[str, str]]:
    """The strings holding a CJK character outside the layout's own marks and the ``allowed`` texts (the values
    the export listed as having no English form)."""
    found = []
    for where, text in strings(records):
        rest = text
        for mark in sorted(MARKS.get(fmt, ()) + tuple(allowed), key=len, reverse=True):
            rest = rest.replace(mark, " ")
        if has_cjk(rest):
            found.append((where, text))
    return found


@pytest.mark.parametrize(("fmt", "layout"), GOAL_LAYOUTS)
def test_every_layout_of_durecdial_goals_in_english_holds_no_chinese(english, fmt, layout):
    workdir, goals = english
    out = workdir / "en" / "exports" / f"{fmt}-{layout}.out"
    extra = ("--skip-invalid",) if fmt == "duconv" else ()
    export(workdir, goals, out, "--format", fmt, "--layout", layout, "--lang", "en", *extra)
    records = records_of(out, fmt, layout)
    assert records and not_english(records, fmt) == []
    assert any("Xun Zhou" in text or "Kun Chen" in text for _, text in strings(records))


def test_the_lic2020_sample_is_english_goal_types_profile_and_a_spaced_situation(english):
    """The repro: Chinese goal types and profile, and ``Chattime:Monday2018-11-05,22:00atnight,…``."""
    workdir, goals = english
    out = workdir / "en" / "exports" / "sample.txt"
    export(workdir, goals, out, "--format", "durecdial", "--lang", "en")
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    made = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    for record, goal in zip(written, made):
        kinds = [step["type_en"] for step in goal["sequence"] if step["type"] != "再见"]
        assert re.match(rf"\[1\] {re.escape(kinds[0])}( \(|$| -->)", record["goal"]), record["goal"]
        assert record["situation"] == goal["situation"]["en"]["text"]  # as written: "Chat time: Monday 2018-…"
        assert record["situation"].startswith("Chat time: ") and " " in record["situation"].split(", ")[1]
        assert record["user_profile"] == goal["profile_en"] and "name" in record["user_profile"]
    zh = workdir / "en" / "exports" / "sample-zh.txt"
    export(workdir, goals, zh, "--format", "durecdial")
    chinese = [json.loads(line) for line in zh.read_text(encoding="utf-8").splitlines()]
    assert [r["user_profile"] for r in chinese] == [g["profile"] for g in made]  # the Chinese export as before
    assert all("聊天时间" in r["situation"].replace(" ", "") for r in chinese)  # segmented, as before


def test_v2_in_english_writes_the_english_profile(english):
    workdir, goals = english
    out = workdir / "en" / "exports" / "v2.txt"
    export(workdir, goals, out, "--format", "durecdial", "--layout", "v2", "--lang", "en")
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    made = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    assert [r["user_profile"] for r in written] == [g["profile_en"] for g in made]
    assert all(r["situation"] == g["situation"]["en"]["text"] for r, g in zip(written, made))


def test_goals_in_english_keep_the_chinese_profile_chinese(english, tmp_path):
    """The repro: ``goals --lang en`` wrote English labels into the Chinese ``profile``."""
    workdir, _ = english
    goals = tmp_path / "goals-en.jsonl"
    run_cli(
        "goals", "en", "--style", "durecdial", "--n", "6", "--lang", "en", "--out", str(goals), "--workdir", str(workdir)
    )  # fmt: skip
    made = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    stars = [g for g in made if "喜欢的明星" in g["profile"]]
    assert stars and all(g["profile"]["喜欢的明星"] in {"周迅", "陈坤"} for g in stars)
    assert all(g["profile_en"]["liked stars"] in {"Xun Zhou", "Kun Chen"} for g in stars)
    assert all(not has_cjk(text) for g in made for _, text in strings(g["profile_en"]))
    assert any(s["topic_label"] in {"Xun Zhou", "Kun Chen"} for g in made for s in g["sequence"])  # --lang en
    for goal in made:
        entities = goal["profile_entities"]
        assert all(name in entities for name in [goal["profile"].get("喜欢的明星")] if name)


def test_a_value_with_no_english_form_is_refused_then_listed_with_allow_mixed(tmp_path):
    """The repro: a genre 爱情 passed into an English export without a word."""
    workdir = build(tmp_path, TURTLE.replace(', "Libra"@en', ""), "gap")
    goals = tmp_path / "goals.jsonl"
    run_cli("goals", "gap", "--style", "durecdial", "--n", "6", "--out", str(goals), "--workdir", str(workdir))
    out = workdir / "gap" / "exports" / "en.txt"
    refused = export(workdir, goals, out, "--format", "durecdial", "--lang", "en", domain="gap", check=False)
    assert refused.returncode == 1 and "no en form of the value '天秤座' (zodiac sign)" in refused.stderr
    assert "--allow-mixed writes it as it is" in refused.stderr and not out.exists()
    shown = export(workdir, goals, out, "--format", "durecdial", "--lang", "en", "--allow-mixed", domain="gap")
    assert "1 values with no en form written as they are (--allow-mixed): '天秤座'" in shown.stdout
    assert re.search(
        r"coverage: \d+ of \d+ goals exported, 0 rejected by the checks; 0 names, 1 value and", shown.stdout
    )
    listed = [json.loads(line) for line in out.with_name("en.txt.mixed.jsonl").read_text("utf-8").splitlines()]
    assert listed == [{"what": "value", "value": "天秤座", "relation": "https://kgforge.org/relation/zodiac_sign"}]
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert not_english(records, "durecdial", {"天秤座"}) == [] and not_english(records, "durecdial")
    skipped = json.loads(
        export(
            workdir, goals, out, "--format", "durecdial", "--lang", "en", "--skip-invalid", "--json", domain="gap"
        ).stdout
    )
    assert skipped["checks"]["skipped"] >= 1 and not not_english(
        [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()], "durecdial"
    )


def test_the_parallel_twin_takes_the_reviewed_translations_the_single_export_takes(tmp_path):
    """The repro: the en twin skipped the reviewed literal translations that ``--lang en`` used. A value the
    graph has only in Chinese is listed by ``translate --list``; a person's translation, applied, is what both
    the single-language export and the parallel twin write, on the same triple."""
    workdir = build(tmp_path, TURTLE.replace(', "Quzhou, Zhejiang"@en', ""), "rev")
    goals = tmp_path / "goals.jsonl"
    run_cli("goals", "rev", "--style", "durecdial", "--n", "6", "--out", str(goals), "--workdir", str(workdir))
    todo = tmp_path / "todo.tsv"
    listed = run_cli("translate", "rev", "--list", "--out", str(todo), "--workdir", str(workdir), "--json")
    assert json.loads(listed.stdout)["asked_model"] is False
    rows = list(csv.DictReader(todo.open(encoding="utf-8", newline=""), delimiter="\t"))
    assert [(r["source"], r["kind"], r["keep"], r["label"]) for r in rows] == [("浙江衢州", "literal", "", "")]
    rows[0] |= {"label": "Quzhou, Zhejiang", "keep": "yes"}  # the translator's work
    with todo.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    run_cli("translate", "rev", "--lang", "en", "--apply", str(todo), "--workdir", str(workdir))
    exports = workdir / "rev" / "exports"
    export(workdir, goals, exports / "en.txt", "--format", "durecdial", "--layout", "v2", "--lang", "en", domain="rev")
    export(workdir, goals, exports / "dev.txt", "--format", "durecdial", "--lang", "zh,en", domain="rev")
    single = [json.loads(line)["knowledge"] for line in (exports / "en.txt").read_text("utf-8").splitlines()]
    twin = [json.loads(line)["knowledge"] for line in (exports / "en_dev.txt").read_text("utf-8").splitlines()]
    zh = [json.loads(line)["knowledge"] for line in (exports / "zh_dev.txt").read_text("utf-8").splitlines()]
    assert single == twin and any(["Xun Zhou", "place of birth", "Quzhou, Zhejiang"] in k for k in twin)
    assert any(["周迅", "出生地", "浙江衢州"] in k for k in zh)  # the same triple, in Chinese, in the zh twin


def test_literal_forms_pair_a_relation_with_several_values_by_the_value():
    facts = pl.DataFrame(
        [
            ("f1", "genre", "爱情", False, "zh"),
            ("f1", "genre", "剧情", False, "zh"),
            ("f1", "genre", "romance", False, "en"),
            ("f1", "genre", "drama", False, "en"),
            ("f2", "genre", "爱情", False, "zh"),
            ("f2", "genre", "romance", False, "en"),
            ("f3", "genre", "剧情", False, "zh"),  # stated, but not translated here
            ("f4", "place", "重庆", False, "zh"),
            ("f4", "place", "Chongqing", False, "en"),
        ],
        schema=["s", "p", "o", "o_is_entity", "o_lang"],
        orient="row",
    )
    forms = {(s, p, o): form for s, p, o, form in literal_forms(facts, "en").iter_rows()}
    assert forms == {
        ("f1", "genre", "爱情"): "romance",  # stated beside 爱情 wherever it is
        ("f1", "genre", "剧情"): "drama",  # the one left once romance is 爱情's
        ("f2", "genre", "爱情"): "romance",
        ("f4", "place", "重庆"): "Chongqing",
    }
    assert literal_forms(facts, "zh").is_empty()  # Chinese writes any value as it is


@given(
    st.dictionaries(st.sampled_from("甲乙丙丁戊己庚辛"), st.sampled_from("abcdefgh"), min_size=1, max_size=6),
    st.lists(st.lists(st.sampled_from("甲乙丙丁戊己庚辛"), min_size=1, max_size=3, unique=True), max_size=8),
)
def test_literal_forms_never_pair_a_value_with_another_values_translation(translated, subjects):
    """Facts as ``translate --apply`` leaves them (every fact of a translated value gains its translation), no
    two values translated alike: whatever form a value gets is its own translation, and a subject with one
    value always gets it. (Two values translated alike, 甲 and 丙 both ``a``, can make a third one standing
    exactly where they do look translated: the facts cannot tell the two stories apart.)"""
    assume(len(set(translated.values())) == len(translated))
    rows = []
    for i, values in enumerate(subjects):
        for value in values:
            rows.append((f"s{i}", "p", value, False, "zh"))
            if value in translated:
                rows.append((f"s{i}", "p", translated[value], False, "en"))
    facts = pl.DataFrame(rows, schema=["s", "p", "o", "o_is_entity", "o_lang"], orient="row")
    forms = literal_forms(facts, "en") if rows else pl.DataFrame()
    for s, _, o, form in forms.iter_rows() if rows else []:
        assert translated[o] == form, (s, o, form)
    paired = {(s, o) for s, _, o, _ in forms.iter_rows()} if rows else set()
    for i, values in enumerate(subjects):
        translations = {translated[v] for v in values if v in translated}
        if len(values) == 1 and values[0] in translated and len(translations) == 1:
            assert (f"s{i}", values[0]) in paired


def test_query_names_relations_and_values_in_the_language_asked(english):
    """The repro: ``query --lang en`` on entity_facts kept Chinese relation names and printed each translated
    value twice."""
    workdir, _ = english

    def facts(*lang):
        out = run_cli(
            "query", "en", "entity_facts", "--bind", "name=周迅", *lang, "--format", "csv", "--workdir", str(workdir)
        ).stdout
        return [(row["relation"], row["value"]) for row in csv.DictReader(io.StringIO(out))]

    assert sorted(facts("--lang", "en")) == [
        ("place of birth", "Quzhou, Zhejiang"),
        ("sings", "Drifting"),
        ("starred in", "Perhaps Love"),
        ("starred in", "Suzhou River"),
        ("zodiac sign", "Libra"),
    ]
    chinese = facts()  # the domain's language: Chinese names; Chinese reads a value in any script as it is
    assert {
        ("主演", "如果·爱"),
        ("主演", "苏州河"),
        ("出生地", "浙江衢州"),
        ("星座", "天秤座"),
        ("演唱", "飘摇"),
    } <= set(chinese)
    assert {relation for relation, _ in chinese} == {"主演", "出生地", "星座", "演唱"}


RESOURCE_DEV = "durecdial/lic2020_baseline_resource_dev.txt"


def romanised(text: str) -> str:
    """A stand-in for a human translator: the text in pinyin, with what is not Latin left out."""
    from pypinyin import lazy_pinyin

    words = " ".join(word for word in lazy_pinyin(unicodedata.normalize("NFKC", text)) if word.strip())
    return re.sub(r"\s+", " ", re.sub(CJK_CLASS, " ", words)).strip() or "x"


@pytest.mark.slow  # builds the DuRecDial resource dev graph and exports 60 goals in nine layouts
def test_durecdial_goals_in_english_in_every_layout_hold_chinese_only_in_values_listed_as_lacking_english(
    tmp_path, shared
):
    """The acceptance: the real DuRecDial graph, its names translated by a person (a pinyin stand-in, through
    `translate --list` and `--apply`), 60 goal sequences exported in English in every layout: a CJK character
    stands only inside a value the export lists as having no English form (the long comments and sentences
    `translate` leaves to people), and only with --allow-mixed."""
    workdir = tmp_path / "kg"
    run_cli("build", "durecdial", "--source", f"durecdial:{shared(RESOURCE_DEV)}", "--workdir", str(workdir))
    goals = tmp_path / "goals.jsonl"
    run_cli("goals", "durecdial", "--style", "durecdial", "--n", "60", "--out", str(goals), "--workdir", str(workdir))
    todo = tmp_path / "todo.tsv"
    run_cli("translate", "durecdial", "--list", "--out", str(todo), "--workdir", str(workdir))
    rows = list(csv.DictReader(todo.open(encoding="utf-8", newline=""), delimiter="\t"))
    assert {row["kind"] for row in rows} >= {"entity", "relation", "literal"}
    for row in rows:
        row |= {"label": romanised(row["source"]), "keep": "yes"}
    with todo.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    run_cli("translate", "durecdial", "--apply", str(todo), "--workdir", str(workdir))
    exports = workdir / "durecdial" / "exports"
    refused = export(workdir, goals, exports / "x.txt", "--format", "durecdial", "--lang", "en", domain="durecdial",
                     check=False)  # fmt: skip
    assert refused.returncode == 1 and "no en form of the value" in refused.stderr
    outputs = [
        (fmt, layout, exports / f"{fmt}-{layout}.out", ("--layout", layout, "--lang", "en"))
        for fmt, layout in GOAL_LAYOUTS
    ]
    outputs.append(("durecdial", "v2", exports / "en_twins.txt", ("--lang", "zh,en")))  # the parallel en twin
    seen = 0
    for fmt, layout, out, options in outputs:
        target = out.with_name("twins.txt") if options[-1] == "zh,en" else out
        extra = ("--skip-invalid",) if fmt == "duconv" else ()
        export(workdir, goals, target, "--format", fmt, *options, "--allow-mixed", *extra, domain="durecdial")
        listed = [json.loads(line) for line in out.with_name(out.name + ".mixed.jsonl").read_text("utf-8").splitlines()]
        assert {entry["what"] for entry in listed} == {"value"}, (fmt, layout)  # no name, no other text
        records = records_of(out, fmt, layout)
        assert len(records) >= (20 if fmt == "duconv" else 60)
        assert not_english(records, fmt, {entry["value"] for entry in listed}) == [], (fmt, layout)
        seen += sum(1 for _, text in strings(records) if has_cjk(text))
        if fmt == "durecdial" and layout in ("lic2020-sample", "resource-sample"):  # English goal types and all
            result = run_readers(f"durecdial-{layout}", out)
            assert result["ok"] and [r["samples"] for r in result["results"]] == [len(records)], result
    assert seen  # the long values are there, listed
