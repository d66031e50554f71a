"""`kgforge export`: dataset layouts, checks before writing, manifest and ids, KdConv attr coverage."""

from __future__ import annotations

import json
import os
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.text import normalise_label
from kgforge.exports.formats import Dialogue, write_export
from tests.dialogue_kg import duconv_sample_kg

LABEL_TEXT = st.text(alphabet=st.sampled_from(list('ab"{}[]\\\'/:,;\n\t 电影周迅·-<>&%') + ["\u00e9", "\U0001F600"]),
                     min_size=1, max_size=12)


@pytest.fixture(scope="module")
def duconv_goals(tmp_path_factory):
    from tests.conftest import run_cli

    workdir, source = duconv_sample_kg(tmp_path_factory)
    goals = workdir / "goals.jsonl"
    run_cli("goals", "duconv", "--n", "40", "--seed", "2", "--out", str(goals), "--workdir", str(workdir))
    return workdir, goals, source


def export(cli, workdir: Path, goals: Path, fmt: str, out: Path, *extra: str, check: bool = True):
    result = cli("export", "duconv", "--goals", str(goals), "--format", fmt, "--out", str(out),
                 "--workdir", str(workdir), "--json", *extra, check=check)
    return json.loads(result.stdout) if check else result


def shape(value):
    """The nesting of a JSON value (types, not contents)."""
    if isinstance(value, list):
        return ["list", sorted({json.dumps(shape(v)) for v in value})]
    if isinstance(value, dict):
        return {k: shape(v) for k, v in value.items()}
    return type(value).__name__


