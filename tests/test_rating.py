"""`kgforge rate sheet` → sheets filled here → `kgforge rate import`: blinding hides the systems and is undone
exactly; means, Fleiss' kappa (statsmodels), Krippendorff's alpha (krippendorff), percent agreement and the paired
tests (scipy) equal the same figures computed here from what the test wrote into the sheets."""

from __future__ import annotations

import csv
import json
import random
from importlib import resources

import krippendorff
import numpy as np
import openpyxl
import pytest
from scipy import stats
from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

from kgforge.core.text import spreadsheet_cell
from kgforge.evaluation.rating import RUBRICS, import_ratings, make_sheets, rubric

SYSTEMS = {"alpha-bot": 2, "beta-bot": 1, "gamma-bot": 0}  # the quality each is rated around
UNITS = 12
RATERS = ["annotator1", "annotator2", "annotator3"]


def write_systems(tmp_path):
    files = {}
    for name in SYSTEMS:
        path = tmp_path / f"{name}.jsonl"
        rows = [
            {"id": f"d{i}", "context": ["你好", "喜欢 什么 电影 ？"], "response": f"回复 {i} 之 {len(name) * 7 + i}"}
            for i in range(UNITS)
        ]
        rows[0]["response"] = '=HYPERLINK("http://x","点我")'  # formula injection attempt
        path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
        files[name] = path
    return files


def score(system: str, unit: str, rater: str, aspect: str, scale) -> float:
    """What the test's annotators give: around the system's quality, varying by unit and rater."""
    rng = random.Random(f"{system}{unit}{rater}{aspect}")
    base = SYSTEMS[system] + rng.choice([-1, 0, 0, 0, 1])
    return float(min(max(scale), max(min(scale), base)))


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def fill_csv(path, key, chosen, rater, truth):
    rows = read_csv(path)
    for row in rows:
        item = key["items"][row["item"]]
        for aspect in chosen.aspects:
            value = score(item["system"], item["unit"], rater, aspect.key, aspect.scale)
            row[aspect.key] = f"{value:g}"
            truth.append((rater, item["system"], item["unit"], aspect.key, value))
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def test_every_named_rubric_is_bundled_in_both_languages():
    names = {
        "duconv-turn",
        "duconv-dialogue",
        "kdconv",
        "durecdial-turn",
        "durecdial-dialogue",
        "msde",
        "convkgyarn-likert",
        "convkgyarn-pairwise",
    }
    assert names <= set(RUBRICS.names())
    for name in names:
        for aspect in rubric(name).aspects:
            assert aspect.zh and aspect.en and len(aspect.labels["zh"]) == len(aspect.labels["en"]) == len(aspect.scale)


