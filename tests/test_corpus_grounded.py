"""`corpus stats --domain` on a file without gold annotation: topics and triples per dialogue from the grounder,
equal to the same figures computed here from `Domain.ground`'s output, and close to the gold annotation's."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.corpus import split_corpus
from tests.conftest import run_cli, shared_file
from tests.test_corpus import stats_json
from tests.test_grounding import build_kdconv_domain

TRAVEL_DEV = "kdconv/travel/dev.json"


@pytest.fixture(scope="module")
def travel(tmp_path_factory) -> tuple[Path, Path]:
    """A workdir with travel built from KdConv's travel KB, and the travel dev set with its attrs stripped."""
    folder = tmp_path_factory.mktemp("grounded")
    build_kdconv_domain("travel", folder / "kg")
    dialogues = copy.deepcopy(json.loads(shared_file(TRAVEL_DEV).read_text(encoding="utf-8")))
    for dialogue in dialogues:
        for message in dialogue["messages"]:
            message.pop("attrs", None)
    stripped = folder / "dev.stripped.json"
    stripped.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    return folder / "kg", stripped


def per_dialogue_figures(dialogues: list[dict]) -> dict:
    """Topics (distinct names) and triples (distinct name, attrname, attrvalue) per dialogue, from the attrs
    on the messages as written, averaged over every dialogue, and the same counts over the whole file."""
    per_dialogue = [
        {(a["name"], a["attrname"], a["attrvalue"]) for m in d["messages"] for a in m.get("attrs", [])}
        for d in dialogues
    ]
    every = set().union(*per_dialogue)
    n = len(dialogues)
    return {
        "dialogues_with_knowledge": sum(1 for t in per_dialogue if t),
        "topics_per_dialogue": sum(len({name for name, _, _ in t}) for t in per_dialogue) / n,
        "triples_per_dialogue": sum(len(t) for t in per_dialogue) / n,
        "entities": len({t[0] for t in every}),
        "relations": len({t[1] for t in every}),
        "triples": len(every),
    }


@pytest.mark.slow  # builds and grounds the real KdConv travel set
def test_grounded_figures_equal_the_grounders_output(travel, tmp_path):
    workdir, stripped = travel
    found = stats_json(stripped, "--domain", "travel", "--workdir", str(workdir))
    assert found["knowledge_from"] == "grounded"  # no attrs in the file: the grounder's figures are the headline
    assert found["knowledge"]["dialogues_with_knowledge"] == 0

    Domain("travel", workdir).ground(stripped, tmp_path / "grounded.json")
    expected = per_dialogue_figures(json.loads((tmp_path / "grounded.json").read_text(encoding="utf-8")))
    grounded = found["grounded"]
    assert grounded["domain"] == "travel"
    for key, value in expected.items():
        assert grounded[key] == pytest.approx(value, rel=1e-12), key

    # against the gold attrs (measured: topics 2.53 grounded vs 2.43 gold, triples 11.13 vs 11.13 per dialogue)
    gold = per_dialogue_figures(json.loads(shared_file(TRAVEL_DEV).read_text(encoding="utf-8")))
    assert grounded["topics_per_dialogue"] == pytest.approx(gold["topics_per_dialogue"], rel=0.1)
    assert grounded["triples_per_dialogue"] == pytest.approx(gold["triples_per_dialogue"], rel=0.1)
    assert grounded["relations"] == gold["relations"]


@pytest.mark.slow  # builds and grounds the real KdConv travel set
def test_gold_stays_the_headline_with_the_grounded_figures_beside_it(travel, tmp_path):
    workdir, stripped = travel
    with_gold = stats_json(shared_file(TRAVEL_DEV), "--domain", "travel", "--workdir", str(workdir))
    without = stats_json(stripped, "--domain", "travel", "--workdir", str(workdir))
    assert with_gold["knowledge_from"] == "gold"
    assert with_gold["knowledge"]["triples"] > 0
    assert with_gold["grounded"] == without["grounded"]  # the grounder reads the messages, never the gold attrs
    assert not any("kgforge ground" in note for note in with_gold["notes"])
    split_corpus(stripped, tmp_path / "splits", seed=1)
    by_split = stats_json(
        stripped, "--domain", "travel", "--workdir", str(workdir), "--by-split", str(tmp_path / "splits")
    )
    parts = by_split["splits"]
    assert set(parts) == {"train", "dev", "test"}
    assert all(part["knowledge_from"] == "grounded" for part in parts.values())
    # the grounder reads each dialogue on its own: the splits' triples add up to the file's
    assert sum(p["grounded"]["triples_per_dialogue"] * p["dialogues"] for p in parts.values()) == pytest.approx(
        by_split["grounded"]["triples_per_dialogue"] * by_split["dialogues"]
    )
    no_domain = stats_json(stripped)
    assert no_domain["knowledge_from"] is None and no_domain["grounded"] is None


@pytest.mark.slow  # builds and grounds the real DuConv sessions
def test_duconv_sessions_are_grounded_in_the_graph(tmp_path):
    source = shared_file("duconv/dev.head250.jsonl")
    run_cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(tmp_path / "kg"))
    found = stats_json(source, "--domain", "duconv", "--workdir", str(tmp_path / "kg"))
    grounded = found["grounded"]
    assert found["knowledge_from"] == "grounded"
    # measured: 248 of 250 sessions state a fact of the graph, 1.76 topics and 3.33 triples per session (of the
    # 14 knowledge entries each session is given); a session's facts are about its goal's two topics and a few
    # entities its knowledge names
    assert grounded["dialogues_with_knowledge"] >= 0.9 * found["dialogues"]
    assert 1 <= grounded["topics_per_dialogue"] <= 3
    assert 0 < grounded["triples_per_dialogue"] <= found["duconv"]["knowledge_per_dialogue"]
