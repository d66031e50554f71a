"""What `kgforge eval` shows a person (issue 50, item 5 and the smaller ones of item 10): one convention for every
table (shares in percent, CIDEr-D and the other figures on their own scale, small p-values not rounded to 0.000),
the install hints printed as written, knowledge metrics in the leaderboard with --domain, the --human count error
naming the file that holds the system's scores, and the ACL 2020 DuRecDial release read as DuRecDial."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgforge.evaluation import EvalOptions, evaluate, evaluate_systems, figure_text, in_percent, p_text
from kgforge.evaluation.inputs import detect_layout, read_slots
from kgforge.store.snapshot import Snapshot
from tests.conftest import build_travel, shared_file

WIDE = {"COLUMNS": "300"}


def kdconv_sample(tmp_path: Path, dialogues: int = 12) -> Path:
    """The first dialogues of KdConv travel dev, as a dev file of its own (fast to ground)."""
    data = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))[:dialogues]
    path = tmp_path / "travel-dev.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path


def systems_of(tmp_path: Path, gold: Path) -> dict[str, Path]:
    """``gold``: the gold responses themselves; ``half``: each cut to its first half."""
    texts = [m["message"] for d in json.loads(gold.read_text(encoding="utf-8")) for m in d["messages"][1:]]
    files = {"gold": tmp_path / "gold.txt", "half": tmp_path / "half.txt"}
    files["gold"].write_text("".join(t + "\n" for t in texts), encoding="utf-8")
    files["half"].write_text("".join(t[: len(t) // 2] + "\n" for t in texts), encoding="utf-8")
    return files


def two_systems(files: dict[str, Path], gold: Path) -> list[str]:
    """``eval --system gold=… --system half=… --gold GOLD``."""
    return ["eval", "--system", f"gold={files['gold']}", "--system", f"half={files['half']}", "--gold", str(gold)]


def cell(line: str, column: int) -> str:
    return re.split(r"\s{2,}", line.strip())[column]


def test_one_convention_in_every_table(cli, tmp_path):
    gold = kdconv_sample(tmp_path)
    files = systems_of(tmp_path, gold)
    alone = evaluate(files["half"], gold=gold, options=EvalOptions(metrics=("f1", "cider")))
    one = cli("eval", str(files["half"]), "--gold", str(gold), "--metrics", "f1,cider", "--no-out", env=WIDE).stdout
    assert "value (%)" not in one
    rows = {line.split()[0]: line for line in one.splitlines() if line.split()[:1] in (["f1"], ["cider"])}
    assert cell(rows["f1"], 1) == f"{alone.metrics['f1'] * 100:.2f}%"  # a share: percent
    assert cell(rows["cider"], 1) == f"{alone.metrics['cider']:.4f}"  # CIDEr-D: its own 0-10 scale
    assert 0 < alone.metrics["cider"] < 10
    board = cli(
        *two_systems(files, gold),
        "--metrics",
        "f1,cider",
        "--leaderboard",
        str(tmp_path / "board"),
        env=WIDE,
    ).stdout
    header = next(line for line in board.splitlines() if line.startswith("system"))
    half = next(line for line in board.splitlines() if line.startswith("half"))
    columns = header.split()
    assert cell(half, columns.index("f1")) == cell(rows["f1"], 1)  # the same text as the one-system table
    assert cell(half, columns.index("cider")) == cell(rows["cider"], 1)
    markdown = (tmp_path / "board" / "leaderboard.md").read_text(encoding="utf-8")
    assert f"| {cell(rows['f1'], 1)} | {cell(rows['cider'], 1)} |" in markdown  # and in the Markdown table
    saved = json.loads((tmp_path / "board" / "leaderboard.json").read_text(encoding="utf-8"))
    assert next(r for r in saved["leaderboard"] if r["system"] == "half")["f1"] == pytest.approx(alone.metrics["f1"])


@pytest.mark.parametrize(
    "p, text", [(0.04321, "0.043"), (0.001, "0.001"), (0.000999, "1.0e-03"), (2.4e-7, "2.4e-07"), (None, "-")]
)
def test_p_values_are_never_rounded_to_zero(p, text):
    assert p_text(p) == text


def test_which_figures_are_shares():
    assert in_percent("f1") and in_percent("k_precision") and in_percent("info_2plus")
    assert not in_percent("cider") and not in_percent("bleurt") and not in_percent("goal_completion")
    assert not in_percent("连贯性（Coh.）")  # a human aspect's mean is on its rubric's scale
    assert (
        figure_text(9.3613, False) == "9.3613" and figure_text(0.5, True) == "50.00%" and figure_text(None, True) == "-"
    )


def test_small_p_values_and_install_hints_are_shown_as_written(cli, tmp_path):
    pairs = [(f"a b c {'d ' * i}", f"a b c {'d ' * i}e") for i in range(40)]
    official = tmp_path / "pairs.txt"
    official.write_text("".join(f"{p.strip()}\t{g}\n" for p, g in pairs), encoding="utf-8")
    human = tmp_path / "human.csv"
    human.write_text("id,quality\n" + "".join(f"{i + 1},{i}\n" for i in range(len(pairs))), encoding="utf-8")
    shown = cli("eval", str(official), "--human", str(human), "--no-out", env=WIDE).stdout
    assert "kgforge[bertscore]" in shown and "kgforge[bleurt]" in shown  # not eaten as rich markup
    line = next(row for row in shown.splitlines() if row.startswith("f1 ") and "quality" in row)
    assert "0.000" not in line and re.search(r"\d\.\de-\d\d", line), line


def test_the_leaderboard_scores_knowledge_with_domain(tmp_path):
    workdir = build_travel(tmp_path / "kg")
    gold = kdconv_sample(tmp_path)
    files = systems_of(tmp_path, gold)
    options = EvalOptions(metrics=("f1", "k_precision", "k_recall", "k_f1"))
    snapshot = Snapshot.open("travel", workdir)  # one build for the board and for each system alone
    board = evaluate_systems(
        {("all", name): path for name, path in files.items()},
        gold=gold,
        snapshot=snapshot,
        options=options,
    )
    assert not any(name.startswith("k_") for name in board.left_out)
    for found in board.systems:
        alone = evaluate(Path(found.path), gold=gold, snapshot=snapshot, options=options)
        assert found.metrics == pytest.approx(alone.metrics)  # what eval gives the system alone
    by_name = {s.system: s.metrics for s in board.systems}
    assert by_name["gold"]["k_recall"] > by_name["half"]["k_recall"] > 0


def test_the_count_error_names_the_file_of_the_system(cli, tmp_path):
    gold = kdconv_sample(tmp_path, dialogues=3)
    files = systems_of(tmp_path, gold)
    responses = len(files["gold"].read_text(encoding="utf-8").splitlines())
    humans = tmp_path / "human"
    humans.mkdir()
    (humans / "gold.csv").write_text("quality\n" + "1\n" * responses, encoding="utf-8")
    (humans / "half.csv").write_text("quality\n" + "1\n" * (responses - 2), encoding="utf-8")
    done = cli(
        *two_systems(files, gold),
        "--human",
        str(humans),
        "--leaderboard",
        str(tmp_path / "board"),
        check=False,
    )
    message = done.stderr.strip().splitlines()[-1]
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert str(humans / "half.csv") in message and str(humans / "gold.csv") not in message
    assert str(files["half"]) in message and f"{responses - 2} human-scored responses" in message


def test_an_acl2020_durecdial_jsonl_is_read_as_durecdial(tmp_path):
    session = json.loads(shared_file("durecdial/acl2020_readme_example.json").read_text(encoding="utf-8"))
    path = tmp_path / "acl2020.jsonl"
    path.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    assert detect_layout(path) == "durecdial"
    slots = read_slots(path)
    # the user opens (问天气, User主动): the bot's are the odd turns, their [n] goal markers taken off
    bot = [re.sub(r"^\[\d+\]", "", turn) for turn in session["conversation"][1::2]]
    assert slots.frame["text"].to_list() == bot
    assert set(slots.dialogues[0].knowledge) == {tuple(t) for t in session["kg"]}
    assert "糖醋排骨" in slots.dialogues[0].topics  # 『topics』 of the goals string
    report = evaluate(path, gold=path, options=EvalOptions(goal_metrics=True))
    assert report.segmentation == "jieba"  # the release's text is not word-segmented
    assert report.metrics["f1"] == 1.0 and report.goals["summary"]["leading_success"] == 1.0
