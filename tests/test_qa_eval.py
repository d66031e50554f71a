"""`kgforge qa-eval`: alias-aware scoring per turn and per conversation, by configuration."""

from __future__ import annotations

import json
import random
from pathlib import Path

import opencc
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.qa import GenerateOptions, evaluate, generate_dataset
from kgforge.qa.score import correct, normalise
from kgforge.store.snapshot import Snapshot
from tests.conftest import shared_file
from tests.qa_support import build_domain, read_turns


def gold_turn(conversation: str, config: str, number: int, *texts: str) -> dict:
    answers = [
        {"value": t, "is_entity": False, "text": t, "names": [t], "datatype": None, "lang": None, "predicate": "p"}
        for t in texts
    ]
    return {
        "id": f"{conversation}-{config}-t{number}",
        "conversation_id": f"{conversation}-{config}",
        "config": config,
        "question": "?",
        "answers": answers,
    }


def write_lines(path: Path, records: list) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


def test_a_hand_computed_file(tmp_path: Path) -> None:
    gold = [
        gold_turn("a", "text-original", 0, "電影"),
        gold_turn("a", "text-original", 1, "1952-03-11"),
        gold_turn("b", "text-original", 0, "82"),
        gold_turn("b", "voice-deixis", 0, "Paris", "London"),
    ]
    predictions = [
        {"id": gold[0]["id"], "prediction": "电影"},  # Traditional/Simplified: right
        {"id": gold[1]["id"], "prediction": "1952年3月11日"},  # a date by value: right
        {"id": gold[2]["id"], "prediction": "NA"},  # NA: wrong, counted
        {"id": gold[3]["id"], "prediction": ["Rome", "london"]},
    ]  # a list with one match: right
    report = evaluate(write_lines(tmp_path / "p.jsonl", predictions), write_lines(tmp_path / "g.jsonl", gold))
    text = report.alias["text-original"]
    # conversations a (2/2) and b (0/1): turns 2/3, conversations (1 + 0) / 2
    assert text["turn_accuracy"] == round(2 / 3, 6) and text["conversation_accuracy"] == 0.5
    assert text["na_ratio"] == round(1 / 3, 6) and text["conversations_all_correct"] == 0.5
    assert report.alias["voice-deixis"]["turn_accuracy"] == 1.0
    everything = report.alias["all"]
    assert everything["turn_accuracy"] == 0.75 and everything["na_ratio"] == 0.25
    assert everything["conversation_accuracy"] == round((1 + 0 + 1) / 3, 6)


