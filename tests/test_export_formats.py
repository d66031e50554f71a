"""The export format registry and what each layout's readers need, encoded in kgforge's own checks; and
property tests: any dialogue record, exported and read back, is the record it was."""

from __future__ import annotations

import copy
import dataclasses
from pathlib import Path

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.errors import KgforgeError
from kgforge.core.schema import load_schema
from kgforge.core.text import Segmenter, normalise_label
from kgforge.exports import ExportOptions, format_named, formats
from kgforge.exports.assemble import PATH_SCHEMA, Assembled, Grounded
from kgforge.exports.labels import Labels, Render
from kgforge.exports.model import Dialogue
from kgforge.exports.registry import dialogue_layouts, goal_layout
from kgforge.store.tables import FACT_SCHEMA, LABEL_SCHEMA, GraphTables

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
TEXT = st.text(
    alphabet=st.sampled_from(list("ab Z9\"{}[]\\'/:,;电影周迅·-<>&%『』《》[]") + ["\u00e9", "\U0001f600"]),
    min_size=1,
    max_size=10,
)
LINE = TEXT.filter(lambda s: s.strip() and s == s.strip())  # a label as a graph holds it: no edge spaces


NAMES = ["致青春", "东野圭吾推理系列", "后来的我们", "霸王别姬"]
SEGMENTER = Segmenter(NAMES)  # one for every example: a jieba tokenizer takes a second to load


def row(s: str, p: str, o: str, role: str = "fact", position: int = 0, entity: bool = False) -> dict:
    return {
        "s": f"https://x/{s}",
        "p": f"https://x/r/{p}",
        "o": f"https://x/{o}" if entity else o,
        "o_is_entity": entity,
        "s_label": s,
        "p_label": p,
        "o_label": o,
        "role": role,
        "position": position,
        "graph": "https://x/g",
        "message": 0,
    }


def render(rows: list[dict], segmented: bool = False) -> Render:
    """A real Labels over a graph that names the rows' entities, and the render an export would use."""
    names = {(r["s"], r["s_label"]) for r in rows} | {(r["o"], r["o_label"]) for r in rows if r["o_is_entity"]}
    tables = GraphTables(
        pl.DataFrame(schema=FACT_SCHEMA),
        pl.DataFrame([(iri, label, "zh", True) for iri, label in sorted(names)], schema=LABEL_SCHEMA, orient="row"),
        pl.DataFrame(schema={"iri": pl.String, "class": pl.String}),
        pl.DataFrame(schema={"iri": pl.String, "zh": pl.String, "en": pl.String, "kind": pl.String}),
    )
    return Render(Labels(tables, load_schema("duconv"), "zh"), SEGMENTER if segmented else None, "领域", "build-1")


def shaped(fmt_name: str, rows: list[dict], topics: list[str], strings: Render, **info) -> Dialogue:
    """The dialogue ``rows`` make, handed to the format in its shape by the export's own code."""
    frame = pl.DataFrame([dict(r, dialogue=0, order=i, rank=i) for i, r in enumerate(rows)])
    topic_frame = pl.DataFrame(
        {"dialogue": [0] * len(topics), "position": list(range(len(topics))), "topic": topics},
        schema={"dialogue": pl.Int64, "position": pl.Int64, "topic": pl.String},
    )
    grounded = Grounded(topic_frame, pl.DataFrame(schema=PATH_SCHEMA), ["dlg-1"], {0: info})
    return Assembled(frame, {}, grounded).dialogues(strings.labels, strings, format_named(fmt_name).shape)[0]


def goal_rows(a: str, b: str, value: str) -> list[dict]:
    return [
        row(a, "类型", value),
        row(a, "领域", "电影", "type"),
        row(a, "主演", b, "path", 0, entity=True),
        row(b, "领域", "明星", "type", 1),
    ]


def goal_dialogue(fmt_name: str, a: str, b: str, value: str, segmented: bool = False) -> tuple[Dialogue, Render]:
    rows = goal_rows(a, b, value)
    strings = render(rows, segmented)
    topics = [rows[0]["s"], rows[2]["o"]]
    return shaped(
        fmt_name, rows, topics, strings, kind="one_step", goal_id="g-1", seed=0, topic_types=["film", "star"]
    ), strings


def write_and_read(fmt_name: str, layout_name: str, records: list[dict], tmp: Path) -> list[dict]:
    fmt = format_named(fmt_name)
    fmt.write(records, tmp, fmt.layout(layout_name))
    return [r.value for r in fmt.read(tmp)]


# ---------------------------------------------------------------- the registry


