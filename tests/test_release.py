"""`kgforge release`, `release check` and `audit`: a DuConv dev release read back by what reads releases (the
check, mlcroissant, the turn table against the input), refused inputs that write nothing, the licence table,
and the audit's figures against formulas computed here (docs/release.md)."""

from __future__ import annotations

import csv
import getpass
import hashlib
import json
import math
import random
import re
import shutil
import socket
import sys
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from statsmodels.stats.proportion import proportion_confint

from kgforge.core.errors import ArgumentError
from kgforge.release import LICENCES, check_release, choose_licence, wilson
from kgforge.release.audit import allocate
from kgforge.release.layouts import LAYOUTS
from kgforge.release.licences import allows, spdx
from kgforge.release.manifest import manifest_text, self_digest_ok
from kgforge.release.turns import verdict
from tests.conftest import run_cli, shared_file

DUCONV = "duconv/dev.head250.jsonl"


@pytest.fixture(scope="module")
def duconv(tmp_path_factory):
    """(workdir, sessions, release folder): the DuConv sample built as domain duconv and released."""
    sessions = shared_file(DUCONV)
    root = tmp_path_factory.mktemp("release")
    workdir = root / "kg"
    run_cli("build", "duconv", "--source", f"duconv:{sessions}", "--workdir", str(workdir), "--json")
    out = root / "duconv-dev"
    run_cli("release", "duconv", "--dialogues", str(sessions), "--out", str(out), "--workdir", str(workdir))
    return workdir, sessions, out


def lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def test_the_release_passes_its_check(duconv):
    _, _, out = duconv
    report = check_release(out, records=False)
    assert report.ok, report.problems
    status = {line.check: line for line in report.checks}
    assert status["croissant"].status == "ok" and status["croissant"].detail.startswith("valid Croissant 1.1")
    assert status["readers"].status in ("ok", "not run")
    manifest = json.loads((out / "release.json").read_text(encoding="utf-8"))
    assert manifest["turns"] == pl.read_parquet(out / "turns" / "dev.parquet").height == 2228
    assert len(lines(out / "turns" / "dev.jsonl")) == 2228


def test_the_layout_file_is_the_input_and_the_turn_table_its_utterances(duconv):
    _, sessions, out = duconv
    given_sessions = lines(sessions)
    assert lines(out / "duconv" / "dev.jsonl") == given_sessions  # each record exactly as read
    turns = pl.read_parquet(out / "turns" / "dev.parquet")
    assert turns["text"].to_list() == [u for s in given_sessions for u in s["conversation"]]
    first = turns.filter(pl.col("dialogue_id") == turns["dialogue_id"][0]).sort("turn")
    assert first["speaker"].to_list()[:2] == ["bot", "user"] and first["turn"].to_list()[0] == 0
    assert json.loads(first["goal"][0]) == given_sessions[0]["goal"]
    assert set(turns["verdict"].unique()) <= {"supported", "contradicted", "unsupported", "none"}
    # every fact a turn states is one of its session's knowledge triples, and a fact of kg/used.nt by its id
    ids = {
        hashlib.sha256(line.encode()).hexdigest()[:16]
        for line in (out / "kg" / "used.nt").read_text(encoding="utf-8").splitlines()
        if not line.startswith("#")
    }
    stated = [f for facts in turns["facts"].to_list() for f in facts]
    assert stated and all(f["fact_id"] in ids for f in stated)
    knowledge = {tuple(t) for s in given_sessions for t in s["knowledge"]}
    assert all((f["head"], f["relation"], f["tail"]) in knowledge for f in stated)


