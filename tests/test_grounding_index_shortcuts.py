"""The per-entity shortcuts of the grounding index give what the general rules give: a free text's form cut
without a regex, an entity's facts made in one loop, and the facts a message tries chosen by the entity's
arrangement rather than by testing every fact."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from kgforge.grounding import facts as facts_module
from kgforge.grounding.facts import Fact, MessageGrams, RecentlyUsed, SubjectFacts, other_writings, runs
from kgforge.grounding.index import (
    _TRAILING,
    FactRows,
    FactTable,
    FactVocabulary,
    make_fact,
    text_form,
)
from kgforge.grounding.normalise import form

# characters a value or a message is written in: the trailing marks (half and full width), spaces and newlines
# (which the form drops), Traditional and full-width forms, Latin, digits
_PIECES = list("。.!！?？ \n\u3000") + ["。\n", "!\n", "电影", "電影", "ＡＢ", "ab", "12", "上映", "时间", "李安"]


@given(st.lists(st.sampled_from(_PIECES), max_size=8).map("".join))
def test_a_free_texts_form_is_the_matching_form_less_its_trailing_marks(value):
    assert text_form(value) == _TRAILING.sub("", form(value))


def test_an_entitys_facts_are_the_facts_make_fact_makes_of_its_rows():
    import polars as pl

    rows = [
        ("s", "r:导演", "p1", True),
        ("s", "r:评论", "一部好电影，值得一看。" * 4, False),
        ("s", "r:类型", "剧情、爱情", False),
        ("s", "r:代表作", "《小凯撒》；《绿野仙踪》", True),
        ("s", "r:地址", "北京市延庆区八达岭镇八达岭长城景区内游客中心旁边。", False),
    ]
    frame = pl.DataFrame(rows, schema=["s", "p", "o", "o_is_entity"], orient="row")
    relation = {"r:导演": "导演", "r:评论": "评论", "r:类型": "类型", "r:代表作": "代表作", "r:地址": "地址"}
    vocabulary = FactVocabulary(relation, frozenset({"r:评论"}), {"p1": "李安"})
    made = FactTable.from_frame(frame, 24, vocabulary).get("s")
    expected = sorted(
        (
            make_fact(s, relation[p], vocabulary.label.get(o, o) if e else o, o if e else None, p == "r:评论", 24)
            for s, p, o, e in rows
        ),
        key=lambda fact: (fact.relation, fact.value),
    )
    assert made == expected
    assert all(type(fact) is Fact for fact in made)
    assert [fact.parts for fact in made if fact.relation == "代表作"] == [("小凯撒", "绿野仙踪")]


def test_a_value_repeated_across_the_graph_has_one_form_and_one_parts_tuple():
    """The rows share a repeated value, its IRI and what it is matched by (each distinct value's fields made once,
    where polars gives each row its own string); a value that is its own form is one string in its row, so that
    its subject's chunk holds it once; and each subject gets its own facts back from its chunk."""
    import polars as pl

    rows = [
        (s, p, o, e) for s in ("a", "b", "c") for p, o, e in (("r:类型", "剧情、爱情", False), ("r:导演", "p1", True))
    ]
    rows += [(s, "r:片名", "卧虎藏龙", False) for s in ("a", "b")]
    frame = pl.DataFrame(rows, schema=["s", "p", "o", "o_is_entity"], orient="row")
    vocabulary = FactVocabulary({"r:类型": "类型", "r:导演": "导演", "r:片名": "片名"}, frozenset(), {"p1": "李安"})
    made = FactRows.of(frame.select("p", "o", "o_is_entity"), vocabulary, 24)
    kinds = [at for at, relation in enumerate(made.relation) if relation == "类型"]
    assert len({id(made.value[at]) for at in kinds}) == len({id(made.parts[at]) for at in kinds}) == 1
    assert len({id(made.value_entity[at]) for at, entity in enumerate(made.value_entity) if entity}) == 1
    titles = [at for at, relation in enumerate(made.relation) if relation == "片名"]
    assert all(made.value[at] is made.value_form[at] is made.parts[at][0] for at in titles)

    table = FactTable.from_frame(frame, 24, vocabulary)
    by_relation = {s: {fact.relation: fact for fact in table.get(s)} for s in ("a", "b", "c")}
    assert [by_relation[s]["类型"].parts for s in ("a", "b", "c")] == [("剧情", "爱情")] * 3
    assert [by_relation[s]["导演"][2:4] for s in ("a", "b", "c")] == [("李安", "p1")] * 3
    assert "片名" not in by_relation["c"] and by_relation["a"]["片名"].value_form == "卧虎藏龙"
    assert table.get("nobody") == []