@pytest.mark.slow  # every rubric's sheets written, filled and imported
def test_sheet_import_round_trip(cli, tmp_path):
    files = write_systems(tmp_path)
    out = tmp_path / "round"
    args = ["rate", "sheet", "kdconv", "--out", str(out), "--seed", "7", "--json"]
    for name, path in files.items():
        args += ["--system", f"{name}={path}"]
    made = json.loads(cli(*args).stdout)
    assert made["items"] == UNITS * len(SYSTEMS) and set(made["sheets"]) == set(RATERS)
    key = json.loads((out / "key.json").read_text(encoding="utf-8"))
    chosen = rubric("kdconv")
    orders = []
    for rater in RATERS:
        text = (out / f"sheet-{rater}.csv").read_text(encoding="utf-8")
        for name in SYSTEMS:
            assert name not in text  # blinded: no system name anywhere in a sheet
        rows = read_csv(out / f"sheet-{rater}.csv")
        orders.append([r["item"] for r in rows])
        injected = [r for r in rows if "HYPERLINK" in r["text"]]
        assert injected and all(r["text"].startswith("'=") for r in injected)  # escaped against formulas
    assert orders[0] != orders[1] and sorted(orders[0]) == sorted(orders[1])  # shuffled per annotator
    again = make_sheets("kdconv", files, tmp_path / "again", seed=7)
    assert json.loads((tmp_path / "again" / "key.json").read_text(encoding="utf-8"))["items"] == key["items"]
    assert again.items == made["items"]  # the same seed, the same blinding

    truth: list[tuple] = []
    for rater in RATERS:
        fill_csv(out / f"sheet-{rater}.csv", key, chosen, rater, truth)
    report = json.loads(cli("rate", "import", str(out), "--json").stdout)
    assert report["ratings"] == len(truth) and report["missing"] == 0
    means = {(r["system"], r["aspect"]): r["mean"] for r in report["means"]}
    for name in SYSTEMS:
        for aspect in ("fluency", "coherence"):
            expected = np.mean([v for _, s, _, a, v in truth if s == name and a == aspect])
            assert means[name, aspect] == pytest.approx(expected)  # un-blinded exactly
    for aspect in ("fluency", "coherence"):
        items = sorted({(s, u) for _, s, u, a, _ in truth if a == aspect})
        table = {(r, s, u): v for r, s, u, a, v in truth if a == aspect}
        matrix = np.array([[table[r, s, u] for r in RATERS] for s, u in items])
        found = report["agreement"][aspect]
        assert found["fleiss_kappa"] == pytest.approx(fleiss_kappa(aggregate_raters(matrix)[0], method="fleiss"))
        assert found["krippendorff_alpha"] == pytest.approx(
            krippendorff.alpha(reliability_data=matrix.T, level_of_measurement="ordinal")
        )
        assert found["all_agree"] == pytest.approx(np.mean([len(set(row)) == 1 for row in matrix]))
        assert found["at_least_two_agree"] == pytest.approx(np.mean([len(set(row)) <= 2 for row in matrix]))
        # paired tests between alpha-bot and beta-bot on the same inputs, per-input mean over annotators
        units = sorted({u for _, _, u, _, _ in truth}, key=lambda u: int(u[1:]))
        units.sort()
        x = [np.mean([table[r, "alpha-bot", u] for r in RATERS]) for u in units]
        y = [np.mean([table[r, "beta-bot", u] for r in RATERS]) for u in units]
        test = next(
            t
            for t in report["significance"]
            if t["aspect"] == aspect and t["a"] == "alpha-bot" and t["b"] == "beta-bot"
        )
        assert test["t_p"] == pytest.approx(stats.ttest_rel(x, y).pvalue)
        assert test["wilcoxon_p"] == pytest.approx(stats.wilcoxon(x, y).pvalue)
        wins = sum(a > b for a, b in zip(x, y, strict=True))
        losses = sum(a < b for a, b in zip(x, y, strict=True))
        assert test["sign_p"] == pytest.approx(stats.binomtest(wins, wins + losses, 0.5).pvalue)


def test_xlsx_sheets_and_bad_cells(cli, tmp_path):
    files = write_systems(tmp_path)
    made = make_sheets("msde", files, tmp_path / "x", sheet_format="xlsx", annotators=2, sample=5, seed=3)
    assert made.items == 5 * len(SYSTEMS)
    key = json.loads((tmp_path / "x" / "key.json").read_text(encoding="utf-8"))
    chosen = rubric("msde")
    for rater, path in made.sheets.items():
        book = openpyxl.load_workbook(path)
        sheet = book["rate"]
        header = [c.value for c in sheet[1]]
        for row in sheet.iter_rows(min_row=2):
            item = key["items"][row[0].value]
            for aspect in chosen.aspects:
                if not aspect.optional:
                    row[header.index(aspect.key)].value = score(
                        item["system"], item["unit"], rater, aspect.key, aspect.scale
                    )
        book.save(path)
    report = import_ratings(tmp_path / "x")
    assert report.ratings == 5 * len(SYSTEMS) * 2 * 3 and report.missing == 0  # Rec. is optional, left empty
    assert {m["aspect"] for m in report.means} == {"丰富度（Info.）", "连贯性（Coh.）", "知识准确性（Konw.）"}
    # a score outside the scale is refused with the sheet and its line
    path = made.sheets["annotator1"]
    book = openpyxl.load_workbook(path)
    book["rate"].cell(row=3, column=5).value = 7
    book.save(path)
    done = cli("rate", "import", str(tmp_path / "x"), check=False)
    assert done.returncode == 1 and f"{path}:3:" in done.stderr and "not one of 0, 1, 2" in done.stderr


