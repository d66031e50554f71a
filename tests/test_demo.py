"""The README's first command: `kgforge demo` runs every stage offline, end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge.demo.runner import DIALOGUES, WRONG_VALUES
from kgforge.store.layout import domain_paths
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import read_tables_from_store, tables_from_quads

pytestmark = pytest.mark.slow  # the whole demo, every stage end to end (about half a minute before the first test)


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("demo") / "kg"
    result = run_cli("demo", "--workdir", str(workdir))
    return workdir, result.stdout


def test_demo_runs_every_stage(demo):
    _, stdout = demo
    for stage in (
        "build",
        "stats",
        "query",
        "crawl",
        "wikidata",
        "derive",
        "goals",
        "embed",
        "export",
        "ground",
        "corpus",
        "eval",
        "synth",
        "collect",
        "release",
    ):
        assert f" {stage} " in stdout, stage
    assert "导演: 陈凯歌" in stdout  # the sample query over the bundled KB
    related_line = next(line for line in stdout.splitlines() if line.startswith("related 霸王别姬: "))
    assert "霸王别姬" not in related_line.removeprefix("related 霸王别姬: ")


def test_demo_exports_new_goals_as_duconv_test_samples_with_typed_topics(demo):
    workdir, _ = demo
    lines = (workdir / "demo" / "exports" / "test.duconv.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 20
    for line in lines:
        record = json.loads(line)
        assert list(record) == ["goal", "knowledge", "history", "response"] and record["history"] == []
        assert record["goal"][0][0] == "START"
        for topic in record["goal"][0][1:]:
            assert any(t[0] == topic and t[1] == "领域" for t in record["knowledge"])
        for triple in record["goal"][1:]:
            assert triple in record["knowledge"] and triple != record["knowledge"][0]
    manifest = json.loads((workdir / "demo" / "exports" / "test.duconv.jsonl.manifest.json").read_text("utf-8"))
    assert manifest["options"]["add_related"] == "default" and manifest["layout_kind"] == "duconv-sample"


def test_demo_synthesises_its_goals_offline_every_turn_verified(demo):
    workdir, stdout = demo
    sessions = [
        json.loads(line)
        for line in (workdir / "demo" / "exports" / "synth.duconv.jsonl").read_text("utf-8").splitlines()
    ]
    assert len(sessions) == 20 and "verified share" in stdout
    for session in sessions:
        assert set(session["verdicts"]) <= {"supported", "chitchat"} and "supported" in session["verdicts"]
        assert len(session["conversation"]) == len(session["claims"]) == len(session["facts"])
    manifest = json.loads((workdir / "demo" / "exports" / "synth.duconv.jsonl.manifest.json").read_text("utf-8"))
    assert manifest["model"] == "templated" and manifest["templated"] is True


def test_demo_collects_two_sessions_whose_clicked_facts_are_the_exported_knowledge(demo):
    from kgforge.datasets.duconv.export import SESSION
    from kgforge.exports.registry import format_named

    workdir, stdout = demo
    exports = workdir / "demo" / "exports"
    records = [json.loads(line) for line in (exports / "collected.duconv.txt").read_text("utf-8").splitlines()]
    assert len(records) == 2 and "checks passed              2" in stdout
    workers = [tuple(r["collected"]["workers"].values()) for r in records]
    assert len({w for pair in workers for w in pair}) == 4  # two pairs, no worker twice
    for record in records:
        assert format_named("duconv").check(record, SESSION) == []
        assert record["collected"]["checks"]["passed"] and record["collected"]["checks"]["facts_stated"] == 4
        clicked = [turn for turn in record["knowledge_per_turn"] if turn]
        assert len(clicked) == 4 and all(len(turn) == 1 and turn[0] in record["knowledge"] for turn in clicked)


def test_demo_releases_its_synthesized_sessions_and_the_release_checks_out(demo):
    from kgforge.release import check_release

    workdir, stdout = demo
    release = workdir / "demo" / "exports" / "release"
    checked = check_release(release, records=False)
    assert checked.ok, checked.problems
    manifest = json.loads((release / "release.json").read_text("utf-8"))
    assert manifest["dialogues"] == 20 and [s["dialogues"] for s in manifest["splits"]] == [16, 2, 2]
    assert "release check: croissant   ok" in stdout


def test_demo_store_reads_the_same_from_quads_files_and_from_the_store(demo):
    """The fast reader and the store walk agree on a store holding every kind of graph."""
    workdir, _ = demo
    paths = domain_paths("demo", workdir)
    manifest = json.loads(paths.manifest.read_text(encoding="utf-8"))
    kinds = {entry["kind"] for entry in manifest["graphs"].values()}
    assert {"kdconv", "wikidata", "links", "derived-associated", "schema"} <= kinds
    for include_derived in (False, True):
        snap = Snapshot.open(paths)
        slow = read_tables_from_store(paths, snap.build, include_derived)
        fast = tables_from_quads(paths, snap.manifest, snap.build, include_derived)
        for name in ("facts", "labels", "types", "relations"):
            a, b = getattr(slow, name), getattr(fast, name)
            assert a.sort(a.columns, nulls_last=True).equals(b.sort(a.columns, nulls_last=True)), name


def section(stdout: str, name: str) -> list[str]:
    """The lines the demo printed under the step ``name`` (between its rule and the next)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("─") and f" {name} " in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("──"))
    return lines[start + 1 : end]


