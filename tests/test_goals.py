"""`kgforge goals`: DuConv validation on real sessions, reproducible stratified sampling, paths, sequences."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.core.errors import KgforgeError
from kgforge.core.resources import query_text
from kgforge.datasets.durecdial.goal_types import GoalTransitions
from kgforge.goals.check import parse_duconv_goal
from kgforge.goals.graph import MIN_TOPIC_FACTS, STYLES, GoalGraph, parse_hops
from kgforge.goals.styles import _quotas
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from tests.dialogue_kg import duconv_sample_kg


@pytest.fixture(scope="module")
def duconv_kg(tmp_path_factory):
    return duconv_sample_kg(tmp_path_factory)


@pytest.fixture(scope="module")
def travel_kg(tmp_path_factory):
    from tests.conftest import run_cli, shared_file

    source = shared_file("kdconv/travel/kb_travel.json")
    workdir = tmp_path_factory.mktemp("kg")
    run_cli("build", "travel", "--source", f"kdconv:{source}", "--workdir", str(workdir), "--json")
    return workdir


def goals_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_validate_real_duconv_goals_recall(cli, duconv_kg):
    workdir, source = duconv_kg
    report = json.loads(cli("goals", "duconv", "--validate", str(source), "--workdir", str(workdir), "--json").stdout)
    assert report["goals"] == 250
    # goals whose triples are absent from every knowledge list are counted apart (not as misses)
    assert report["goals_in_graph"] + report["goals_not_in_graph"] == 250
    assert 100 < report["goals_in_graph"] < 250
    assert report["recall"] >= 0.95 and report["found"] <= report["goals_in_graph"]
    assert set(report["by_kind"]) == {"one_step", "two_step"}
    assert report["by_kind"]["two_step"]["found"] > 0 and report["by_kind"]["one_step"]["found"] > 0
    assert all("absent from the graph" in r["reason"] for r in report["not_in_graph_examples"])


def test_goals_in_graph_matches_an_independent_count(duconv_kg, cli):
    from kgforge.core.text import normalise_label

    workdir, source = duconv_kg
    sessions = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    knowledge = {tuple(normalise_label(x) for x in t) for s in sessions for t in s["knowledge"]}
    expected = sum(all(tuple(normalise_label(x) for x in t) in knowledge for t in s["goal"][1:]) for s in sessions)
    report = json.loads(cli("goals", "duconv", "--validate", str(source), "--workdir", str(workdir), "--json").stdout)
    assert report["goals_in_graph"] == expected


def test_sampling_is_reproducible_stratified_and_duplicate_free(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    args = ("goals", "duconv", "--n", "120", "--workdir", str(workdir), "--json")
    first, second, other = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    report = json.loads(cli(*args, "--seed", "3", "--out", str(first)).stdout)
    cli(*args, "--seed", "3", "--out", str(second))
    cli(*args, "--seed", "4", "--out", str(other))
    assert first.read_bytes() == second.read_bytes()
    assert first.read_bytes() != other.read_bytes()
    goals = goals_of(first)
    assert len(goals) == report["goals"] == 120
    assert Counter(g["kind"] for g in goals) == {"one_step": 60, "two_step": 60}
    pairs = [frozenset(g["topics"]) for g in goals]
    assert len(set(pairs)) == len(pairs) and len({g["goal_id"] for g in goals}) == 120
    # stratified: water-filling over relations — a relation below the common level is exhausted
    edges = GoalGraph.load(Snapshot.open("duconv", workdir)).topic_edges()
    available = Counter(edges["p"].to_list())
    per_relation = Counter(g["path"][0]["p"] for g in goals if g["kind"] == "one_step")
    level = max(per_relation.values())
    assert level <= max(_quotas(dict(available), 60).values()) + 1 < 60 // 2
    for relation, count in available.items():
        assert per_relation[relation] >= min(count, level - 1) - 1, (relation, per_relation)
    two_step = Counter(g["path"][0]["p"] for g in goals if g["kind"] == "two_step")
    assert max(two_step.values()) <= 60 // 4
    assert {t for g in goals for t in g["topic_types"]} >= {"film", "star"}


def test_every_topic_is_a_typed_entity_with_facts_never_a_class(cli, duconv_kg, tmp_path):
    """DuConv's readers type each topic by its 领域 fact, and every DuConv dev topic has 4 facts or more."""
    workdir, _ = duconv_kg
    graph = GoalGraph.load(Snapshot.open("duconv", workdir))
    facts = Counter(graph.base_facts["s"].to_list())
    untyped = [s for s, _, o in graph.entity_edges().iter_rows() for t in (s, o) if t not in graph.topic_types]
    assert untyped, "the sample graph has untyped entities (objects of 好友, 家人 …) for this test to mean something"
    out = tmp_path / "g.jsonl"
    cli("goals", "duconv", "--n", "200", "--seed", "5", "--out", str(out), "--workdir", str(workdir))
    for goal in goals_of(out):
        assert None not in goal["topic_types"] and set(goal["topic_types"]) <= {"film", "star"}
        assert all(facts[t] >= MIN_TOPIC_FACTS and t not in graph.class_iris for t in goal["topics"])
    assert {t.iri for t in graph.schema.types.values()} <= graph.class_iris


