"""F36: malformed records were accepted silently. Garbage after the closing ``]`` passed ``ground``, ``corpus
stats/split/candidates`` and ``rate sheet``; KdConv ``attrs`` written as an object passed ``ground`` and
``corpus``; a DuConv ``goal`` that is a string passed ``ground`` and ``rate sheet``. Each layout now has one check
(``sources.dialogue_layouts``) that every reader asks; a JSON document ends at its closing bracket; a bad record
is one line naming the file and line, or with ``--skip-invalid`` is set aside in ``OUT.rejected.jsonl``.

What is new in this change is imported inside the tests that use it, so that on the code before it the
other tests run and show the old behaviour, not an import error."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.jsonio import iter_json_container
from kgforge.evaluation.inputs import read_slots
from kgforge.exports.registry import format_named
from kgforge.grounding.registry import GROUNDERS
from tests.trust_inputs import DUCONV, KDCONV, LIC2020, refused, variant, write_array, write_lines

WORDS = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
ATTRS = st.lists(st.fixed_dictionaries({"name": WORDS, "attrname": WORDS, "attrvalue": WORDS}), max_size=3)
MESSAGES = st.lists(
    st.one_of(st.fixed_dictionaries({"message": WORDS}), st.fixed_dictionaries({"message": WORDS, "attrs": ATTRS})),
    min_size=1,
    max_size=5,
)
KDCONV_DIALOGUES = st.builds(lambda name, messages: {"name": name, "messages": messages}, WORDS, MESSAGES)
TRIPLES = st.lists(st.lists(WORDS, min_size=3, max_size=3), max_size=4)
DUCONV_SESSIONS = st.builds(
    lambda topics, path, knowledge, conversation: {
        "goal": [["START", *topics], *path],
        "knowledge": knowledge,
        "conversation": conversation,
    },
    st.lists(WORDS, min_size=2, max_size=2),
    TRIPLES,
    TRIPLES,
    st.lists(WORDS, max_size=6),
)
NOT_ATTRS = st.one_of(
    st.fixed_dictionaries({"name": WORDS, "attrname": WORDS, "attrvalue": WORDS}),  # an object, not a list
    st.lists(st.fixed_dictionaries({"name": WORDS, "attrname": st.integers(), "attrvalue": WORDS}), min_size=1),
    st.lists(st.lists(WORDS, min_size=3, max_size=3), min_size=1),  # triples, not objects
    WORDS,
)
NOT_GOALS = st.one_of(
    WORDS,  # "START A B" written as one string
    st.just([]),
    TRIPLES.map(lambda t: [["BEGIN", "a", "b"], *t]),
    st.lists(st.lists(WORDS, min_size=2, max_size=2), min_size=1),
)
GARBAGE = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1).filter(lambda t: t.strip())


@settings(max_examples=40, deadline=None)
@given(dialogues=st.lists(KDCONV_DIALOGUES, max_size=4), garbage=GARBAGE)
def test_a_json_document_ends_at_its_closing_bracket(dialogues: list, garbage: str, tmp_path_factory) -> None:
    path = write_array(tmp_path_factory.mktemp("garbage") / "d.json", dialogues, garbage)
    records = list(iter_json_container(path, list))
    assert [r.value for r in records[:-1]] == dialogues  # every dialogue before it is read as before
    last = records[-1]
    assert last.value is None and last.line == len(dialogues) + 3
    assert "text after the closing ']'" in last.error
    write_array(path, dialogues, "\n \t\r\n")  # whitespace after it is no text
    assert [r.value for r in iter_json_container(path, list)] == dialogues


@given(KDCONV_DIALOGUES, DUCONV_SESSIONS)
def test_every_well_formed_dialogue_passes_its_layout(kdconv: dict, duconv: dict) -> None:
    from kgforge.sources import dialogue_layouts as layouts

    assert layouts.layout_problem("kdconv", kdconv) is None
    assert layouts.layout_problem("duconv-session", duconv) is None
    assert format_named("kdconv").source_dialogue(kdconv, 1, format_named("kdconv").layouts[0]).record is kdconv


@given(KDCONV_DIALOGUES, st.data())
def test_kdconv_attrs_must_be_a_list_of_objects(dialogue: dict, data: st.DataObject) -> None:
    from kgforge.sources import dialogue_layouts as layouts

    m = data.draw(st.integers(0, len(dialogue["messages"]) - 1))
    bad = variant(dialogue, "messages", m, "attrs", value=data.draw(NOT_ATTRS))
    assert layouts.layout_problem("kdconv", bad) == (
        f"messages[{m}].attrs must be a list of {{name, attrname, attrvalue}} string objects"
    )


@given(DUCONV_SESSIONS, NOT_GOALS)
def test_a_duconv_goal_must_be_a_list_of_triples_opening_start(session: dict, goal: object) -> None:
    from kgforge.datasets.duconv.layouts import duconv_kind
    from kgforge.sources import dialogue_layouts as layouts

    bad = variant(session, "goal", value=goal)
    assert (
        layouts.layout_problem("duconv-session", bad) == "'goal' must be [[\"START\", A, B], [head, relation, tail], …]"
    )
    assert duconv_kind(bad) is None  # and it is not taken for another DuConv layout either


@pytest.mark.parametrize(
    ("field", "value", "problem"),
    [
        ("situation", None, "'situation' must be a string"),
        ("user_profile", "陈明", "'user_profile' must be an object of strings or string lists"),
        ("goal", [["问答", "", ""]], "'goal' must be a '[1]…-->[2]…' string"),
        ("knowledge", [["故宫", "门票"]], "'knowledge' must be a list of [head, relation, tail] string triples"),
    ],
)
def test_durecdial_fields_are_checked_per_layout(field, value, problem):
    from kgforge.sources import dialogue_layouts as layouts

    assert layouts.layout_problem("durecdial-lic2020", LIC2020) is None
    bad = {k: v for k, v in LIC2020.items() if k != field} if value is None else variant(LIC2020, field, value=value)
    assert layouts.layout_problem("durecdial-lic2020", bad) == problem


def test_one_check_gives_every_reader_the_same_reason(tmp_path):
    """The export's, the grounder's and the evaluation's readers refuse a bad record for the same reason."""
    bad = variant(KDCONV, "messages", 1, "attrs", value=KDCONV["messages"][1]["attrs"][0])
    path = write_array(tmp_path / "kd.json", [KDCONV, bad])
    reason = "not a kdconv dialogue: messages[1].attrs must be a list of {name, attrname, attrvalue} string objects"
    exported = format_named("kdconv").source_dialogue(bad, 3, format_named("kdconv").layouts[0])
    assert f"not a kdconv dialogue: {exported}" == reason
    assert GROUNDERS.get("kdconv").read(path, True).rejected[0]["reason"] == reason
    with pytest.raises(Exception, match=f"{path}:3: {reason}".replace("[", r"\[").replace("{", r"\{")):
        read_slots(path, "kdconv")
    lic = write_lines(tmp_path / "lic.jsonl", [LIC2020, variant(LIC2020, "situation", value=3)])
    assert GROUNDERS.get("durecdial").read(lic, True).rejected[0]["line"] == 2
    with pytest.raises(Exception, match="lic.jsonl:2: not a durecdial-lic2020 dialogue: 'situation' must be a string"):
        read_slots(lic, "durecdial")


