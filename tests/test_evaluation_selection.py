"""`kgforge eval --selected`: the facts a system selected per turn, scored KILT-style against the gold — the same
figures computed here independently on KdConv travel dev, every input layout, and bad input refused by line."""

from __future__ import annotations

import copy
import json
import random
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.evaluation.selection import score_selection
from kgforge.grounding.normalise import form
from kgforge.store.snapshot import Snapshot
from tests.conftest import run_cli, shared_file
from tests.durecdial_sessions import v2_session, write_lines

KS = (1, 5)
FIGURES = ("r_precision", "recall@1", "recall@5", "precision", "recall", "f1", "accuracy")


# ---------------------------------------------------------------- an independent computation


def key(fact) -> tuple[str, str, str]:
    if isinstance(fact, dict):
        fact = [fact["name"], fact["attrname"], fact["attrvalue"]]
    return tuple(form(x) for x in fact)


def turn_figures(gold: list, selected: list, ks=KS) -> dict:
    """One turn's counts and figures, straight from the definitions of docs/evaluation.md."""
    g = set(map(key, gold))
    ranked = []
    for fact in map(key, selected):
        if fact not in ranked:
            ranked.append(fact)
    hits = [fact in g for fact in ranked]
    counts = {
        "gold": len(g),
        "selected": len(ranked),
        "correct": sum(hits),
        "at_r": sum(hits[: len(g)]),
        **{f"at_{k}": sum(hits[:k]) for k in ks},
        "judged": 1 if g else 0,
        "top": 1 if g and hits and hits[0] else 0,
    }
    return counts


def figures_of(c: dict, ks=KS) -> dict:
    def ratio(a, b):
        return a / b if b else None

    out = {"r_precision": ratio(c["at_r"], c["gold"])}
    out.update({f"recall@{k}": ratio(c[f"at_{k}"], c["gold"]) for k in ks})
    out["precision"] = ratio(c["correct"], c["selected"])
    out["recall"] = ratio(c["correct"], c["gold"])
    out["f1"] = ratio(2 * c["correct"], c["gold"] + c["selected"])
    out["accuracy"] = ratio(c["top"], c["judged"])
    return out


def reference(golds: list[list[list]], chosen: dict[tuple[int, int], list], ks=KS) -> dict:
    """Micro, macro over turns and macro over dialogues of the listed turns."""
    turns, dialogues, total = [], [], {}
    for d, gold_turns in enumerate(golds):
        pooled = {}
        for t, gold in enumerate(gold_turns):
            if (d, t) not in chosen:
                continue
            c = turn_figures(gold, chosen[d, t], ks)
            turns.append(figures_of(c, ks))
            for name, value in c.items():
                pooled[name] = pooled.get(name, 0) + value
                total[name] = total.get(name, 0) + value
        zero = {"gold": 0, "selected": 0, "correct": 0, "at_r": 0, "judged": 0, "top": 0, **{f"at_{k}": 0 for k in ks}}
        dialogues.append(figures_of(pooled or zero, ks))

    def mean(rows):
        result = {}
        for name in rows[0]:
            values = [r[name] for r in rows if r[name] is not None]
            result[name] = sum(values) / len(values) if values else None
        return result

    return {"micro": figures_of(total, ks), "macro_turns": mean(turns), "macro_dialogues": mean(dialogues)}


def assert_same(report: dict, expected: dict) -> None:
    for level in ("micro", "macro_turns", "macro_dialogues"):
        for name, value in expected[level].items():
            if value is None:
                assert report[level][name] is None, (level, name)
            else:
                assert report[level][name] == pytest.approx(value, rel=1e-12, abs=1e-15), (level, name)


# ---------------------------------------------------------------- KdConv dev


@pytest.fixture(scope="module")
def travel() -> tuple[Path, list[dict]]:
    path = shared_file("kdconv/travel/dev.json")
    return path, json.loads(path.read_text(encoding="utf-8"))