def test_sampled_goals_are_produced_by_the_goal_queries(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    out = tmp_path / "g.jsonl"
    cli("goals", "duconv", "--n", "30", "--seed", "1", "--out", str(out), "--workdir", str(workdir))
    with QueryRunner(Snapshot.open("duconv", workdir)) as runner:
        for goal in goals_of(out):
            a, b = (ox.NamedNode(t) for t in goal["topics"])
            if goal["kind"] == "one_step":
                rows = runner.query(query_text("goal_one_step"), {"a": a, "b": b}).rows
                fact = goal["path"][0]
                assert any(
                    (r["head"].value, r["r"].value, r["tail"].value) == (fact["s"], fact["p"], fact["o"]) for r in rows
                )
                assert goal["goal"][1] == fact["labels"]
            else:
                rows = runner.query(query_text("associated_pairs"), {"a": a, "b": b}).rows
                shared = goal["shared"]
                assert any((r["r"].value, r["x"].value) == (shared["p"], shared["o"]) for r in rows)
                # written back as DuConv's [[START, A, B], [A, r, X], [B, r, X]]
                start, one, two = goal["goal"]
                assert start == ["START", *goal["topic_labels"]]
                assert one[0] == goal["topic_labels"][0] and two[0] == goal["topic_labels"][1]
                assert one[1:] == two[1:]


def test_two_step_needs_derive(cli, workdir, shared, tmp_path):
    source = shared("duconv/dev.head250.jsonl")
    cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir))
    result = cli(
        "goals", "duconv", "--n", "10", "--out", str(tmp_path / "g.jsonl"), "--workdir", str(workdir), check=False
    )
    assert result.returncode == 1 and "kgforge derive duconv" in result.stderr
    only_one = cli(
        "goals",
        "duconv",
        "--n",
        "10",
        "--one-step-ratio",
        "1",
        "--out",
        str(tmp_path / "g.jsonl"),
        "--workdir",
        str(workdir),
        "--json",
    )
    assert json.loads(only_one.stdout)["kinds"] == {"one_step": 10}


def test_kdconv_paths_over_one_to_three_hops(cli, travel_kg, tmp_path):
    out = tmp_path / "paths.jsonl"
    report = json.loads(
        cli(
            "goals",
            "travel",
            "--n",
            "30",
            "--hops",
            "1..3",
            "--seed",
            "5",
            "--out",
            str(out),
            "--workdir",
            str(travel_kg),
            "--json",
        ).stdout
    )
    goals = goals_of(out)
    assert report["goals"] == len(goals) == 30
    assert Counter(g["hops"] for g in goals) == {1: 10, 2: 10, 3: 10}
    with QueryRunner(Snapshot.open("travel", travel_kg)) as runner:
        for goal in goals:
            topics = goal["topics"]
            assert len(topics) == goal["hops"] + 1 == len(set(topics))
            assert set(goal["topic_types"]) == {"attraction"}
            for i, hop in enumerate(goal["path"]):
                assert {hop["s"], hop["o"]} == {topics[i], topics[i + 1]}
            k = goal["hops"]
            bindings = {f"t{i + 1}": ox.NamedNode(t) for i, t in enumerate(topics)}
            assert runner.query(query_text(f"transition_{k}hop"), bindings).rows


