"""`kgforge export --dialogues`: real DuConv, KdConv and DuRecDial dialogues re-grounded losslessly — every
field kept, the graph's facts beside the gold annotation, samples cut as the baselines cut them, an honest
coverage report, refreshed values listed, bad records reported by file and line."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from kgforge.core.text import normalise_label
from kgforge.exports import format_named
from tests.conftest import run_cli, shared_file

# domain, build source (kind, shared path), dialogues, format, the field the retrieved facts go in
SAMPLES = {
    "duconv": ("duconv", "duconv/dev.head250.jsonl", "duconv/dev.head250.jsonl", "duconv"),
    "travel": ("kdconv", "kdconv/travel/kb_travel.json", "kdconv/travel/dev.json", "kdconv"),
    "film": ("kdconv-dialogues", "kdconv/film/dev.json", "kdconv/film/dev.json", "kdconv"),
    "music": ("kdconv-dialogues", "kdconv/music/dev.json", "kdconv/music/dev.json", "kdconv"),
    "durecdial": (
        "durecdial",
        "durecdial/lic2020_baseline_resource_dev.txt",
        "durecdial/lic2020_baseline_resource_dev.txt",
        "durecdial",
    ),
}


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """One workdir holding every sample domain, each built from the same data as its dialogues."""
    workdir = tmp_path_factory.mktemp("kg")
    cache: dict[str, Path] = {}

    def build(domain: str) -> Path:
        if domain not in cache:
            kind, path, _, _ = SAMPLES[domain]
            run_cli(
                "build",
                domain,
                "--source",
                f"{kind}:{shared_file(path)}",
                "--no-schema-sources",
                "--workdir",
                str(workdir),
                "--json",
            )
            cache[domain] = workdir
        return workdir

    return build


def export(workdir: Path, domain: str, dialogues: Path, fmt: str, out: Path, *extra: str, check: bool = True):
    result = run_cli(
        "export",
        domain,
        "--dialogues",
        str(dialogues),
        "--format",
        fmt,
        "--out",
        str(out),
        "--workdir",
        str(workdir),
        "--json",
        *extra,
        check=check,
    )
    return json.loads(result.stdout) if check else result


def read(path: Path) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if text.lstrip().startswith("[") else [json.loads(line) for line in text.splitlines()]


def without_pool(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k != "retrieved_knowledge"}
    if "messages" in out:
        out["messages"] = [{k: v for k, v in m.items() if k != "retrieved_attrs"} for m in out["messages"]]
    return out


def gold_triples(record: dict) -> list[tuple[str, str, str]]:
    if "messages" in record:
        return [(a["name"], a["attrname"], a["attrvalue"]) for m in record["messages"] for a in m.get("attrs", [])]
    return [tuple(t) for t in record["knowledge"]]


def pool_triples(record: dict) -> list[tuple[str, str, str]]:
    if "messages" in record:
        return [
            (a["name"], a["attrname"], a["attrvalue"]) for m in record["messages"] for a in m.get("retrieved_attrs", [])
        ]
    return [tuple(t) for t in record["retrieved_knowledge"]]


@pytest.mark.slow  # every real shared dialogue re-grounded and read back
@pytest.mark.parametrize("domain", list(SAMPLES))
def test_round_trip_keeps_every_field_of_every_shared_dialogue(built, tmp_path, domain):
    """An unchanged dialogue through a graph built from the same data comes back field for field; asked to
    refresh its gold values from that graph, nothing changes; the report counts what the file holds."""
    workdir = built(domain)
    _, _, dialogues_path, fmt = SAMPLES[domain]
    source = shared_file(dialogues_path)
    out = tmp_path / "out.txt"
    report = export(workdir, domain, source, fmt, out, "--refresh-attrs")
    original, exported = read(source), read(out)
    assert [without_pool(r) for r in exported] == original
    gold = sum(len(gold_triples(r)) for r in original)
    assert report["dialogues_in"] == report["dialogues"] == len(original) and report["dialogues_rejected"] == 0
    assert report["gold_triples"] == gold and report["gold_kept_exactly"]["kept"] == gold
    assert report["refresh"]["changed"] == 0 and Path(report["refresh"]["changes_file"]).read_text() == ""
    assert report["reader_warnings"] == 0 and report["rejected_file"] is None
    # the coverage the report claims, recounted from the file: gold triples whose normalised form is retrieved
    norm = lambda t: tuple(normalise_label(x, segmented=fmt != "kdconv") for x in t)  # noqa: E731
    found = sum(
        norm(t) in {norm(p) for p in pool_triples(e)} for o, e in zip(original, exported) for t in gold_triples(o)
    )
    assert abs(found - report["gold_in_retrieved"]) <= 0.02 * gold
    assert report["attr_coverage"] >= 0.85 and report["gold_in_graph"] >= gold - 1
    assert all(pool_triples(e) or not report["gold_in_retrieved"] for e in exported[:1])


def test_kdconv_retrieved_facts_sit_beside_gold_attrs_on_the_message_naming_their_topic(built, tmp_path):
    workdir = built("travel")
    source = shared_file("kdconv/travel/dev.json")
    out = tmp_path / "dev.json"
    report = export(workdir, "travel", source, "kdconv", out)
    exported = read(out)
    # the coverage report counts the dialogues written without a retrieved fact, not "all of them"
    without = sum(not any(m.get("retrieved_attrs") for m in d["messages"]) for d in exported)
    assert report["dialogues_without_retrieved"] == without < report["dialogues"]
    first = exported[0]
    assert first["messages"][0]["retrieved_attrs"][0]["name"] == first["name"]  # the start topic, first message
    for dialogue in exported:
        for message in dialogue["messages"]:
            assert set(message) <= {"message", "attrs", "retrieved_attrs"}
            for attr in message.get("retrieved_attrs", []):
                assert set(attr) == {"name", "attrname", "attrvalue"} and attr["attrname"] != "实体类型"
    retrieved = [a for d in exported for m in d["messages"] for a in m.get("retrieved_attrs", [])]
    assert {a["attrname"] for a in retrieved} <= {
        "周边景点",
        "Information",
        "地址",
        "门票",
        "开放时间",
        "建议游玩时间",
        "电话",
    }


def test_film_and_music_topics_are_entities_never_classes_or_ordinary_words(built, tmp_path):
    for domain in ("film", "music"):
        workdir = built(domain)
        source = shared_file(f"kdconv/{domain}/dev.json")
        out = tmp_path / f"{domain}.json"
        report = export(workdir, domain, source, "kdconv", out)
        assert report["exported_share"] >= 0.95 and report["attr_coverage"] >= 0.9
        exported = read(out)
        heads = Counter(a["name"] for d in exported for m in d["messages"] for a in m.get("retrieved_attrs", []))
        assert not {"电影", "歌手", "专辑", "歌曲", "明星"} & set(heads)
        if domain == "music":  # the song 喜欢 only where it is the song: the dialogues whose gold names it
            gold = sum(
                any("喜欢" in (a["name"], a["attrvalue"]) for m in d["messages"] for a in m.get("attrs", []))
                for d in read(source)
            )
            retrieved = sum(
                any("喜欢" in (a["name"], a["attrvalue"]) for m in d["messages"] for a in m.get("retrieved_attrs", []))
                for d in exported
            )
            mentioned = sum(any("喜欢" in m["message"] for m in d["messages"]) for d in exported)
            assert retrieved <= gold + 1 and mentioned > 10 * gold


@pytest.mark.slow  # the real DuConv, KdConv and DuRecDial sets re-grounded
def test_samples_are_cut_as_the_baselines_cut_them(built, tmp_path):
    duconv = shared_file("duconv/dev.head250.jsonl")
    out = tmp_path / "test.txt"
    report = export(built("duconv"), "duconv", duconv, "duconv", out, "--layout", "sample")
    sessions, samples = read(duconv), read(out)
    expected = [(s, j) for s in sessions for j in range(0, len(s["conversation"]), 2)]  # convert_session_to_sample.py
    assert len(samples) == len(expected) == report["records"] == 1114
    for sample, (session, j) in zip(samples, expected):
        assert without_pool(sample) == {
            "goal": session["goal"],
            "knowledge": session["knowledge"],
            "history": session["conversation"][:j],
            "response": session["conversation"][j],
        }
    ids = (tmp_path / "test.txt.ids.txt").read_text().splitlines()
    assert len(ids) == 1114 and ids[0].endswith("/0")
    resource = shared_file("durecdial/lic2020_baseline_resource_dev.txt")
    out = tmp_path / "resource-test.txt"
    export(built("durecdial"), "durecdial", resource, "durecdial", out, "--layout", "resource-sample")
    sessions, samples = read(resource), read(out)
    expected = [(s, j) for s in sessions for j in range(0 if s["label"] == "bot" else 1, len(s["conversation"]), 2)]
    assert len(samples) == len(expected) == 770
    for sample, (session, j) in zip(samples, expected):
        assert sample["history"] == [session["name"], session["situation"], *session["conversation"][:j]]
        assert sample["response"] == session["conversation"][j] and sample["goal"] == session["goal"]
    result = export(built("duconv"), "duconv", duconv, "duconv", tmp_path / "x", "--layout", "session")
    assert result["layout"] == "session"
    refused = export(
        built("travel"), "travel", shared_file("kdconv/travel/dev.json"), "duconv", tmp_path / "y", check=False
    )
    assert refused.returncode == 1 and "kdconv, jsonl or parquet" in refused.stderr


def test_refresh_rewrites_what_a_newer_graph_states_and_lists_every_change(workdir, tmp_path):
    dialogues = [
        {
            "name": "故宫",
            "messages": [
                {"message": "故宫门票多少钱？"},
                {"message": "60元。", "attrs": [{"name": "故宫", "attrname": "门票", "attrvalue": "60元"}]},
                {
                    "message": "附近有景山公园。",
                    "attrs": [
                        {"name": "故宫", "attrname": "周边景点", "attrvalue": "景山公园"},
                        {"name": "故宫", "attrname": "地址", "attrvalue": "旧地址"},
                    ],
                },
            ],
        }
    ]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(dialogues, ensure_ascii=False), encoding="utf-8")
    kb = {
        "故宫": [
            ["故宫", "门票", "40元"],
            ["故宫", "周边景点", "景山公园"],
            ["故宫", "周边景点", "北海公园"],
            ["故宫", "地址", "新地址一"],
            ["故宫", "地址", "新地址二"],
        ],
        "景山公园": [["景山公园", "门票", "2元"], ["景山公园", "周边景点", "故宫"]],
    }
    kb_file = tmp_path / "kb_travel.json"
    kb_file.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    run_cli("build", "travel", "--source", f"kdconv:{kb_file}", "--workdir", str(workdir))
    out = tmp_path / "out.json"
    kept = export(workdir, "travel", path, "kdconv", out)
    assert [without_pool(d) for d in read(out)] == dialogues and "refresh" not in kept
    report = export(workdir, "travel", path, "kdconv", out, "--refresh-attrs")
    refreshed = read(out)[0]["messages"]
    assert refreshed[1]["attrs"] == [{"name": "故宫", "attrname": "门票", "attrvalue": "40元"}]
    assert refreshed[2]["attrs"] == dialogues[0]["messages"][2]["attrs"]  # several addresses now: kept as written
    assert report["refresh"] == {
        "gold_not_stated_as_written": 2,
        "changed": 1,
        "kept_graph_has_several": 1,
        "kept_not_in_graph": 0,
        "changes_file": report["refresh"]["changes_file"],
    }
    changes = read(Path(report["refresh"]["changes_file"]))
    assert changes == [
        {
            "dialogue_id": changes[0]["dialogue_id"],
            "line": 1,
            "where": ["messages", 1, "attrs", 0],
            "head": "故宫",
            "relation": "门票",
            "old": "60元",
            "new": "40元",
        }
    ]
    assert path.read_text(encoding="utf-8") == json.dumps(dialogues, ensure_ascii=False)  # the input is untouched


def test_bad_records_are_named_by_file_and_line_and_the_rest_still_export(built, tmp_path):
    sessions = shared_file("duconv/dev.head250.jsonl").read_text(encoding="utf-8").splitlines()[:5]
    sessions[2] = sessions[2][:40]  # a truncated line
    sessions[3] = json.dumps({"goal": [["START", "a", "b"]], "knowledge": "not a list", "conversation": []})
    path = tmp_path / "bad.jsonl"
    path.write_text("\n".join(sessions) + "\n", encoding="utf-8")
    out = tmp_path / "out.txt"
    result = export(built("duconv"), "duconv", path, "duconv", out, check=False)
    assert result.returncode == 1 and f"{path}:3: malformed JSON" in result.stderr and not out.exists()
    report = export(built("duconv"), "duconv", path, "duconv", out, "--skip-invalid")
    assert report["dialogues_in"] == 5 and report["dialogues"] == 3 and report["dialogues_rejected"] == 2
    rejected = read(Path(report["rejected_file"]))
    assert [r["line"] for r in rejected] == [3, 4]
    assert "malformed JSON" in rejected[0]["reason"] and "'knowledge' must be a list" in rejected[1]["reason"]
    assert [without_pool(r) for r in read(out)] == [json.loads(sessions[i]) for i in (0, 1, 4)]


@pytest.mark.slow  # the real dialogue sets, each layout
def test_the_input_layout_is_detected_or_told(built, tmp_path):
    duconv = shared_file("duconv/dev.head250.jsonl")
    samples = tmp_path / "samples.txt"
    export(built("duconv"), "duconv", duconv, "duconv", samples, "--layout", "sample")
    out = tmp_path / "again.txt"
    report = export(built("duconv"), "duconv", samples, "duconv", out)
    assert report["input_layout"] == "duconv-sample" and report["layout"] == "sample" and report["records"] == 1114
    refused = export(built("duconv"), "duconv", samples, "duconv", tmp_path / "x", "--layout", "session", check=False)
    assert refused.returncode == 1 and "cannot be made from duconv-sample" in refused.stderr
    told = export(built("duconv"), "duconv", duconv, "jsonl", tmp_path / "g.jsonl", "--input-layout", "duconv-session")
    assert told["input_layout"] == "duconv-session" and told["format"] == "jsonl"
    record = read(tmp_path / "g.jsonl")[0]
    assert json.loads(record["source"]["record"]) == read(duconv)[0] and record["source"]["line"] == 1
    wrong = export(
        built("duconv"), "duconv", duconv, "duconv", tmp_path / "y", "--input-layout", "kdconv-x", check=False
    )
    assert wrong.returncode == 2 and "'kdconv-x' is not one of" in wrong.stderr and "durecdial-lic2020" in wrong.stderr
    mistold = export(
        built("duconv"),
        "duconv",
        duconv,
        "kdconv",
        tmp_path / "z",
        "--input-layout",
        "kdconv",
        "--skip-invalid",
        check=False,
    )
    assert mistold.returncode == 1 and f"{duconv}:1: top-level JSON must be an array" in mistold.stderr


def test_lic2020_sessions_round_trip_and_their_goal_count_is_checked(workdir, shared, tmp_path):
    example = json.loads(shared("durecdial/acl2020_readme_example.json").read_text(encoding="utf-8"))
    session = {
        "goal": example["goals"],
        "knowledge": example["kg"],
        "user_profile": example["user_profile"],
        "situation": example["situation"],
        "conversation": example["conversation"],
    }
    path = tmp_path / "dev.txt"
    path.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    run_cli("build", "durecdial", "--source", f"durecdial:{path}", "--workdir", str(workdir))
    out = tmp_path / "out.txt"
    report = export(workdir, "durecdial", path, "durecdial", out)
    assert report["input_layout"] == "durecdial-lic2020" and report["reader_warnings"] == 0
    exported = read(out)[0]
    assert without_pool(exported) == session
    assert any(t[0] == "大清花饺子（十一纬路店）" for t in exported["retrieved_knowledge"])
    fmt = format_named("durecdial")
    broken = dict(session, conversation=[u.removeprefix("[2]") for u in session["conversation"]])
    assert any("goal planner skips" in p for p in fmt.check(broken, fmt.layout("lic2020")))