def test_pairwise_preferences(tmp_path):
    """A pair rubric of the user's own that puts two responses side by side (``compares = "turn"``; the bundled
    ConvKGYarn one compares whole conversations)."""
    files = write_systems(tmp_path)
    bundled = resources.files("kgforge.evaluation").joinpath("rubrics", "convkgyarn-pairwise.toml").read_text("utf-8")
    own = tmp_path / "responses-pairwise.toml"
    own.write_text(bundled.replace('compares = "dialogue"', 'compares = "turn"'), encoding="utf-8")
    assert rubric(own).compares == "turn" and rubric("convkgyarn-pairwise").compares == "dialogue"
    made = make_sheets(own, {k: files[k] for k in ("alpha-bot", "gamma-bot")}, tmp_path / "p", annotators=3, seed=1)
    key = json.loads((tmp_path / "p" / "key.json").read_text(encoding="utf-8"))
    for path in made.sheets.values():
        rows = read_csv(path)
        for i, row in enumerate(rows):
            first, _ = key["items"][row["item"]]["systems"]
            # alpha-bot is preferred, except one tie per annotator
            row["preference"] = "0" if i == 0 else ("1" if first == "alpha-bot" else "2")
            row["factuality"] = "0"
        with open(path, "w", encoding="utf-8", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    report = import_ratings(tmp_path / "p")
    preference = next(p for p in report.preferences if p["aspect"] == "preference")
    assert (preference["a"], preference["b"]) == ("alpha-bot", "gamma-bot")
    assert preference["wins"] == 3 * (UNITS - 1) and preference["losses"] == 0 and preference["ties"] == 3
    assert preference["sign_p"] == pytest.approx(stats.binomtest(3 * (UNITS - 1), 3 * (UNITS - 1), 0.5).pvalue)


@pytest.mark.parametrize("text", ["=1+1", "+SUM(A1)", "-2+3", "@cmd", "\t=x", "plain", "", "1-2"])
def test_sheet_cells_never_start_a_formula(text):
    safe = spreadsheet_cell(text)
    assert not safe.startswith(("=", "+", "-", "@", "\t", "\r"))
    assert safe == (("'" + text) if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text)


def test_msde_rec_takes_its_released_key_and_three_point_scale(tmp_path):
    """MSDE's released sheets score 推荐成功率（Rec.） 0/1/2 where a dialogue recommends: a 2 imports as it is."""
    files = write_systems(tmp_path)
    made = make_sheets("msde", files, tmp_path / "x", annotators=1, sample=4, seed=5)
    chosen = rubric("msde")
    assert [a.key for a in chosen.aspects][-1] == "推荐成功率（Rec.）"
    (path,) = made.sheets.values()
    rows = read_csv(path)
    for i, row in enumerate(rows):
        for aspect in chosen.aspects:
            row[aspect.key] = "" if aspect.optional and i % 2 else str(i % 3)
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    report = import_ratings(tmp_path / "x")
    rec = [m for m in report.means if m["aspect"] == "推荐成功率（Rec.）"]  # one row per system
    scored = [i % 3 for i in range(len(rows)) if not i % 2]
    assert sum(m["n"] for m in rec) == len(scored) and 2 in scored
    assert sum(m["mean"] * m["n"] for m in rec) == pytest.approx(sum(scored))
