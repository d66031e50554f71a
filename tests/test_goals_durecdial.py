"""`kgforge goals --style durecdial` on a graph built from DuRecDial's own sessions: goal sequences whose
type transitions all occur in the real sessions, a profile and a situation each, zh and en; the transition
table is what its script computes; the exports pass the DuRecDial layouts' checks."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.datasets.durecdial.goal_types import GOAL_TYPES_EN, SHIPPED_TABLE, GoalTransitions, session_goal_types
from kgforge.datasets.durecdial.sequences import goal_string
from tests.conftest import build_travel, run_cli, shared_file

RESOURCE_DEV = "durecdial/lic2020_baseline_resource_dev.txt"
ACL_EXAMPLE = "durecdial/acl2020_readme_example.json"
ROOT = Path(__file__).resolve().parent.parent


def real_sequences() -> list[list[str]]:
    """The goal types of each shared DuRecDial session, read here without kgforge: the resource file's
    per-turn goal lists (runs of one type count once, segmentation spaces out) and the ACL 2020 example's
    ``goals`` string (its ``poi推荐`` is the resource files' 兴趣点推荐)."""
    sequences = []
    for line in shared_file(RESOURCE_DEV).read_text(encoding="utf-8").splitlines():
        types = ["".join(turn[0].split()) for turn in json.loads(line)["goal"]]
        sequences.append([t for i, t in enumerate(types) if i == 0 or types[i - 1] != t])
    goals = json.loads(shared_file(ACL_EXAMPLE).read_text(encoding="utf-8"))["goals"]
    sequences.append(
        [re.match(r"\[\d+\]([^(]*)", part).group(1).replace("poi推荐", "兴趣点推荐") for part in goals.split("-->")]
    )
    return sequences


def transitions_of(sequences: list[list[str]]) -> Counter:
    return Counter(pair for seq in sequences for pair in zip(seq, seq[1:]))


@pytest.fixture(scope="module")
def durecdial_kg(tmp_path_factory):
    workdir = tmp_path_factory.mktemp("durecdial")
    run_cli(
        "build", "durecdial", "--source", f"durecdial:{shared_file(RESOURCE_DEV)}", "--workdir", str(workdir), "--json"
    )
    out = workdir / "goals.jsonl"
    result = run_cli(
        "goals",
        "durecdial",
        "--style",
        "durecdial",
        "--n",
        "200",
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        "--json",
    )
    return workdir, out, json.loads(result.stdout), result.stderr


def goals_of(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_200_sequences_on_the_durecdial_graph_move_as_the_real_sessions_do(durecdial_kg):
    _, out, report, _ = durecdial_kg
    goals = goals_of(out)
    assert report["goals"] == len(goals) == 200 and len({g["goal_id"] for g in goals}) == 200
    real = real_sequences()
    real_pairs, real_starts = set(transitions_of(real)), {seq[0] for seq in real}
    types = Counter()
    for goal in goals:
        kinds = [step["type"] for step in goal["sequence"]]
        types.update(kinds)
        assert kinds[0] in real_starts and kinds[-1] == "再见" and kinds.count("再见") == 1
        assert set(zip(kinds, kinds[1:])) <= real_pairs, kinds
        assert any(step["topic"] for step in goal["sequence"])  # something to ground the dialogue in
        assert goal["profile"]["姓名"] and goal["profile"]["性别"] in ("男", "女") and goal["profile_en"]["name"]
        situation = goal["situation"]
        assert situation["text"].startswith(f"聊天时间:{situation['date']} {situation['time']}，{situation['place']}")
        assert (situation["topic"] is not None) == (kinds[0] == "寒暄")  # DuRecDial: a chat topic only with 寒暄
        assert situation["en"]["text"].startswith("Chat time: ")
    assert len(types) >= 6 and dict(types) == report["goal_types"]
    assert set(types) <= set(GOAL_TYPES_EN)


def test_topics_follow_the_goals_and_recommendations_are_accepted_or_turned_down(durecdial_kg):
    workdir, out, _, _ = durecdial_kg
    from kgforge.goals.graph import GoalGraph
    from kgforge.store.snapshot import Snapshot

    graph = GoalGraph.load(Snapshot.open("durecdial", workdir))
    wanted = {
        "问答": "star",
        "关于明星的聊天": "star",
        "提问": "star",
        "电影推荐": "film",
        "音乐推荐": "song",
        "播放音乐": "song",
        "音乐点播": "song",
        "美食推荐": "food",
        "兴趣点推荐": "poi",
    }
    rejected = 0
    for goal in goals_of(out):
        steps = goal["sequence"]
        stars = {s["topic"] for s in steps if wanted.get(s["type"]) == "star"}
        assert len(stars) <= 1  # one star per dialogue
        for i, step in enumerate(steps):
            if step["type"] in wanted:
                assert graph.topic_types[step["topic"]] == wanted[step["type"]]
            if step["type"] == "播放音乐":
                assert step["topic"] == steps[i - 1]["topic"]  # the song just recommended
            for refused in step["rejected"]:
                rejected += 1
                assert refused["topic"] != step["topic"] and step["accepted"] is True
                assert graph.topic_types[refused["topic"]] == graph.topic_types[step["topic"]]
                key = {"film": "没有接受的电影", "song": "没有接受的音乐"}.get(graph.topic_types[step["topic"]])
                if key:
                    assert refused["topic_label"] in goal["profile"][key]
        linked = {(p["s"], p["o"]) for p in goal["path"]}
        for a, b in zip(steps, steps[1:]):
            if (wanted.get(a["type"]), wanted.get(b["type"])) in (("star", "film"), ("star", "song")):
                assert (a["topic"], b["topic"]) in linked  # the film is the star's, by a fact of the graph
    assert rejected > 0


def test_english_fields_fall_back_to_chinese_and_say_so(durecdial_kg):
    _, out, report, stderr = durecdial_kg
    goal = goals_of(out)[0]
    named = [s for s in goal["sequence"] if s["topic"]]
    assert all(s["topic_label_en"] == s["topic_label"] for s in named)  # the DuRecDial graph has no English labels
    assert {s["topic_label"] for s in named} <= set(goal["lang_fallback"]["en"])
    assert all(s["type_en"] == GOAL_TYPES_EN[s["type"]] for s in goal["sequence"])
    assert goal["goal_string_en"].startswith("[1]" + goal["sequence"][0]["type_en"])
    assert report["english_fallback_goals"] == 200 and "without an English label" in stderr


def test_types_not_drawn_are_named(durecdial_kg):
    _, _, report, stderr = durecdial_kg
    for kind in report["goal_types_not_drawn"]:
        assert f"goal type {kind} not drawn" in stderr
    # the sessions' topicless chains: 寒暄 → 问User姓名 → … → 问User爱好 → 再见 and 问时间 → 天气信息推送 → 再见
    assert set(report["goal_types_not_drawn"]) == {
        "问User姓名",
        "问User性别",
        "问User年龄",
        "问User爱好",
        "问时间",
        "天气信息推送",
    }
    assert all("without a topic" in why for why in report["goal_types_not_drawn"].values())
    assert set(report["goal_types"]) | set(report["goal_types_not_drawn"]) == set(GoalTransitions.read_table().types)


def test_same_seed_same_goals(durecdial_kg, tmp_path):
    workdir, out, _, _ = durecdial_kg
    again, other = tmp_path / "again.jsonl", tmp_path / "other.jsonl"
    for path, seed in ((again, "0"), (other, "1")):
        run_cli(
            "goals",
            "durecdial",
            "--style",
            "durecdial",
            "--n",
            "200",
            "--seed",
            seed,
            "--out",
            str(path),
            "--workdir",
            str(workdir),
        )
    assert again.read_bytes() == out.read_bytes() and other.read_bytes() != out.read_bytes()


def test_the_shipped_table_is_what_its_script_counts_from_the_shared_sessions():
    files = [shared_file(RESOURCE_DEV), shared_file(ACL_EXAMPLE)]
    result = subprocess.run(
        [sys.executable, "scripts/durecdial_goal_transitions.py", "--check", *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    table = GoalTransitions.read_table()
    real = real_sequences()
    assert table.counts == dict(transitions_of(real)) and table.starts == dict(Counter(s[0] for s in real))
    assert table.sessions == 101 and len(table.types) == 21 == len(GOAL_TYPES_EN)
    text = SHIPPED_TABLE.read_text(encoding="utf-8")
    assert all(line.startswith("#") or line.count("\t") == 2 for line in text.splitlines())  # names and counts only


def test_transitions_counted_from_given_sessions(durecdial_kg, tmp_path):
    workdir, _, _, _ = durecdial_kg
    out = tmp_path / "acl.jsonl"
    result = run_cli(
        "goals",
        "durecdial",
        "--style",
        "durecdial",
        "--n",
        "5",
        "--transitions",
        str(shared_file(ACL_EXAMPLE)),
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        "--json",
    )
    assert json.loads(result.stdout)["transitions_from"][0].startswith("acl2020_readme_example.json sha256:")
    for goal in goals_of(out):  # the one session: 问天气 → 美食推荐 → poi推荐 → 再见
        assert [s["type"] for s in goal["sequence"]] == ["问天气", "美食推荐", "兴趣点推荐", "再见"]
        food, poi = goal["sequence"][1]["topic"], goal["sequence"][2]["topic"]
        assert {(p["s"], p["labels"][1], p["o"]) for p in goal["path"]} >= {(poi, "特色菜", food)}


def test_profiles_given_name_the_star(durecdial_kg, tmp_path):
    workdir, out, _, _ = durecdial_kg
    star = next(s["topic_label"] for g in goals_of(out) for s in g["sequence"] if s["type"] == "关于明星的聊天")
    profiles = tmp_path / "profiles.jsonl"
    profiles.write_text(
        json.dumps({"user_profile": {"姓名": "张三", "喜欢的明星": " " + star}}, ensure_ascii=False)
        + "\n"
        + json.dumps({"喜欢的明星": "无此人"}, ensure_ascii=False)
        + "\n",
        encoding="utf-8",
    )
    mine = tmp_path / "mine.jsonl"
    result = run_cli(
        "goals", "durecdial", "--n", "5", "--profiles", str(profiles), "--out", str(mine), "--workdir", str(workdir)
    )
    assert "profile(s) 2: like no star of the graph" in result.stderr  # passed over, and said so
    goals = goals_of(mine)
    assert goals and all(g["profile"] == {"姓名": "张三", "喜欢的明星": " " + star} for g in goals)
    for goal in goals:
        assert {s["topic_label"] for s in goal["sequence"] if s["type"] in ("问答", "关于明星的聊天")} <= {star}
    film = next(
        g["path"][0]["labels"]
        for g in goals_of(out)
        for s in g["sequence"]
        if s["type"] == "电影推荐" and g["path"] and g["path"][0]["labels"][1] == "主演"
    )
    profiles.write_text(json.dumps({"喜欢的电影": film[2]}, ensure_ascii=False) + "\n", encoding="utf-8")
    run_cli(
        "goals", "durecdial", "--n", "3", "--profiles", str(profiles), "--out", str(mine), "--workdir", str(workdir)
    )
    from kgforge.goals.graph import GoalGraph
    from kgforge.store.snapshot import Snapshot

    graph = GoalGraph.load(Snapshot.open("durecdial", workdir))
    in_film = {graph.label(s) for s, p, o in graph.topic_edges().iter_rows() if graph.label(o) == film[2]}
    stars = {s["topic_label"] for g in goals_of(mine) for s in g["sequence"] if s["type"] in ("问答", "关于明星的聊天")}
    assert len(stars) <= 1 and stars <= in_film and all(g["profile"] == {"喜欢的电影": film[2]} for g in goals_of(mine))
    profiles.write_text(json.dumps({"喜欢的明星": "无此人"}, ensure_ascii=False) + "\n", encoding="utf-8")
    result = run_cli(
        "goals",
        "durecdial",
        "--n",
        "5",
        "--profiles",
        str(profiles),
        "--out",
        str(mine),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert result.returncode == 1 and "无此人" in result.stderr


@pytest.mark.parametrize("layout", ["lic2020-sample", "resource-sample"])
def test_the_sequences_export_in_durecdials_sample_layouts(durecdial_kg, tmp_path, layout):
    workdir, out, _, _ = durecdial_kg
    target = tmp_path / f"{layout}.txt"
    report = json.loads(
        run_cli(
            "export",
            "durecdial",
            "--goals",
            str(out),
            "--format",
            "durecdial",
            "--layout",
            layout,
            "--out",
            str(target),
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    records = [json.loads(line) for line in target.read_text(encoding="utf-8").splitlines()]
    assert report["dialogues"] == len(records) == 200
    goals = goals_of(out)
    if layout == "lic2020-sample":  # the goal planner reads '[1] first --> ...... --> [n] final'
        assert all(r["goal"].startswith("[1] ") and " --> ...... --> " in r["goal"] for r in records)
        assert records[0]["user_profile"] == goals[0]["profile"]
        assert records[0]["situation"].replace(" ", "") == goals[0]["situation"]["text"].replace(" ", "")
    else:  # one [type, "", ""] per goal, as the resource files segment the types (兴趣点 推荐)
        assert ["".join(g[0].split()) for g in records[0]["goal"]] == [s["type"] for s in goals[0]["sequence"]]
        written = {g[0].strip() for r in records for g in r["goal"]}
        assert "兴趣点 推荐" in written and "兴趣 点 推荐" not in written
        assert all("".join(g[0].split()) in GOAL_TYPES_EN for r in records for g in r["goal"])
        assert records[0]["history"][0] == goals[0]["profile"]["姓名"]


@given(st.lists(st.sampled_from(sorted(GOAL_TYPES_EN)), min_size=1, max_size=8))
def test_goal_strings_read_back_as_their_types(kinds):
    steps = [
        {
            "type": k,
            "type_en": GOAL_TYPES_EN[k],
            "topic_label": "周迅" if i % 2 else None,
            "topic_label_en": None,
            "rejected": [],
        }
        for i, k in enumerate(kinds)
    ]
    runs = [k for i, k in enumerate(kinds) if i == 0 or kinds[i - 1] != k]
    assert session_goal_types({"goal": goal_string(steps)}) == runs
    assert session_goal_types({"goal": [[f" {k} ", "", ""] for k in kinds]}) == runs


def test_english_labels_of_the_graph_fill_the_english_fields(tmp_path):
    from kgforge.core.vocab import entity_iri

    stars = sorted(
        {
            "".join(t[0].split())
            for line in shared_file(RESOURCE_DEV).read_text(encoding="utf-8").splitlines()
            for t in json.loads(line)["knowledge"]
            if len(t) == 3 and t[1].strip() in ("主演", "演唱")
        }
    )
    labels = tmp_path / "en.nt"  # an English label for every star, none for films, songs or food
    labels.write_text(
        "".join(
            f'<{entity_iri(s)}> <http://www.w3.org/2000/01/rdf-schema#label> "Star {i}"@en .\n'
            for i, s in enumerate(stars)
        ),
        encoding="utf-8",
    )
    workdir, out = tmp_path / "kg", tmp_path / "goals.jsonl"
    run_cli(
        "build",
        "durecdial",
        "--source",
        f"durecdial:{shared_file(RESOURCE_DEV)}",
        "--source",
        f"rdf:{labels}",
        "--workdir",
        str(workdir),
    )
    run_cli("goals", "durecdial", "--n", "60", "--style", "durecdial", "--out", str(out), "--workdir", str(workdir))
    english = {s: f"Star {i}" for i, s in enumerate(stars)}
    seen = 0
    for goal in goals_of(out):
        for step in goal["sequence"]:
            if step["type"] in ("问答", "关于明星的聊天", "提问", "新闻推荐", "新闻点播"):  # about a star
                seen += 1
                assert step["topic_label_en"] == english[step["topic_label"]]
                assert step["topic_label"] not in goal["lang_fallback"]["en"]
                assert f"『{step['topic_label_en']}』" in goal["goal_string_en"]
                assert goal["profile_en"]["liked stars"] == step["topic_label_en"]
            elif step["topic"]:
                assert step["topic_label"] in goal["lang_fallback"]["en"]
    assert seen > 0


def test_bad_transition_tables_and_templates_are_one_line_errors(durecdial_kg, tmp_path):
    workdir, _, _, _ = durecdial_kg
    table, template = tmp_path / "t.tsv", tmp_path / "p.toml"
    table.write_text("from\tto\tcount\n<start>\t问答\tmany\n", encoding="utf-8")
    template.write_text("surnames = [['王', 'Wang']]\n", encoding="utf-8")
    for option, path, message in (
        ("--transitions", table, f"{table}:2: expected 'from<TAB>to<TAB>count'"),
        ("--profile-template", template, "profile template lacks given_names"),
    ):
        result = run_cli(
            "goals",
            "durecdial",
            "--style",
            "durecdial",
            "--n",
            "3",
            option,
            str(path),
            "--out",
            str(tmp_path / "x.jsonl"),
            "--workdir",
            str(workdir),
            check=False,
        )
        assert result.returncode == 1 and message in result.stderr and "Traceback" not in result.stderr


def test_a_small_graph_gives_what_it_has_and_says_so(tmp_path):
    session = {
        "goal": "[1]问答(『周迅』)-->[2]再见",
        "user_profile": {},
        "situation": "",
        "conversation": ["[1]x", "[2]y"],
        "knowledge": [
            ["周迅", "主演", "苏州河"],
            ["周迅", "星座", "天秤座"],
            ["周迅", "血型", "A"],
            ["苏州河", "评分", "8"],
            ["苏州河", "类型", "爱情"],
        ],
    }
    source, workdir, out = tmp_path / "one.txt", tmp_path / "kg", tmp_path / "goals.jsonl"
    source.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    run_cli("build", "durecdial", "--source", f"durecdial:{source}", "--workdir", str(workdir))
    result = run_cli(
        "goals",
        "durecdial",
        "--style",
        "durecdial",
        "--n",
        "50",
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        "--json",
    )
    report, goals = json.loads(result.stdout), goals_of(out)
    assert 0 < report["goals"] == len(goals) < 50 and f"wrote {len(goals)} of the 50 goals" in result.stderr
    assert {s["topic_label"] for g in goals for s in g["sequence"]} <= {"周迅", "苏州河", None}
    assert "音乐推荐" in report["goal_types_not_drawn"] and "no song linked to a star" in result.stderr


@given(st.lists(st.lists(st.sampled_from(sorted(GOAL_TYPES_EN)), min_size=1, max_size=8), min_size=1, max_size=12))
def test_transition_tables_count_what_the_sessions_do_and_read_back(sequences):
    import tempfile

    with tempfile.TemporaryDirectory() as folder:
        sessions, table = Path(folder) / "s.jsonl", Path(folder) / "t.tsv"
        sessions.write_text(
            "".join(
                json.dumps({"goal": "-->".join(f"[{i}]{k}(x)" for i, k in enumerate(seq, 1))}, ensure_ascii=False)
                + "\n"
                for seq in sequences
            ),
            encoding="utf-8",
        )
        counted = GoalTransitions.from_sessions([sessions])
        table.write_text(counted.table_text(), encoding="utf-8")
        again = GoalTransitions.read_table(table)
    runs = [[k for i, k in enumerate(seq) if i == 0 or seq[i - 1] != k] for seq in sequences]
    assert counted.counts == again.counts == dict(transitions_of(runs))
    assert counted.starts == again.starts == dict(Counter(r[0] for r in runs))
    assert again.sessions == len(sequences)


def test_a_graph_without_durecdials_kinds_of_topic_is_refused_naming_them(tmp_path):
    workdir = tmp_path / "kg"  # KdConv travel: attractions only, which DuRecDial recommends only after a food
    build_travel(workdir)
    result = run_cli(
        "goals",
        "travel",
        "--style",
        "durecdial",
        "--n",
        "5",
        "--out",
        str(tmp_path / "g.jsonl"),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert result.returncode == 1 and "no DuRecDial sequence could be drawn from 'travel'" in result.stderr
    assert "美食推荐 (no typed food)" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "g.jsonl").exists()


def test_weather_questions_bring_the_weather_report_and_its_date_and_city(durecdial_kg):
    _, out, _, _ = durecdial_kg
    asked = 0
    for goal in goals_of(out):
        kinds = [s["type"] for s in goal["sequence"]]
        reports = [p for p in goal["path"] if re.fullmatch(r"\d{4}-\d{1,2}-\d{1,2}", p["labels"][1])]
        assert bool(reports) == ("问天气" in kinds)
        if not reports:
            continue
        asked += 1
        city, date, weather = reports[0]["labels"]
        assert goal["situation"]["date"] == "-".join(f"{int(x):02d}" if i else x for i, x in enumerate(date.split("-")))
        assert goal["profile"]["居住地"] == city
        for suits in (p for p in goal["path"] if p["labels"][1] in ("适合吃", "适合听")):
            assert suits["labels"][0] == weather  # what suits this weather, as the sessions recommend it
            assert suits["labels"][2] in {s["topic_label"] for s in goal["sequence"]}
    assert asked > 0
