"""The DuRecDial importer: every session layout's knowledge lands; bad records are quarantined by line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge.store.snapshot import Snapshot


def _session(**fields) -> dict:
    base = {
        "goal": "[1]问答(『周迅』)-->[2]再见",
        "user_profile": {"姓名": "张三"},
        "situation": "",
        "knowledge": [["周迅", "主演", "苏州河"], ["苏州河", "评论", "很 好看"]],
        "conversation": ["[1]你好", "[2]再见"],
    }
    return {**base, **fields}


def test_bad_sessions_are_quarantined_by_line_and_the_good_ones_land(tmp_path, workdir, cli):
    lines = [
        json.dumps(_session(), ensure_ascii=False),
        '{"goal": "[1]',
        json.dumps(["not", "a", "session"]),
        json.dumps({"goal": "x", "conversation": []}),
        json.dumps(_session(knowledge=[["周迅", "主演"], ["周迅", "星座", "天秤座"]]), ensure_ascii=False),
        json.dumps({"goals": "[1]x", "kg": [["陈坤", "主演", "苏州河"]], "conversation": []}, ensure_ascii=False),
        json.dumps(
            _session(knowledge=[[["张柏芝", "主演", "星愿"]], [], [["星愿", "类型", "爱情 喜剧"]]]), ensure_ascii=False
        ),  # DuRecDial 2.0 dev/test: one knowledge list per utterance
    ]
    source = tmp_path / "dev.txt"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("build", "durecdial", "--source", f"durecdial:{source}", "--workdir", str(workdir), "--json")
    summary = json.loads(result.stdout)
    quarantine = [
        json.loads(line)
        for f in (workdir / "durecdial" / "quarantine").glob("*.jsonl")
        for line in f.read_text(encoding="utf-8").splitlines()
    ]
    bad = {entry["location"]: entry["reason"] for entry in quarantine}
    assert bad["line 2"].startswith("malformed JSON") and "expected a JSON object" in bad["line 3"]
    assert "missing field(s): knowledge (or kg)" in bad["line 4"] and "[head, relation, tail]" in bad["line 5"]
    assert set(bad) == {"line 2", "line 3", "line 4", "line 5"} and f"{source} line 2" in result.stderr
    assert summary["records_ok"] == 4
    tables = Snapshot.open("durecdial", workdir).tables()
    labels = tables.label_map("zh")
    facts = {
        (labels[s], labels.get(p, p), labels.get(o, o)) for s, p, o in tables.facts.select("s", "p", "o").iter_rows()
    }
    assert {
        ("周迅", "主演", "苏州河"),
        ("周迅", "星座", "天秤座"),
        ("陈坤", "主演", "苏州河"),
        ("张柏芝", "主演", "星愿"),
        ("星愿", "类型", "爱情喜剧"),
    } <= facts
    assert ("苏州河", "评论", "很 好看") in facts  # free text is kept as written
    films = set(tables.types.filter(tables.types["class"].str.ends_with("/film"))["iri"].to_list())
    assert {iri for iri, label in labels.items() if label in ("苏州河", "星愿")} <= films


@pytest.mark.slow  # builds the real LIC 2020 resource file
def test_the_shared_lic2020_resource_file_builds(shared, workdir, cli):
    source = shared("durecdial/lic2020_baseline_resource_dev.txt")
    summary = json.loads(
        cli("build", "durecdial", "--source", f"durecdial:{source}", "--workdir", str(workdir), "--json").stdout
    )
    assert summary["records_ok"] == 100
    triples = sum(len(json.loads(line)["knowledge"]) for line in Path(source).read_text(encoding="utf-8").splitlines())
    assert summary["sources"][0]["counts"]["facts"] + summary["sources"][0]["quarantined"] == triples
    stats = json.loads(cli("stats", "durecdial", "--workdir", str(workdir), "--json").stdout)
    assert {"主演", "演唱", "评论"} <= set(stats["relations_by_count"]) and stats["entities_by_type"]["电影"] > 10


def test_the_heads_of_starring_and_singing_are_typed_stars(tmp_path, workdir, cli):
    source = tmp_path / "dev.txt"
    source.write_text(
        json.dumps(
            _session(
                knowledge=[
                    ["周迅", "主演", "苏州河"],
                    ["王菲", "演唱", "红豆"],
                    ["某饭店", "特色菜", "糖醋排骨"],
                    ["苏州河", "评分", "8.0"],
                ]
            ),
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    cli("build", "durecdial", "--source", f"durecdial:{source}", "--workdir", str(workdir), "--json")
    tables = Snapshot.open("durecdial", workdir).tables()
    labels = tables.label_map("zh")
    typed = {(labels[iri], cls.rsplit("/", 1)[-1]) for iri, cls in tables.types.select("iri", "class").iter_rows()}
    assert typed == {
        ("周迅", "star"),
        ("王菲", "star"),
        ("苏州河", "film"),
        ("红豆", "song"),
        ("某饭店", "poi"),
        ("糖醋排骨", "food"),
    }
