"""`kgforge eval --plot` (issue 50, items 10 and 8): the human correlation table drawn as a metric × aspect
heatmap at turn and system level, the leaderboard with bootstrap 95 % intervals, Chinese aspect names drawn with
a font that has every glyph, and figure names that carry the domain and the split so that KdConv's three
``dev.json`` never draw over each other."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pytest

from kgforge.core import plots
from kgforge.core.plots import figure_name
from kgforge.evaluation import EvalOptions, evaluate, evaluate_systems
from kgforge.evaluation.batch import Batch
from kgforge.evaluation.charts import correlation_grids, leaderboard_panels
from kgforge.evaluation.inputs import load_responses
from kgforge.evaluation.report import corpus_intervals, score
from tests.conftest import shared_file

ASPECTS = ["丰富度（Info.）", "连贯性（Coh.）", "知识准确性（Konw.）"]
QUALITY = {"exact": 2, "half": 1, "stub": 0}


def kdconv_split(tmp_path: Path, topic: str, dialogues: int = 4) -> Path:
    """``<topic>/dev.json``: the first dialogues of KdConv's own dev set of that topic."""
    data = json.loads(shared_file(f"kdconv/{topic}/dev.json").read_text(encoding="utf-8"))[:dialogues]
    path = tmp_path / topic / "dev.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def systems_for(gold: Path) -> dict[tuple[str, str], Path]:
    texts = [m["message"] for d in json.loads(gold.read_text(encoding="utf-8")) for m in d["messages"][1:]]
    cut = {"exact": lambda t: t, "half": lambda t: t[: len(t) // 2], "stub": lambda t: t[:2]}
    files = {}
    for name, change in cut.items():
        files["all", name] = gold.parent / f"{name}.txt"
        files["all", name].write_text("".join(change(t) + "\n" for t in texts), encoding="utf-8")
    return files


def human_scores(gold: Path, systems: dict[tuple[str, str], Path]) -> Path:
    """MSDE's shape, three annotators, every second response rated, around each system's quality."""
    rng = np.random.default_rng(3)
    path = gold.parent / "human.jsonl"
    responses = len(next(iter(systems.values())).read_text(encoding="utf-8").splitlines())
    with open(path, "w", encoding="utf-8") as handle:
        for _, name in systems:
            for i in range(1, responses + 1, 2):
                for annotator in "ABC":
                    scores = {a: int(np.clip(QUALITY[name] + rng.integers(-1, 2), 0, 2)) for a in ASPECTS}
                    record = {"system": name, "id": str(i), "annotator": annotator, "scores": scores}
                    handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return path


def assert_font_has(texts: list[str]) -> None:
    """The font the figures draw with is the packaged CJK one, and it has a glyph for every character."""
    from matplotlib import font_manager, rcParams
    from matplotlib.ft2font import FT2Font

    family = font_manager.FontProperties(family=list(rcParams["font.sans-serif"]))
    font = Path(font_manager.findfont(family, fallback_to_default=False))
    assert font == plots.packaged_cjk_font()
    charmap = FT2Font(str(font)).get_charmap()
    assert [c for c in "".join(texts) if not c.isspace() and ord(c) not in charmap] == []


def test_figure_names_carry_the_domain_and_the_split(tmp_path):
    assert figure_name(tmp_path / "kdconv" / "film" / "dev.json") == "film-dev"
    assert figure_name(tmp_path / "kdconv" / "travel" / "dev.json", "travel") == "travel-dev"
    assert figure_name(tmp_path / "music" / "dev.json", "kdconv-music") == "kdconv-music-music-dev"


@pytest.mark.slow  # two leaderboards drawn with matplotlib (about 5 s)
def test_eval_plot_draws_the_heatmaps_and_the_leaderboard(tmp_path):
    figures = tmp_path / "figures"
    boards = {}
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for topic in ("travel", "film"):
            gold = kdconv_split(tmp_path, topic)
            systems = systems_for(gold)
            boards[topic] = evaluate_systems(
                systems,
                gold=gold,
                human=human_scores(gold, systems),
                options=EvalOptions(metrics=("f1", "bleu2", "distinct1", "rouge_l")),
                bootstrap=200,
                plot=figures,
            )
    assert not [w for w in caught if "missing from" in str(w.message)]  # every glyph drawn
    assert_font_has(ASPECTS)
    names = sorted(p.name for p in figures.iterdir())
    assert names == [f"{t}-dev-{kind}.png" for t in ("film", "travel") for kind in ("correlations", "leaderboard")]
    assert all(p.read_bytes()[:4] == b"\x89PNG" for p in figures.iterdir())
    board = boards["travel"]
    assert sorted(Path(f).name for f in board.figures) == ["travel-dev-correlations.png", "travel-dev-leaderboard.png"]
    # the heatmap holds every correlation of the table, at both levels
    (turn, system) = correlation_grids(board.correlations)["all"]
    assert (turn.title, system.title) == ("turn level", "system level") and turn.columns == tuple(ASPECTS)
    for grid, level in ((turn, "turn"), (system, "system")):
        for row in (r for r in board.correlations if r["level"] == level):
            i, j = grid.rows.index(row["metric"]), grid.columns.index(row["human"])
            assert grid.values[i][j] == row["spearman"]
            assert grid.marks[i][j] == ("*" if row["spearman_p"] is not None and row["spearman_p"] < 0.05 else "")
    # the leaderboard: each system's value inside its interval, shares in percent, human means with theirs
    panels = leaderboard_panels(board.systems, board.human["mean_intervals"])["all"]
    assert set(panels) == {"f1 (%)", "bleu2 (%)", "distinct1 (%)", "rouge_l (%)", *(f"human: {a}" for a in ASPECTS)}
    for point in panels["f1 (%)"] + panels[f"human: {ASPECTS[0]}"]:
        assert point.low is not None and point.low <= point.value <= point.high
    assert all(p.low is None for p in panels["distinct1 (%)"])  # no interval rather than a biased one
    exact = next(s for s in board.systems if s.system == "exact")
    assert next(p for p in panels["f1 (%)"] if p.label == "exact").value == pytest.approx(exact.metrics["f1"] * 100)


def test_bootstrap_intervals_are_the_recounted_resamples(tmp_path):
    """The intervals weigh per-response counts; here every resample is recounted from its own tokens."""
    gold = kdconv_split(tmp_path, "travel", dialogues=3)
    half = systems_for(gold)["all", "half"]
    responses = load_responses(half, gold)
    scored = score(responses, EvalOptions(metrics=("f1", "bleu2", "rouge_l", "distinct2")))
    ones = np.ones((1, scored.batch.size))
    for metric in scored.chosen:
        again = metric.resampled(scored.batch, scored.values[metric.name], ones)
        if metric.name != "distinct2":
            assert again[0] == pytest.approx(scored.corpus[metric.name], abs=1e-12)  # one of each: the corpus value
    found = corpus_intervals(scored, 40, seed=5)
    draws = np.random.default_rng(5).integers(0, scored.batch.size, size=(40, scored.batch.size))
    frame = responses.frame.select("id", "prediction", "gold")
    for name in ("f1", "bleu2"):
        recounted = []
        for draw in draws:
            batch = Batch(frame[draw], scored.segmentation, True)
            recounted.append(batch.lexical.f1_corpus() if name == "f1" else batch.lexical.bleu_corpus(2))
        assert found[name] == pytest.approx(list(np.percentile(recounted, [2.5, 97.5])), abs=1e-12)
    assert found["distinct2"] is None


def test_one_system_draws_its_turn_level_heatmap(cli, tmp_path):
    gold = kdconv_split(tmp_path, "travel", dialogues=2)
    systems = systems_for(gold)
    human = tmp_path / "one.jsonl"
    human.write_text(
        "".join(
            line + "\n"
            for line in human_scores(gold, systems).read_text(encoding="utf-8").splitlines()
            if json.loads(line)["system"] == "half"
        ),
        encoding="utf-8",
    )
    report = evaluate(
        systems["all", "half"], gold=gold, human=human, options=EvalOptions(metrics=("f1",)), plot=tmp_path / "p"
    )
    assert [Path(f).name for f in report.figures] == ["travel-dev-correlations.png"]
    assert_font_has(ASPECTS)
    (grid,) = correlation_grids(report.correlations)["all"]
    assert grid.rows == ("f1",) and grid.columns == tuple(ASPECTS)
    done = cli("eval", str(systems["all", "half"]), "--gold", str(gold), "--plot", str(tmp_path / "q"), check=False)
    assert done.returncode == 1 and "--human" in done.stderr and not (tmp_path / "q").exists()