def test_every_layout_is_declared_once_and_goal_layouts_need_no_conversation():
    kinds = [layout.kind for fmt in formats().values() for layout in fmt.layouts]
    assert len(kinds) == len(set(kinds))
    for fmt in formats().values():
        assert len({layout.name for layout in fmt.layouts}) == len(fmt.layouts)
        for layout in fmt.layouts:
            if layout.needs_conversation:
                with pytest.raises(KgforgeError, match="needs a conversation"):
                    goal_layout(fmt, layout.name)
            else:
                assert goal_layout(fmt, layout.name) is layout
        if fmt.goal_layout is None:
            with pytest.raises(KgforgeError, match="no layout for new goals"):
                goal_layout(fmt, None)
    assert {
        "duconv-session",
        "duconv-sample",
        "kdconv",
        "durecdial-resource",
        "durecdial-resource-sample",
        "durecdial-lic2020",
        "durecdial-lic2020-sample",
    } <= set(kinds)  # the readers' kinds
    with pytest.raises(KgforgeError, match="unknown export format 'xml'"):
        ExportOptions(fmt="xml")


def test_dialogues_keep_their_layout_or_are_cut_into_its_samples():
    duconv, kdconv, jsonl = format_named("duconv"), format_named("kdconv"), format_named("jsonl")
    session, sample = duconv.layout("session"), duconv.layout("sample")
    assert dialogue_layouts(duconv, duconv, session, None) is session
    assert dialogue_layouts(duconv, duconv, session, "sample") is sample
    assert dialogue_layouts(jsonl, duconv, session, None).kind == "jsonl"
    with pytest.raises(KgforgeError, match="cannot be made from duconv-sample"):
        dialogue_layouts(duconv, duconv, sample, "session")
    with pytest.raises(KgforgeError, match="writes them as duconv, jsonl or parquet"):
        dialogue_layouts(kdconv, duconv, session, None)


# ---------------------------------------------------------------- what the readers need


def duconv_session() -> dict:
    return {
        "goal": [["START", "王 牌", "林志玲"], ["林志玲", "代表作", "王 牌"]],
        "knowledge": [["王 牌", "类型", "剧情"], ["王 牌", "领域", "电影"], ["林志玲", "领域", "明星"]],
        "conversation": ["你好", "你好 呀"],
    }


@pytest.mark.parametrize(
    ("change", "problem"),
    [
        (lambda r: r["knowledge"].pop(2), "goal topic '林志玲' has no [林志玲, 领域"),
        (lambda r: r["knowledge"].__setitem__(1, ["王牌", "领域", "电影"]), "goal topic '王 牌' has no"),
        (lambda r: r["goal"][0].__setitem__(2, "王 牌"), "both goal topics are '王 牌'"),
        (lambda r: r.__setitem__("conversation", []), "'conversation' is empty"),
        (lambda r: r["knowledge"][0].__setitem__(2, "剧\t情"), "tab or line break"),
        (lambda r: r["knowledge"].append(["王 牌", "类型"]), "string triples"),
    ],
)
def test_duconv_check_names_what_would_crash_or_starve_its_readers(change, problem):
    fmt = format_named("duconv")
    record = duconv_session()
    assert fmt.check(record, fmt.layout("session")) == []
    change(record)
    assert any(problem in p for p in fmt.check(record, fmt.layout("session"))), fmt.check(record, fmt.layout("session"))
    sample = {**{k: v for k, v in duconv_session().items() if k != "conversation"}, "history": [], "response": " "}
    assert any("'response' must be a non-empty string" in p for p in fmt.check(sample, fmt.layout("sample")))


def test_kdconv_and_durecdial_checks():
    kdconv = format_named("kdconv")
    layout = kdconv.layout("dialogues")
    assert kdconv.check({"name": "a", "messages": []}, layout) == [
        "'messages' must be a non-empty list: the loaders read messages[0]"
    ]
    bad = {"name": "a", "messages": [{"message": "x", "attrs": [{"name": "a", "attrname": "b"}]}]}
    assert "messages[0].attrs must be a list" in kdconv.check(bad, layout)[0]
    durecdial = format_named("durecdial")
    resource = {
        "goal": [[" 寒暄 ", "", ""]],
        "knowledge": [],
        "conversation": ["[1] 你好"],
        "situation": "",
        "name": "x",
    }
    assert "'label' must be a string" in durecdial.check(resource, durecdial.layout("resource"))
    sample = {"goal": "[1] 寒暄", "knowledge": [], "user_profile": {}, "situation": "", "history": []}
    assert any("first and final goals" in p for p in durecdial.check(sample, durecdial.layout("lic2020-sample")))
    sample["goal"] = "[1] 问答 ( 『 周迅 』 ) --> ...... --> [3] 电影 推荐 ( 『 苏州河 』 )"
    assert durecdial.check(sample, durecdial.layout("lic2020-sample")) == []
    sample["user_profile"] = {"喜欢的明星": 3}
    assert any("user_profile" in p for p in durecdial.check(sample, durecdial.layout("lic2020-sample")))


