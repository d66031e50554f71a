"""`kgforge eval` end to end: input layouts, the per-response file, human correlations, the metric registry,
and bad input refused with its file and line."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import openpyxl
import polars as pl
import pytest
from scipy import stats

from kgforge.evaluation import METRICS, EvalOptions, evaluate, register_metric
from kgforge.evaluation.inputs import read_slots
from tests.eval_oracle import run_official

PAIRS = [
    ("我 喜欢 这部 电影", "我 也 喜欢 这部 电影"),
    ("他 是 导演", "他 是 一位 演员"),
    ("空", "空 的 回复"),
    ("好", "好 的"),
    ("一起 去 看 吧", "好 啊 一起 去 看"),
]


def write_official(path: Path, pairs=PAIRS) -> Path:
    path.write_text("".join(f"{p}\t{g}\n" for p, g in pairs), encoding="utf-8")
    return path


def test_official_flag_prints_what_the_script_prints(cli, tmp_path):
    eval_file = write_official(tmp_path / "pairs.txt")
    done = cli("eval", str(eval_file), "--official", "--no-out")
    assert done.stdout == run_official(tmp_path, eval_file)


def test_layouts_give_the_same_scores(tmp_path):
    """The same responses as the official file, as lines + a gold file, as JSONL, CSV and Excel columns."""
    expected = evaluate(write_official(tmp_path / "pairs.txt")).metrics
    (tmp_path / "pred.txt").write_text("".join(p + "\n" for p, _ in PAIRS), encoding="utf-8")
    (tmp_path / "gold.txt").write_text("".join(g + "\n" for _, g in PAIRS), encoding="utf-8")
    as_lines = evaluate(
        tmp_path / "pred.txt", gold=tmp_path / "gold.txt", options=EvalOptions(segmentation="whitespace")
    )
    assert as_lines.inputs["predictions"]["layout"] == "lines" and as_lines.metrics == expected
    jsonl = tmp_path / "pred.jsonl"
    jsonl.write_text(
        "".join(
            json.dumps({"id": f"r{i}", "hyp": p, "ref": g}, ensure_ascii=False) + "\n" for i, (p, g) in enumerate(PAIRS)
        ),
        encoding="utf-8",
    )
    columns = {"prediction": "hyp", "gold": "ref"}
    assert evaluate(jsonl, options=EvalOptions(columns=columns, segmentation="whitespace")).metrics == expected
    with open(tmp_path / "pred.csv", "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "prediction", "gold"])
        writer.writerows([f"r{i}", p, g] for i, (p, g) in enumerate(PAIRS))
    assert evaluate(tmp_path / "pred.csv", options=EvalOptions(segmentation="whitespace")).metrics == expected
    book = openpyxl.Workbook()
    book.active.append(["prediction", "gold"])
    for pair in PAIRS:
        book.active.append(list(pair))
    book.save(tmp_path / "pred.xlsx")
    assert evaluate(tmp_path / "pred.xlsx", options=EvalOptions(segmentation="whitespace")).metrics == expected


def test_segmentation_is_stated_and_chosen(tmp_path):
    jsonl = tmp_path / "raw.jsonl"
    jsonl.write_text(
        json.dumps({"prediction": "我喜欢这部电影", "gold": "我也喜欢这部电影"}, ensure_ascii=False) + "\n",
        encoding="utf-8",
    )
    by_jieba = evaluate(jsonl)
    assert by_jieba.segmentation == "jieba"  # unsegmented text: the exports' segmenter
    by_char = evaluate(jsonl, options=EvalOptions(segmentation="char"))
    assert by_char.segmentation == "char"
    assert by_char.metrics["bleu1"] == pytest.approx(7 / 7 * 2.718281828459045 ** (1 - 8 / 7))  # 7 chars of 8
    assert by_jieba.metrics["f1"] == by_char.metrics["f1"]  # F1 is over characters whatever the cut


def test_per_response_file_and_human_correlations(cli, tmp_path):
    eval_file = write_official(tmp_path / "pairs.txt")
    human = tmp_path / "human.csv"
    fluency, relevance = [3, 2, 1, 2.5, 4], [5, 1, 1, 2, 3]
    with open(human, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "fluency", "relevance", "annotator"])
        # rows in another order than the responses: matched by id (the official file's line numbers)
        for i in reversed(range(len(PAIRS))):
            writer.writerow([str(i + 1), fluency[i], relevance[i], "A"])
    out = tmp_path / "scores.csv"
    report = json.loads(cli("eval", str(eval_file), "--human", str(human), "--out", str(out), "--json").stdout)
    assert report["human"]["columns"] == ["fluency", "relevance"] and report["human"]["not_scores"] == ["annotator"]
    assert report["human"]["matched_by"] == "column 'id'"
    scores = pl.read_csv(out)
    assert scores.height == len(PAIRS) and scores["id"].to_list() == [1, 2, 3, 4, 5]
    by_pair = {(row["metric"], row["human"]): row for row in report["correlations"]}
    for metric in ("f1", "bleu1", "rouge_l"):
        for column, values in (("fluency", fluency), ("relevance", relevance)):
            row = by_pair[metric, column]
            assert row["n"] == len(PAIRS)
            assert row["pearson"] == pytest.approx(stats.pearsonr(scores[metric].to_numpy(), values).statistic)
            assert row["spearman"] == pytest.approx(stats.spearmanr(scores[metric].to_numpy(), values).statistic)
            assert row["spearman_p"] == pytest.approx(stats.spearmanr(scores[metric].to_numpy(), values).pvalue)
    assert by_pair["distinct1", "fluency"]["n"] == len(PAIRS)


def test_a_registered_metric_joins_the_report(tmp_path):
    @register_metric("pred_tokens", "tokens in the prediction (a test metric)")
    def pred_tokens(batch):
        return batch.lexical.lengths["pred_len"]

    try:
        report = evaluate(write_official(tmp_path / "pairs.txt"), out=tmp_path / "scores.jsonl")
        assert report.metrics["pred_tokens"] == pytest.approx((4 + 3 + 1 + 1 + 4) / 5)
        first = json.loads((tmp_path / "scores.jsonl").read_text(encoding="utf-8").splitlines()[0])
        assert first["pred_tokens"] == 4.0
        only = evaluate(tmp_path / "pairs.txt", options=EvalOptions(metrics=("PRED_TOKENS", "f1")))
        assert list(only.metrics) == ["pred_tokens", "f1"]
    finally:
        METRICS.unregister("pred_tokens")


def test_durecdial_bot_turns(shared):
    sessions = shared("durecdial/lic2020_baseline_resource_dev.txt")
    slots = read_slots(sessions)
    assert slots.layout == "durecdial" and slots.frame.height == 770  # as the baseline's convert_session_to_sample.py
    assert not slots.frame["text"].str.contains(r"^\[\d+\]").any()  # goal markers taken off
    report = evaluate(sessions, gold=sessions)
    assert report.segmentation == "whitespace" and report.metrics["f1"] == 1.0


def test_bad_input_is_refused_with_its_place(cli, tmp_path):
    lines = tmp_path / "pred.txt"
    lines.write_text("一\n二\n", encoding="utf-8")
    gold = tmp_path / "gold.txt"
    gold.write_text("一\n二\n三\n", encoding="utf-8")
    done = cli("eval", str(lines), "--gold", str(gold), check=False)
    assert done.returncode == 1 and "has 2 responses" in done.stderr and str(gold) in done.stderr
    broken = tmp_path / "pred.jsonl"
    broken.write_text('{"prediction": "a", "gold": "a"}\n{"prediction": "b", "gold": \n', encoding="utf-8")
    done = cli("eval", str(broken), check=False)
    assert done.returncode == 1 and f"{broken}:2: malformed JSON" in done.stderr
    done = cli("eval", str(lines), "--metrics", "blue2", check=False)
    assert done.returncode == 2 and "did you mean 'bleu2'" in done.stderr
    done = cli("eval", str(lines), "--metrics", "f1", check=False)
    assert done.returncode == 1 and "no gold responses" in done.stderr
    done = cli("eval", str(lines), "--domain", "../x", check=False)
    assert done.returncode == 2


def test_official_lines_the_script_skips_are_reported(tmp_path):
    eval_file = tmp_path / "pairs.txt"
    eval_file.write_text("a b\ta b\nno tab here\n\tgold only\nx y\tx z\n", encoding="utf-8")
    report = evaluate(eval_file)
    assert report.responses == 2
    assert [s.split(":")[0] for s in report.inputs["predictions"]["skipped"]] == ["line 2", "line 3"]