# ---------------------------------------------------------------- the probe's cases, through the commands


def probe_files(tmp_path: Path) -> dict[str, Path]:
    return {
        "garbage": write_array(tmp_path / "garbage.json", [KDCONV, KDCONV], "] oops\n"),
        "attrs": write_array(
            tmp_path / "attrs.json", [KDCONV, variant(KDCONV, "messages", 3, "attrs", value={"name": "故宫"})]
        ),
        "goal": write_lines(tmp_path / "goal.jsonl", [DUCONV, variant(DUCONV, "goal", value="START 故宫 天坛")]),
    }


def test_the_probes_bad_records_are_refused_by_every_command_in_one_line(tmp_path, cli):
    files = probe_files(tmp_path)
    garbage, attrs, goal = (str(files[k]) for k in ("garbage", "attrs", "goal"))
    nowhere = ["--workdir", str(tmp_path / "kg")]  # the input is read before any graph is opened
    sheets = ["--out", str(tmp_path / "sheets")]
    cases = [
        (["ground", "tiny", "--dialogues", garbage, "--out", str(tmp_path / "g.json"), *nowhere], garbage, 5),
        (["corpus", "stats", garbage], garbage, 5),
        (["corpus", "split", garbage, "--out", str(tmp_path / "split")], garbage, 5),
        (
            ["corpus", "candidates", garbage, "--pool", garbage, "--out", str(tmp_path / "c.jsonl"), "--k", "2"],
            garbage,
            5,
        ),
        (["rate", "sheet", "kdconv", "--system", f"a={garbage}", *sheets], garbage, 5),
        (["ground", "tiny", "--dialogues", attrs, "--out", str(tmp_path / "g.json"), *nowhere], attrs, 3),
        (["corpus", "stats", attrs], attrs, 3),
        (
            ["ground", "tiny", "--format", "duconv", "--dialogues", goal, "--out", str(tmp_path / "g.jsonl"), *nowhere],
            goal,
            2,
        ),
        (["rate", "sheet", "duconv-dialogue", "--system", f"a={goal}", *sheets], goal, 2),
        (["rate", "sheet", "duconv-turn", "--system", f"a={goal}", *sheets], goal, 2),
        (["corpus", "stats", goal], goal, 2),
    ]
    not_refused = []  # every case is tried, so a failure lists every command that let its bad record through
    for args, path, line in cases:
        try:
            refused(cli(*args, check=False), f"{path}:{line}: ")
        except AssertionError as exc:
            not_refused.append(f"{' '.join(args[:3])} {Path(path).name}: {str(exc)[:200]}")
    assert not not_refused, "\n".join(not_refused)
    assert not (tmp_path / "g.json").exists() and not (tmp_path / "sheets").exists()