def test_the_card_header_names_both_configs_and_the_licence_is_the_unknown_sources(duconv):
    import yaml

    _, _, out = duconv
    text = (out / "README.md").read_text(encoding="utf-8")
    header = yaml.safe_load(text.split("---\n")[1])
    assert header["license"] == "other" and header["language"] == ["zh"]
    configs = {c["config_name"]: c["data_files"] for c in header["configs"]}
    assert configs == {
        "turns": [{"split": "dev", "path": "turns/dev.jsonl"}],
        "duconv": [{"split": "dev", "path": "duconv/dev.jsonl"}],
    }
    assert "The licence of https://kgforge.org/graph/duconv/dev.head250 is not known" in text
    croissant = json.loads((out / "croissant.json").read_text(encoding="utf-8"))
    assert croissant["conformsTo"] == "http://mlcommons.org/croissant/1.1"
    assert {r["@id"] for r in croissant["recordSet"]} == {"turns", "duconv"}
    assert croissant["rai:dataCollectionType"] == ["Secondary Data analysis"]
    assert croissant["rai:dataBiases"].startswith("TODO (author)")


def private_strings(workdir: Path) -> tuple[list[bytes], list[re.Pattern]]:
    paths = [str(workdir.resolve()).encode(), str(Path.home()).encode(), str(Path.cwd()).encode()]
    names = [getpass.getuser(), socket.gethostname()]
    return paths, [re.compile(rf"(?<![\w.-]){re.escape(n)}(?![\w-])") for n in names if n]


def assert_names_nothing_private(folder: Path, workdir: Path) -> None:
    """No file holds a path of this machine; no text (a Parquet file: its decoded values) the user's or host's name."""
    paths, names = private_strings(workdir)
    for path in folder.rglob("*"):
        if not path.is_file():
            continue
        data = path.read_bytes()
        assert not any(p in data for p in paths), path
        if path.suffix == ".parquet":  # binary: its compressed bytes hold any two letters somewhere
            frame = pl.read_parquet(path)
            text = json.dumps(frame.to_dicts(), ensure_ascii=False) + json.dumps(list(frame.columns))
        else:
            text = data.decode("utf-8")
        assert not any(n.search(text) for n in names), path


def test_no_file_names_the_workdir_the_user_or_the_host(duconv):
    workdir, _, out = duconv
    assert_names_nothing_private(out, workdir)


