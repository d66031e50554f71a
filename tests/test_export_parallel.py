"""`kgforge export --lang zh,en`: twins in DuRecDial 2.0's layout with the same ids and the same triples in
each language, the five task files of its generation baselines, and a manifest pairing them."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.datasets.durecdial.parallel import task_samples
from tests.conftest import run_cli
from tests.durecdial_sessions import (
    ANNOTATED,
    DISH_EN,
    DISH_ZH,
    SHOP_EN,
    SHOP_ZH,
    run_readers,
    v2_session,
    write_lines,
)

# a small bilingual graph: every entity has rdfs:label in zh and en, every literal in Han characters its English
# form beside it (the same subject and relation)
TURTLE = """@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix c: <https://kgforge.org/class/> .
@prefix r: <https://kgforge.org/relation/> .
@prefix e: <https://example.org/e/> .
e:xunzhou a c:star ; rdfs:label "周迅"@zh , "Xun Zhou"@en ; r:starring_in e:suzhouhe , e:perhaps ; r:sings e:drifting ;
    r:birth_place "浙江衢州"@zh , "Quzhou, Zhejiang"@en ; r:zodiac_sign "天秤座"@zh , "Libra"@en .
e:suzhouhe a c:film ; rdfs:label "苏州河"@zh , "Suzhou River"@en ; r:director e:louye ; r:genre e:romance ; r:rating "7.8" .
e:perhaps a c:film ; rdfs:label "如果·爱"@zh , "Perhaps Love"@en ; r:director e:chenkexin ; r:genre e:romance ; r:rating "6.9" .
e:drifting a c:song ; rdfs:label "飘摇"@zh , "Drifting"@en ; r:genre e:pop ; r:rating "9.1" .
e:chenkun a c:star ; rdfs:label "陈坤"@zh , "Kun Chen"@en ; r:starring_in e:dongfeng ;
    r:birth_place "重庆"@zh , "Chongqing"@en ; r:zodiac_sign "水瓶座"@zh , "Aquarius"@en .
