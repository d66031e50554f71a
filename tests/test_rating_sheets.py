"""Rating sheets a rater can use (issue 50, items 1 and 4): `rate sheet --gold` pairs each response with its
dialogue exactly as `eval --gold` does and shows the dialogue before it and the knowledge behind it; dialogue
sheets render the goal, situation and profile as lines; ConvKGYarn's rubrics read what `kgforge qa generate`
writes; `rate import --out` writes the un-blinded scores that `eval --human` reads, round trip checked."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import pytest

from kgforge.evaluation import EvalOptions, evaluate, evaluate_systems
from kgforge.evaluation.inputs import load_responses
from kgforge.evaluation.rating import import_ratings, make_sheets, rubric
from kgforge.qa import GenerateOptions, generate_dataset
from kgforge.store.snapshot import Snapshot
from tests.conftest import build_travel, shared_file


def read_sheet(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8", newline="") as handle:
        return list(csv.DictReader(handle))


def write_sheet(path: Path, rows: list[dict[str, str]]) -> None:
    with open(path, "w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)


def kdconv_dev(tmp_path: Path, dialogues: int = 4) -> tuple[Path, list[dict]]:
    data = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))[:dialogues]
    path = tmp_path / "dev.json"
    path.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return path, data


def responses_of(tmp_path: Path, data: list[dict], name: str, change=lambda text: text) -> Path:
    """A model's output file: one response per line, for every message after a dialogue's first."""
    path = tmp_path / f"{name}.txt"
    path.write_text("".join(change(m["message"]) + "\n" for d in data for m in d["messages"][1:]), encoding="utf-8")
    return path


def test_a_sheet_with_gold_shows_the_dialogue_before_each_response(cli, tmp_path):
    gold, data = kdconv_dev(tmp_path)
    files = {"a": responses_of(tmp_path, data, "a"), "b": responses_of(tmp_path, data, "b", lambda t: t[::-1])}
    # what each line of the responses answers, worked out here from the KdConv file itself
    answers = [(d, j) for d in data for j in range(1, len(d["messages"]))]
    args = ["rate", "sheet", "kdconv", "--system", f"a={files['a']}", "--system", f"b={files['b']}"]
    bare = cli(*args, "--out", str(tmp_path / "bare"), "--sample", "4").stdout
    assert "8 of 8 items show no context or knowledge" in bare and "--gold" in bare  # said, not silent
    cli(*args, "--out", str(tmp_path / "rating"), "--gold", str(gold), "--sample", "6", "--seed", "2")
    key = json.loads((tmp_path / "rating" / "key.json").read_text(encoding="utf-8"))
    rows = read_sheet(tmp_path / "rating" / "sheet-annotator1.csv")
    assert list(rows[0])[:4] == ["item", "context", "knowledge", "text"] and len(rows) == 12
    paired = load_responses(files["a"], gold)  # eval's own pairing: the same ids
    assert {key["items"][r["item"]]["unit"] for r in rows} <= set(paired.frame["id"].to_list())
    for row in rows:
        dialogue, j = answers[int(key["items"][row["item"]]["unit"]) - 1]
        history = [m["message"] for m in dialogue["messages"][:j]]
        assert row["context"].splitlines() == [f"{'AB'[k % 2]}: {text}" for k, text in enumerate(history)]
        facts = {(a["name"], a["attrname"], a["attrvalue"]) for m in dialogue["messages"] for a in m.get("attrs", [])}
        shown = set(row["knowledge"].splitlines())
        assert {" — ".join(f) for f in facts if "\n" not in f[2]} <= shown and "[" not in row["knowledge"][:1]


def test_the_duconv_sheet_shows_the_goal_and_the_knowledge_as_lines(tmp_path):
    sessions = shared_file("duconv/dev.head250.jsonl")
    records = [json.loads(line) for line in sessions.read_text(encoding="utf-8").splitlines()]
    bot = tmp_path / "bot.txt"
    bot.write_text("".join(r["conversation"][j] + "\n" for r in records for j in range(0, len(r["conversation"]), 2)))
    make_sheets("duconv-turn", {"bot": bot}, tmp_path / "turns", sample=5, gold=sessions, annotators=1)
    key = json.loads((tmp_path / "turns" / "key.json").read_text(encoding="utf-8"))
    by_line = [(r, j) for r in records for j in range(0, len(r["conversation"]), 2)]
    for row in read_sheet(tmp_path / "turns" / "sheet-annotator1.csv"):
        record, j = by_line[int(key["items"][row["item"]]["unit"]) - 1]
        lines = row["knowledge"].splitlines()
        assert {" — ".join(t) for t in record["knowledge"]} <= set(lines)  # every triple, one a line
        assert {" — ".join(t) for t in record["goal"][1:]} <= set(lines)  # and the goal path
        assert len(row["context"].splitlines()) == j and row["text"] == record["conversation"][j]
    make_sheets("duconv-dialogue", {"gold": sessions}, tmp_path / "dialogues", sample=3, annotators=1)
    for row in read_sheet(tmp_path / "dialogues" / "sheet-annotator1.csv"):
        assert row["context"].startswith("goal:\n  START → ") and '["' not in row["context"]  # no raw JSON
        assert len(row["knowledge"].splitlines()) >= 5 and " — " in row["knowledge"]


def test_the_durecdial_dialogue_sheets_show_one_goal_a_line(tmp_path):
    sessions = shared_file("durecdial/lic2020_baseline_resource_dev.txt")
    records = [json.loads(line) for line in sessions.read_text(encoding="utf-8").splitlines()]
    made = make_sheets("durecdial-dialogue", {"gold": sessions}, tmp_path / "d", sample=3, annotators=1)
    assert made.without_context == 0
    key = json.loads((tmp_path / "d" / "key.json").read_text(encoding="utf-8"))
    for row in read_sheet(tmp_path / "d" / "sheet-annotator1.csv"):
        record = records[int(key["items"][row["item"]]["unit"]) - 1]
        # the resource files give each turn's goal: one line per goal in order, each once
        steps = [" ".join(dict.fromkeys(x.strip() for x in step if x.strip())) for step in record["goal"]]
        expected = [step for i, step in enumerate(steps) if i == 0 or step != steps[i - 1]]
        shown = row["context"].split("\nuser:")[0].splitlines()
        assert shown == ["goal:", *(f"  {step}" for step in expected)] and "[" not in row["context"]
        assert f"user: {record['name']}" in row["context"].splitlines()
        assert not any(re.match(r"^[AB]: \[\d+\]", line) for line in row["text"].splitlines())  # markers off
    acl = json.loads(shared_file("durecdial/acl2020_readme_example.json").read_text(encoding="utf-8"))
    (tmp_path / "acl.jsonl").write_text(json.dumps(acl, ensure_ascii=False) + "\n", encoding="utf-8")
    make_sheets("durecdial-dialogue", {"gold": tmp_path / "acl.jsonl"}, tmp_path / "acl", annotators=1)
    (row,) = read_sheet(tmp_path / "acl" / "sheet-annotator1.csv")
    goals = [step.strip() for step in acl["goals"].split("-->")]
    assert row["context"].split("\nsituation:")[0].splitlines() == ["goal:", *(f"  {g}" for g in goals)]
    assert f"  姓名: {acl['user_profile']['姓名']}" in row["context"].splitlines()
    assert " — ".join(acl["kg"][0]) in row["knowledge"].splitlines()


def fill(folder: Path, chosen, value) -> list[tuple]:
    """Every sheet of ``folder`` filled with ``value(item, annotator, aspect)``; what was written."""
    key = json.loads((folder / "key.json").read_text(encoding="utf-8"))
    written = []
    for rater, sheet in key["sheets"].items():
        rows = read_sheet(folder / sheet)
        for row in rows:
            item = key["items"][row["item"]]
            for aspect in chosen.aspects:
                score = value(item, rater, aspect)
                row[aspect.key] = f"{score:g}"
                written.append((item.get("system"), item["unit"], rater, aspect.key, score))
        write_sheet(folder / sheet, rows)
    return written


def test_rate_import_out_is_what_eval_human_reads(cli, tmp_path):
    gold, data = kdconv_dev(tmp_path)
    files = {
        "exact": responses_of(tmp_path, data, "exact"),
        "short": responses_of(tmp_path, data, "short", lambda t: t[:3]),
    }
    folder = tmp_path / "rating"
    make_sheets("kdconv", files, folder, sample=10, seed=4, gold=gold)
    chosen = rubric("kdconv")
    written = fill(
        folder,
        chosen,
        lambda item, rater, aspect: 2 if item["system"] == "exact" else int(item["unit"]) % 2,
    )
    out = tmp_path / "human.jsonl"
    report = json.loads(cli("rate", "import", str(folder), "--out", str(out), "--json").stdout)
    assert report["scores_file"] == str(out)
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(lines) == 10 * 2 * 3 and set(lines[0]) == {"system", "id", "annotator", "scores"}
    assert sorted(
        (r["system"], r["id"], r["annotator"], a, s) for r in lines for a, s in r["scores"].items()
    ) == sorted(written)  # un-blinded exactly
    board = evaluate_systems(
        {("all", name): path for name, path in files.items()},
        gold=gold,
        human=out,
        options=EvalOptions(metrics=("f1", "bleu1")),
        bootstrap=0,
    )
    assert board.human["matched_by"] == "id" and board.human["rated_responses"] == 20
    assert board.human["annotators"] == 3 and board.human["aspects"] == ["fluency", "coherence"]
    means = {(m["system"], a): m[a] for m in board.human["means"] for a in ("fluency", "coherence")}
    for row in report["means"]:
        assert means[row["system"], row["aspect"]] == pytest.approx(row["mean"])  # what rate import reported
    f1 = next(c for c in board.correlations if c["level"] == "turn" and c["metric"] == "f1" and c["human"] == "fluency")
    assert f1["n"] == 20 and f1["pearson"] > 0.5
    # one system alone: eval PRED --human reads the same shape
    make_sheets("kdconv", {"short": files["short"]}, tmp_path / "one", sample=8, seed=1, gold=gold)
    fill(tmp_path / "one", chosen, lambda item, rater, aspect: int(item["unit"]) % 3)
    import_ratings(tmp_path / "one", out=tmp_path / "one.jsonl")
    alone = evaluate(files["short"], gold=gold, human=tmp_path / "one.jsonl", options=EvalOptions(metrics=("f1",)))
    assert alone.human["matched_by"] == "id" and alone.human["columns"] == ["fluency", "coherence"]
    assert next(c for c in alone.correlations if c["human"] == "fluency")["n"] == 8
    done = cli("rate", "import", str(folder), "--out", str(tmp_path / "h.csv"), check=False)
    assert done.returncode == 1 and "must end in .jsonl" in done.stderr and not (tmp_path / "h.csv").exists()


@pytest.fixture(scope="module")
def qa_files(tmp_path_factory) -> dict[str, Path]:
    """Two real `kgforge qa generate` runs on the KdConv travel graph: the same facts, Chinese and English."""
    folder = tmp_path_factory.mktemp("qa-rate")
    workdir = build_travel(folder / "kg")
    files = {}
    for language in ("zh", "en"):
        files[language] = folder / f"{language}.jsonl"
        generate_dataset(
            Snapshot.open("travel", workdir),
            files[language],
            GenerateOptions(n=3, turns=3, seed=1, interactions=("text",), phenomena=("deixis",), variants=1),
            language,
            convquestions=folder / f"{language}.cq.jsonl",
        )
    return files


def conversations_in(path: Path) -> dict[str, list[dict]]:
    turns: dict[str, list[dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        turn = json.loads(line)
        turns.setdefault(turn["conversation_id"], []).append(turn)
    return turns


def test_convkgyarn_likert_rates_qa_generate_conversations(qa_files, tmp_path):
    expected = conversations_in(qa_files["zh"])
    made = make_sheets("convkgyarn-likert", {"zh": qa_files["zh"]}, tmp_path / "l", annotators=2)
    assert made.items == len(expected) >= 3 and made.without_context == 0
    key = json.loads((tmp_path / "l" / "key.json").read_text(encoding="utf-8"))
    for row in read_sheet(tmp_path / "l" / "sheet-annotator1.csv"):
        turns = sorted(expected[key["items"][row["item"]]["unit"]], key=lambda t: t["turn"])
        assert row["text"].splitlines()[0::2] == [f"Q{i + 1}: {t['question']}" for i, t in enumerate(turns)]
        assert row["text"].splitlines()[1] == "A1: " + "; ".join(turns[0]["answer_texts"])
        assert row["context"].startswith(turns[0]["fact"]["subject_label"])
    fill(tmp_path / "l", rubric("convkgyarn-likert"), lambda item, rater, aspect: 4)
    report = import_ratings(tmp_path / "l")
    assert {m["mean"] for m in report.means} == {4.0}
    cq = make_sheets("convkgyarn-likert", {"zh": qa_files["zh"].with_suffix(".cq.jsonl")}, tmp_path / "c", annotators=1)
    assert cq.items == len(expected)  # the --convquestions file: one conversation a line


def test_convkgyarn_pairwise_puts_two_qa_conversations_side_by_side(qa_files, tmp_path):
    zh, en = conversations_in(qa_files["zh"]), conversations_in(qa_files["en"])
    assert set(zh) == set(en)  # the same facts, asked in two languages
    made = make_sheets("convkgyarn-pairwise", qa_files, tmp_path / "p", annotators=3, seed=3)
    assert made.items == len(zh)
    key = json.loads((tmp_path / "p" / "key.json").read_text(encoding="utf-8"))
    for row in read_sheet(tmp_path / "p" / "sheet-annotator1.csv"):
        item = key["items"][row["item"]]
        for output, system in zip(("output_1", "output_2"), item["systems"], strict=True):
            questions = [
                t["question"] for t in sorted((zh if system == "zh" else en)[item["unit"]], key=lambda t: t["turn"])
            ]
            assert row[output].splitlines()[0::2] == [f"Q{i + 1}: {q}" for i, q in enumerate(questions)]
    fill(tmp_path / "p", rubric("convkgyarn-pairwise"), lambda item, rater, aspect: 1 + item["systems"].index("zh"))
    out = tmp_path / "judgements.jsonl"
    report = import_ratings(tmp_path / "p", out=out)
    preference = next(p for p in report.preferences if p["aspect"] == "preference")
    assert (preference["a"], preference["b"], preference["wins"], preference["losses"]) == ("zh", "en", 3 * len(zh), 0)
    judged = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(judged) == 3 * len(zh) and all(j["preferred"]["preference"] == "zh" for j in judged)


def test_whole_kdconv_dialogues_are_read_through_their_layout_records(tmp_path):
    """A JSON array of dialogues is read by the records its eval layout registers (the kdconv room's, checked
    against KdConv's layout): each dialogue's messages in turn, its topic, its messages' attrs as knowledge; a
    dialogue without messages is refused naming its line."""
    from kgforge.core.errors import InputError
    from kgforge.evaluation.rated import conversations

    path, data = kdconv_dev(tmp_path, dialogues=3)
    units = conversations(path)
    assert len(units) == 3
    for unit, dialogue in zip(units, data, strict=True):
        said = [line.split(": ", 1)[1] for line in unit.text.splitlines()]
        assert said == [m["message"] for m in dialogue["messages"]]
        assert unit.context == f"topic: {dialogue['name']}"
        attrs = {
            " — ".join((a["name"], a["attrname"], a["attrvalue"]))
            for m in dialogue["messages"]
            for a in m.get("attrs") or []
        }
        assert set(unit.knowledge.splitlines()) == attrs
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps([data[0], {"name": "x"}], ensure_ascii=False, indent=1), encoding="utf-8")
    opens = [n for n, text in enumerate(bad.read_text(encoding="utf-8").splitlines(), start=1) if text == " {"]
    line = opens[1]  # where the second dialogue opens
    with pytest.raises(InputError, match=rf"{bad}:{line}: not a kdconv dialogue: .*'messages'"):
        conversations(bad)
