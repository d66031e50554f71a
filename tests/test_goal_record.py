"""The goal record: dict and JSONL round trips, and bad lines named by file and line."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.errors import InputError
from kgforge.goals.record import Goal, GoalStep, read_goals, write_goals

_text = st.text(max_size=6)
_iri = st.builds(lambda s: "https://kgforge.org/entity/" + s, _text)
_step = st.builds(
    GoalStep,
    s=_iri,
    p=_iri,
    o=_text,
    o_is_entity=st.none() | st.booleans(),
    labels=st.none() | st.lists(_text, min_size=3, max_size=3),
)
_extra = st.dictionaries(
    st.text(min_size=1, max_size=6).filter(
        lambda k: k not in ("goal_id", "kind", "topics", "path", "seed", "topic_labels", "topic_types", "goal")
    ),
    st.none() | st.integers() | _text | st.lists(_text, max_size=2),
    max_size=3,
)
goals = st.builds(
    Goal,
    goal_id=st.builds(lambda s: "g-" + s, _text),
    kind=st.sampled_from(["one_step", "two_step", "path", "sequence"]),
    topics=st.lists(_iri, min_size=1, max_size=3),
    path=st.lists(_step, min_size=1, max_size=3),
    seed=st.none() | st.integers(0, 2**31),
    topic_labels=st.none() | st.lists(_text, max_size=3),
    topic_types=st.none() | st.lists(st.none() | _text, max_size=3),
    goal=st.none() | st.lists(st.lists(_text, min_size=3, max_size=3), max_size=3),
    extra=_extra,
)


@given(goals)
def test_a_goal_survives_to_dict_and_from_dict(goal):
    data = goal.to_dict()
    assert Goal.from_dict(json.loads(json.dumps(data, ensure_ascii=False))) == goal
    assert list(data)[:2] == ["goal_id", "kind"]


@settings(max_examples=30)
@given(st.lists(goals, min_size=1, max_size=5))
def test_a_goal_file_reads_back_what_was_written(tmp_path_factory, written):
    path = tmp_path_factory.mktemp("goals") / "goals.jsonl"
    assert write_goals(written, path) == len(written)
    assert list(read_goals(path)) == written


def test_a_bad_goal_line_is_named_by_file_and_line(tmp_path):
    good = Goal(goal_id="g-1", kind="one_step", topics=["a", "b"], path=[GoalStep("a", "r", "b")])
    path = tmp_path / "goals.jsonl"
    write_goals([good], path)
    with path.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps({"goal_id": "g-2", "kind": "one_step", "topics": ["a"], "path": [{"s": "a"}]}) + "\n")
    with pytest.raises(InputError, match=rf"{path}:2: path: expected a list of steps, each with s, p and o"):
        list(read_goals(path))
    path.write_text('{"goal_id": "g-3"}\n', encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}:1: not a kgforge goal \(needs goal_id, kind, topics, path\)"):
        list(read_goals(path))
    path.write_text("{oops\n", encoding="utf-8")
    with pytest.raises(InputError, match=rf"{path}:1: "):
        list(read_goals(path))