e:dongfeng a c:film ; rdfs:label "东风破"@zh , "Dongfeng"@en ; r:director e:chenkexin ; r:genre e:romance ; r:rating "6.5" .
e:louye rdfs:label "娄烨"@zh , "Lou Ye"@en .
e:chenkexin rdfs:label "陈可辛"@zh , "Peter Chan"@en .
e:romance rdfs:label "爱情"@zh , "romance"@en .
e:pop rdfs:label "流行"@zh , "pop"@en .
"""
NAMES = dict(re.findall(r'"([^"]+)"@zh , "([^"]+)"@en', TURTLE))  # zh label or value -> its English one
RELATIONS = {
    "主演": "starred in",
    "演唱": "sings",
    "导演": "director",
    "类型": "genre",
    "评分": "rating",
    "出生地": "place of birth",
    "星座": "zodiac sign",
}
CJK = re.compile(r"[\u4e00-\u9fff]")


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def bilingual(tmp_path_factory):
    """The bilingual graph built, and four DuRecDial-style goals on it."""
    root = tmp_path_factory.mktemp("parallel")
    (root / "kg.ttl").write_text(TURTLE, encoding="utf-8")
    workdir = root / "kg"
    run_cli(
        "build",
        "par",
        "--source",
        f"rdf:{root / 'kg.ttl'}",
        "--schema",
        "durecdial",
        "--no-schema-sources",
        "--workdir",
        str(workdir),
    )
    goals = workdir / "par" / "exports" / "goals.jsonl"
    run_cli("goals", "par", "--style", "durecdial", "--n", "4", "--out", str(goals), "--workdir", str(workdir))
    return workdir, goals


def export(workdir, goals, out, *extra, check=True):
    result = run_cli(
        "export",
        "par",
        "--format",
        "durecdial",
        "--goals",
        str(goals),
        "--out",
        str(out),
        "--lang",
        "zh,en",
        "--workdir",
        str(workdir),
        "--json",
        *extra,
        check=check,
    )
    return json.loads(result.stdout) if check else result


def test_twins_hold_the_same_dialogues_and_triples_in_each_language(bilingual):
    workdir, goals = bilingual
    out = workdir / "par" / "exports" / "dev.txt"
    report = export(workdir, goals, out)
    zh_file, en_file = out.with_name("zh_dev.txt"), out.with_name("en_dev.txt")
    assert report["twins"] == {"zh": str(zh_file), "en": str(en_file)} and report["records"] == 4
    zh, en = lines(zh_file), lines(en_file)
    assert zh_file.with_name("zh_dev.txt.ids.txt").read_text() == en_file.with_name("en_dev.txt.ids.txt").read_text()
    assert [len(r["knowledge"]) for r in zh] == [len(r["knowledge"]) for r in en] and report["triples"] > 4 * 4
    for zh_record, en_record in zip(zh, en):
        assert (
            set(zh_record)
            == set(en_record)
            == {"user_profile", "knowledge", "conversation", "goal", "situation", "goal_type_list", "goal_topic_list"}
        )
        for (zs, zp, zo), (es, ep, eo) in zip(zh_record["knowledge"], en_record["knowledge"]):
            assert (NAMES[zs], RELATIONS[zp], NAMES.get(zo, zo)) == (es, ep, eo)  # one triple, two languages
            assert not CJK.search(es + ep + eo)  # every value in Han characters has its English form
        # the same goal sequence, goal types and topics in English (DuRecDial 2.0's type names)
        assert not CJK.search(en_record["goal"]) and "recommendation" in en_record["goal"]
        assert re.findall(r"\[\d+\]", en_record["goal"]) == re.findall(r"\[\d+\]", zh_record["goal"])
        assert [NAMES[t] for t in re.findall("『 (.*?) 』", zh_record["goal"])] == re.findall(
            "『 (.*?) 』", en_record["goal"]
        )
    manifest = json.loads(out.with_name("dev.txt.parallel.json").read_text(encoding="utf-8"))
    assert manifest["ids_match"] and manifest["triple_counts_match"] and manifest["mixed_labels"] == {}
    twin_manifest = json.loads(en_file.with_name("en_dev.txt.manifest.json").read_text(encoding="utf-8"))
    assert twin_manifest["layout_kind"] == "durecdial2" and twin_manifest["language"] == "en"


def test_the_five_task_files_pair_source_and_target_languages(bilingual):
    workdir, goals = bilingual
    out = workdir / "par" / "exports" / "tasks.txt"
    report = export(workdir, goals, out)
    assert set(report["tasks"]) == {"en-en", "zh-zh", "zh-en", "en-zh", "multilingual"}
    zh, en = lines(out.with_name("zh_tasks.txt")), lines(out.with_name("en_tasks.txt"))
    ids = out.with_name("zh_tasks.txt.ids.txt").read_text().split()
    for task, (src, tgt, source) in {
        "zh-en": ("zh", "en", zh),
        "en-zh": ("en", "zh", en),
        "zh-zh": ("zh", "zh", zh),
        "en-en": ("en", "en", en),
    }.items():
        samples = lines(out.with_name(f"tasks.txt.{task}.jsonl"))
        assert report["tasks"][task]["samples"] == len(samples) == 4
        for sample, record, record_id in zip(samples, source, ids):
            assert sample["id"] == record_id and (sample["src_lang"], sample["tgt_lang"]) == (src, tgt)
            assert sample["tgt_lang_id"] == {"zh": "zh_CN", "en": "en_XX"}[tgt]
            assert (sample["knowledge"], sample["goal"]) == (record["knowledge"], record["goal"])
            assert sample["history"] == [] and sample["response"] == ""  # new goals: no conversation yet
    multilingual = lines(out.with_name("tasks.txt.multilingual.jsonl"))
    assert sorted(s["task"] for s in multilingual) == ["en-en"] * 4 + ["zh-zh"] * 4


def test_a_missing_english_label_is_named_and_refused_unless_mixing_is_allowed(tmp_path):
    (tmp_path / "kg.ttl").write_text(TURTLE.replace(', "romance"@en', ""), encoding="utf-8")
    workdir = tmp_path / "kg"
    run_cli(
        "build",
        "par",
        "--source",
        f"rdf:{tmp_path / 'kg.ttl'}",
        "--schema",
        "durecdial",
        "--no-schema-sources",
        "--workdir",
        str(workdir),
    )
    goals = workdir / "par" / "exports" / "goals.jsonl"
    run_cli("goals", "par", "--style", "durecdial", "--n", "4", "--out", str(goals), "--workdir", str(workdir))
    out = workdir / "par" / "exports" / "dev.txt"
    refused = export(workdir, goals, out, check=False)
    assert (
        refused.returncode == 1
        and "1 entity or relation has no en label: 爱情 <https://example.org/e/romance>" in refused.stderr
    )
    assert "--allow-mixed" in refused.stderr and not out.with_name("en_dev.txt").exists()
    report = export(workdir, goals, out, "--allow-mixed")
    assert report["mixed_labels"] == {"en": [{"iri": "https://example.org/e/romance", "label_used": "爱情"}]}
    assert any(
        t == ["Suzhou River", "genre", "爱情"] for r in lines(out.with_name("en_dev.txt")) for t in r["knowledge"]
    )
    # --skip-invalid (ignored before): the goals that need 爱情 in English are left out of both twins, listed
    skipped = export(workdir, goals, out, "--skip-invalid")
    zh, en = lines(out.with_name("zh_dev.txt")), lines(out.with_name("en_dev.txt"))
    left_out = lines(out.with_name("en_dev.txt.rejected.jsonl"))
    assert skipped["dialogues_rejected"] == len(left_out) >= 1 and len(zh) == len(en) == 4 - len(left_out)
    assert all("en: no en label for https://example.org/e/romance" in r["reason"] for r in left_out)
    assert not any("爱情" in t for r in en for triple in r["knowledge"] for t in triple)
    ids = out.with_name("zh_dev.txt.ids.txt").read_text().split()
    assert ids == out.with_name("en_dev.txt.ids.txt").read_text().split()
    assert not {r["dialogue_id"] for r in left_out} & set(ids)


def test_real_twins_that_differ_are_left_out_with_skip_invalid(shared, tmp_path):
    (tmp_path / "kg.ttl").write_text(RESTAURANT, encoding="utf-8")
    workdir = tmp_path / "kg"
    run_cli(
        "build", "rest", "--source", f"rdf:{tmp_path / 'kg.ttl'}", "--schema", "durecdial", "--no-schema-sources",
        "--workdir", str(workdir),
    )  # fmt: skip
    zh = [v2_session(shared, "zh"), v2_session(shared, "zh", nested=True)]
    en = [v2_session(shared, "en"), v2_session(shared, "en", nested=True)]
    en[1] = {**en[1], "conversation": en[1]["conversation"][:-1], "knowledge": en[1]["knowledge"][:-1]}
    en[1] |= {key: en[1][key][:-1] for key in ("goal_type_list", "goal_topic_list")}  # a turn short: not the same
    write_lines(tmp_path / "zh_dev.txt", zh)
    write_lines(tmp_path / "en_dev.txt", en)
    out = workdir / "rest" / "exports" / "dev.txt"
    args = ["export", "rest", "--dialogues", str(tmp_path / "zh_dev.txt"), "--format", "durecdial", "--lang", "zh,en"]
    refused = run_cli(*args, "--out", str(out), "--workdir", str(workdir), check=False)
    assert refused.returncode == 1 and "en_dev.txt:2: 15 utterances against 16" in refused.stderr
    assert "--skip-invalid" in refused.stderr
    report = json.loads(run_cli(*args, "--out", str(out), "--workdir", str(workdir), "--skip-invalid", "--json").stdout)
    assert report["records"] == 1 and report["dialogues_rejected"] == 1
    assert [r["conversation"] for r in lines(out.with_name("en_dev.txt"))] == [en[0]["conversation"]]
    left_out = lines(out.with_name("zh_dev.txt.rejected.jsonl"))
    assert [(r["line"], "not the same session" in r["reason"]) for r in left_out] == [(2, True)]


def test_a_parallel_export_is_refused_where_it_cannot_be_made(bilingual, tmp_path):
    workdir, goals = bilingual
    for extra, words in [
        (("--format", "duconv"), "give --format durecdial"),
        (("--layout", "lic2020-sample"), "DuRecDial 2.0's layout (--layout v2)"),
        (("--layout", "lic2020"), "DuRecDial 2.0's layout (--layout v2)"),
    ]:  # goals: v2 only
        result = run_cli(
            "export",
            "par",
            "--goals",
            str(goals),
            "--out",
            str(workdir / "par" / "exports" / "x.txt"),
            "--lang",
            "zh,en",
            "--workdir",
            str(workdir),
            *(("--format", "durecdial") if extra[0] != "--format" else ()),
            *extra,
            check=False,
        )
        assert result.returncode == 1 and words in result.stderr, result.stderr
    bad = run_cli(
        "export",
        "par",
        "--goals",
        str(goals),
        "--format",
        "durecdial",
        "--out",
        str(tmp_path / "y"),
        "--lang",
        "zh,e n",
        "--workdir",
        str(workdir),
        check=False,
    )
    assert bad.returncode == 2 and "not a language tag" in bad.stderr
    dialogues = run_cli(
        "export",
        "par",
        "--dialogues",
        str(goals),
        "--format",
        "durecdial",
        "--out",
        str(tmp_path / "z"),
        "--lang",
        "zh,en",
        "--workdir",
        str(workdir),
        check=False,
    )
    assert dialogues.returncode == 1 and "named zh_NAME and en_NAME side by side" in dialogues.stderr
    alone = run_cli(
        "export",
        "par",
        "--goals",
        str(goals),
        "--format",
        "durecdial",
        "--out",
        str(tmp_path / "w"),
        "--allow-mixed",
        "--workdir",
        str(workdir),
    )  # one language: --allow-mixed is the export's own
    assert alone.returncode == 0 and "4 of 4 goals exported" in alone.stdout


def test_the_goals_report_carries_what_the_durecdial_style_says_of_its_sequences(bilingual):
    """The goals stage names no style: what DuRecDial's says (its summary, and what no two of its goals share)
    comes from its registration on STYLES."""
    workdir, _ = bilingual
    out = workdir / "par" / "exports" / "many.jsonl"
    args = ("goals", "par", "--style", "durecdial", "--n", "300", "--out", str(out), "--workdir", str(workdir))
    report = json.loads(run_cli(*args, "--json").stdout)
    assert 0 < report["goals"] < 300 and len(report["shortfall"]) == 1
    assert "distinct durecdial goals" in report["shortfall"][0]
    assert "each sequence of goal types and topics used once" in report["shortfall"][0]
    drawn = [
        step["type"] for line in out.read_text(encoding="utf-8").splitlines() for step in json.loads(line)["sequence"]
    ]
    assert sum(report["goal_types"].values()) == len(drawn) and report["transitions_used"] > 0
    assert set(report["goal_types_not_drawn"]).isdisjoint(drawn)


def test_profile_and_situation_follow_the_language_where_the_goal_gives_them(bilingual):
    workdir, goals = bilingual
    records = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    records[0] |= {
        "profile": {"姓名": "张三", "喜欢的明星": "周迅"},
        "profile_en": {"Name": "Zhang San", "Favorite star": "Xun Zhou"},
        "situation": {
            "text": "聊天时间:2018-12-24 中午12:00，在公司 星期一",
            "en": {"text": "Chat time: Monday 2018-12-24, noon, at the office"},
        },
    }
    records[1] |= {"profile": {"姓名": "李四"}}  # no English profile: it cannot be written in English
    records[1].pop("profile_en", None)  # the goal generator gives one; this goal was written by hand
    edited = goals.with_name("goals-with-profiles.jsonl")
    edited.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = workdir / "par" / "exports" / "profiles.txt"
    refused = export(workdir, edited, out, check=False)
    assert refused.returncode == 1 and "user_profile.姓名 (the key) '姓名'" in refused.stderr
    assert "--allow-mixed" in refused.stderr and not out.with_name("en_profiles.txt").exists()
    # --skip-invalid: that goal is left out of both twins (the ids stay one for one) and listed with why
    report = export(workdir, edited, out, "--skip-invalid")
    zh, en = lines(out.with_name("zh_profiles.txt")), lines(out.with_name("en_profiles.txt"))
    assert report["records"] == len(zh) == len(en) == 3 and report["dialogues_rejected"] == 1
    left_out = lines(out.with_name("en_profiles.txt.rejected.jsonl"))
    assert [r["dialogue_id"] for r in left_out] == [f"dlg-{records[1]['goal_id'].removeprefix('g-')}"]
    assert "en: user_profile.姓名" in left_out[0]["reason"] and out.with_name("zh_profiles.txt.rejected.jsonl").exists()
    assert zh[0]["user_profile"] == records[0]["profile"] and en[0]["user_profile"] == records[0]["profile_en"]
    assert zh[0]["situation"].startswith("聊天时间") and en[0]["situation"].startswith("Chat time: Monday")
    sample = lines(out.with_name("profiles.txt.zh-en.jsonl"))[0]
    assert sample["user_profile"] == records[0]["profile"] and sample["situation"] == zh[0]["situation"]
    # --allow-mixed: written as it is, and listed
    report = export(workdir, edited, out, "--allow-mixed")
    en = lines(out.with_name("en_profiles.txt"))
    assert report["records"] == 4 and en[1]["user_profile"] == {"姓名": "李四"}
    assert {"text": "李四", "where": "user_profile.姓名"} in report["mixed_text"]["en"]


# the restaurant and dish of the DuRecDial README session, with their labels (and its address) in both languages
ADDRESS_ZH, ADDRESS_EN = ANNOTATED[7][0][2], ANNOTATED[7][1][2]
RESTAURANT = f"""@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix c: <https://kgforge.org/class/> .
@prefix r: <https://kgforge.org/relation/> .
@prefix e: <https://example.org/e/> .
e:shop a c:poi ; rdfs:label "{SHOP_ZH}"@zh , "{SHOP_EN}"@en ; r:signature_dish e:ribs ; r:price_per_person "50" ;
    r:rating "4.8" ; r:address "{ADDRESS_ZH}"@zh , "{ADDRESS_EN}"@en .
