"""Many systems in one `kgforge eval` run: the leaderboard (JSON, CSV, Markdown), and human scores in MSDE's
nested shape with three annotators — agreement (statsmodels' Fleiss' kappa, the krippendorff package's alpha)
and turn- and system-level Pearson, Spearman and Kendall, each recomputed here with scipy."""

from __future__ import annotations

import csv
import json
import random

import krippendorff
import numpy as np
import polars as pl
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from kgforge.evaluation import EvalOptions, evaluate, evaluate_systems

WORDS = ["我", "喜欢", "这部", "电影", "他", "是", "导演", "一位", "演员", "好", "的", "吧", "看", "去"]
ASPECTS = ["丰富度（Info.）", "连贯性（Coh.）", "知识准确性（Konw.）"]
SYSTEMS = {"good": 0.9, "fair": 0.6, "poor": 0.25}
SIZE = 15


def make_systems(tmp_path):
    rng = random.Random(5)
    golds = [[rng.choice(WORDS) for _ in range(rng.randint(3, 9))] for _ in range(SIZE)]
    (tmp_path / "gold.txt").write_text("".join(" ".join(g) + "\n" for g in golds), encoding="utf-8")
    files = {}
    for name, keep in SYSTEMS.items():
        preds = [[w if rng.random() < keep else rng.choice(WORDS) for w in g] for g in golds]
        files[name] = tmp_path / f"{name}.txt"
        files[name].write_text("".join(" ".join(p) + "\n" for p in preds), encoding="utf-8")
    return files


def msde_human(tmp_path, rng_seed=9):
    """MSDE's released shape, one record per response, three annotators as an 'annotator' field."""
    rng = random.Random(rng_seed)
    records = []
    for name, keep in SYSTEMS.items():
        for i in range(SIZE):
            base = 2 if keep > 0.8 else 1 if keep > 0.5 else 0
            for annotator in ("A", "B", "C"):
                scores = {aspect: min(2, max(0, base + rng.choice([-1, 0, 0, 1]))) for aspect in ASPECTS}
                records.append({"system": name, "response": f"回复 {i}", "annotator": annotator, "scores": scores})
    path = tmp_path / "human.jsonl"
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path, records