def test_skip_invalid_sets_the_records_aside_with_file_line_and_reason(tmp_path, cli):
    files = probe_files(tmp_path)
    attrs, goal, pool = files["attrs"], files["goal"], write_lines(tmp_path / "pool.jsonl", [DUCONV])
    out = tmp_path / "c.jsonl"
    done = cli("corpus", "candidates", str(goal), "--pool", str(pool), "--out", str(out), "--k", "2", "--skip-invalid")
    assert "note: 1 of 2 records are not duconv-session dialogues and were left out (--skip-invalid)" in done.stdout
    rejected = [json.loads(line) for line in (tmp_path / "c.jsonl.rejected.jsonl").read_text().splitlines()]
    assert [(r["file"], r["line"]) for r in rejected] == [(str(goal), 2)]
    assert rejected[0]["reason"].startswith("not a duconv-session dialogue: 'goal' must be")
    assert len(out.read_text().splitlines()) == 2  # the good session's two bot turns
    split = tmp_path / "split"
    report = json.loads(cli("corpus", "split", str(attrs), "--out", str(split), "--skip-invalid", "--json").stdout)
    assert report["dialogues"] == 1 and "were left out (--skip-invalid)" in report["notes"][-1]
    assert json.loads((split / "split.rejected.jsonl").read_text())["line"] == 3
    cli("corpus", "split", str(write_array(tmp_path / "good.json", [KDCONV])), "--out", str(split))
    assert not (split / "split.rejected.jsonl").exists()  # a list left by an earlier run would describe another


@pytest.mark.slow  # grounds for real: jieba's dictionary and the graph's grounding index take seconds
def test_ground_skip_invalid_grounds_the_others_and_lists_the_rest(tmp_path, cli):
    from tests.trust_inputs import build_tiny

    workdir = build_tiny(tmp_path / "kg")
    attrs = probe_files(tmp_path)["attrs"]
    out = tmp_path / "g.json"
    done = cli(
        "ground", "tiny", "--dialogues", str(attrs), "--out", str(out), "--workdir", str(workdir), "--skip-invalid"
    )
    assert (
        f"records left out: 1 (not kdconv dialogues), each listed with its line and reason in {out}.rejected.jsonl"
        in (done.stdout)
    )
    assert len(json.loads(out.read_text())) == 1
    assert json.loads((tmp_path / "g.json.rejected.jsonl").read_text())["line"] == 3


BUILT_IN_LAYOUTS = {
    "kdconv",
    "duconv-session",
    "duconv-sample",
    "durecdial-resource",
    "durecdial-resource-sample",
    "durecdial-lic2020",
    "durecdial-lic2020-sample",
    "durecdial-acl2020",
    "durecdial2",
}


def test_the_rooms_register_the_layouts_and_a_layout_registered_elsewhere_is_asked_the_same_way(tmp_path):
    """Every built-in layout's check lives in its dataset's room (registered from its source part); a layout
    anyone registers is bounded, checked, recognised and refused through the same generic functions."""
    from kgforge.core.jsonio import iter_json_lines
    from kgforge.core.limits import ReadPolicy, reading
    from kgforge.core.registry import UnknownName
    from kgforge.sources import dialogue_layouts as layouts
    from kgforge.sources.dialogue_layouts import DIALOGUE_LAYOUTS, DialogueLayout

    assert set(DIALOGUE_LAYOUTS.names()) >= BUILT_IN_LAYOUTS
    rooms = {DIALOGUE_LAYOUTS.get(kind).problem.__module__ for kind in BUILT_IN_LAYOUTS}
    assert rooms == {f"kgforge.datasets.{room}.layouts" for room in ("kdconv", "duconv", "durecdial")}

    def problem(record):
        return None if isinstance(record.get("quest"), str) else "'quest' must be a string"

    DIALOGUE_LAYOUTS.register("quest", DialogueLayout(problem, recognise=lambda r: "quest" if "quest" in r else None))
    try:
        good = {"quest": "find the castle", "conversation": ["hello", "hi"]}
        assert layouts.layout_problem("quest", good) is None
        assert layouts.layout_problem("quest", {"conversation": []}) == "'quest' must be a string"
        assert layouts.layout_problem("quest", ["quest"]) == "expected a JSON object, got list"
        with reading(ReadPolicy(max_utterances=1)):
            assert layouts.layout_problem("quest", good) == (
                "2 utterances in one dialogue, over the limit of 1 (--max-utterances raises it)"
            )
        assert layouts.dataset_kind(good) == "quest" and layouts.dataset_kind({"conversation": []}) is None
        path = write_lines(tmp_path / "quests.jsonl", [good, {"quest": 3, "conversation": []}])
        found = layouts.checked_records(path, iter_json_lines(path), "quest", skip_invalid=True)
        assert found.values == [good]
        assert [r["reason"] for r in found.rejected] == ["not a quest dialogue: 'quest' must be a string"]
    finally:
        DIALOGUE_LAYOUTS.unregister("quest")
    with pytest.raises(UnknownName, match="unknown dialogue layout 'quest'"):
        layouts.layout_problem("quest", {"quest": "x"})