def perturbed_selections(dialogues: list[dict], seed: int = 46) -> dict[tuple[int, int], list]:
    """A system's ranked selections: gold facts dropped, moved down the list, given twice or written in another
    width; facts of other turns put in front; some turns not listed at all."""
    rng = random.Random(seed)
    pool = [a for d in dialogues for m in d["messages"] for a in m.get("attrs", [])]
    chosen = {}
    for d, dialogue in enumerate(dialogues):
        for t, message in enumerate(dialogue["messages"]):
            if t and rng.random() < 0.1:
                continue  # not listed: left out of the scores
            gold = [dict(a) for a in message.get("attrs", []) if rng.random() < 0.85]
            wrong = [dict(rng.choice(pool)) for _ in range(rng.choice([0, 0, 1, 2, 6]))]
            facts = gold + wrong
            rng.shuffle(facts)
            if gold and rng.random() < 0.5:
                facts.insert(0, facts.pop(facts.index(gold[0])))
            if facts and rng.random() < 0.2:
                facts.append(dict(facts[0]))  # given twice: counted once, at its first place
            if gold and rng.random() < 0.2:
                gold[0]["attrvalue"] = gold[0]["attrvalue"].replace("1", "１")  # full width: the same fact
            chosen[d, t] = [
                [f["name"], f["attrname"], f["attrvalue"]] if i % 2 else f for i, f in enumerate(facts)
            ]  # triples and attrs, as the format allows
    return chosen


