"""`kgforge ground --format duconv` grounds against the domain's graph too: goal topics resolved to the graph's
entities (those it lacks reported), the graph's facts each utterance states and the entity in focus recorded, the
fields DuConv's readers read untouched; and the second gold of docs/grounding.md — goal-topic focus accuracy
(:mod:`kgforge.evaluation.focus`) and the script that reports it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.core.errors import InputError
from kgforge.evaluation.focus import focus_accuracy
from kgforge.evaluation.selection import score_selection
from kgforge.grounding.normalise import form
from kgforge.store.snapshot import Snapshot
from scripts import grounding_second_gold
from tests.conftest import run_cli, shared_file
from tests.durecdial_sessions import run_readers, write_lines


def sessions_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    """Domain ``duconv`` from the whole DuConv dev head, domain ``head100`` from its first 100 sessions."""
    workdir = tmp_path_factory.mktemp("duconv-graph")
    source = shared_file("duconv/dev.head250.jsonl")
    first = write_lines(workdir / "head100.jsonl", sessions_of(source)[:100])
    run_cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir))
    run_cli("build", "head100", "--source", f"duconv:{first}", "--workdir", str(workdir))
    return workdir


@pytest.fixture(scope="module")
def grounded(built) -> tuple[list[dict], Path, object]:
    out = built / "grounded.jsonl"
    report = Domain("duconv", built).ground(shared_file("duconv/dev.head250.jsonl"), out, fmt="duconv")
    return sessions_of(out), out, report


def test_the_graphs_facts_and_focus_are_recorded_beside_the_sessions_own(grounded):
    sessions, _, report = grounded
    source = sessions_of(shared_file("duconv/dev.head250.jsonl"))
    every_triple = {tuple(map(form, t)) for s in source for t in s["knowledge"]}
    stated = agree = 0
    for session, given in zip(sessions, source):
        assert {k: v for k, v in session.items() if k != "grounding"} == given  # what the readers read: untouched
        for row in session["grounding"]:
            assert set(row) == {"knowledge", "topics", "claims", "graph_knowledge", "focus"}
            own = {tuple(map(form, session["knowledge"][i])) for i in row["knowledge"]}
            for triple in row["graph_knowledge"]:
                assert tuple(map(form, triple)) in every_triple  # a fact of the graph, built from these sessions
                stated += 1
                agree += tuple(map(form, triple)) in own
            assert isinstance(row["focus"], str)  # the goal's topics are in focus from the start
    # most facts the graph's grounder finds are triples the session rule finds too (measured: 814 of 900)
    assert stated > 800 and agree / stated > 0.85
    first = sessions[0]["grounding"]  # hand-checked: 喜欢 看 剧情 电影 吗 / … 才 54kg ， 她 还有 部 电影 叫 富春山居图
    assert first[0]["graph_knowledge"] == [["王牌", "类型", "剧情"]] and first[0]["focus"] == "王牌"
    assert {("林志玲", "体重", "54kg"), ("林志玲", "代表作", "富春山居图")} == set(
        map(tuple, first[6]["graph_knowledge"])
    )
    assert first[4]["focus"] == first[6]["focus"] == "林志玲"  # named in 4, carried and stated of in 6
    second = sessions[1]["grounding"][2]  # 那 你 看 过 Heather McComb 主演 的 珍珠海 吗 ？
    assert second["graph_knowledge"] == [["珍珠海", "主演", "Heather McComb"]]
    # one-character topics (暖, 影) cannot be named (names of one character are not matched): reported
    assert report.topics_not_in_graph == ("暖", "影")


def test_goal_topics_the_graph_lacks_are_reported(built, tmp_path):
    """Grounded against the graph of the first 100 sessions: every goal topic of the others that no label of
    that graph names is reported, once a session; none that one names."""
    source = shared_file("duconv/dev.head250.jsonl")
    result = run_cli("ground", "head100", "--dialogues", str(source), "--format", "duconv", "--out",
                     str(tmp_path / "out.jsonl"), "--workdir", str(built), "--json")  # fmt: skip
    reported = json.loads(result.stdout)["topics_not_in_graph"]
    labels = {form(x) for x in Snapshot.open("head100", built).tables().labels["label"].to_list()}
    expected = []
    for session in sessions_of(source):
        topics = list(dict.fromkeys(session["goal"][0][1:3]))
        expected += [t for t in topics if len(form(t)) < 2 or form(t) not in labels]
    assert reported == expected and len(expected) > 100
    shown = run_cli("ground", "head100", "--dialogues", str(source), "--format", "duconv", "--out",
                    str(tmp_path / "out2.jsonl"), "--workdir", str(built))  # fmt: skip
    assert f"{len(expected)} dialogue topics are not in the graph" in shown.stdout


@pytest.mark.slow  # the real readers, in processes of their own (about 15 s)
def test_duconvs_readers_read_every_sample_of_the_grounded_file(grounded):
    _, out, _ = grounded
    if not (Path("/work/.mirror") / "baidu+knowledge-driven-dialogue" / "repo").is_dir():
        pytest.skip("no baidu/knowledge-driven-dialogue mirror for the DuConv readers")
    before = run_readers("duconv-session", shared_file("duconv/dev.head250.jsonl"))
    after = run_readers("duconv-session", out)
    assert after["ok"] and [r["samples"] for r in after["results"]] == [r["samples"] for r in before["results"]]
    assert after["results"][0]["samples"] == 1114


# ---------------------------------------------------------------- goal-topic focus accuracy


def session(conversation: list[str], focus: list[str | None], knowledge: list[list[str]]) -> dict:
    return {
        "goal": [["START", "红海行动", "张译"], ["张译", "主演", "红海行动"]],
        "knowledge": knowledge,
        "conversation": conversation,
        "grounding": [{"knowledge": [], "topics": [], "claims": [], "focus": f} for f in focus],
    }


KNOWLEDGE = [
    ["红海行动", "领域", "电影"],
    ["红海行动", "导演", "林超贤"],
    ["红海行动", "评论", "这 是 一部 非常 燃 的 电影 ， 中国 海军 的 风采 展现 得 淋漓尽致 ， 值得 一看 再看"],
    ["张译", "领域", "明星"],
    ["张译", "主演", "红海行动"],
    ["张译", "星座", "水瓶座"],
    ["张译", "职业", "演员"],
]


def test_focus_accuracy_follows_its_definition(tmp_path):
    rows = [
        ("你 喜欢 看 电影 吗", None),  # 电影 is a 领域 (a kind): about neither
        ("推荐 你 看 红海行动", "红海行动"),  # names one: scored, right
        ("是 林超贤 导演 的", "林超贤"),  # a fact of 红海行动 only: scored by a fact, wrong (the director in focus)
        ("里面 中国 海军 的 风采 展现 得 淋漓尽致 呢", "红海行动"),  # 8 characters of the comment: scored, right
        ("张译 主演 了 红海行动", "张译"),  # names both: left out
        ("他 是 水瓶座 的", "张译"),  # a fact of 张译: scored by a fact, right (the baseline says 红海行动: wrong)
        ("水瓶", "张译"),  # part of a word only: about neither
        ("演员 张译", None),  # names 张译 (and says 演员): scored, wrong (no focus)
    ]
    path = write_lines(tmp_path / "g.jsonl", [session([u for u, _ in rows], [f for _, f in rows], KNOWLEDGE)])
    report = focus_accuracy(path)
    assert (report.utterances, report.scored, report.about_neither, report.about_both) == (8, 5, 2, 1)
    assert (report.named, report.by_fact) == (2, 3)
    assert report.accuracy == 3 / 5 and report.accuracy_named == 1 / 2 and report.accuracy_by_fact == 2 / 3
    # the baseline: 红海行动 (the goal's first, then named) until 演员 张译 — in 张译 主演 了 红海行动 the name said
    # last is 红海行动 — so it is wrong only on 水瓶座
    assert report.baseline_accuracy == 4 / 5 and report.baseline_accuracy_by_fact == 2 / 3


def test_focus_accuracy_needs_a_ground_output(tmp_path):
    grounded = session(["推荐 你 看 红海行动"], ["红海行动"], KNOWLEDGE)
    plain = write_lines(tmp_path / "plain.jsonl", [{k: v for k, v in grounded.items() if k != "grounding"}])
    with pytest.raises(InputError, match=f"{plain}:1: no 'grounding' entry per utterance"):
        focus_accuracy(plain)
    gold = write_lines(tmp_path / "grounded.jsonl", [grounded])
    result = run_cli("eval", "--selected", str(plain), "--gold", str(gold), check=False)
    assert result.returncode == 1 and f"{plain}:1: a session without `grounding` or `stated_knowledge`" in result.stderr


@pytest.mark.slow  # builds and grounds three domains
def test_the_second_gold_script_reports_what_the_library_computes(tmp_path, capsys):
    """The script's figures (docs/grounding.md) are the library's on its own grounded files."""
    out = tmp_path / "second.json"
    assert grounding_second_gold.main(["--shared", str(shared_file("duconv").parent), "--workdir", str(tmp_path),
                                       "--json", str(out)]) == 0  # fmt: skip
    found = json.loads(out.read_text(encoding="utf-8"))
    assert found["duconv_focus"] == focus_accuracy(tmp_path / "duconv.grounded.jsonl").as_dict()
    focus = found["duconv_focus"]
    assert focus["scored"] > 700 and focus["accuracy"] > 0.8
    assert focus["accuracy_by_fact"] > focus["baseline_accuracy_by_fact"]  # the focus carried beats the last name
    for language in ("zh", "en"):
        folder = tmp_path / f"durecdial-{language}"
        direct = score_selection(folder / "dev.grounded.txt", folder / "dev.txt").as_dict()
        assert found["durecdial_selection"][language] == direct
        assert direct["micro"]["accuracy"] == 1.0 and direct["turns_with_gold"] == 6
    printed = capsys.readouterr().out
    assert f"| all scored | {focus['scored']} | {focus['accuracy']:.3f} |" in printed
