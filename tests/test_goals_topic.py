"""`kgforge goals --topic NAME`: goals whose first topic is the entity named, in every style (issue 50, item 10);
a name is a label, an alternative label or an IRI, and one that names nothing, several entities or an entity
that cannot open a goal is one line saying what to give instead."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge.goals.graph import GoalGraph
from kgforge.store.snapshot import Snapshot
from tests.dialogue_kg import duconv_sample_kg

NAMESAKES = """@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix r: <https://kgforge.org/relation/> .
<http://ex.org/singer> rdfs:label "李娜"@zh ; r:domain "明星" ; r:representative_work <http://ex.org/song> ;
  r:country "中国" ; r:occupation "歌手" .
<http://ex.org/player> rdfs:label "李娜"@zh ; r:domain "明星" ; r:representative_work <http://ex.org/film> ;
  r:country "中国" ; r:occupation "网球运动员" .
<http://ex.org/song> rdfs:label "青藏高原"@zh ; r:domain "电影" ; r:country "中国" ; r:director <http://ex.org/singer> .
<http://ex.org/film> rdfs:label "独自上场"@zh ; r:domain "电影" ; r:country "中国" ; r:director <http://ex.org/player> .
"""


@pytest.fixture(scope="module")
def duconv(tmp_path_factory) -> tuple[Path, GoalGraph]:
    workdir, _ = duconv_sample_kg(tmp_path_factory)
    return workdir, GoalGraph.load(Snapshot.open("duconv", workdir))


def goals_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def best_connected(graph: GoalGraph, kind: str) -> str:
    """The entity of type ``kind`` linked to the most other topics (a star with films to talk about)."""
    edges = graph.topic_edges()
    counts: dict[str, int] = {}
    for s, _, o in edges.iter_rows():
        for end in (s, o):
            if graph.topic_types.get(end) == kind:
                counts[end] = counts.get(end, 0) + 1
    return max(sorted(counts), key=lambda iri: counts[iri])


@pytest.mark.parametrize("style", ["duconv", "kdconv", "durecdial"])
def test_every_goal_opens_with_the_topic_named(cli, duconv, tmp_path, style):
    workdir, graph = duconv
    star = best_connected(graph, "star")
    out = tmp_path / "goals.jsonl"
    args = ["goals", "duconv", "--n", "6", "--style", style, "--out", str(out), "--workdir", str(workdir), "--json"]
    report = json.loads(cli(*args, "--topic", graph.label(star)).stdout)
    goals = goals_of(out)
    assert report["topics"] == {graph.label(star): star} and report["goals"] == len(goals) > 0
    assert {goal["topics"][0] for goal in goals} == {star}
    if style == "durecdial":  # its first goal with a topic is about the star (问答, 关于明星的聊天, …)
        assert all(next(s["topic"] for s in goal["sequence"] if s["topic"]) == star for goal in goals)
    if len(goals) < 6:  # the star opens fewer distinct goals: said, with why
        assert any("opening with" in note for note in report["shortfall"])
    by_iri = json.loads(cli(*args, "--topic", star).stdout)
    assert by_iri["topics"] == {star: star} and goals_of(out) == goals  # the same goals, named by IRI


def test_several_topics_each_open_goals(cli, duconv, tmp_path):
    workdir, graph = duconv
    star, film = best_connected(graph, "star"), best_connected(graph, "film")
    out = tmp_path / "goals.jsonl"
    args = ["goals", "duconv", "--n", "8", "--one-step-ratio", "1", "--out", str(out), "--workdir", str(workdir)]
    cli(*args, "--topic", graph.label(star), "--topic", graph.label(film))
    assert {goal["topics"][0] for goal in goals_of(out)} == {star, film}


def test_a_name_that_is_unknown_or_cannot_open_a_goal_is_one_line(cli, duconv, tmp_path):
    workdir, graph = duconv
    star = graph.label(best_connected(graph, "star"))
    args = ["goals", "duconv", "--n", "3", "--out", str(tmp_path / "g.jsonl"), "--workdir", str(workdir)]
    typo = cli(*args, "--topic", star + "X", check=False)
    assert typo.returncode == 1 and typo.stderr.count("\n") == 1
    assert "no entity of 'duconv' is named" in typo.stderr and f"did you mean {star}" in typo.stderr
    lonely = next(i for i in sorted(graph.labels) if i not in graph.talked_about and "/entity/" in i)
    few = cli(*args, "--topic", lonely, check=False)
    assert few.returncode == 1 and "cannot open a goal: it takes part in" in few.stderr
    profile = tmp_path / "p.jsonl"
    profile.write_text(json.dumps({"喜欢的明星": star}, ensure_ascii=False) + "\n", encoding="utf-8")
    both = cli(*args, "--style", "durecdial", "--profiles", str(profile), "--topic", star, check=False)
    assert both.returncode == 1 and "--profiles already choose" in both.stderr
    assert not (tmp_path / "g.jsonl").exists()


def test_a_name_two_entities_share_is_refused_with_their_iris(cli, tmp_path):
    (tmp_path / "namesakes.ttl").write_text(NAMESAKES, encoding="utf-8")
    workdir = tmp_path / "kg"
    cli("build", "film", "--source", f"rdf:{tmp_path / 'namesakes.ttl'}", "--workdir", str(workdir))
    out = tmp_path / "g.jsonl"
    args = ["goals", "film", "--n", "2", "--one-step-ratio", "1", "--out", str(out), "--workdir", str(workdir)]
    shared = cli(*args, "--topic", "李娜", check=False)
    assert shared.returncode == 1 and shared.stderr.count("\n") == 1
    assert "names 2 entities: http://ex.org/player (star), http://ex.org/singer (star); give one by its IRI" in (
        shared.stderr
    )
    cli(*args, "--topic", "http://ex.org/player")
    assert [goal["topics"] for goal in goals_of(out)] == [["http://ex.org/player", "http://ex.org/film"]]
