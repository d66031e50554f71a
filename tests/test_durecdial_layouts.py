"""DuRecDial's ACL 2020 release layout and DuRecDial 2.0's own (zh and en), read and written by `kgforge export
--dialogues` exactly as they were: per-utterance knowledge survives import → export in value and place."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.exports import format_named
from kgforge.sources.dialogue_layouts import session_triples, utterance_knowledge
from tests.conftest import run_cli
from tests.durecdial_sessions import (
    ANNOTATED,
    acl2020,
    run_readers,
    v2_session,
    write_lines,
)


def build(workdir, domain, path):
    run_cli("build", domain, "--source", f"durecdial:{path}", "--workdir", str(workdir), "--json")


def export(workdir, domain, dialogues, out, *extra):
    result = run_cli(
        "export",
        domain,
        "--dialogues",
        str(dialogues),
        "--format",
        "durecdial",
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        "--json",
        *extra,
    )
    return json.loads(result.stdout)


def lines(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def without_pool(record):
    return {k: v for k, v in record.items() if k != "retrieved_knowledge"}


def test_acl2020_sessions_round_trip_exactly_and_cut_to_the_competition_layout(workdir, shared, tmp_path):
    example = acl2020(shared)
    path = write_lines(tmp_path / "acl.txt", [example])
    build(workdir, "acl", path)
    report = export(workdir, "acl", path, tmp_path / "out.txt")
    assert report["input_layout"] == "durecdial-acl2020" and report["layout_kind"] == "durecdial-acl2020"
    assert report["reader_warnings"] == 0 and report["dialogues"] == 1
    written = lines(tmp_path / "out.txt")[0]
    assert without_pool(written) == example and list(written)[:5] == list(example)  # values and key order
    assert report["gold_kept_exactly"] == {"gold_triples_written": 9, "kept": 9} and report["gold_in_graph"] == 9
    assert any(t[0] == "大清花饺子（十一纬路店）" for t in written["retrieved_knowledge"])
    cut = export(workdir, "acl", path, tmp_path / "lic.txt", "--layout", "lic2020")
    assert cut["layout_kind"] == "durecdial-lic2020" and cut["reader_warnings"] == 0
    assert cut["gold_kept_exactly"] == {"gold_triples_written": 9, "kept": 9}  # moved from kg, not lost
    lic = lines(tmp_path / "lic.txt")[0]
    assert (lic["goal"], lic["knowledge"], lic["conversation"]) == (
        example["goals"],
        example["kg"],
        example["conversation"],
    )


@pytest.mark.parametrize("language", ["zh", "en"])
def test_durecdial2_per_utterance_knowledge_survives_import_and_export(workdir, shared, tmp_path, language):
    sessions = [v2_session(shared, language), v2_session(shared, language, nested=True)]
    path = write_lines(tmp_path / f"{language}_dev.txt", sessions)
    domain = f"v2{language}"
    build(workdir, domain, path)
    report = export(workdir, domain, path, tmp_path / "out.txt")
    assert report["input_layout"] == "durecdial2" and report["reader_warnings"] == 0 and report["dialogues"] == 2
    written = lines(tmp_path / "out.txt")
    assert [without_pool(r) for r in written] == sessions
    assert [list(r)[:7] for r in written] == [list(s) for s in sessions]
    assert report["gold_triples"] == 2 * len(ANNOTATED) and report["gold_in_graph"] == 2 * len(ANNOTATED)
    assert report["gold_kept_exactly"] == {"gold_triples_written": 12, "kept": 12}
    # which utterance states which triple is where it was
    for session in written:
        stated = {i: k for i, k in enumerate(utterance_knowledge(session)) if k}
        assert stated == {i: [pair[language == "en"]] for i, pair in ANNOTATED.items()}
    cut = export(workdir, domain, path, tmp_path / "lic.txt", "--layout", "lic2020")
    assert cut["reader_warnings"] == 0 and cut["gold_kept_exactly"] == {"gold_triples_written": 12, "kept": 12}
    assert lines(tmp_path / "lic.txt")[0]["knowledge"] == [ANNOTATED[i][language == "en"] for i in sorted(ANNOTATED)]


@pytest.mark.slow  # runs the real LIC-2020 goal planner
def test_release_sessions_cut_to_lic2020_pass_the_goal_planner(workdir, shared, tmp_path):
    """The LIC-2020 goal planner (the only DuRecDial reader of session files with a profile) reads the ACL
    2020 and DuRecDial 2.0 sessions once cut to its layout: one row per utterance."""
    inputs = {
        "acl": [acl2020(shared)],
        "zh": [v2_session(shared, "zh"), v2_session(shared, "zh", nested=True)],
        "en": [v2_session(shared, "en"), v2_session(shared, "en", nested=True)],
    }
    for name, sessions in inputs.items():
        path = write_lines(tmp_path / f"{name}.txt", sessions)
        build(workdir, f"r{name}", path)
        export(workdir, f"r{name}", path, tmp_path / f"{name}.lic2020.txt", "--layout", "lic2020")
        result = run_readers("durecdial-lic2020", tmp_path / f"{name}.lic2020.txt")
        assert result["ok"] and [r["samples"] for r in result["results"]] == [16 * len(sessions)], result


def test_the_graph_gets_each_triple_of_a_per_utterance_session_once(shared):
    session = v2_session(shared)
    session["knowledge"][13] = ANNOTATED[11][0]  # said twice
    assert session_triples(session) == [ANNOTATED[i][0] for i in sorted(ANNOTATED)]
    assert session_triples(acl2020(shared)) == acl2020(shared)["kg"]


def test_layout_detection_tells_the_release_layouts_apart(shared):
    fmt = format_named("durecdial")
    example = acl2020(shared)
    lic = {
        "goal": example["goals"],
        "knowledge": example["kg"],
        "user_profile": example["user_profile"],
        "situation": example["situation"],
        "conversation": example["conversation"],
    }
    assert fmt.detect(example).kind == "durecdial-acl2020"
    assert fmt.detect(lic).kind == "durecdial-lic2020"
    assert fmt.detect(v2_session(shared)).kind == "durecdial2"
    train = dict(v2_session(shared), knowledge=example["kg"])  # 2.0 train: the session's list
    assert fmt.detect(train).kind == "durecdial2" and utterance_knowledge(train) is None
    broken = dict(v2_session(shared), goal_type_list=["问天气"])
    assert any("one string per utterance" in p for p in fmt.check(broken, fmt.layout("v2")))


triple = st.lists(st.text(min_size=1, max_size=4), min_size=3, max_size=3)


@given(st.lists(st.one_of(st.just([]), triple, st.lists(triple, min_size=1, max_size=3)), min_size=1, max_size=12))
def test_per_utterance_knowledge_is_read_in_place_and_a_session_list_never_is(entries):
    conversation = [f"u{i}" for i in range(len(entries))]
    record = {"conversation": conversation, "knowledge": entries}
    per_utterance = utterance_knowledge(record)
    if any(not e or isinstance(e[0], list) for e in entries):
        assert per_utterance == [e if not e or isinstance(e[0], list) else [e] for e in entries]
    else:
        assert per_utterance is None  # every entry one triple: a session list
    flat = [t for e in entries for t in ([e] if e and isinstance(e[0], str) else e)]
    assert utterance_knowledge({"conversation": ["u"] * len(flat), "knowledge": flat}) is None


@given(st.lists(st.one_of(st.just([]), triple, st.lists(triple, min_size=1, max_size=3)), min_size=1, max_size=12))
def test_every_gold_triple_is_found_where_the_session_says_it_is(entries):
    """Per-utterance gold: each triple's place in the record holds it, on the utterance it annotates; written
    back unchanged, every one counts as kept."""
    fmt = format_named("durecdial")
    conversation = [f"[{i}]u" for i in range(len(entries))]
    record = {
        "goal": "[1]问答",
        "knowledge": entries,
        "user_profile": {},
        "situation": "",
        "conversation": conversation,
        "goal_type_list": ["问答"] * len(entries),
        "goal_topic_list": ["NULL"] * len(entries),
    }
    dialogue = fmt.source_dialogue(record, 1, fmt.layout("v2"))
    stated = utterance_knowledge(record) or [[e] for e in entries]  # all single triples: the session's list
    assert sorted(map(tuple, (t[:3] for t in dialogue.gold))) == sorted(tuple(t) for ts in stated for t in ts)
    for gold in dialogue.gold:
        place = record
        for key in gold.where:
            place = place[key]
        assert place == [gold.head, gold.relation, gold.tail]
        assert gold.message is None or gold.tail in {t[2] for t in stated[gold.message]}
        assert fmt.keeps({**record, "retrieved_knowledge": []}, record, gold)


def test_corpus_stats_read_both_release_layouts(shared, tmp_path):
    """The ACL 2020 release names its goal string ``goals``; DuRecDial 2.0's English goal types keep their
    words apart while segmentation spaces of Chinese ones go."""
    acl = run_cli("corpus", "stats", str(write_lines(tmp_path / "acl.txt", [acl2020(shared)])), "--json")
    figures = json.loads(acl.stdout)["durecdial"]
    assert (
        figures["goal_types"] == {"问天气": 1, "美食推荐": 1, "poi推荐": 1, "再见": 1} and figures["recommended"] == 2
    )
    en = run_cli("corpus", "stats", str(write_lines(tmp_path / "en_dev.txt", [v2_session(shared, "en")])), "--json")
    figures = json.loads(en.stdout)["durecdial"]
    assert (
        figures["goal_types"]
        == {"Ask about weather": 1, "Food recommendation": 1, "POI recommendation": 1, "Say goodbye": 1}
        and figures["recommended"] == 2
    )