def test_duconv_layout_matches_the_real_data(cli, duconv_goals, tmp_path):
    workdir, goals, source = duconv_goals
    out = tmp_path / "train.txt"
    report = export(cli, workdir, goals, "duconv", out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    real = json.loads(source.read_text(encoding="utf-8").splitlines()[0])
    assert report["dialogues"] == len(lines) == 40
    goal_records = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    for line, goal in zip(lines, goal_records):
        assert list(line) == ["goal", "knowledge", "conversation"]
        assert shape(line["goal"]) == shape(real["goal"][:1] + line["goal"][1:]) and line["goal"][0][0] == "START"
        assert shape(line["knowledge"]) == shape(real["knowledge"])
        knowledge = [tuple(t) for t in line["knowledge"]]
        assert len(knowledge) == len(set(knowledge))
        for triple in line["goal"][1:]:  # the goal path lies inside the subgraph
            assert tuple(triple) in knowledge
        plain = [tuple(normalise_label(x) for x in t) for t in knowledge]  # segmentation spaces taken out
        assert [normalise_label(x) for x in line["goal"][0][1:]] == goal["topic_labels"]
        for label, kind in zip(goal["topic_labels"], goal["topic_types"]):  # the 领域 fact is always there
            if kind:
                assert (label, "领域", {"film": "电影", "star": "明星"}[kind]) in plain
        for label in goal["topic_labels"]:  # budget: 7 facts per topic + its type fact + the path
            assert sum(t[0] == label for t in plain) <= 8 + len(line["goal"]) - 1
    # word-segmented like the real files (comments, Information), and whole with --no-segment
    assert any(" " in x and " " in normalise_label(x, segmented=False) for line in lines
               for t in line["knowledge"] for x in t if normalise_label(x) != x)
    whole = tmp_path / "whole.txt"
    export(cli, workdir, goals, "duconv", whole, "--no-segment")
    unsegmented = [json.loads(line) for line in whole.read_text(encoding="utf-8").splitlines()]
    assert [line["knowledge"] for line in unsegmented] != [line["knowledge"] for line in lines]
    assert [[[normalise_label(x) for x in t] for t in line["knowledge"]] for line in lines] == \
        [[[normalise_label(x) for x in t] for t in line["knowledge"]] for line in unsegmented]
    kept = {x for line in unsegmented for t in line["knowledge"] for x in t if normalise_label(x) != x}
    assert kept and kept <= {x for line in lines for t in line["knowledge"] for x in t}  # DuConv's own cuts stay
    sample = tmp_path / "test.txt"
    export(cli, workdir, goals, "duconv", sample, "--layout", "sample")
    first = json.loads(sample.read_text(encoding="utf-8").splitlines()[0])
    assert list(first) == ["goal", "knowledge", "history", "response"]


def test_ids_and_manifest_are_stable(cli, duconv_goals, tmp_path):
    workdir, goals, _ = duconv_goals
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    report = export(cli, workdir, goals, "duconv", a)
    export(cli, workdir, goals, "duconv", b)
    assert a.read_bytes() == b.read_bytes()
    ids = Path(report["ids_file"]).read_text().splitlines()
    assert ids == (tmp_path / "b.jsonl.ids.txt").read_text().splitlines() and len(set(ids)) == 40
    manifest = json.loads((tmp_path / "a.jsonl.manifest.json").read_text(encoding="utf-8"))
    store = json.loads((workdir / "duconv" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["build_id"] == store["build_id"] and len(manifest["store_hash"]) == 64
    assert manifest["schema"]["version"] == 1 and manifest["seeds"] == [2]
    assert manifest["options"]["fmt"] == "duconv" and manifest["checks"]["failed"] == 0
    assert set(manifest["graphs"]) == set(store["graphs"])


def test_generic_jsonl_and_parquet_load(cli, duconv_goals, tmp_path):
    workdir, goals, _ = duconv_goals
    jsonl, parquet = tmp_path / "d.jsonl", tmp_path / "d.parquet"
    export(cli, workdir, goals, "jsonl", jsonl)
    export(cli, workdir, goals, "parquet", parquet)
    frame = pl.read_ndjson(jsonl)
    assert frame.height == 40 and pl.read_parquet(parquet).height == 40
    record = json.loads(jsonl.read_text(encoding="utf-8").splitlines()[0])
    assert record["dialogue_id"].startswith("dlg-") and record["topics"][0]["iri"].startswith("https://")
    assert {"s", "p", "o", "s_label", "p_label", "o_label", "role", "graph"} <= set(record["triples"][0])
    # the HuggingFace `datasets` JSON loader needs one object per line with one type per key
    keys = {tuple(json.loads(line)) for line in jsonl.read_text(encoding="utf-8").splitlines()}
    assert len(keys) == 1
    datasets = pytest.importorskip("datasets")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset("json", data_files=str(jsonl), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 40 and loaded[0]["dialogue_id"] == record["dialogue_id"]


def test_durecdial_layout(cli, duconv_goals, tmp_path):
    workdir, goals, _ = duconv_goals
    out = tmp_path / "durecdial.txt"
    export(cli, workdir, goals, "durecdial", out)
    line = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    assert list(line) == ["goal", "knowledge", "user_profile", "situation", "conversation"]
    assert line["goal"].startswith("[1]问答(『") and line["goal"].endswith("-->[3]再见")


def test_checks_stop_a_bad_export(cli, duconv_goals, tmp_path):
    workdir, goals, _ = duconv_goals
    records = [json.loads(line) for line in goals.read_text(encoding="utf-8").splitlines()]
    records[0]["path"][0]["o"] = "https://kgforge.org/entity/name/not-there"
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "x.jsonl"
    result = export(cli, workdir, tampered, "duconv", out, check=False)
    assert result.returncode == 1 and "goal path triple not in the graph" in result.stderr
    assert not out.exists()
    report = export(cli, workdir, tampered, "duconv", out, "--skip-invalid")
    assert report["dialogues"] == 39 and report["checks"]["skipped"] == 1
    # the DuConv graph has zh labels only: an English export is refused, not silently mixed
    result = export(cli, workdir, goals, "duconv", tmp_path / "en.jsonl", "--lang", "en", check=False)
    assert result.returncode == 1 and "no en label" in result.stderr


def test_add_related_without_a_bundle_is_a_clear_error(cli, duconv_goals, tmp_path):
    workdir, goals, _ = duconv_goals
    result = export(cli, workdir, goals, "duconv", tmp_path / "r.jsonl", "--add-related", "default", check=False)
    assert result.returncode == 1
    assert "kgforge.embed.related" in result.stderr or "no model bundle" in result.stderr
    assert "Traceback" not in result.stderr


def test_kdconv_dialogues_attr_coverage(cli, workdir, shared, tmp_path):
    kb, dev = shared("kdconv/travel/kb_travel.json"), shared("kdconv/travel/dev.json")
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    out = tmp_path / "dev.json"
    report = json.loads(cli("export", "travel", "--dialogues", str(dev), "--format", "kdconv", "--out", str(out),
                            "--workdir", str(workdir), "--json").stdout)
    assert report["attr_coverage"] >= 0.95 and report["attrs"] > 1000
    exported, source = json.loads(out.read_text(encoding="utf-8")), json.loads(dev.read_text(encoding="utf-8"))
    assert len(exported) == len(source) == report["dialogues"]
    for mine, theirs in zip(exported, source):
        assert set(mine) == {"name", "messages"} and mine["name"] == theirs["name"]
        assert [m["message"] for m in mine["messages"]] == [m["message"] for m in theirs["messages"]]
        for message in mine["messages"]:
            assert set(message) <= {"message", "attrs"} and message.get("attrs", [None]) != []
            for attr in message.get("attrs", []):
                assert set(attr) == {"name", "attrname", "attrvalue"}
    assert any(a["attrname"] == "周边景点" for m in exported[0]["messages"] for a in m.get("attrs", []))


HOSTILE = ['引号"名"', "花括号{景点}", "反斜杠\\景点", "['列表']", "a\"}, {\"b", "单引号'景点'"]


def test_hostile_names_survive_every_format(cli, workdir, tmp_path):
    kb = {name: [[name, "周边景点", HOSTILE[(i + 1) % len(HOSTILE)]], [name, "门票", f'{{"免费"}} {i}'],
                 [name, "Information", 'line "one"\nline {two} \\ end']] for i, name in enumerate(HOSTILE)}
    kb_file = tmp_path / "kb_travel.json"
    kb_file.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    cli("build", "travel", "--source", f"kdconv:{kb_file}", "--workdir", str(workdir))
    goals = tmp_path / "g.jsonl"
    cli("goals", "travel", "--n", "4", "--hops", "1", "--out", str(goals), "--workdir", str(workdir))
    for fmt, extra in (("duconv", "--no-segment"), ("duconv", "--segment"), ("kdconv", ""), ("durecdial", ""),
                       ("jsonl", "")):
        out = tmp_path / f"out.{fmt}"
        cli("export", "travel", "--goals", str(goals), "--format", fmt, "--out", str(out), "--workdir", str(workdir),
            *[extra] if extra else [])
        text = out.read_text(encoding="utf-8")
        records = json.loads(text) if fmt == "kdconv" else [json.loads(line) for line in text.splitlines()]
        assert len(records) == 4
        if extra == "--segment":  # cut into words: each name comes back whole once the cuts are taken out
            strings = {normalise_label(x) for r in records for t in r["knowledge"] for x in t}
            assert len({normalise_label(n) for n in HOSTILE} & strings) >= 2
            continue
        flat = json.dumps(records, ensure_ascii=False)
        names_seen = {n for n in HOSTILE if json.dumps(n, ensure_ascii=False) in flat}
        assert len(names_seen) >= 2
    dialogues = tmp_path / "dev.json"
    dialogues.write_text(json.dumps([{"name": HOSTILE[0], "messages": [{"message": f"去过{HOSTILE[1]}吗", "attrs": [
        {"name": HOSTILE[1], "attrname": "门票", "attrvalue": '{"免费"} 1'}]}]}], ensure_ascii=False), encoding="utf-8")
    report = json.loads(cli("export", "travel", "--dialogues", str(dialogues), "--format", "kdconv", "--out",
                            str(tmp_path / "d.json"), "--workdir", str(workdir), "--json").stdout)
    assert report["attr_coverage"] == 1.0


def _dialogue(labels: list[str]) -> Dialogue:
    a, b, value = labels[0], labels[1], labels[2]
    triples = [{"s": "https://x/a", "p": "https://x/r", "o": "https://x/b", "o_is_entity": True, "s_label": a,
                "p_label": "主演", "o_label": b, "role": "path", "graph": "https://x/g"},
               {"s": "https://x/a", "p": "https://x/v", "o": value, "o_is_entity": False, "s_label": a,
                "p_label": "类型", "o_label": value, "role": "fact", "graph": "https://x/g"}]
    return Dialogue(dialogue_id="dlg-1", kind="one_step", topics=["https://x/a", "https://x/b"],
                    topic_labels=[a, b], topic_types=["film", None], path=triples[:1], triples=triples,
                    goal_id="g-1", seed=0)


@given(st.lists(LABEL_TEXT, min_size=3, max_size=3))
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
def test_formats_round_trip_any_label(tmp_path, labels):
    d = _dialogue(labels)
    segmented = tmp_path / "segmented.duconv"
    write_export([d], "duconv", segmented, "build-1", "zh")
    record = json.loads(segmented.read_text(encoding="utf-8").splitlines()[0])
    assert [normalise_label(x) for x in record["knowledge"][1]] == [normalise_label(x) for x in [labels[0], "类型", labels[2]]]
    for fmt in ("duconv", "kdconv", "durecdial", "jsonl", "parquet"):
        out = tmp_path / f"x.{fmt}"
        write_export([d], fmt, out, "build-1", "zh", segmented=False)
        if fmt == "parquet":
            record = pl.read_parquet(out).to_dicts()[0]
        elif fmt == "kdconv":
            record = json.loads(out.read_text(encoding="utf-8"))[0]
        else:
            record = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
        if fmt == "duconv":
            assert record["goal"] == [["START", labels[0], labels[1]], [labels[0], "主演", labels[1]]]
            assert record["knowledge"][1] == [labels[0], "类型", labels[2]]
        elif fmt == "kdconv":
            attrs = record["messages"][0]["attrs"]
            assert record["name"] == labels[0] and attrs[1] == {"name": labels[0], "attrname": "类型",
                                                                 "attrvalue": labels[2]}
        elif fmt == "durecdial":
            assert f"『{labels[0]}』" in record["goal"] and record["knowledge"][0][2] == labels[1]
        else:
            assert [t["o_label"] for t in record["triples"]] == [labels[1], labels[2]]
            assert record["topics"][0]["label"] == labels[0]


def test_add_related_from_a_trained_bundle(cli, workdir, shared, tmp_path):
    kb = shared("kdconv/travel/kb_travel.json")
    w = ("--workdir", str(workdir))
    cli("build", "travel", "--source", f"kdconv:{kb}", *w)
    goals = tmp_path / "g.jsonl"
    cli("goals", "travel", "--n", "6", "--hops", "1", "--out", str(goals), *w)
    out = tmp_path / "r.jsonl"
    missing = cli("export", "travel", "--goals", str(goals), "--format", "jsonl", "--out", str(out),
                  "--add-related", "default", *w, check=False)
    assert missing.returncode == 1 and "kgforge embed travel" in missing.stderr and not out.exists()
    cli("embed", "travel", "--model", "DistMult", "--dim", "8", "--epochs", "1", "--evaluation", "none", *w)
    cli("export", "travel", "--goals", str(goals), "--format", "jsonl", "--out", str(out),
        "--add-related", "default", *w)
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    related = [t for r in records for t in r["triples"] if t["role"] == "related"]
    assert related and all(t["p"] == "https://kgforge.org/ontology#related" and t["o_label"] for t in related)
    assert all(t["s"] in {x["iri"] for x in r["topics"]} for r in records for t in r["triples"]
               if t["role"] == "related")
