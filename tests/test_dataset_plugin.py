"""A dataset is one package: docs/examples/kgforge-example-dataset (FilmTalk), installed with pip, adds a dataset
that ground, corpus stats, export, eval and rate handle and that passes every contract case, with no file of
its own outside its package and no line of kgforge naming it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import install_example, run_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples" / "kgforge-example-dataset"
FILMS = EXAMPLE / "examples"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return install_example(EXAMPLE, "kgforge_filmtalk", tmp_path_factory)


def test_kgforge_names_no_plugin_dataset() -> None:
    """The example lives in its package alone: kgforge's own code never names it."""
    assert not [p for p in (REPO / "kgforge").rglob("*.py") if "filmtalk" in p.read_text(encoding="utf-8").lower()]


@pytest.mark.slow
def test_the_example_dataset_is_grounded_described_exported_and_evaluated(plugin_path: str, tmp_path: Path) -> None:
    env = {"PYTHONPATH": plugin_path}

    def kgforge(*args: str) -> str:
        return run_cli(*args, cwd=tmp_path, env=env).stdout

    work = ("--workdir", str(tmp_path / "kg"))
    kgforge("init", "films", "--from", str(FILMS / "films.tsv"), *work)
    assert (
        json.loads(kgforge("build", "films", "--source", f"tsv:{FILMS / 'films.tsv'}", "--json", *work))["records_ok"]
        == 8
    )

    grounded = tmp_path / "grounded.jsonl"
    report = json.loads(
        kgforge(
            "ground",
            "films",
            "--format",
            "filmtalk",
            "--dialogues",
            str(FILMS / "films.jsonl"),
            "--out",
            str(grounded),
            "--json",
            *work,
        )
    )
    assert report["format"] == "filmtalk" and report["dialogues"] == 2 and report["messages"] == 8
    assert report["scores"]["micro"]["f1"] == 1.0 and report["claims"] == {"supported": 4}
    turns = [turn for line in grounded.read_text(encoding="utf-8").splitlines() for turn in json.loads(line)["turns"]]
    assert turns[1]["predicted_facts"] == [["Inception", "director", "Christopher Nolan"]]

    stats = json.loads(kgforge("corpus", "stats", str(FILMS / "films.jsonl"), "--json"))
    assert stats["kind"] == "filmtalk" and stats["dialogues"] == 2 and stats["utterances"] == 8
    assert stats["extra"] == {"filmtalk-knowledge-turns": 0.5}

    out = tmp_path / "export.jsonl"
    kgforge(
        "export", "films", "--format", "filmtalk", "--dialogues", str(FILMS / "films.jsonl"), "--out", str(out), *work
    )
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert ["Inception", "release year", "2010"] in first["turns"][0]["retrieved_facts"]
    assert first["turns"][1]["facts"] == [["Inception", "director", "Christopher Nolan"]]  # the gold kept as it was

    (tmp_path / "pred.txt").write_text(
        "Inception was directed by Christopher Nolan.\nIt came out in 2010.\nMiyazaki directed it.\nIt is 125 minutes long.\n",
        encoding="utf-8",
    )
    scores = json.loads(
        kgforge("eval", str(tmp_path / "pred.txt"), "--gold", str(FILMS / "films.jsonl"), "--metrics", "f1", "--json")
    )
    assert scores["inputs"]["gold"]["layout"] == "filmtalk" and scores["responses"] == 4
    assert 0 < scores["metrics"]["f1"] < 1
    assert "filmtalk" in kgforge("rate", "rubrics")


@pytest.mark.slow
def test_the_example_dataset_passes_every_contract_case(plugin_path: str) -> None:
    ran = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-v",
            str(REPO / "tests" / "test_contracts.py"),
            "-k",
            "filmtalk or every_registered",
        ],
        cwd=REPO,
        env={"PYTHONPATH": plugin_path, "PATH": "/usr/bin:/bin", "HOME": str(REPO)},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert ran.returncode == 0, ran.stdout[-3000:]
    passed = {
        line.split("::")[1].split(" ")[0]
        for line in ran.stdout.splitlines()
        if line.endswith("PASSED") or " PASSED " in line
    }
    for case in ("a_dataset_room", "a_grounder", "an_eval_layout", "an_export_format"):  # the plug-in's own cases
        assert any(name.startswith(f"test_{case}") and name.endswith("[filmtalk]") for name in passed), case
    assert any(name.startswith("test_every_registered_entry") for name in passed)
