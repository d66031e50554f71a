"""`kgforge export --goals`: new goals only in layouts that mean something without a conversation, each
record what its dataset's readers need (every topic typed, goal triples inside their topic's block,
DuConv's segmentation), stable ids and a manifest."""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import polars as pl
import pytest

from kgforge.core.errors import KgforgeError
from kgforge.core.text import normalise_label
from kgforge.exports import format_named
from kgforge.exports.formats.sheet import read_sheet
from tests.dialogue_kg import duconv_sample_kg

TYPES = {"电影", "明星"}


@pytest.fixture(scope="module")
def duconv_goals(tmp_path_factory):
    from tests.conftest import run_cli

    workdir, source = duconv_sample_kg(tmp_path_factory)
    goals = workdir / "goals.jsonl"
    run_cli("goals", "duconv", "--n", "60", "--seed", "2", "--out", str(goals), "--workdir", str(workdir))
    sequences = workdir / "sequences.jsonl"
    run_cli("goals", "duconv", "--n", "20", "--style", "durecdial", "--out", str(sequences), "--workdir", str(workdir))
    return workdir, goals, source, sequences


def export(cli, workdir: Path, goals: Path, fmt: str, out: Path, *extra: str, check: bool = True):
    result = cli(
        "export",
        "duconv",
        "--goals",
        str(goals),
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


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def heads_in_runs(knowledge: list[list[str]]) -> list[str]:
    runs: list[str] = []
    for head, _, _ in knowledge:
        if not runs or runs[-1] != head:
            runs.append(head)
    return runs


@pytest.mark.parametrize(
    ("fmt", "layout"),
    [
        ("duconv", "session"),
        ("kdconv", None),
        ("kdconv", "dialogues"),
        ("durecdial", "resource"),
        ("durecdial", "lic2020"),
    ],
)
def test_goals_are_refused_in_layouts_whose_readers_need_a_conversation(cli, duconv_goals, tmp_path, fmt, layout):
    workdir, goals, _, _ = duconv_goals
    out = tmp_path / "x.txt"
    result = export(cli, workdir, goals, fmt, out, *(["--layout", layout] if layout else []), check=False)
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert "conversation" in result.stderr and "duconv --layout sample" in result.stderr
    assert not out.exists()


def test_duconv_goal_samples_give_the_readers_what_they_need(cli, duconv_goals, tmp_path):
    workdir, goals, source, _ = duconv_goals
    out = tmp_path / "test.txt"
    report = export(cli, workdir, goals, "duconv", out)
    records, goal_records = lines(out), lines(goals)
    assert report["layout"] == "sample" and report["records"] == len(records) == 60
    for record, goal in zip(records, goal_records):
        assert list(record) == ["goal", "knowledge", "history", "response"]
        assert record["history"] == [] and record["response"].split()  # dkn_duconv and KnowledgeCorpus read it
        start, *path = record["goal"]
        assert start[0] == "START" and start[1] != start[2]
        assert [normalise_label(t) for t in start[1:]] == goal["topic_labels"]
        knowledge = record["knowledge"]
        assert len({tuple(t) for t in knowledge}) == len(knowledge)
        for topic in start[1:]:  # each topic's type fact, spelled as in goal[0], as the converters look it up
            assert [t[2] for t in knowledge if t[0] == topic and t[1] == "领域"] in (["电影"], ["明星"])
        assert knowledge[0] not in path  # never a goal triple first (real data: never)
        for triple in path:  # inside the subgraph, after its head's type fact, in its head's block
            assert triple in knowledge
            at, typed = (
                knowledge.index(triple),
                knowledge.index(next(t for t in knowledge if t[0] == triple[0] and t[1] == "领域")),
            )
            assert typed < at and all(t[0] == triple[0] for t in knowledge[typed : at + 1])
        assert heads_in_runs(knowledge)[:2] == start[1:] and len(heads_in_runs(knowledge)) <= 3  # A, B, A's tail
        assert not any(c in x for t in knowledge for x in t for c in "\t\n")
        assert format_named("duconv").check(record, format_named("duconv").layout("sample")) == []
    size = sum(len(r["knowledge"]) for r in records) / len(records)
    assert 12.0 <= size <= 16.0, size  # DuConv dev: 14.0 triples a dialogue


def test_duconv_strings_are_segmented_as_duconv_spells_them(cli, duconv_goals, tmp_path):
    workdir, goals, source, _ = duconv_goals
    real = lines(source)
    spelled = {normalise_label(t[1]): t[1] for r in real for t in r["knowledge"]}
    names = {normalise_label(x): x for r in real for t in r["knowledge"] for x in (t[0],)}
    out = tmp_path / "test.txt"
    export(cli, workdir, goals, "duconv", out)
    records = lines(out)
    relations = {t[1] for r in records for t in r["knowledge"]}
    assert {"出生 日期", "时光网 短评"} & relations or {"发布 日期 信息", "主要 成就"} & relations
    for relation in relations:  # the source's own cut wherever DuConv has this relation
        assert relation == spelled.get(normalise_label(relation), relation)
    heads = {t[0] for r in records for t in r["knowledge"]}
    assert all(head == names[normalise_label(head)] for head in heads if normalise_label(head) in names)
    whole = tmp_path / "whole.txt"
    export(cli, workdir, goals, "duconv", whole, "--no-segment")
    unsegmented = lines(whole)
    assert "出生日期" not in relations and any(
        t[1] == "出生日期" or t[1] == "时光网短评" or t[1] == "发布日期信息"
        for r in unsegmented
        for t in r["knowledge"]
    )
    assert [[[normalise_label(x) for x in t] for t in r["knowledge"]] for r in records] == [
        [[normalise_label(x) for x in t] for t in r["knowledge"]] for r in unsegmented
    ]


@pytest.mark.slow  # exports every layout twice
def test_ids_and_manifest_are_stable(cli, duconv_goals, tmp_path):
    workdir, goals, _, _ = duconv_goals
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    report = export(cli, workdir, goals, "duconv", a)
    export(cli, workdir, goals, "duconv", b)
    assert a.read_bytes() == b.read_bytes()
    ids = Path(report["ids_file"]).read_text().splitlines()
    assert ids == (tmp_path / "b.jsonl.ids.txt").read_text().splitlines() and len(set(ids)) == 60
    manifest = json.loads((tmp_path / "a.jsonl.manifest.json").read_text(encoding="utf-8"))
    store = json.loads((workdir / "duconv" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["build_id"] == store["build_id"] and len(manifest["store_hash"]) == 64
    assert manifest["schema"]["version"] == 1 and manifest["seeds"] == [2]
    assert manifest["options"]["fmt"] == "duconv" and manifest["checks"]["failed"] == 0
    assert manifest["layout_kind"] == "duconv-sample" and set(manifest["graphs"]) == set(store["graphs"])


@pytest.mark.slow  # loads the exports with the datasets library
def test_generic_jsonl_and_parquet_load(cli, duconv_goals, tmp_path):
    workdir, goals, _, _ = duconv_goals
    jsonl, parquet = tmp_path / "d.jsonl", tmp_path / "d.parquet"
    export(cli, workdir, goals, "jsonl", jsonl)
    export(cli, workdir, goals, "parquet", parquet)
    frame = pl.read_ndjson(jsonl)
    assert frame.height == 60 and pl.read_parquet(parquet).height == 60
    record = lines(jsonl)[0]
    assert record["dialogue_id"].startswith("dlg-") and record["topics"][0]["iri"].startswith("https://")
    assert {"s", "p", "o", "s_label", "p_label", "o_label", "role", "graph"} <= set(record["triples"][0])
    assert {t["role"] for r in lines(jsonl) for t in r["triples"]} >= {"path", "type", "fact"}
    keys = {tuple(json.loads(line)) for line in jsonl.read_text(encoding="utf-8").splitlines()}
    assert len(keys) == 1  # the HuggingFace `datasets` JSON loader needs one object per line, one type per key
    datasets = pytest.importorskip("datasets")
    os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset("json", data_files=str(jsonl), split="train", cache_dir=str(tmp_path / "hf"))
    assert loaded.num_rows == 60 and loaded[0]["dialogue_id"] == record["dialogue_id"]


@pytest.mark.slow  # every DuRecDial goal layout through the planner's own parser
def test_durecdial_goal_layouts_parse_as_the_goal_planner_parses_them(cli, duconv_goals, tmp_path):
    workdir, _, _, sequences = duconv_goals
    fmt = format_named("durecdial")
    out = tmp_path / "test.txt"
    report = export(cli, workdir, sequences, "durecdial", out)
    assert report["layout"] == "lic2020-sample"
    for record, goal in zip(lines(out), lines(sequences)):
        assert list(record) == ["goal", "knowledge", "user_profile", "situation", "history"] and record["history"] == []
        parts = record["goal"].split("-->")  # process_sample_data: first goal, '......', final goal
        assert len(parts) == 3 and parts[1].strip() == "......"
        first = parts[0].strip().split("]", 1)[1].split("(", 1)[0].strip()
        final = parts[2].strip().split("]", 1)[1].split("(", 1)[0].strip()
        steps = [s for s in goal["sequence"] if s["type"] != "再见"]
        assert (normalise_label(first), normalise_label(final)) == (steps[0]["type"], steps[-1]["type"])
        item = record["goal"].split(final)[-1].split("『 ", 1)[-1].split("』", 1)[0].strip()
        assert normalise_label(item) == steps[-1]["topic_label"]
        assert item in {t[0] for t in record["knowledge"]} | {t[2] for t in record["knowledge"]}
        assert record["user_profile"] == goal["profile"] and record["situation"]
        assert not any(t[1] == "领域" for t in record["knowledge"])  # DuRecDial states no type facts
        assert fmt.check(record, fmt.layout("lic2020-sample")) == []
    resource = tmp_path / "resource.txt"
    export(cli, workdir, sequences, "durecdial", resource, "--layout", "resource-sample")
    for record, goal in zip(lines(resource), lines(sequences)):
        assert list(record) == ["goal", "knowledge", "history", "response"] and len(record["history"]) == 2
        assert [normalise_label(g[0]) for g in record["goal"]] == [s["type"] for s in goal["sequence"]]
        assert fmt.check(record, fmt.layout("resource-sample")) == []


@pytest.mark.parametrize("layout", ["tsv", "csv"])
def test_crowdsourcing_sheet_reads_back(cli, duconv_goals, tmp_path, layout):
    workdir, goals, _, _ = duconv_goals
    sheet, duconv = tmp_path / f"goals.{layout}", tmp_path / "test.txt"
    export(cli, workdir, goals, "sheet", sheet, "--layout", layout, "--no-segment")
    export(cli, workdir, goals, "duconv", duconv, "--no-segment")
    rows = read_sheet(sheet, format_named("sheet").layout(layout))
    with open(sheet, encoding="utf-8", newline="") as handle:
        header = next(csv.reader(handle, delimiter="\t" if layout == "tsv" else ","))
    assert header[0] == "dialogue_id" and header[-1] == "conversation"
    assert len(rows) == 60 and all(row["conversation"] == "" for row in rows)
    for row, record, goal in zip(rows, lines(duconv), lines(goals)):
        assert row["goal"] == record["goal"] and row["knowledge"] == record["knowledge"]
        assert [row["topic_a"], row["topic_b"]] == goal["topic_labels"]
        assert {row["topic_a_type"], row["topic_b_type"]} <= {"film", "star"}
        assert row["knowledge_text"].count("\n") == len(row["knowledge"]) - 1


def test_checks_stop_a_bad_export(cli, duconv_goals, tmp_path):
    workdir, goals, _, _ = duconv_goals
    records = lines(goals)
    records[0]["path"][0]["o"] = "https://kgforge.org/entity/name/not-there"
    tampered = tmp_path / "tampered.jsonl"
    tampered.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    out = tmp_path / "x.jsonl"
    result = export(cli, workdir, tampered, "duconv", out, check=False)
    assert result.returncode == 1 and "goal path triple not in the graph" in result.stderr
    assert not out.exists()
    report = export(cli, workdir, tampered, "duconv", out, "--skip-invalid")
    assert report["records"] == 59 and report["checks"]["skipped"] == 1
    rejected = lines(Path(report["rejected_file"]))
    assert len(rejected) == 1 and "goal path triple not in the graph" in rejected[0]["reason"]
    # the DuConv graph has zh labels only: an English export is refused, not silently mixed
    result = export(cli, workdir, goals, "duconv", tmp_path / "en.jsonl", "--lang", "en", check=False)
    assert result.returncode == 1 and "no en label" in result.stderr


def test_unknown_format_or_layout_is_a_clear_error(cli, duconv_goals, tmp_path):
    workdir, goals, _, _ = duconv_goals
    result = export(cli, workdir, goals, "conll", tmp_path / "x", check=False)  # refused at the edge: usage error
    assert result.returncode == 2 and "unknown export format 'conll'" in result.stderr and "durecdial" in result.stderr
    result = export(cli, workdir, goals, "DuConf", tmp_path / "x", check=False)
    assert result.returncode == 2 and "unknown export format 'DuConf'; did you mean 'duconv'?" in result.stderr
    result = export(cli, workdir, goals, "duconv", tmp_path / "x", "--layout", "train", check=False)
    assert result.returncode == 2 and "'train' is not one of" in result.stderr and "resource-sample" in result.stderr
    result = export(cli, workdir, goals, "duconv", tmp_path / "x", "--layout", "tsv", check=False)  # another format's
    assert result.returncode == 1 and "no layout 'tsv'" in result.stderr and "sample" in result.stderr
    with pytest.raises(KgforgeError, match="unknown export format 'conll'.*durecdial"):  # the library checks it too
        format_named("conll")


@pytest.mark.slow  # an export per spelling of every format name
@pytest.mark.parametrize("given", ["DuConv", "DUCONV", "duconv"])
def test_format_names_are_taken_in_any_case(cli, duconv_goals, tmp_path, given):
    workdir, goals, _, _ = duconv_goals
    report = export(cli, workdir, goals, given, tmp_path / "g.jsonl")
    assert report["format"] == "duconv" and report["records"] > 0
    assert format_named("ndjson") is format_named("JSONL")  # an alias, in any case


@pytest.mark.slow  # builds and derives the real travel store first
def test_add_related_without_a_bundle_is_a_clear_error(cli, duconv_goals, tmp_path):
    workdir, goals, _, _ = duconv_goals
    result = export(cli, workdir, goals, "duconv", tmp_path / "r.jsonl", "--add-related", "default", check=False)
    assert result.returncode == 1
    assert "kgforge.embed.related" in result.stderr or "no model bundle" in result.stderr
    assert "Traceback" not in result.stderr


HOSTILE = ['引号"名"', "花括号{景点}", "反斜杠\\景点", "['列表']", 'a"}, {"b', "单引号'景点'"]


@pytest.mark.slow  # every export format over a store of hostile names
def test_hostile_names_survive_every_format(cli, workdir, tmp_path):
    kb = {
        name: [
            [name, "周边景点", HOSTILE[(i + 1) % len(HOSTILE)]],
            [name, "门票", f'{{"免费"}} {i}'],
            [name, "Information", 'line "one"\nline {two} \\ end'],
        ]
        for i, name in enumerate(HOSTILE)
    }
    kb_file = tmp_path / "kb_travel.json"
    kb_file.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    cli("build", "travel", "--source", f"kdconv:{kb_file}", "--workdir", str(workdir))
    goals = tmp_path / "g.jsonl"
    cli("goals", "travel", "--n", "4", "--hops", "1", "--out", str(goals), "--workdir", str(workdir))
    for fmt, extra in (
        ("duconv", "--no-segment"),
        ("duconv", "--segment"),
        ("durecdial", "--no-segment"),
        ("jsonl", ""),
        ("sheet", "--no-segment"),
    ):
        out = tmp_path / f"out.{fmt}"
        cli(
            "export",
            "travel",
            "--goals",
            str(goals),
            "--format",
            fmt,
            "--out",
            str(out),
            "--workdir",
            str(workdir),
            *[extra] if extra else [],
            "--no-text",
        )
        if fmt == "sheet":
            records = read_sheet(out, format_named("sheet").layout("tsv"))
        else:
            records = lines(out)
        assert len(records) == 4
        if extra == "--segment":  # cut into words: each name comes back whole once the cuts are taken out
            strings = {normalise_label(x) for r in records for t in r["knowledge"] for x in t}
            assert len({normalise_label(n) for n in HOSTILE} & strings) >= 2
            continue
        flat = json.dumps(records, ensure_ascii=False)
        assert len({n for n in HOSTILE if json.dumps(n, ensure_ascii=False) in flat}) >= 2
    dialogues = tmp_path / "dev.json"
    dialogues.write_text(
        json.dumps(
            [
                {
                    "name": HOSTILE[0],
                    "messages": [
                        {"message": f"去过{HOSTILE[1]}吗"},
                        {
                            "message": "去过",
                            "attrs": [{"name": HOSTILE[1], "attrname": "门票", "attrvalue": '{"免费"} 1'}],
                        },
                    ],
                }
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    out = tmp_path / "d.json"
    report = json.loads(
        cli(
            "export",
            "travel",
            "--dialogues",
            str(dialogues),
            "--format",
            "kdconv",
            "--out",
            str(out),
            "--workdir",
            str(workdir),
            "--json",
        ).stdout
    )
    assert report["attr_coverage"] == 1.0
    exported = json.loads(out.read_text(encoding="utf-8"))
    assert (
        exported[0]["messages"][1]["attrs"]
        == json.loads(dialogues.read_text(encoding="utf-8"))[0]["messages"][1]["attrs"]
    )


@pytest.mark.slow  # trains a model before the export
def test_add_related_from_a_trained_bundle(cli, workdir, shared, tmp_path):
    kb = shared("kdconv/travel/kb_travel.json")
    w = ("--workdir", str(workdir))
    cli("build", "travel", "--source", f"kdconv:{kb}", *w)
    goals = tmp_path / "g.jsonl"
    cli("goals", "travel", "--n", "6", "--hops", "1", "--out", str(goals), *w)
    out = tmp_path / "r.jsonl"
    missing = cli(
        "export",
        "travel",
        "--goals",
        str(goals),
        "--format",
        "jsonl",
        "--out",
        str(out),
        "--add-related",
        "default",
        *w,
        check=False,
    )
    assert missing.returncode == 1 and "kgforge embed travel" in missing.stderr and not out.exists()
    cli("embed", "travel", "--model", "DistMult", "--dim", "8", "--epochs", "1", "--evaluation", "none", *w)
    cli(
        "export",
        "travel",
        "--goals",
        str(goals),
        "--format",
        "jsonl",
        "--out",
        str(out),
        "--add-related",
        "default",
        *w,
    )
    records = lines(out)
    related = [t for r in records for t in r["triples"] if t["role"] == "related"]
    assert related and all(t["p"] == "https://kgforge.org/ontology#related" and t["o_label"] for t in related)
    assert all(
        t["s"] in {x["iri"] for x in r["topics"]} for r in records for t in r["triples"] if t["role"] == "related"
    )
