"""A newcomer's first hour, replayed: the installed `kgforge` command, run from a directory outside the
checkout with KGFORGE_WORKDIR set, takes the KdConv travel knowledge base through build, stats, a query by
name with an entity bound by its label, goals, export, a tiny embedding and related entities — and not one
IRI is typed by hand."""

from __future__ import annotations

import csv
import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

KGFORGE = Path(sys.executable).with_name("kgforge")  # the console script `pip install -e .` put beside python


@pytest.mark.slow
def test_first_hour_from_outside_the_checkout_without_an_iri(shared, tmp_path):
    kb = shared("kdconv/travel/kb_travel.json")
    assert KGFORGE.is_file(), f"the kgforge command is not installed beside {sys.executable}"
    env = {**os.environ, "KGFORGE_WORKDIR": str(tmp_path / "kg"), "COLUMNS": "200"}

    def kgforge(*args: str) -> str:
        done = subprocess.run([str(KGFORGE), *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"kgforge {' '.join(args)} exited {done.returncode}:\n{done.stderr}"
        return done.stdout

    assert "records loaded" in kgforge("build", "travel", "--source", f"kdconv:{kb}")
    assert (tmp_path / "kg" / "travel" / "store").is_dir()

    assert json.loads(kgforge("stats", "travel", "--json"))["entities"] > 1000

    facts = kgforge("query", "travel", "entity_facts", "--bind", "name=故宫")
    assert "周边景点" in facts and "天坛" in facts and "https://" not in facts

    steps = list(
        csv.DictReader(io.StringIO(kgforge("query", "travel", "goal_one_step", "--bind", "a=故宫", "--format", "csv")))
    )
    assert steps and {row["a_label"] for row in steps} == {"故宫"} and all(row["b_label"] for row in steps)

    kgforge("goals", "travel", "--n", "10", "--style", "kdconv", "--hops", "1..2", "--out", "paths.jsonl")
    goals = [json.loads(line) for line in (tmp_path / "paths.jsonl").read_text(encoding="utf-8").splitlines()]
    assert len(goals) == 10 and all(goal["topic_labels"] for goal in goals)

    kgforge("export", "travel", "--goals", "paths.jsonl", "--format", "jsonl", "--out", "dialogues.jsonl")
    assert len((tmp_path / "dialogues.jsonl").read_text(encoding="utf-8").splitlines()) == 10

    trained = json.loads(
        kgforge(
            "embed", "travel", "--model", "TransE", "--dim", "8", "--epochs", "2", "--evaluation", "sampled", "--json"
        )
    )
    assert trained["evaluation"]["mrr"] > 0
    assert (tmp_path / "kg" / "travel" / "models" / "default").is_dir()

    related = json.loads(kgforge("related", "travel", "故宫", "-k", "3", "--json"))
    assert related["query"]["label"] == "故宫" and len(related["results"]) == 3
    assert all(result["label"] for result in related["results"])