def test_selected_equals_an_independent_computation_on_kdconv_dev(cli, travel, tmp_path):
    gold_path, dialogues = travel
    chosen = perturbed_selections(dialogues)
    selected = tmp_path / "selected.jsonl"
    rows = [{"dialogue": d, "turn": t, "facts": facts} for (d, t), facts in chosen.items()]
    random.Random(1).shuffle(rows)  # the records may come in any order
    selected.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    out = tmp_path / "per-turn.jsonl"
    result = cli("eval", "--selected", str(selected), "--gold", str(gold_path), "--out", str(out), "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    golds = [[m.get("attrs", []) for m in d["messages"]] for d in dialogues]
    assert_same(report, reference(golds, chosen))
    turns = sum(len(d["messages"]) for d in dialogues)
    assert report["turns"] == len(chosen) and report["turns_left_out"] == turns - len(chosen) > 100
    assert report["dialogues"] == 150 and report["gold_layout"] == "kdconv attrs"
    assert 0.5 < report["micro"]["recall"] < 0.95 and report["micro"]["accuracy"] < report["micro"]["recall@5"]
    # the per-turn rows are each turn's own figures
    written = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    per_turn = {(r["dialogue"], r["turn"]): r for r in written if r["level"] == "turn"}
    assert set(per_turn) == set(chosen)
    for (d, t), facts in list(chosen.items())[:300]:
        expected = figures_of(turn_figures(golds[d][t], facts))
        assert {name: per_turn[d, t][name] for name in FIGURES} == pytest.approx(expected)
    assert sum(r["level"] == "dialogue" for r in written) == 150
    # the printed table carries the same figures
    shown = cli("eval", "--selected", str(selected), "--gold", str(gold_path), "--no-out")
    assert f"r_precision  {report['micro']['r_precision']:.3f}" in shown.stdout
    assert "turns of the gold have no --selected record: not scored" in shown.stdout


def test_a_kdconv_ground_output_is_scored_by_its_predicted_attrs(travel, tmp_path):
    """A `kgforge ground` output of an annotated file: each message's predicted_attrs against its attrs; the same
    figures as the same selection given as turn records."""
    gold_path, dialogues = travel
    chosen = {k: v for k, v in perturbed_selections(dialogues, seed=7).items()}
    grounded = copy.deepcopy(dialogues)
    for d, dialogue in enumerate(grounded):
        for t, message in enumerate(dialogue["messages"]):
            facts = chosen.setdefault((d, t), [])
            message["predicted_attrs"] = [key_attr(f) for f in facts]
    path = tmp_path / "grounded.json"
    path.write_text(json.dumps(grounded, ensure_ascii=False), encoding="utf-8")
    report = score_selection(path, gold_path).as_dict()
    golds = [[m.get("attrs", []) for m in d["messages"]] for d in dialogues]
    assert_same(report, reference(golds, chosen))
    assert report["selected_layout"] == "kdconv" and report["turns_left_out"] == 0


def key_attr(fact) -> dict:
    if isinstance(fact, dict):
        return fact
    return {"name": fact[0], "attrname": fact[1], "attrvalue": fact[2]}


# ---------------------------------------------------------------- DuConv and DuRecDial


def duconv_grounded_by_hand(shared, n: int = 10) -> tuple[list[dict], list[list[list[int]]]]:
    """``n`` real DuConv sessions with a `grounding` written here (every third triple stated by every other
    utterance): a `kgforge ground` output's shape, its gold independent of the grounder."""
    lines = shared("duconv/dev.head250.jsonl").read_text(encoding="utf-8").splitlines()[:n]
    sessions, indices = [json.loads(line) for line in lines], []
    for s, session in enumerate(sessions):
        rows = [
            [i for i in range(len(session["knowledge"])) if (i + u + s) % 3 == 0] if u % 2 else []
            for u in range(len(session["conversation"]))
        ]
        session["grounding"] = [{"knowledge": r, "topics": [], "claims": []} for r in rows]
        indices.append(rows)
    return sessions, indices


def test_duconv_fact_ids_and_triples_against_a_ground_output(shared, tmp_path):
    sessions, indices = duconv_grounded_by_hand(shared)
    gold = write_lines(tmp_path / "gold.jsonl", sessions)
    rng, records, chosen = random.Random(3), [], {}
    for d, session in enumerate(sessions):
        for t in range(len(session["conversation"])):
            ids = rng.sample(range(len(session["knowledge"])), k=min(3, len(session["knowledge"])))
            facts = [i if n % 2 else session["knowledge"][i] for n, i in enumerate(ids)]  # ids and triples
            records.append({"dialogue": d, "turn": t, "facts": facts})
            chosen[d, t] = [session["knowledge"][i] for i in ids]
    selected = write_lines(tmp_path / "selected.jsonl", records)
    report = score_selection(selected, gold, ks=(1, 2, 5)).as_dict()
    golds = [[[s["knowledge"][i] for i in row] for row in rows] for s, rows in zip(sessions, indices)]
    assert_same(report, reference(golds, chosen, (1, 2, 5)))
    assert report["ks"] == [1, 2, 5] and "recall@2" in report["micro"]
    assert report["gold_layout"].startswith("duconv grounding")


def test_a_duconv_file_is_grounded_for_its_gold_with_a_domain(shared, workdir, tmp_path):
    """Without per-turn knowledge, the session's own triples each utterance states (the rule of `kgforge ground`)
    are the gold: the same figures as against the grounded file itself."""
    source = shared("duconv/dev.head250.jsonl")
    head = write_lines(tmp_path / "head.jsonl", [json.loads(x) for x in source.read_text("utf-8").splitlines()[:20]])
    run_cli("build", "duconv", "--source", f"duconv:{source}", "--workdir", str(workdir))
    grounded = tmp_path / "grounded.jsonl"
    run_cli("ground", "duconv", "--dialogues", str(head), "--format", "duconv", "--out", str(grounded),
            "--workdir", str(workdir))  # fmt: skip
    selected, _ = duconv_grounded_by_hand(shared, 20)
    chosen = write_lines(tmp_path / "selected.jsonl", selected)
    by_domain = score_selection(chosen, head, snapshot=Snapshot.open("duconv", workdir)).as_dict()
    by_file = score_selection(chosen, grounded).as_dict()
    assert {k: by_domain[k] for k in ("micro", "macro_turns", "macro_dialogues", "gold_facts")} == {
        k: by_file[k] for k in ("micro", "macro_turns", "macro_dialogues", "gold_facts")
    }
    assert by_domain["gold_layout"] == "session knowledge grounded against 'duconv'" and by_file["gold_facts"] > 50
    refused = run_cli("eval", "--selected", str(chosen), "--gold", str(head), check=False)
    assert refused.returncode == 1 and f"{head}:1: the session has no per-turn knowledge" in refused.stderr


def test_durecdial_per_utterance_gold_and_its_ground_output(shared, workdir, tmp_path):
    session = v2_session(shared)
    gold = write_lines(tmp_path / "dev.txt", [session])
    run_cli("build", "durecdial", "--source", f"durecdial:{gold}", "--workdir", str(workdir))
    grounded = tmp_path / "grounded.txt"
    run_cli("ground", "durecdial", "--dialogues", str(gold), "--format", "durecdial", "--out", str(grounded),
            "--workdir", str(workdir))  # fmt: skip
    report = score_selection(grounded, gold).as_dict()
    stated = json.loads(grounded.read_text(encoding="utf-8"))["stated_knowledge"]
    chosen = {(0, t): facts for t, facts in enumerate(stated)}
    golds = [[[k] if k else [] for k in session["knowledge"]]]
    assert_same(report, reference(golds, chosen))
    assert report["gold_layout"] == "durecdial per-utterance knowledge" and report["selected_layout"] == "durecdial"
    # hand-checked: each of the six annotated utterances has its own triple first (accuracy 1), and four more
    # facts are stated where the annotation gives none or one (the weather's dish beside the restaurant's special)
    assert report["turns_with_gold"] == 6 and report["micro"]["accuracy"] == 1.0 and report["micro"]["recall"] == 1.0
    assert report["selected_facts"] == 10 and report["micro"]["precision"] == 0.6


# ---------------------------------------------------------------- bad input


def bad_cases(gold: Path, tmp: Path) -> list[tuple[str, str, str]]:
    """(name, the selected file's text, the message expected after FILE:LINE)."""
    first = '{"dialogue": 0, "turn": 1, "facts": [["a", "b", "c"]]}\n'
    all_dialogues = "".join(f'{{"dialogue": {d}, "turn": 0, "facts": []}}\n' for d in range(150))
    truncated = json.loads(gold.read_text(encoding="utf-8"))[:149]
    shorter = json.loads(gold.read_text(encoding="utf-8"))
    shorter[3]["messages"].pop()
    return [
        ("turn beyond", all_dialogues + '{"dialogue": 0, "turn": 99, "facts": []}\n', ":151: turn 99 is beyond"),
        ("dialogue beyond", first + '{"dialogue": 150, "turn": 0, "facts": []}\n', ":2: dialogue 150 is beyond"),
        ("too few dialogues", first, ":1: the records name 1 dialogues, the gold"),
        ("malformed", first + '{"dialogue": 0, "turn": 2, "facts": [}\n', ":2: malformed JSON"),
        ("not a triple", '{"dialogue": 0, "turn": 1, "facts": [["a", "b"]]}\n', ":1: a fact must be [head"),
        ("no facts list", '{"dialogue": 0, "turn": 1}\n', ":1: 'facts' must be a list"),
        ("not an index", '{"dialogue": "0", "turn": 1, "facts": []}\n', ":1: 'dialogue' must be an index"),
        ("twice", first + first, ":2: turn 1 of dialogue 0 again (first on line 1)"),
        ("fact id", '{"dialogue": 0, "turn": 1, "facts": [2]}\n', ":1: fact id 2: the gold's dialogues have no"),
        ("wrong dialogue count", json.dumps(truncated, ensure_ascii=False), ": 149 dialogues, the gold"),
        (
            "wrong turn count",
            json.dumps(shorter, ensure_ascii=False),
            f": dialogue 3 has {len(shorter[3]['messages'])} turns",
        ),
    ]


@pytest.mark.parametrize("case", range(11))
def test_turns_that_do_not_line_up_are_refused_by_line_and_nothing_is_written(cli, travel, tmp_path, case):
    gold, _ = travel
    name, text, expected = bad_cases(gold, tmp_path)[case]
    selected = tmp_path / ("selected.json" if text.startswith("[") else "selected.jsonl")
    selected.write_text(text, encoding="utf-8")
    out = tmp_path / "scores.jsonl"
    result = cli("eval", "--selected", str(selected), "--gold", str(gold), "--out", str(out), check=False)
    assert result.returncode == 1, name
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"error: {selected}:") and expected in lines[0], (name, lines)
    assert "Traceback" not in result.stderr and not out.exists() and not list(tmp_path.glob("scores*"))


