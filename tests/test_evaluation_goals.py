"""`kgforge eval --goal-metrics`: dialogue-level goal metrics over whole dialogues. DuConv dev sessions with their
own gold responses as the predictions: the goal completion of a sample of dialogues, computed here by hand from
the sessions, equals the command's; shuffled responses complete fewer goals. DuRecDial LS, UTC and Rec on a
session in the competition layout, worked out by hand."""

from __future__ import annotations

import json
import random

import pytest

from kgforge.core.errors import InputError
from kgforge.evaluation.goal_metrics import judge_goals, normal

SAMPLE = 30


def bot_turns(sessions):
    return [turn for s in sessions for turn in s["conversation"][0::2]]


def by_hand(session) -> tuple[int, int]:
    """DuConv's goal completion of one session from its definition: 0 unless both goal topics (goal[0] = START,
    a, b) are mentioned by the bot; 2 when more than two distinct knowledge triples are used, else 1. A triple
    is used when its value is in a bot turn and its subject in that turn or before; 领域 is a kind, not
    knowledge; long free-text values count when 8 consecutive characters of them are said."""
    turns = session["conversation"]
    topics = session["goal"][0][1:3]
    said_by_bot = "".join(normal(t) for t in turns[0::2])
    used = set()
    for j in range(0, len(turns), 2):
        said, before = normal(turns[j]), normal("".join(turns[:j]))
        for subject, relation, value in session["knowledge"]:
            value = normal(value)
            if relation == "领域" or len(value) < 2:
                continue
            stated = value in said if len(value) <= 12 else any(value[i : i + 8] in said for i in range(len(value) - 7))
            if stated and (normal(subject) in said or normal(subject) in before):
                used.add((subject, relation, value))
    if not all(normal(t) in said_by_bot for t in topics):
        return 0, len(used)
    return (2 if len(used) > 2 else 1), len(used)


def test_duconv_goal_completion_by_hand_and_shuffled(cli, shared, tmp_path):
    path = shared("duconv/dev.head250.jsonl")
    sessions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    gold = tmp_path / "gold_as_predictions.txt"
    gold.write_text("".join(t + "\n" for t in bot_turns(sessions)), encoding="utf-8")
    report = json.loads(
        cli("eval", str(gold), "--gold", str(path), "--goal-metrics", "--metrics", "f1", "--no-out", "--json").stdout
    )["goals"]
    judged = judge_goals(path, gold)
    assert report["summary"] == judged.summary and report["summary"]["dialogues"] == len(sessions)
    for session, dialogue in list(zip(sessions, judged.dialogues, strict=True))[:SAMPLE]:
        completion, triples = by_hand(session)
        assert (dialogue.completion, dialogue.triples_used) == (completion, triples), dialogue.key
    # the first session, read by eye: 王牌 and 林志玲 both named by the bot; it says 两岸 男人 的 唯一 共识 (the
    # comment, written in Traditional characters in the knowledge), 54kg and 富春山居图: three triples
    assert judged.dialogues[0].completion == 2 and judged.dialogues[0].triples_used == 3
    distribution = report["summary"]["completion_distribution"]
    assert sum(distribution.values()) == pytest.approx(1.0)
    assert report["summary"]["goal_completion"] == pytest.approx(distribution["1"] + 2 * distribution["2"])
    expected = [by_hand(s)[0] for s in sessions]
    assert report["summary"]["goal_completion"] == pytest.approx(sum(expected) / len(expected))
    # the same responses shuffled across dialogues reach far fewer goals
    turns = bot_turns(sessions)
    random.Random(3).shuffle(turns)
    shuffled = tmp_path / "shuffled.txt"
    shuffled.write_text("".join(t + "\n" for t in turns), encoding="utf-8")
    worse = judge_goals(path, shuffled).summary
    assert worse["goal_completion"] < report["summary"]["goal_completion"] / 2
    assert worse["info_bands"]["0"] > report["summary"]["info_bands"]["0"]


def test_durecdial_leading_success_consistency_and_recommendation(tmp_path):
    session = {
        "goals": "[1]寒暄-->[2]关于明星的聊天(Bot主动，聊 『周迅』)-->[3]电影推荐(Bot主动，推荐 『无问西东』，User接受)"
        "-->[4]电影推荐(Bot推荐 『苏州河』，User拒绝)-->[5]再见",
        "goal": "[1]寒暄-->[2]关于明星的聊天(Bot主动，聊 『周迅』)-->[3]电影推荐(Bot主动，推荐 『无问西东』，User接受)"
        "-->[4]电影推荐(Bot推荐 『苏州河』，User拒绝)-->[5]再见",
        "user_profile": {"接受的电影": ["无问西东"], "没有接受的电影": ["苏州河"], "拒绝": "音乐"},
        "situation": "聊天时间:晚上20:00,在家里",  # every LIC-2020 competition session has one
        "knowledge": [["周迅", "主演", "无问西东"], ["周迅", "主演", "苏州河"], ["无问西东", "类型", "剧情"]],
        "conversation": [
            "你好",
            "你好呀",
            "你喜欢周迅吗？",
            "喜欢",
            "推荐你看周迅主演的无问西东",
            "好的",
            "还有苏州河",
            "不想看",
            "再见",
        ],
        "label": "bot",
    }
    path = tmp_path / "durecdial.jsonl"
    path.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    judged = judge_goals(path)
    assert judged.layout == "durecdial"
    dialogue = judged.dialogues[0]
    # target: the first quoted topic of the last recommendation goal, 苏州河, said in the bot's turn 6
    assert dialogue.leading_success == 1
    # the bot names 周迅, 无问西东, 苏州河; the profile rejects 苏州河: 2 of 3 consistent
    assert dialogue.user_topic_consistency == pytest.approx(2 / 3)
    # recommendations with a recorded outcome: 无问西东 accepted, 苏州河 not
    assert dialogue.recommendation_success == pytest.approx(1 / 2)
    # the bot never reaching the target: the predictions take the bot turns' place
    predictions = tmp_path / "pred.txt"
    predictions.write_text("你好\n你喜欢周迅吗？\n推荐你看无问西东\n好的\n再见\n", encoding="utf-8")
    assert judge_goals(path, predictions).dialogues[0].leading_success == 0