@pytest.mark.parametrize(
    "name",
    [
        "duconv/dev.jsonl",
        "turns/dev.parquet",
        "turns/dev.jsonl",
        "kg/used.nt",
        "README.md",
        "croissant.json",
        "release.json",
    ],
)
def test_one_changed_byte_fails_the_check_naming_the_file(duconv, tmp_path, name):
    _, _, out = duconv
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    data = bytearray((copy / name).read_bytes())
    data[len(data) // 2] ^= 0x01
    (copy / name).write_bytes(bytes(data))
    report = check_release(copy, records=False)
    assert not report.ok
    assert any(p.startswith(f"{name}:") for p in report.problems), report.problems
    found = run_cli("release", "check", str(copy), "--no-records", check=False)
    assert found.returncode == 1 and f"{name}:" in found.stdout


@pytest.mark.slow  # a second release of the sample (3 s)
def test_a_release_replaces_an_earlier_one_and_refuses_any_other_folder(duconv, tmp_path):
    workdir, sessions, out = duconv
    again = tmp_path / "again"
    shutil.copytree(out, again)
    made = json.loads(
        run_cli(
            "release", "duconv", "--dialogues", str(sessions), "--out", str(again), "--workdir", str(workdir), "--json"
        ).stdout
    )
    assert made["replaced"] is True and check_release(again, records=False).ok
    assert sorted(p.name for p in tmp_path.iterdir()) == ["again"]  # no folder left beside it
    other = tmp_path / "other"
    other.mkdir()
    (other / "mine.txt").write_text("keep", encoding="utf-8")
    refused = run_cli(
        "release", "duconv", "--dialogues", str(sessions), "--out", str(other), "--workdir", str(workdir), check=False
    )
    assert refused.returncode != 0 and "is not a kgforge release" in refused.stderr
    assert [p.name for p in other.iterdir()] == ["mine.txt"]


def refused(args: list[str], tmp_path: Path) -> str:
    """The one error line of a refused release, after checking that nothing was written beside --out."""
    before = set(tmp_path.iterdir())
    result = run_cli(*args, check=False)
    assert result.returncode != 0, result.stdout
    assert "Traceback" not in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert set(tmp_path.iterdir()) == before  # no release, no folder it was being made in
    return result.stderr.strip()


def test_dialogues_of_another_domain_are_refused_naming_file_and_line(duconv, tmp_path):
    workdir, _, _ = duconv
    kdconv = shared_file("kdconv/travel/dev.json")
    args = ["release", "duconv", "--dialogues", str(kdconv), "--out", str(tmp_path / "r"), "--workdir", str(workdir)]
    line = refused(args, tmp_path)
    assert f"{kdconv}:2: none of this dialogue's topics" in line and "domain duconv" in line


@pytest.mark.slow  # two corpus splits and two refused releases (2 s)
def test_a_split_folder_of_other_dialogues_is_refused_naming_file_and_line(duconv, tmp_path):
    workdir, sessions, _ = duconv
    part = tmp_path / "part.jsonl"
    part.write_text("".join(sessions.read_text(encoding="utf-8").splitlines(keepends=True)[:100]), encoding="utf-8")
    run_cli("corpus", "split", str(part), "--out", str(tmp_path / "split"), "--ratios", "8:1:1")
    args = ["release", "duconv", "--dialogues", str(sessions), "--out", str(tmp_path / "r"), "--workdir", str(workdir)]
    line = refused([*args, "--split", str(tmp_path / "split")], tmp_path)
    assert re.search(rf"{re.escape(str(sessions))}:\d+: this dialogue is in none of the splits", line), line
    other = tmp_path / "other.jsonl"  # two sessions of the sample, their first utterances changed
    changed = [{**s, "conversation": ["换 一句 话", *s["conversation"][1:]]} for s in lines(sessions)[:2]]
    other.write_text("".join(json.dumps(s, ensure_ascii=False) + "\n" for s in changed), encoding="utf-8")
    run_cli("corpus", "split", str(other), "--out", str(tmp_path / "split2"), "--ratios", "1:1")
    line = refused([*args, "--split", str(tmp_path / "split2")], tmp_path)
    assert re.search(r"split2/(train|test)\.jsonl:1: this dialogue is not one of the --dialogues", line), line


@pytest.mark.slow  # a second release of the sample (3 s)
def test_a_topic_split_keeps_topics_apart_and_partitions_the_dialogues(duconv, tmp_path):
    workdir, sessions, _ = duconv
    out = tmp_path / "split"
    made = json.loads(
        run_cli(
            "release", "duconv", "--dialogues", str(sessions), "--out", str(out), "--workdir", str(workdir),
            "--ratios", "8:1:1", "--by", "topic", "--kg", "none", "--json",
        ).stdout
    )  # fmt: skip
    assert [s["name"] for s in made["splits"]] == ["train", "dev", "test"]
    parts = [lines(out / "duconv" / f"{name}.jsonl") for name in ("train", "dev", "test")]
    everything = sorted(json.dumps(r, sort_keys=True) for r in lines(sessions))
    assert sorted(json.dumps(r, sort_keys=True) for p in parts for r in p) == everything
    topics = [{t for r in p for t in r["goal"][0][1:3]} for p in parts]
    assert not (topics[0] & topics[1]) and not (topics[0] & topics[2]) and not (topics[1] & topics[2])
    assert not (out / "kg").exists() and check_release(out, records=False).ok


def write_marks(sheet: Path, out: Path, marks: list[int]) -> None:
    rows = list(csv.DictReader(sheet.open(encoding="utf-8")))
    with out.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows({**row, "correct": str(mark)} for row, mark in zip(rows, marks))


def fleiss_kappa(table: list[list[int]]) -> float:
    """Fleiss' kappa from its definition: ``table[i][j]`` raters putting item i in category j."""
    n = sum(table[0])
    items = len(table)
    p_items = [sum(c * (c - 1) for c in row) / (n * (n - 1)) for row in table]
    shares = [sum(row[j] for row in table) / (items * n) for j in range(len(table[0]))]
    p_bar, p_e = sum(p_items) / items, sum(s * s for s in shares)
    return (p_bar - p_e) / (1 - p_e)


@pytest.mark.slow  # reads the store's tables for the sample (2.5 s)
def test_audit_import_of_three_raters_equals_wilson_and_fleiss_computed_here(duconv, tmp_path):
    workdir, _, _ = duconv
    sheet = tmp_path / "sample.csv"
    run_cli("audit", "sample", "duconv", "--n", "100", "--by", "relation", "--seed", "5", "--out", str(sheet),
            "--workdir", str(workdir))  # fmt: skip
    rng = random.Random(7)
    truth = [1 if rng.random() < 0.85 else 0 for _ in range(100)]
    raters = [[t if rng.random() < 0.9 else 1 - t for t in truth] for _ in range(3)]
    files = []
    for k, marks in enumerate(raters):
        files.append(tmp_path / f"rater{k}.csv")
        write_marks(sheet, files[-1], marks)
    out = tmp_path / "audit.json"
    report = json.loads(run_cli("audit", "import", *map(str, files), "--out", str(out), "--json").stdout)
    majority = [int(sum(col) >= 2) for col in zip(*raters)]
    k, n = sum(majority), 100
    z = 1.959963984540054
    centre = (k / n + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(k / n * (1 - k / n) / n + z * z / (4 * n * n))
    assert report["accuracy"]["correct"] == k
    assert report["accuracy"]["low"] == pytest.approx(centre - half, abs=1e-12)
    assert report["accuracy"]["high"] == pytest.approx(centre + half, abs=1e-12)
    table = [[sum(1 - r[i] for r in raters), sum(r[i] for r in raters)] for i in range(100)]
    assert report["fleiss_kappa"] == pytest.approx(fleiss_kappa(table), abs=1e-12)
    assert sum(r["items"] for r in report["per_relation"]) == 100
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["accuracy"]["correct"] == k and saved["sheets"] == ["rater0.csv", "rater1.csv", "rater2.csv"]


def test_an_audit_mark_outside_the_scale_is_refused_naming_sheet_and_line(duconv, tmp_path):
    workdir, _, _ = duconv
    sheet = tmp_path / "sample.csv"
    run_cli("audit", "sample", "duconv", "--n", "10", "--out", str(sheet), "--workdir", str(workdir))
    marks = [1] * 10
    marks[3] = 2
    write_marks(sheet, tmp_path / "filled.csv", marks)
    line = refused(["audit", "import", str(tmp_path / "filled.csv"), "--out", str(tmp_path / "a.json")], tmp_path)
    assert f"{tmp_path / 'filled.csv'}:5: correct is '2', not one of 0, 1" in line


@pytest.mark.slow  # an audit and a second release of the sample (3 s)
def test_the_card_quotes_the_audit(duconv, tmp_path):
    workdir, sessions, _ = duconv
    sheet = tmp_path / "sample.csv"
    run_cli("audit", "sample", "duconv", "--n", "20", "--out", str(sheet), "--workdir", str(workdir))
    write_marks(sheet, tmp_path / "one.csv", [1] * 19 + [0])
    run_cli("audit", "import", str(tmp_path / "one.csv"), "--out", str(tmp_path / "audit.json"))
    out = tmp_path / "r"
    run_cli("release", "duconv", "--dialogues", str(sessions), "--out", str(out), "--workdir", str(workdir),
            "--audit", str(tmp_path / "audit.json"), "--kg", "none")  # fmt: skip
    card = (out / "README.md").read_text(encoding="utf-8")
    low, high = wilson(19, 20)
    assert "19 of 20 sampled triples were judged correct" in card and f"[{low:.1%}, {high:.1%}]" in card
    assert json.loads((out / "audit.json").read_text(encoding="utf-8"))["accuracy"]["correct"] == 19
    assert "19 of 20" in json.loads((out / "croissant.json").read_text(encoding="utf-8"))["rai:dataAnnotationAnalysis"]


# ---------------------------------------------------------------- the pieces


@pytest.mark.parametrize(
    ("sources", "chosen"),
    [
        ({"kd": "Apache-2.0 (KdConv)", "wd": "CC0 1.0 (Wikidata's structured data)"}, "Apache-2.0"),
        ({"a": "CC BY 4.0", "b": "Apache-2.0"}, "CC-BY-4.0"),
        ({"rec": "CC BY-NC-SA 4.0, no commercial use", "wd": "CC0 1.0"}, "CC-BY-NC-SA-4.0"),
        ({"nc": "CC BY-NC 4.0", "by": "CC BY 4.0"}, "CC-BY-NC-4.0"),
        ({"du": "unknown; see the release"}, "unknown"),
    ],
)
def test_the_release_takes_the_most_restrictive_licence(sources, chosen):
    assert choose_licence(sources).licence == chosen


def test_an_incompatible_licence_is_refused_naming_the_sources_that_forbid_it():
    sources = {"durecdial": "CC BY-NC-SA 4.0", "wikidata": "CC0 1.0", "kdconv": "Apache-2.0"}
    with pytest.raises(
        ArgumentError, match=r"CC-BY-4.0 is not allowed by the licence of durecdial \(CC-BY-NC-SA-4.0\)"
    ):
        choose_licence(sources, "CC-BY-4.0")
    assert choose_licence({"kdconv": "Apache-2.0"}, "cc-by-sa-4.0").licence == "CC-BY-SA-4.0"
    assert choose_licence({"x": "not recorded"}, "MIT").unchecked == ("x",)


@given(st.lists(st.sampled_from(sorted(LICENCES)), min_size=1, max_size=4))
def test_a_licence_chosen_from_the_sources_is_allowed_by_every_one_of_them(names):
    try:
        chosen = choose_licence({f"s{i}": name for i, name in enumerate(names)}).licence
    except Exception as exc:  # sources without a common licence, or no derivatives: refused, with the reason
        assert "allow" in str(exc) or "adapted" in str(exc)
        return
    assert all(allows(name, chosen) for name in names)
    assert spdx(chosen) == chosen


@given(st.integers(0, 500), st.integers(1, 500))
def test_wilson_holds_the_proportion_and_matches_statsmodels(k, n):
    k = min(k, n)
    low, high = wilson(k, n)
    assert low <= k / n <= high
    assert (low, high) == pytest.approx(proportion_confint(k, n, alpha=0.05, method="wilson"), abs=1e-9)


@given(
    st.dictionaries(st.text(min_size=1, max_size=3), st.integers(1, 50), min_size=1, max_size=8), st.integers(1, 120)
)
def test_stratified_allocation_fills_the_sample_within_each_relation(sizes, n):
    got = allocate(sizes, n)
    assert sum(got.values()) == min(n, sum(sizes.values()))
    assert all(0 <= got[r] <= sizes[r] for r in sizes)
    if n >= len(sizes):
        assert all(got[r] >= 1 for r in sizes)


@settings(max_examples=50)
@given(
    st.lists(
        st.tuples(
            st.text(max_size=8), st.lists(st.sampled_from(["supported", "contradicted", "unsupported"]), max_size=3)
        ),
        min_size=1,
        max_size=6,
    )
)
def test_kdconv_turns_keep_every_message_in_order_with_its_verdict(messages):
    record = {"name": "t", "messages": [{"message": m, "claims": [{"status": s} for s in c]} for m, c in messages]}
    turns = LAYOUTS.get("kdconv").turns(record)
    assert [t.text for t in turns] == [m for m, _ in messages]
    assert [t.speaker for t in turns] == ["A", "B"] * (len(messages) // 2) + ["A"] * (len(messages) % 2)
    for turn, (_, claims) in zip(turns, messages):
        expected = next((v for v in ("contradicted", "unsupported", "supported") if v in claims), "none")
        assert verdict(turn.claims) == expected


@given(st.dictionaries(st.text(max_size=5), st.text(max_size=20), max_size=5))
def test_the_manifest_finds_any_changed_byte_of_itself(data):
    raw = manifest_text({"kgforge_release": 1, **{f"k{k}": v for k, v in data.items()}}).encode("utf-8")
    assert self_digest_ok(raw)
    for at in range(0, len(raw), max(1, len(raw) // 7)):
        changed = bytearray(raw)
        changed[at] ^= 0x01
        assert not self_digest_ok(bytes(changed))


def test_durecdial_turns_are_gold_only_where_the_grounder_kept_the_dataset_s_annotation():
    layout = LAYOUTS.get("durecdial-resource")
    said = ["[1] 你 好", "你好 ， 我 喜欢 周杰伦", "周杰伦 的 代表作 是 七里香"]
    stated = [[], [], [["周杰伦", "代表作", "七里香"]]]
    grounded = {"label": "user", "conversation": said, "knowledge": [[], [], ["周杰伦", "代表作", "七里香"]],
                "session_knowledge": [["周杰伦", "代表作", "七里香"]], "stated_knowledge": stated, "claims": [[], [], []]}  # fmt: skip
    turns = layout.turns(grounded)  # no gold: the grounder wrote its prediction as knowledge
    assert [t.speaker for t in turns] == ["user", "bot", "user"]
    assert [t.facts for t in turns] == [(), (), (("周杰伦", "代表作", "七里香"),)]
    assert {t.facts_from for t in turns} == {"grounder"}
    gold = {**grounded, "knowledge": [[], ["周杰伦", "代表作", "七里香"], []], "predicted_knowledge": [[], [], []]}
    del gold["session_knowledge"]
    turns = layout.turns(gold)
    assert [t.facts for t in turns] == [(), (("周杰伦", "代表作", "七里香"),), ()]
    assert {t.facts_from for t in turns} == {"gold"}


def test_duconv_turns_state_the_session_triples_the_grounder_found():
    session = {
        "goal": [["START", "王牌", "林志玲"]],
        "knowledge": [["王牌", "导演", "范建浍"], ["林志玲", "体重", "54kg"]],
        "conversation": ["你 知道 王牌 吗", "范建浍 导演 的", "林志玲 才 54kg"],
        "grounding": [{"knowledge": [], "claims": []}, {"knowledge": [0], "claims": [{"status": "supported"}]},
                      {"knowledge": [1], "claims": [{"status": "contradicted"}]}],
    }  # fmt: skip
    turns = LAYOUTS.get("duconv-session").turns(session)
    assert [t.speaker for t in turns] == ["bot", "user", "bot"]
    assert [t.facts for t in turns] == [(), (("王牌", "导演", "范建浍"),), (("林志玲", "体重", "54kg"),)]
    assert [verdict(t.claims) for t in turns] == ["none", "supported", "contradicted"]
    assert json.loads(LAYOUTS.get("duconv-session").goal(session)) == session["goal"]


@pytest.mark.slow  # a second release of the sample (2 s)
def test_files_named_train_and_test_are_those_splits_given_after_one_dialogues_option(duconv, tmp_path):
    workdir, sessions, _ = duconv
    given = sessions.read_text(encoding="utf-8").splitlines(keepends=True)
    (tmp_path / "train.jsonl").write_text("".join(given[:200]), encoding="utf-8")
    (tmp_path / "test.jsonl").write_text("".join(given[200:]), encoding="utf-8")
    out = tmp_path / "r"
    made = json.loads(
        run_cli(
            "release", "duconv", "--dialogues", str(tmp_path / "train.jsonl"), str(tmp_path / "test.jsonl"),
            "--out", str(out), "--workdir", str(workdir), "--kg", "none", "--json",
        ).stdout
    )  # fmt: skip
    assert [(s["name"], s["dialogues"]) for s in made["splits"]] == [("train", 200), ("test", 50)]
    assert lines(out / "duconv" / "test.jsonl") == [json.loads(line) for line in given[200:]]
    assert made["dialogues"] == 250 and check_release(out, records=False).ok


def test_without_mlcroissant_the_check_says_how_to_install_it_and_runs_the_rest(duconv, monkeypatch):
    _, _, out = duconv
    monkeypatch.setitem(sys.modules, "mlcroissant", None)  # an import of it raises ImportError
    report = check_release(out, records=False)
    croissant = {line.check: line for line in report.checks}["croissant"]
    assert croissant.status == "not run" and "pip install 'kgforge[release]'" in croissant.detail
    assert report.ok and {line.check: line.status for line in report.checks}["checksums"] == "ok"