@pytest.mark.slow  # many systems scored with every model-free metric
def test_leaderboard_and_msde_human_scores(cli, tmp_path):
    files = make_systems(tmp_path)
    human, records = msde_human(tmp_path)
    out = tmp_path / "board"
    args = [
        "eval",
        "--gold",
        str(tmp_path / "gold.txt"),
        "--human",
        str(human),
        "--leaderboard",
        str(out),
        "--metrics",
        "bleu1,f1,distinct2,cider",
        "--bootstrap",
        "200",
        "--json",
    ]
    for name, path in files.items():
        args += ["--system", f"{name}={path}"]
    report = json.loads(cli(*args).stdout)
    # every system's numbers are what `eval` alone gives for it
    for name, path in files.items():
        alone = evaluate(
            path, gold=tmp_path / "gold.txt", options=EvalOptions(metrics=("bleu1", "f1", "distinct2", "cider"))
        )
        row = next(r for r in report["leaderboard"] if r["system"] == name)
        for metric in ("bleu1", "f1", "distinct2", "cider"):
            assert row[metric] == pytest.approx(alone.metrics[metric], abs=1e-12)
    # the three files
    board = json.loads((out / "leaderboard.json").read_text(encoding="utf-8"))
    assert {r["system"] for r in board["leaderboard"]} == set(SYSTEMS)
    with open(out / "leaderboard.csv", encoding="utf-8") as handle:
        cells = {(r["system"], r["metric"]): float(r["value"]) for r in csv.DictReader(handle) if r["value"]}
    assert cells["good", "bleu1"] == pytest.approx(
        next(r for r in report["leaderboard"] if r["system"] == "good")["bleu1"]
    )
    table = (out / "leaderboard.md").read_text(encoding="utf-8")
    assert "| system | bleu1 |" in table and "| good |" in table.replace("**", "")
    # human scores read without conversion: the nested aspects and the annotators
    assert report["human"]["aspects"] == ASPECTS and report["human"]["annotators"] == 3
    assert report["human"]["matched_by"] == "order" and "response" in report["human"]["not_scores"]
    # agreement, independently with statsmodels and krippendorff
    for aspect in ASPECTS:
        matrix = np.array(
            [
                [r["scores"][aspect] for r in records if r["system"] == s and r["response"] == f"回复 {i}"]
                for s in SYSTEMS
                for i in range(SIZE)
            ],
            dtype=float,
        )
        found = report["agreement"][aspect]
        assert found["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(matrix)[0], method="fleiss"))
        assert found["krippendorff_alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="ordinal")
        )
        assert found["all_agree"] == pytest.approx(np.mean([len(set(row)) == 1 for row in matrix]))
    # turn-level correlations: the per-response metric against the annotators' mean, over all systems
    per_response = {
        name: evaluate(
            path, gold=tmp_path / "gold.txt", out=tmp_path / f"{name}.jsonl", options=EvalOptions(metrics=("bleu1",))
        )
        for name, path in files.items()
    }
    assert per_response
    metric = [
        json.loads(line)["bleu1"]
        for name in SYSTEMS
        for line in (tmp_path / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    rows = {(r["level"], r["metric"], r["human"]): r for r in report["correlations"]}
    for aspect in ASPECTS:
        mean = [
            np.mean([r["scores"][aspect] for r in records if r["system"] == s and r["response"] == f"回复 {i}"])
            for s in SYSTEMS
            for i in range(SIZE)
        ]
        row = rows["turn", "bleu1", aspect]
        assert row["n"] == len(SYSTEMS) * SIZE
        for name, function in (
            ("pearson", stats.pearsonr),
            ("spearman", stats.spearmanr),
            ("kendall", stats.kendalltau),
        ):
            expected = function(metric, mean)
            assert row[name] == pytest.approx(expected.statistic) and row[f"{name}_p"] == pytest.approx(expected.pvalue)
            low, high = row[f"{name}_ci"]
            assert low <= row[name] <= high
        # system level: one point per system
        corpus = [next(r for r in report["leaderboard"] if r["system"] == s)["bleu1"] for s in SYSTEMS]
        means = [np.mean([r["scores"][aspect] for r in records if r["system"] == s]) for s in SYSTEMS]
        at_systems = rows["system", "bleu1", aspect]
        assert at_systems["n"] == 3
        assert at_systems["pearson"] == pytest.approx(stats.pearsonr(corpus, means).statistic)
        assert at_systems["kendall"] == pytest.approx(stats.kendalltau(corpus, means).statistic)


def test_a_folder_of_systems_with_tasks_and_per_system_human_files(tmp_path):
    """A folder per task (its own gold), human scores as one file per system, several annotators as lists."""
    for task in ("duconv", "kdconv"):
        folder = tmp_path / "systems" / task
        folder.mkdir(parents=True)
        files = make_systems(folder)
        assert files
        humans = tmp_path / "human" / task
        humans.mkdir(parents=True)
        for name in SYSTEMS:
            (humans / f"{name}.jsonl").write_text(
                "".join(
                    json.dumps({"response": "…", "scores": {"Coh": [i % 3, (i + 1) % 3, i % 3]}}) + "\n"
                    for i in range(SIZE)
                ),
                encoding="utf-8",
            )
    from kgforge.evaluation import systems_in_folder

    systems, golds = systems_in_folder(tmp_path / "systems")
    assert set(golds) == {"duconv", "kdconv"} and len(systems) == 6
    board = evaluate_systems(
        systems,
        golds=golds,
        human=tmp_path / "human",
        options=EvalOptions(metrics=("f1",)),
        out=tmp_path / "board",
        bootstrap=0,
    )
    table = board.table()
    assert sorted(set(table["task"].to_list())) == ["duconv", "kdconv"] and table.height == 6
    assert {r["task"] for r in board.correlations} == {"duconv", "kdconv"}
    assert board.agreement["Coh"]["raters"] == 3
    assert table.filter(pl.col("system") == "good")["Coh"].to_list() == pytest.approx(
        [np.mean([np.mean([i % 3, (i + 1) % 3, i % 3]) for i in range(SIZE)])] * 2
    )


def test_human_scores_for_an_unknown_system_are_refused(cli, tmp_path):
    files = make_systems(tmp_path)
    human = tmp_path / "h.csv"
    human.write_text("system,coh\nnobody,1\n", encoding="utf-8")
    done = cli(
        "eval",
        "--gold",
        str(tmp_path / "gold.txt"),
        "--system",
        f"good={files['good']}",
        "--human",
        str(human),
        "--leaderboard",
        str(tmp_path / "b"),
        check=False,
    )
    assert done.returncode == 1 and "nobody" in done.stderr and "Traceback" not in done.stderr
    done = cli("eval", "--system", "just-a-name", check=False)
    assert done.returncode == 2 and "NAME=FILE" in done.stderr


def test_bootstrap_intervals_are_the_resampled_statistics():
    """The vectorised Pearson/Spearman resampling gives what scipy gives resample by resample."""
    from kgforge.evaluation.systems import correlate

    rng = np.random.default_rng(4)
    x = rng.normal(size=60)
    y = x + rng.normal(size=60)
    found = correlate(pl.Series(x), pl.Series(y), bootstrap=300, seed=2)
    draws = np.random.default_rng(2).integers(0, 60, size=(300, 60))
    for name, function in (("pearson", stats.pearsonr), ("spearman", stats.spearmanr), ("kendall", stats.kendalltau)):
        values = [function(x[d], y[d]).statistic for d in draws]
        assert getattr(found, f"{name}_ci") == pytest.approx(list(np.percentile(values, [2.5, 97.5])))


def test_one_system_with_msde_nested_scores(tmp_path):
    """`eval PRED --human` alone reads MSDE's nested shape too: three annotators, mean per response."""
    files = make_systems(tmp_path)
    human, records = msde_human(tmp_path)
    mine = tmp_path / "good_human.jsonl"
    mine.write_text(
        "".join(
            json.dumps({k: v for k, v in r.items() if k != "system"}, ensure_ascii=False) + "\n"
            for r in records
            if r["system"] == "good"
        ),
        encoding="utf-8",
    )
    out = tmp_path / "good.jsonl"
    report = evaluate(
        files["good"], gold=tmp_path / "gold.txt", human=mine, out=out, options=EvalOptions(metrics=("bleu1",))
    )
    assert report.human["columns"] == ASPECTS and report.human["annotators"] == 3
    values = [json.loads(line)["bleu1"] for line in out.read_text(encoding="utf-8").splitlines()]
    for aspect in ASPECTS:
        mean = [
            np.mean([r["scores"][aspect] for r in records if r["system"] == "good" and r["response"] == f"回复 {i}"])
            for i in range(SIZE)
        ]
        row = next(r for r in report.correlations if r["human"] == aspect)
        assert row["pearson"] == pytest.approx(stats.pearsonr(values, mean).statistic)
    with pytest.raises(Exception, match="several systems"):
        evaluate(files["good"], gold=tmp_path / "gold.txt", human=human, options=EvalOptions(metrics=("bleu1",)))