_WORDS = ["李安", "导演", "1954", "7", "台湾", "屏东", "卧虎藏龙", "少年派", "奇幻", "漂流", "剧情", "爱情"]
_FACT = st.tuples(
    st.sampled_from(["导演", "类型", "评论", "出生地"]),
    st.lists(st.sampled_from(_WORDS), min_size=1, max_size=6).map("".join),
    st.sampled_from([None, "e1", "e2"]),
    st.booleans(),
)


def _could_state(fact: Fact, message: str, mentioned: set[str], said_most_chars: int, ngram: int) -> bool:
    """The general rule the arrangement stands for: a fact is tried when its entity value is named, one of its
    parts (two characters or a digit) or other writings is said, or its long value shares a run of characters with the
    message."""
    if fact.value_entity is not None and fact.value_entity in mentioned:
        return True
    if any((len(part) >= 2 or part.isdigit()) and part in message for part in fact.parts):
        return True
    if any(writing in message for writing in other_writings(fact)):
        return True  # another writing of a literal (an affix, a dashed date's 年月日): a candidate of the model's
    if fact.text:
        return not runs(fact.value_form, ngram).isdisjoint(runs(message, ngram))
    if fact.value_entity is None and len(fact.value_form) >= said_most_chars:
        return not runs(fact.value_form, ngram - 1).isdisjoint(runs(message, ngram - 1))
    return False


@given(
    st.lists(_FACT, max_size=8),
    st.lists(st.lists(st.sampled_from(_WORDS + ["的", "是", "\0"]), max_size=8).map("".join), min_size=1, max_size=6),
    st.sets(st.sampled_from(["e1", "e2", "e3"])),
    st.sampled_from([1, 3, 100]),
)
def test_an_entitys_arrangement_tries_the_facts_the_general_rule_would(rows, messages, mentioned, runs_after):
    """Whichever way the long values are looked for (in the values themselves, or in the set of their runs once
    ``RUNS_AFTER`` messages have shared characters with them), and a message holding a NUL (what joins them)."""
    facts_module.RUNS_AFTER, kept = runs_after, facts_module.RUNS_AFTER
    try:
        _tries_what_the_rule_would(rows, messages, mentioned)
    finally:
        facts_module.RUNS_AFTER = kept


def _tries_what_the_rule_would(rows, messages, mentioned):
    facts = sorted(
        (
            make_fact("s", relation, value, entity, text and entity is None, 12)
            for relation, value, entity, text in rows
        ),
        key=lambda fact: (fact.relation, fact.value),
    )
    arranged = SubjectFacts(facts, 8, 4)
    for message in messages:  # one arrangement asked of several messages, as a dialogue asks it
        expected = [fact for fact in facts if _could_state(fact, message, mentioned, 8, 4)]
        assert arranged.tried(message, mentioned, MessageGrams(message, 4)) == expected


def test_recently_used_keeps_what_was_asked_for_lately_and_at_most_its_size():
    kept: RecentlyUsed[str, int] = RecentlyUsed(4)  # two generations of two
    kept.put("a", 1)
    kept.put("b", 2)
    kept.put("c", 3)  # the young generation was full: a and b are the old one now
    assert kept.get("a") == 1  # asked for from the old generation: back in the young one, with c
    kept.put("d", 4)  # full again: c and a are the old generation, b (not asked for since) is dropped
    assert kept.get("b") is None
    assert [kept.get(key) for key in "acd"] == [1, 3, 4]
    assert len(kept) <= 4


@given(st.lists(st.tuples(st.booleans(), st.integers(0, 20)), max_size=200))
def test_recently_used_never_holds_more_than_its_size_nor_a_value_it_was_not_given(steps):
    kept: RecentlyUsed[int, int] = RecentlyUsed(6)
    given_values: dict[int, int] = {}
    for put, key in steps:
        if put:
            kept.put(key, key * 10)
            given_values[key] = key * 10
        else:
            assert kept.get(key) in (None, given_values.get(key))
        assert len(kept) <= 6