# ---------------------------------------------------------------- property tests: export, read back, equal


@given(st.lists(LINE, min_size=3, max_size=3, unique=True))
@PROPERTY
def test_goal_records_read_back_as_written_and_keep_their_topics_typed(tmp_path, labels):
    a, b, value = labels
    for fmt_name, layout_name in (
        ("duconv", "sample"),
        ("durecdial", "lic2020-sample"),
        ("durecdial", "resource-sample"),
        ("jsonl", "generic"),
    ):
        fmt = format_named(fmt_name)
        d, strings = goal_dialogue(fmt_name, a, b, value)
        records = fmt.goal_records(d, fmt.layout(layout_name), strings)
        assert write_and_read(fmt_name, layout_name, records, tmp_path / f"{fmt_name}.{layout_name}") == records
    d, strings = goal_dialogue("duconv", a, b, value)
    duconv = format_named("duconv").goal_records(d, format_named("duconv").layout("sample"), strings)[0]
    assert duconv["goal"] == [["START", a, b], [a, "主演", b]]
    assert duconv["knowledge"] == [[a, "类型", value], [a, "领域", "电影"], [a, "主演", b], [b, "领域", "明星"]]
    problems = format_named("duconv").check(duconv, format_named("duconv").layout("sample"))
    assert problems == [] or all("tab or line break" in p for p in problems)
    d, strings = goal_dialogue("jsonl", a, b, value)
    generic = format_named("jsonl").goal_records(d, format_named("jsonl").layout("generic"), strings)[0]
    assert [t["o_label"] for t in generic["triples"]] == [value, "电影", b, "明星"]
    assert generic["goal"] == [["START", a, b], [a, "主演", b]] and generic["path"][0]["role"] == "path"


@pytest.mark.slow  # hypothesis records through segmentation
@given(st.lists(LINE, min_size=3, max_size=3, unique=True))
@PROPERTY
def test_segmented_goal_records_give_back_the_labels(tmp_path, labels):
    a, b, value = labels
    d, strings = goal_dialogue("duconv", a, b, value, segmented=True)
    record = format_named("duconv").goal_records(d, format_named("duconv").layout("sample"), strings)[0]
    assert [normalise_label(x) for x in record["goal"][0]] == ["START", normalise_label(a), normalise_label(b)]
    assert [normalise_label(x) for x in record["knowledge"][0]] == [normalise_label(a), "类型", normalise_label(value)]
    assert record["goal"][0][1] == record["knowledge"][0][0]  # the readers match topics by exact spelling


TRIPLE = st.lists(TEXT, min_size=3, max_size=3)
DUCONV_SESSION = st.fixed_dictionaries(
    {
        "goal": st.tuples(TEXT, TEXT, TRIPLE).map(lambda t: [["START", t[0], t[1]], t[2]]),
        "knowledge": st.lists(TRIPLE, max_size=5),
        "conversation": st.lists(TEXT, min_size=1, max_size=6),
    }
)
KDCONV = st.fixed_dictionaries(
    {
        "name": TEXT,
        "messages": st.lists(
            st.one_of(
                st.fixed_dictionaries({"message": TEXT}),
                st.fixed_dictionaries(
                    {
                        "message": TEXT,
                        "attrs": st.lists(
                            st.fixed_dictionaries({"name": TEXT, "attrname": TEXT, "attrvalue": TEXT}),
                            min_size=1,
                            max_size=3,
                        ),
                    }
                ),
            ),
            min_size=1,
            max_size=5,
        ),
    }
)
RESOURCE = st.fixed_dictionaries(
    {
        "conversation": st.lists(TEXT, min_size=2, max_size=6),
        "knowledge": st.lists(TRIPLE, max_size=4),
        "situation": TEXT,
        "name": TEXT,
        "goal": st.lists(st.tuples(TEXT).map(lambda t: [t[0], "", ""]), min_size=1, max_size=4),
        "label": st.sampled_from(["bot", "user"]),
    }
)
LIC2020 = st.fixed_dictionaries(
    {
        "goal": st.lists(TEXT, min_size=1, max_size=3).map(
            lambda g: "-->".join(f"[{i}]{x}(『{x}』)" for i, x in enumerate(g, 1))
        ),
        "knowledge": st.lists(TRIPLE, max_size=4),
        "user_profile": st.dictionaries(TEXT, st.one_of(TEXT, st.lists(TEXT))),
        "situation": TEXT,
        "conversation": st.lists(TEXT, min_size=1, max_size=5),
    }
)