e:ribs a c:food ; rdfs:label "{DISH_ZH}"@zh , "{DISH_EN}"@en ; r:genre e:hot .
e:hot rdfs:label "热菜"@zh , "hot dish"@en .
"""
TWIN_NAMES = {SHOP_ZH: SHOP_EN, DISH_ZH: DISH_EN, "热菜": "hot dish", ADDRESS_ZH: ADDRESS_EN}


def test_real_durecdial2_twins_are_exported_together_with_one_id_and_the_same_facts(shared, tmp_path):
    (tmp_path / "kg.ttl").write_text(RESTAURANT, encoding="utf-8")
    workdir = tmp_path / "kg"
    run_cli(
        "build",
        "rest",
        "--source",
        f"rdf:{tmp_path / 'kg.ttl'}",
        "--schema",
        "durecdial",
        "--no-schema-sources",
        "--workdir",
        str(workdir),
    )
    zh = [v2_session(shared, "zh"), v2_session(shared, "zh", nested=True)]
    en = [v2_session(shared, "en"), v2_session(shared, "en", nested=True)]
    write_lines(tmp_path / "zh_dev.txt", zh)
    write_lines(tmp_path / "en_dev.txt", en)
    out = workdir / "rest" / "exports" / "dev.txt"
    report = json.loads(
        run_cli(
            "export",
            "rest",
            "--dialogues",
            str(tmp_path / "zh_dev.txt"),
            "--format",
            "durecdial",
            "--lang",
            "zh,en",
            "--out",
            str(out),
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    assert report["records"] == 2 and report["triples_counted"] == "retrieved_knowledge" and report["triples"] > 0
    zh_out, en_out = lines(out.with_name("zh_dev.txt")), lines(out.with_name("en_dev.txt"))
    # each session as it was in its language, one id for both twins, the same retrieved facts in each language
    assert [{k: v for k, v in r.items() if k != "retrieved_knowledge"} for r in zh_out] == zh
    assert [{k: v for k, v in r.items() if k != "retrieved_knowledge"} for r in en_out] == en
    assert out.with_name("zh_dev.txt.ids.txt").read_text() == out.with_name("en_dev.txt.ids.txt").read_text()
    for zh_record, en_record in zip(zh_out, en_out):
        pairs = list(zip(zh_record["retrieved_knowledge"], en_record["retrieved_knowledge"]))
        assert len(zh_record["retrieved_knowledge"]) == len(en_record["retrieved_knowledge"]) >= 5
        assert [TWIN_NAMES[z[0]] for z, _ in pairs] == [e[0] for _, e in pairs]
        assert [TWIN_NAMES.get(z[2], z[2]) for z, _ in pairs] == [e[2] for _, e in pairs]
        assert {e[1] for _, e in pairs} >= {"signature dish", "rating"}
    # the tasks: the recommender's turns (the user opens: 问天气 is not a greeting), history in the source
    # language, response in the target language
    samples = lines(out.with_name("dev.txt.zh-en.jsonl"))
    assert report["tasks"]["zh-en"]["samples"] == len(samples) == 2 * 8
    first = samples[0]
    assert first["history"] == zh[0]["conversation"][:1] and first["response"] == en[0]["conversation"][1]
    assert first["knowledge"] == [t for t in zh[0]["knowledge"] if t] and first["goal"] == zh[0]["goal"]
    assert samples[7]["response"] == en[0]["conversation"][15] and len(samples[7]["history"]) == 15
    # the same twins in the competition layout are what the LIC-2020 goal planner reads, in both languages
    cut = json.loads(
        run_cli(
            "export",
            "rest",
            "--dialogues",
            str(tmp_path / "zh_dev.txt"),
            "--format",
            "durecdial",
            "--lang",
            "zh,en",
            "--layout",
            "lic2020",
            "--out",
            str(out.with_name("lic.txt")),
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    assert cut["layout_kind"] == "durecdial-lic2020" and cut["triples"] == report["triples"]
    assert cut["tasks"]["en-zh"]["samples"] == 16  # the recommender's turns, told from the goal string
    for language, sessions in (("zh", zh), ("en", en)):
        written = lines(out.with_name(f"{language}_lic.txt"))
        assert [r["conversation"] for r in written] == [s["conversation"] for s in sessions]
        assert all(isinstance(t, list) and len(t) == 3 for r in written for t in r["knowledge"])
        result = run_readers("durecdial-lic2020", out.with_name(f"{language}_lic.txt"))
        assert result["ok"] and [r["samples"] for r in result["results"]] == [32], result
    missing_twin = tmp_path / "zh_test.txt"
    write_lines(missing_twin, zh)
    refused = run_cli(
        "export",
        "rest",
        "--dialogues",
        str(missing_twin),
        "--format",
        "durecdial",
        "--lang",
        "zh,en",
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert refused.returncode == 1 and "en_test.txt not found" in refused.stderr


@given(st.integers(min_value=0, max_value=20), st.booleans())
def test_task_samples_are_the_recommenders_turns_with_the_history_before_them(turns, greeting):
    types = (["寒暄" if greeting else "问答"] + ["再见"] * turns)[:turns]
    source = {
        "conversation": [f"zh{i}" for i in range(turns)],
        "goal": "[1]…",
        "knowledge": [["a", "b", "c"]],
        "user_profile": {},
        "situation": "",
        "goal_type_list": types,
    }
    target = dict(source, conversation=[f"en{i}" for i in range(turns)])
    samples = task_samples(source, target, "d", "zh", "en")
    expected = list(range(0 if greeting and turns else 1, turns, 2))
    if turns == 0:
        assert [(s["history"], s["response"]) for s in samples] == [([], "")]  # a goal: the opening to generate
        return
    assert [s["id"] for s in samples] == [f"d/{j}" for j in expected]
    for sample, j in zip(samples, expected):
        assert sample["history"] == [f"zh{i}" for i in range(j)] and sample["response"] == f"en{j}"
        assert (sample["src_lang_id"], sample["tgt_lang_id"]) == ("zh_CN", "en_XX")