def test_durecdial_sequences_from_a_profile(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    graph = GoalGraph.load(Snapshot.open("duconv", workdir))
    star = next(
        graph.label(s)
        for s, _, o in graph.topic_edges().iter_rows()
        if graph.topic_types.get(s) == "star" and graph.topic_types.get(o) == "film"
    )
    profiles = tmp_path / "profiles.jsonl"
    profiles.write_text(
        json.dumps({"user_profile": {"姓名": "张三", "喜欢的明星": " " + star}}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    out = tmp_path / "seq.jsonl"
    cli(
        "goals",
        "duconv",
        "--n",
        "5",
        "--style",
        "durecdial",
        "--profiles",
        str(profiles),
        "--out",
        str(out),
        "--workdir",
        str(workdir),
    )
    goals = goals_of(out)
    assert goals and all(g["kind"] == "sequence" and g["profile"]["姓名"] == "张三" for g in goals)
    # DuConv's graph has stars and films only: sequences about the profile's star and films of theirs
    known = GoalTransitions.read_table().pairs()
    for goal in goals:
        steps = goal["sequence"]
        kinds = [s["type"] for s in steps]
        assert set(zip(kinds, kinds[1:])) <= known and kinds[-1] == "再见"
        assert {s["topic_label"] for s in steps if s["type"] in ("问答", "关于明星的聊天", "提问")} <= {star}
        assert not {"音乐推荐", "美食推荐", "新闻推荐"} & set(kinds)  # nothing in the graph to recommend
        assert goal["goal_string"].startswith("[1]" + kinds[0]) and goal["goal_string"].endswith(
            f"-->[{len(kinds)}]再见"
        )
    profiles.write_text(json.dumps({"喜欢的明星": "无此人"}, ensure_ascii=False) + "\n", encoding="utf-8")
    result = cli(
        "goals",
        "duconv",
        "--n",
        "5",
        "--style",
        "durecdial",
        "--profiles",
        str(profiles),
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert result.returncode == 1 and "无此人" in result.stderr


def test_bad_options_are_clear_errors(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    result = cli(
        "goals",
        "duconv",
        "--n",
        "5",
        "--hops",
        "2..5",
        "--out",
        str(tmp_path / "x"),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert result.returncode == 2 and "--hops" in result.stderr  # refused before anything runs
    result = cli("goals", "duconv", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "--n N and --out FILE" in result.stderr


def test_parsers_and_quotas():
    assert parse_hops("1..3") == (1, 3) and parse_hops("2") == (2, 2)
    assert _quotas({"a": 1, "b": 100, "c": 100}, 11) == {"a": 1, "b": 5, "c": 5}
    assert sum(_quotas({"a": 3, "b": 4}, 100).values()) == 7
    parsed = parse_duconv_goal([["START", "A", "B"], ["A", "r", "X"], ["B", "r", "X"]], 1)
    assert parsed.kind == "two_step"
    assert parse_duconv_goal([["A", "B"]], 1) == "goal must be a list of 3-item lists"


def test_a_ratio_the_graph_cannot_meet_is_a_warning_with_the_reason(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    result = cli(
        "goals", "duconv", "--n", "300", "--out", str(tmp_path / "g.jsonl"), "--workdir", str(workdir), "--json"
    )
    report = json.loads(result.stdout)
    assert report["kinds"] == {"one_step": 118, "two_step": 182}
    reason = (
        "118 one-step goals where --one-step-ratio 0.5 asks for 150: the graph of 'duconv' has only 118 "
        f"distinct topic pairs linked by an entity-valued fact (both topics with {MIN_TOPIC_FACTS}+ facts), "
        "so 182 two-step goals fill the rest"
    )
    assert report["shortfall"] == [reason]
    assert f"warning: {reason}" in " ".join(result.stderr.split())


def test_a_ratio_the_graph_meets_says_nothing(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    result = cli(
        "goals", "duconv", "--n", "100", "--out", str(tmp_path / "g.jsonl"), "--workdir", str(workdir), "--json"
    )
    assert json.loads(result.stdout)["shortfall"] == [] and "warning" not in result.stderr


def test_ratio_one_asks_for_one_step_goals_only_and_says_how_many_it_found(cli, duconv_kg, tmp_path):
    workdir, _ = duconv_kg
    result = cli(
        "goals",
        "duconv",
        "--n",
        "200",
        "--one-step-ratio",
        "1",
        "--out",
        str(tmp_path / "g.jsonl"),
        "--workdir",
        str(workdir),
        "--json",
    )
    report = json.loads(result.stdout)
    assert report["kinds"] == {"one_step": 118}  # not filled up with two-step goals nobody asked for
    assert report["shortfall"][-1] == "wrote 118 of the 200 goals asked for"


BOOKS = """id,name,type,author,year,genre
http://example.org/b1,The Fog City,book,Lin Qiu,1999,mystery|noir
http://example.org/p1,Lin Qiu,person,,,
"""


@pytest.mark.parametrize("ratio", ["0.5", "1"])
def test_the_readme_books_example_says_why_it_has_no_goals(cli, tmp_path, ratio):
    (tmp_path / "books.csv").write_text(BOOKS, encoding="utf-8")
    for step in (
        ["init", "books", "--from", "books.csv"],
        ["build", "books", "--source", "csv:books.csv"],
        ["derive", "books"],
    ):
        cli(*step, cwd=tmp_path)
    result = cli(
        "goals", "books", "--n", "10", "--one-step-ratio", ratio, "--out", "g.jsonl", cwd=tmp_path, check=False
    )
    assert result.returncode == 1
    said = " ".join(result.stderr.split())
    assert (
        f"a goal needs two topics, each taking part in {MIN_TOPIC_FACTS} facts or more (every DuConv topic has 4 "
        "or more), and 1 entity of 'books' does (the two best-connected take part in 4, 1)"
    ) in said
    assert "derive" not in said
    assert not (tmp_path / "g.jsonl").exists()  # no empty file passing for a result


def test_a_plugin_style_registers_its_summary_and_distinct_words_as_its_attributes():
    """What a room registers beside its style (``summary=``, ``distinct=``), a plug-in's function carries."""

    def style(graph, options, profiles):
        return []

    style.distinct = "triple of topics"
    style.summary = lambda graph, options, goals: None
    entry = STYLES.plugin("mine", style)
    assert entry.obj is style and entry.meta == {"summary": style.summary, "distinct": "triple of topics"}
    assert STYLES.plugin("plain", lambda graph, options, profiles: []).meta == {}
    with pytest.raises(KgforgeError, match="not a function"):
        STYLES.plugin("bad", "durecdial")