@pytest.fixture(scope="module")
def gold_file(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("qa-eval")
    build_domain(workdir, "travel", ("kdconv", shared_file("kdconv/travel/kb_travel.json")))
    out = workdir / "gold.jsonl"
    generate_dataset(Snapshot.open("travel", workdir), out, GenerateOptions(n=8, turns=3, seed=2))
    return out


def test_gold_scores_one_and_all_na_scores_zero(gold_file: Path, tmp_path: Path) -> None:
    turns = read_turns(gold_file)
    perfect = write_lines(
        tmp_path / "gold-pred.jsonl", [{"id": t["id"], "prediction": t["answer_texts"][0]} for t in turns]
    )
    report = evaluate(perfect, gold_file)
    assert set(report.alias) == {"all", *{t["config"] for t in turns}}
    assert all(
        row["turn_accuracy"] == 1.0 and row["conversation_accuracy"] == 1.0 and row["na_ratio"] == 0.0
        for row in report.alias.values()
    )
    nothing = write_lines(tmp_path / "na.jsonl", [{"id": t["id"], "prediction": "NA"} for t in turns])
    report = evaluate(nothing, gold_file)
    assert all(row["turn_accuracy"] == 0.0 and row["na_ratio"] == 1.0 for row in report.alias.values())


def test_a_seeded_noisy_file_scores_as_counted_by_hand(gold_file: Path, tmp_path: Path) -> None:
    turns = read_turns(gold_file)
    rng = random.Random(11)
    to_traditional = opencc.OpenCC("s2t")
    predictions, expected = [], []
    for t in turns:
        roll = rng.random()
        if roll < 0.3:  # right, written differently: Traditional, full-width, a trailing full stop
            prediction, right, na = to_traditional.convert(t["answer_texts"][-1]) + "。", True, False
        elif roll < 0.5:
            prediction, right, na = "NA", False, True
        elif roll < 0.7:
            prediction, right, na = ["不是这个答案", t["answers"][0]["names"][0]], True, False
        else:
            prediction, right, na = "不是这个答案", False, False
        predictions.append({"id": t["id"], "prediction": prediction})
        expected.append((t["config"], t["conversation_id"], right, na))
    report = evaluate(write_lines(tmp_path / "noisy.jsonl", predictions), gold_file)
    for config in {"all", *{c for c, *_ in expected}}:
        rows = [e for e in expected if config in ("all", e[0])]
        per_conversation: dict[str, list[bool]] = {}
        for _, conversation, right, _ in rows:
            per_conversation.setdefault(conversation, []).append(right)
        assert report.alias[config] == {
            "turns": len(rows),
            "conversations": len(per_conversation),
            "turn_accuracy": round(sum(r for *_, r, _ in rows) / len(rows), 6),
            "conversation_accuracy": round(
                sum(sum(v) / len(v) for v in per_conversation.values()) / len(per_conversation), 6
            ),
            "conversations_all_correct": round(
                sum(all(v) for v in per_conversation.values()) / len(per_conversation), 6
            ),
            "na_ratio": round(sum(n for *_, n in rows) / len(rows), 6),
        }, config


def test_bad_prediction_lines_are_quarantined_and_the_rest_scored(gold_file: Path, tmp_path: Path) -> None:
    turns = read_turns(gold_file)
    lines = [
        json.dumps({"id": turns[0]["id"], "prediction": turns[0]["answer_texts"][0]}),
        "{not json",
        json.dumps({"id": "no-such-turn", "prediction": "x"}),
        json.dumps({"id": turns[1]["id"], "prediction": 7}),
    ]
    path = tmp_path / "p.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    report = evaluate(path, gold_file)
    assert report.predicted_turns == 1 and report.rejected_prediction_lines == 3
    rejected = [json.loads(line) for line in Path(report.rejected_file).read_text(encoding="utf-8").splitlines()]
    assert [r["location"] for r in rejected] == ["line 2", "line 3", "line 4"]
    assert "malformed JSON" in rejected[0]["reason"] and "no gold turn" in rejected[1]["reason"]
    assert report.missing_predictions == len(turns) - 1
    assert report.alias["all"]["na_ratio"] == round((len(turns) - 1) / len(turns), 6)


def test_normalisation_and_values() -> None:
    turn = {"answers": [{"value": "1.96", "text": "1.96", "names": ["1.96"]}]}
    assert correct("+1.960", turn) and not correct("196", turn)
    date = {"answers": [{"value": "1952-03-11T00:00:00Z", "text": "1952-03-11T00:00:00Z", "names": []}]}
    assert correct("11 March 1952", date) and correct("1952年03月11日", date) and not correct("1952", date)
    assert correct(
        "ＤＯＵＧＬＡＳ ａｄａｍｓ",
        {"answers": [{"value": "Q42", "text": "Douglas Adams", "names": ["Douglas Adams"]}]},
    )


@settings(deadline=None)  # OpenCC's dictionary loads on the first call
@given(st.text(max_size=30))
def test_normalise_is_idempotent_and_blind_to_case_width_and_punctuation(text: str) -> None:
    once = normalise(text)
    assert normalise(once) == once
    assert normalise(text.upper() + "!?。") == normalise(text.lower()) or not text.isascii()