@pytest.mark.parametrize(
    ("fmt_name", "strategy"),
    [("duconv", DUCONV_SESSION), ("kdconv", KDCONV), ("durecdial", RESOURCE), ("durecdial", LIC2020)],
)
@given(data=st.data())
@PROPERTY
def test_any_real_dialogue_exports_and_reads_back_as_it_was(tmp_path, fmt_name, strategy, data):
    record = data.draw(strategy)
    fmt = format_named(fmt_name)
    layout = fmt.detect(record)
    assert layout is not None
    original = copy.deepcopy(record)
    source = fmt.source_dialogue(record, 7, layout)
    assert not isinstance(source, str), source
    topic = data.draw(LINE)
    pool = [row(topic, "类型", data.draw(LINE)), row(topic, "主演", data.draw(LINE), entity=True)]
    for out_layout in [layout] + [cut for cut in fmt.layouts if cut.cut_from == layout.name]:
        strings = render(pool, out_layout.segmented)
        dialogue = shaped(fmt_name, pool, [pool[0]["s"]], strings, kind=layout.kind, source=source)
        records = fmt.dialogue_records(dialogue, out_layout, strings)
        back = write_and_read(fmt_name, out_layout.name, records, tmp_path / f"{out_layout.name}.out")
        assert back == records
        expected_pool = strings.triples(pool)  # beside the dialogue, never inside its own fields
        if fmt_name == "kdconv":
            assert back[0]["messages"][0]["retrieved_attrs"] == [
                dict(zip(("name", "attrname", "attrvalue"), t)) for t in expected_pool
            ]
        else:
            assert all(r["retrieved_knowledge"] == expected_pool for r in back)
        if out_layout is layout:
            assert [_without_pool(r) for r in back] == [original]
        else:  # samples: one per turn of the side the model speaks, the same goal and knowledge
            assert all(r["goal"] == original["goal"] and r["knowledge"] == original["knowledge"] for r in back)
            assert [r["response"] for r in back] == [
                u
                for i, u in enumerate(original["conversation"])
                if i % 2 == (0 if original.get("label", "bot") == "bot" else 1)
            ]
    assert record == original  # the record read is never changed by exporting it


def _without_pool(record: dict) -> dict:
    out = {k: v for k, v in record.items() if k != "retrieved_knowledge"}
    if "messages" in out:
        out["messages"] = [{k: v for k, v in m.items() if k != "retrieved_attrs"} for m in out["messages"]]
    return out


@given(st.lists(st.one_of(st.sampled_from(NAMES), TEXT), min_size=1, max_size=6).map("".join))
@PROPERTY
def test_segmentation_only_adds_spaces_and_keeps_known_names_whole(text):
    cut = SEGMENTER(text)
    assert normalise_label(cut) == normalise_label(text)  # nothing lost, nothing added but word breaks
    assert SEGMENTER(cut) == cut  # DuConv's own cuts are kept
    assert "  " not in cut and cut == cut.strip()
    for name in NAMES:
        assert SEGMENTER(name) == name


def test_every_export_decides_its_subgraph_options_in_one_place():
    """Type facts only where the format states types and the schema declares some (a schema inferred from
    untyped data gives none to carry), for goals and real dialogues alike."""
    typed = load_schema("duconv")
    untyped = dataclasses.replace(typed, types={})
    options = ExportOptions(fmt="duconv")
    duconv, kdconv = format_named("duconv"), format_named("kdconv")
    assert typed.types and duconv.type_facts and not kdconv.type_facts
    assert options.subgraph(duconv, typed, goals=True).type_facts
    assert not options.subgraph(duconv, untyped, goals=True).type_facts
    assert not options.subgraph(duconv, untyped, goals=False).type_facts
    assert not options.subgraph(kdconv, typed, goals=False).type_facts
    goal, dialogue = options.subgraph(kdconv, typed, goals=True), options.subgraph(kdconv, typed, goals=False)
    assert (goal.budgets, goal.incoming) == ((7, 4), False)
    assert dialogue.incoming == kdconv.finds_mentions and dialogue.budgets == (kdconv.pool_budgets or (1 << 20,))
    assert ExportOptions(fmt="duconv", budget=2).subgraph(duconv, typed, goals=True).budgets == (2,)