def test_bad_options(cli, travel, tmp_path):
    gold, _ = travel
    selected = write_lines(tmp_path / "s.jsonl", [{"dialogue": 0, "turn": 0, "facts": []}])
    for args, expected in (
        (["--k", "0"], "--k"),
        (["--k", "one"], "--k"),
        (["PRED.txt"], "--selected is scored on its own"),
    ):
        result = cli("eval", *args, "--selected", str(selected), "--gold", str(gold), check=False)
        assert result.returncode == 2 and expected in result.stderr and "Traceback" not in result.stderr
    assert "--selected needs --gold" in cli("eval", "--selected", str(selected), check=False).stderr


# ---------------------------------------------------------------- the definitions as properties

FACTS = st.sampled_from([["a", "r", str(i)] for i in range(8)])


@settings(max_examples=25, deadline=None)  # each example writes two files and reads them back
@given(
    st.lists(
        st.lists(st.tuples(st.lists(FACTS, max_size=4), st.lists(FACTS, max_size=7)), min_size=1, max_size=4),
        min_size=1,
        max_size=3,
    ),  # fmt: skip
    st.lists(st.integers(1, 9), min_size=1, max_size=3),
)
def test_any_selection_scores_as_the_definitions_say(dialogues, ks):
    ks = tuple(sorted(set(ks)))
    golds = [[[{"name": h, "attrname": r, "attrvalue": t} for h, r, t in gold] for gold, _ in d] for d in dialogues]
    chosen = {(d, t): sel for d, turns in enumerate(dialogues) for t, (_, sel) in enumerate(turns)}
    with tempfile.TemporaryDirectory() as folder:
        gold = Path(folder) / "gold.json"
        gold.write_text(json.dumps([{"messages": [{"message": "", "attrs": g} for g in d]} for d in golds]), "utf-8")
        records = [{"dialogue": d, "turn": t, "facts": f} for (d, t), f in chosen.items()]
        report = score_selection(write_lines(Path(folder) / "s.jsonl", records), gold, ks=ks).as_dict()
    assert_same(report, reference([[list(g) for g in d] for d in golds], chosen, ks))
    micro = report["micro"]
    if micro["r_precision"] is not None:  # Recall@k grows with k and never passes recall
        values = [micro[f"recall@{k}"] for k in ks]
        assert values == sorted(values) and micro["recall@" + str(ks[-1])] <= micro["recall"] + 1e-12