def test_goal_metrics_refuse_a_file_without_dialogues(cli, tmp_path):
    lines = tmp_path / "pred.txt"
    lines.write_text("一\n二\n", encoding="utf-8")
    done = cli("eval", str(lines), "--goal-metrics", "--no-out", check=False)
    assert done.returncode == 1 and "whole dialogues" in done.stderr and "Traceback" not in done.stderr


def test_kdconv_dialogues_use_their_attrs(shared):
    judged = judge_goals(shared("kdconv/travel/dev.json"))
    assert judged.summary["dialogues"] > 0 and judged.summary["triples_used"] > 1
    assert "goal_completion" in judged.left_out


def test_systems_leaderboard_carries_the_goal_metrics(cli, shared, tmp_path):
    path = shared("duconv/dev.head250.jsonl")
    sessions = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    turns = bot_turns(sessions)
    (tmp_path / "gold.txt").write_text("".join(t + "\n" for t in turns), encoding="utf-8")
    random.Random(1).shuffle(turns)
    (tmp_path / "shuffled.txt").write_text("".join(t + "\n" for t in turns), encoding="utf-8")
    report = json.loads(
        cli(
            "eval",
            "--system",
            f"gold={tmp_path / 'gold.txt'}",
            "--system",
            f"shuffled={tmp_path / 'shuffled.txt'}",
            "--gold",
            str(path),
            "--goal-metrics",
            "--metrics",
            "f1",
            "--leaderboard",
            str(tmp_path / "board"),
            "--json",
        ).stdout
    )
    rows = {r["system"]: r for r in report["leaderboard"]}
    assert rows["gold"]["goal_completion"] == pytest.approx(judge_goals(path).summary["goal_completion"])
    assert rows["shuffled"]["goal_completion"] < rows["gold"]["goal_completion"]
    assert rows["gold"]["f1"] == pytest.approx(1.0) and rows["shuffled"]["f1"] < 0.5


def _read_quest(path):
    """A layout of the test's own: JSON lines of ``turns`` (the user speaks first) and two goal ``topics``."""
    from kgforge.evaluation.inputs import Dialogue, Slots, json_objects, response_frame

    rows, dialogues = [], []
    for line, record in json_objects(path):
        for j in range(1, len(record["turns"]), 2):
            text = record["turns"][j]
            rows.append({"id": f"{line}:{j}", "line": line, "text": text, "gold": text, "dialogue": len(dialogues)})
        dialogues.append(Dialogue(str(line), record["topics"], [tuple(t) for t in record["facts"]]))
    return Slots(path, "quest", response_frame(rows), dialogues, has_gold=True)


def test_goal_metrics_judge_any_layout_registered_with_goals_and_name_no_dataset(tmp_path):
    """Goal metrics know no dataset: a layout registered with a GoalReading (as a room's evaluation part
    registers one) is judged by the context and turns it reads, goal completion where it says so, and the
    refusal names it; goal_metrics.py, goal_reading.py and inputs.py name none of the registered datasets."""
    from pathlib import Path

    from kgforge.core.datasets import DATASETS
    from kgforge.evaluation import goal_metrics, goal_reading, inputs
    from kgforge.evaluation.goal_reading import GoalContext, GoalReading, alternating
    from kgforge.evaluation.inputs import EVAL_LAYOUTS, EvalLayout, register_layout

    def context(key, record):
        return GoalContext(key, "quest", tuple(map(tuple, record["facts"])), tuple(record["topics"]), completion=True)

    reading = GoalReading(context, lambda record, bot: alternating(record["turns"], bot, 1), "Quest", "quests name two")
    register_layout("quest", EvalLayout(_read_quest, goals=reading))
    try:
        session = {
            "topics": ["长城", "故宫"],
            "facts": [["长城", "位于", "北京"], ["故宫", "建于", "明朝"], ["故宫", "别名", "紫禁城"]],
            "turns": ["去哪儿玩？", "长城在北京", "还有呢？", "故宫建于明朝，也叫紫禁城", "好"],
        }
        path = tmp_path / "quest.jsonl"
        path.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
        judged = judge_goals(path, layout="quest")
        assert judged.dialogues[0].bot_turns == 2 and judged.dialogues[0].triples_used == 3
        assert judged.dialogues[0].completion == 2 and judged.summary["goal_completion"] == 2
        predictions = tmp_path / "pred.txt"
        predictions.write_text("长城在北京\n不知道\n", encoding="utf-8")
        assert judge_goals(path, predictions, layout="quest").dialogues[0].completion == 0  # 故宫 never named
        with pytest.raises(InputError, match="Quest"):
            judge_goals(predictions, layout="lines")
    finally:
        EVAL_LAYOUTS.unregister("quest")
    assert "goal_completion" not in judged.left_out
    for module in (goal_metrics, goal_reading, inputs):  # what eval reads and judges: the rooms name themselves
        source = Path(module.__file__).read_text(encoding="utf-8").lower()
        assert not [entry.name for entry in DATASETS if entry.name.lower() in source], module.__name__
