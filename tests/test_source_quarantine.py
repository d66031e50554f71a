"""Bad input: clear errors naming file and line; good records land; bad ones are quarantined."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge.core.errors import InputError, KgforgeError
from kgforge.publish.transaction import build, parse_source


def _good_session(topic: str) -> dict:
    return {
        "goal": [["START", topic, "某明星"], ["某明星", "主演", topic]],
        "knowledge": [[topic, "领域", "电影"], [topic, "主演", "某明星"], ["某明星", "领域", "明星"]],
        "conversation": ["你好", "你好"],
    }


def _quarantine(workdir: Path, domain: str) -> list[dict]:
    return [
        json.loads(line)
        for f in sorted((workdir / domain / "quarantine").glob("*.jsonl"))
        for line in f.read_text(encoding="utf-8").splitlines()
    ]


def test_duconv_bad_lines_are_quarantined_with_line_and_reason(tmp_path, workdir, cli):
    lines = [
        json.dumps(_good_session("电影甲"), ensure_ascii=False),
        '{"goal": [], "knowledge": [[',  # 2: malformed JSON
        json.dumps({"goal": [], "conversation": []}),  # 3: missing knowledge
        json.dumps(["not", "an", "object"]),  # 4: wrong type
        "",  # blank lines are fine
        json.dumps({"goal": [], "knowledge": [["a", "b"]], "history": []}),  # 6: bad triple
        json.dumps(_good_session("电影乙"), ensure_ascii=False),
    ]
    source = tmp_path / "sessions.jsonl"
    source.write_text("\n".join(lines) + "\n", encoding="utf-8")
    result = cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir), "--json")
    summary = json.loads(result.stdout)
    assert summary["records_ok"] == 3  # line 6 is a session whose only triple was rejected
    assert summary["records_bad"] == 4
    bad = {entry["location"]: entry["reason"] for entry in _quarantine(workdir, "duconv")}
    assert bad["line 2"].startswith("malformed JSON")
    assert "missing field(s): knowledge" in bad["line 3"]
    assert "expected a JSON object" in bad["line 4"]
    assert "[head, relation, tail]" in bad["line 6"]
    assert all(entry["source"] == str(source) for entry in _quarantine(workdir, "duconv"))
    assert f"{source} line 2: malformed JSON" in result.stderr  # warnings name file and line as they happen
    stats = json.loads(cli("stats", "duconv", "--workdir", str(workdir), "--json").stdout)
    assert stats["entities_by_type"] == {"电影": 2, "明星": 1}


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", ":1: file is empty"),
        ("   \n\n", ":1: file is empty"),
        ('\n\n[["a", "b", "c"]]', ":3: top-level JSON must be an object"),
    ],
)
def test_unusable_kb_files_fail_with_file_and_line(tmp_path, workdir, cli, content, message):
    source = tmp_path / "kb_travel.json"
    source.write_text(content, encoding="utf-8")
    result = cli("build", "travel", "--source", f"kdconv:{source}", "--workdir", str(workdir), check=False)
    assert result.returncode == 1
    assert f"{source}{message}" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (workdir / "travel" / "store").exists()


def test_kb_with_bad_entries_keeps_the_good_ones(tmp_path, workdir):
    source = tmp_path / "kb_travel.json"
    source.write_text(
        "{\n"
        '  "甲": [["甲", "地址", "一号"], ["甲", "周边景点", "乙"]],\n'
        '  "乙": [["乙", "门票", 5]],\n'
        '  "丙": "not a list",\n'
        '  "丁": [["丁", "门票", "免费"]]\n'
        "}\n",
        encoding="utf-8",
    )
    summary = build("travel", [parse_source(f"kdconv:{source}")], workdir, show_progress=False).as_dict()
    assert summary["records_bad"] == 2
    quarantined = {(e["location"], e["reason"].split(":")[0]) for e in _quarantine(workdir, "travel")}
    assert quarantined == {("line 3", "entry '乙'"), ("line 4", "entry '丙'")}
    assert summary["graphs"]["https://kgforge.org/graph/kdconv/kb_travel"] > 0


def test_kdconv_dialogues_with_bad_attrs_keep_the_good_ones(tmp_path, workdir):
    good = {
        "message": "去过甲吗",
        "attrs": [
            {"name": "甲", "attrname": "门票", "attrvalue": "免费"},
            {"name": "甲", "attr_name": "地址", "attrvalue": "一号"},
        ],
    }
    dialogues = [{"name": "甲", "messages": [good]}, {"name": "乙", "messages": [{"message": "x", "attrs": 3}]}]
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(dialogues, ensure_ascii=False, indent=1), encoding="utf-8")
    summary = build("travel", [parse_source(f"kdconv-dialogues:{source}")], workdir, show_progress=False).as_dict()
    assert summary["records_bad"] == 2 and summary["graphs"]["https://kgforge.org/graph/kdconv-dialogues/dev"] > 0
    by_reason = {e["reason"].split(":")[-1].strip(): e for e in _quarantine(workdir, "travel")}
    assert by_reason["a message's 'attrs' must be a list"]["location"].startswith("line ")
    [misspelled] = [e for e in by_reason.values() if "attr" in e["reason"] and "dialogue '甲'" in e["reason"]]
    assert json.loads(misspelled["record"]) == {"name": "甲", "attr_name": "地址", "attrvalue": "一号"}  # as written


def test_truncated_json_keeps_members_before_the_error(tmp_path, workdir):
    source = tmp_path / "kb_travel.json"
    source.write_text('{\n "甲": [["甲", "地址", "一号"]],\n "乙": [["乙", "地址",', encoding="utf-8")
    summary = build("travel", [parse_source(f"kdconv:{source}")], workdir, show_progress=False).as_dict()
    assert summary["records_ok"] == 1 and summary["records_bad"] == 1
    [entry] = _quarantine(workdir, "travel")
    assert entry["location"] == "line 3" and "the rest of the file was not read" in entry["reason"]


def test_missing_file_and_unknown_kind(tmp_path, workdir):
    with pytest.raises(InputError, match="no such file"):
        build("travel", [parse_source(f"kdconv:{tmp_path / 'absent.json'}")], workdir, show_progress=False)
    with pytest.raises(KgforgeError, match="unknown source kind 'kdcon'.*kdconv"):
        build("travel", [parse_source(f"kdcon:{tmp_path}")], workdir, show_progress=False)
    with pytest.raises(KgforgeError, match="KIND:PATH"):
        parse_source("kb_travel.json")