def test_any_dataset_registered_with_a_selection_reading_is_scored_and_selection_names_none(tmp_path):
    """`--selected` knows no dataset: a reading registered as a room's evaluation part registers one gives the
    gold, a `ground` output's selection and the refusals' words; selection.py names none of the datasets (but
    in the import of the session helpers it shares with the sources)."""
    from kgforge.core.datasets import DATASETS
    from kgforge.core.errors import InputError
    from kgforge.evaluation import selection
    from kgforge.evaluation.selection import SELECTION_READINGS, SelectionReading, register_selection

    def turns(key):
        def read(path, line, record):
            given = record.get(key)
            return None if given is None else [[selection.triple(path, line, t) for t in ts] for ts in given]

        return read

    def gold(path, line, record):
        found = turns("facts")(path, line, record)
        return None if found is None else (found, None)

    register_selection("quest", SelectionReading(gold, "quest facts", turns("chosen"), "quest", "chosen", order=5))
    try:
        facts = [[["长城", "位于", "北京"]], [], [["故宫", "建于", "明朝"], ["故宫", "别名", "紫禁城"]]]
        talk = ["去哪儿玩？", "长城在北京", "故宫呢？"]
        gold_path = write_lines(tmp_path / "gold.jsonl", [{"conversation": talk, "facts": facts}])
        chosen = [[["长城", "位于", "北京"]], [], [["故宫", "别名", "紫禁城"], ["故宫", "位于", "北京"]]]
        selected = write_lines(tmp_path / "selected.jsonl", [{"conversation": talk, "chosen": chosen}])
        report = score_selection(selected, gold_path)
        assert (report.gold_layout, report.selected_layout, report.turns_with_gold) == ("quest facts", "quest", 2)
        assert report.micro.r_precision == pytest.approx(2 / 3) and report.micro.precision == pytest.approx(2 / 3)
        neither = write_lines(tmp_path / "neither.jsonl", [{"conversation": talk}])
        with pytest.raises(InputError, match="`chosen`"):
            score_selection(neither, gold_path)
    finally:
        SELECTION_READINGS.unregister("quest")
    source = Path(selection.__file__).read_text(encoding="utf-8")
    lines = [line for line in source.lower().splitlines() if not line.startswith("from kgforge.sources.")]
    assert not [entry.name for entry in DATASETS if entry.name.lower() in "\n".join(lines)]
