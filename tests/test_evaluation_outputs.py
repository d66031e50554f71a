"""`kgforge eval` writes only where the command line says (issue 50, item 8): no per-response file without
``--out`` (it once wrote ``PREDICTIONS.eval.jsonl`` beside a dataset's own file), no leaderboard folder without
``--leaderboard DIR`` (it once made ``./leaderboard/``), and no path of the machine (a temporary folder) inside a
leaderboard that is written."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.conftest import shared_file

PAIRS = [("我 喜欢 这部 电影", "我 喜欢 电影"), ("他 是 导演", "他 是 一位 导演"), ("好 的", "好 的 吧")]


def inputs(folder: Path) -> tuple[Path, dict[str, Path]]:
    folder.mkdir()
    (folder / "gold.txt").write_text("".join(gold + "\n" for _, gold in PAIRS), encoding="utf-8")
    systems = {}
    for name, keep in (("good", 3), ("poor", 1)):
        systems[name] = folder / f"{name}.txt"
        systems[name].write_text("".join(p.split()[0] * (i < keep) + "\n" for i, (p, _) in enumerate(PAIRS)), "utf-8")
    return folder / "gold.txt", systems


def strings(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [s for v in value.values() for s in strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in strings(v)]
    return [value] if isinstance(value, str) else []


def test_many_systems_write_a_leaderboard_only_where_named_and_no_absolute_path_in_it(cli, tmp_path):
    gold, systems = inputs(tmp_path / "in")
    here = tmp_path / "here"  # the working directory: nothing may appear in it
    here.mkdir()
    args = ["eval", "--gold", str(gold), "--metrics", "bleu1,f1"]
    for name, path in systems.items():
        args += ["--system", f"{name}={path}"]  # absolute paths, as a script in a temporary folder gives them
    shown = cli(*args, cwd=here)
    assert "good" in shown.stdout and "no file written: --leaderboard DIR" in shown.stdout
    assert list(here.iterdir()) == [] and sorted(p.name for p in (tmp_path / "in").iterdir()) == [
        "gold.txt",
        "good.txt",
        "poor.txt",
    ]
    board = tmp_path / "out" / "board"
    report = json.loads(cli(*args, "--leaderboard", str(board), "--json", cwd=here).stdout)
    assert list(here.iterdir()) == []
    assert {s["path"] for s in report["systems"]} == {str(p) for p in systems.values()}  # printed as given
    written = json.loads((board / "leaderboard.json").read_text(encoding="utf-8"))
    assert not [s for s in strings(written) if s.startswith("/") or str(tmp_path) in s]
    assert written["files"] == {"json": "leaderboard.json", "csv": "leaderboard.csv", "markdown": "leaderboard.md"}
    for system in written["systems"]:  # each path leads from the folder to the system's file
        assert (board / system["path"]).resolve() == systems[system["system"]].resolve()
    assert sorted(p.name for p in board.iterdir()) == ["leaderboard.csv", "leaderboard.json", "leaderboard.md"]
    refused = cli(*args, "--out", str(tmp_path / "x.jsonl"), check=False, cwd=here)
    assert refused.returncode == 2 and "--leaderboard DIR" in refused.stderr and not (tmp_path / "x.jsonl").exists()


def test_one_file_s_and_a_selection_s_scores_are_written_only_with_out(cli, tmp_path):
    dev = tmp_path / "dev.json"  # KdConv travel dev, scored against itself
    dev.write_bytes(shared_file("kdconv/travel/dev.json").read_bytes())
    selected = tmp_path / "selected.jsonl"
    dialogues = json.loads(dev.read_text(encoding="utf-8"))
    turns = [{"dialogue": d, "turn": 0, "facts": []} for d in range(len(dialogues))]
    selected.write_text("".join(json.dumps(turn) + "\n" for turn in turns), encoding="utf-8")
    cli("eval", str(dev), "--gold", str(dev), "--metrics", "f1")
    cli("eval", "--selected", str(selected), "--gold", str(dev))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dev.json", "selected.jsonl"]
    out = tmp_path / "scores" / "dev.csv"
    report = json.loads(
        cli("eval", str(dev), "--gold", str(dev), "--metrics", "f1", "--out", str(out), "--json").stdout
    )
    assert report["per_response"] == str(out) and out.read_text(encoding="utf-8").startswith("id,")