def value(lines: list[str], key: str) -> str:
    return next(line.removeprefix(f"  {key} ").strip() for line in lines if line.startswith(f"  {key} "))


def test_bundled_dialogues_are_kdconv_dialogues_whose_gold_attrs_are_facts_of_the_demo_kb():
    kb = json.loads(
        (Path(__file__).resolve().parents[1] / "schemas" / "demo" / "kb_demo.json").read_text(encoding="utf-8")
    )
    facts = {tuple(triple) for triples in kb.values() for triple in triples}
    dialogues = json.loads(DIALOGUES.read_text(encoding="utf-8"))
    assert len(dialogues) == 8
    attrs = [a for d in dialogues for m in d["messages"] for a in m.get("attrs", [])]
    assert len(attrs) >= 30
    for dialogue in dialogues:
        assert dialogue["name"] in kb and all(isinstance(m["message"], str) for m in dialogue["messages"])
    for attr in attrs:
        assert (attr["name"], attr["attrname"], attr["attrvalue"]) in facts, attr


def test_demo_grounds_the_bundled_dialogues_without_their_attrs(demo):
    workdir, stdout = demo
    lines = section(stdout, "ground")
    gold = json.loads(DIALOGUES.read_text(encoding="utf-8"))
    assert int(value(lines, "messages")) == sum(len(d["messages"]) for d in gold)
    tp, fp, fn = (int(value(lines, k)) for k in ("tp", "fp", "fn"))
    assert tp + fn == sum(len(m.get("attrs", [])) for d in gold for m in d["messages"])
    assert float(value(lines, "f1")) == pytest.approx(2 * tp / (2 * tp + fp + fn), abs=5e-4)
    assert float(value(lines, "f1")) > 0.5
    grounded = json.loads((workdir / "demo" / "exports" / "dialogues.grounded.json").read_text(encoding="utf-8"))
    assert [len(d["messages"]) for d in grounded] == [len(d["messages"]) for d in gold]
    assert int(value(lines, "supported")) > 0
    # by the time the demo grounds, its films are linked to Wikidata entities with English labels too: a
    # grounded fact still names its subject in the domain's language, as the gold attrs do
    gold_names = {a["name"] for d in gold for m in d["messages"] for a in m.get("attrs", [])}
    predicted = {
        a["name"] for d in grounded for m in d["messages"] for a in m.get("predicted_attrs", m.get("attrs", []))
    }
    assert predicted and not {name for name in predicted if name.isascii()}
    assert len(predicted & gold_names) >= len(gold_names) - 1


def test_demo_describes_splits_and_documents_the_bundled_dialogues(demo):
    workdir, stdout = demo
    lines = section(stdout, "corpus")
    gold = json.loads(DIALOGUES.read_text(encoding="utf-8"))
    assert int(value(lines, "dialogues")) == len(gold)
    assert int(value(lines, "utterances")) == sum(len(d["messages"]) for d in gold)
    assert 1 < float(value(lines, "tokens per utterance")) < 20
    assert 0 < float(value(lines, "triples per dialogue")) < 10
    split = workdir / "demo" / "exports" / "split"
    parts = {
        name: json.loads((split / f"{name}.json").read_text(encoding="utf-8")) for name in ("train", "dev", "test")
    }
    assert sum(len(p) for p in parts.values()) == len(gold) and all(parts.values())
    assert value(lines, "test").startswith(f"{len(parts['test'])} dialogues, topic leakage 0.000")
    card = (workdir / "demo" / "exports" / "dialogues.card.md").read_text(encoding="utf-8")
    assert "dialogues.json" in card


def test_demo_eval_finds_the_changed_values_as_hallucinations(demo):
    workdir, stdout = demo
    lines = section(stdout, "eval")
    assert float(value(lines, "f1")) < 1 and float(value(lines, "bleu4")) > 0.5
    assert 0 < float(value(lines, "distinct2")) <= 1
    assert 0 < float(value(lines, "k_precision")) < 1
    assert int(value(lines, "hallucinations")) >= 1
    rows = [
        json.loads(line)
        for line in (workdir / "demo" / "exports" / "system.eval.jsonl").read_text(encoding="utf-8").splitlines()
    ]
    flagged = {row["id"] for row in rows if row["hallucinations"]}
    assert int(value(lines, "responses with a hallucination")) == len(flagged) >= 1
    changed = {row["id"] for row in rows if row["prediction"] != row["gold"]}
    assert len(changed) == len(WRONG_VALUES)
    assert flagged == changed  # every changed response is a hallucination, and only those
    assert int(value(lines, "dialogues")) == 8
