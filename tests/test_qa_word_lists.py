"""`kgforge qa select|predicates` read a literal that lists words in one cell (职业 演员,歌手) as those words, as the
importers split a list (issue 50, item 10): a star with two occupations is typed by the more common one, never
by a one-entity type ``star/演员,歌手``, and F(t) counts each occupation as a value of its own."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.text import LIST_WORD_CHARS
from kgforge.qa.graph import word_lists_split

OCCUPATIONS = {
    "周迅": "演员,歌手",
    "刘德华": "演员、歌手",
    "章子怡": "演员",
    "王菲": "歌手，演员",
    "张艺谋": "导演,编剧",
    "姜文": "演员 / 导演",
    "李宇春": "歌手",
    "冯小刚": "导演",
}


@pytest.fixture
def film(cli, tmp_path: Path) -> Path:
    kb = {
        name: [[name, "职业", jobs], [name, "领域", "明星"], [name, "国家", "中国"], [name, "身高", f"{160 + i}cm"]]
        for i, (name, jobs) in enumerate(OCCUPATIONS.items())
    }
    (tmp_path / "kb_film.json").write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    workdir = tmp_path / "kg"
    cli("build", "film", "--source", f"kdconv:{tmp_path / 'kb_film.json'}", "--workdir", str(workdir))
    return workdir


def test_comma_joined_occupations_make_no_type_of_their_own(cli, film, tmp_path):
    out = tmp_path / "selection.json"
    cli("qa", "select", "film", "--out", str(out), "--workdir", str(film))
    types = json.loads(out.read_text(encoding="utf-8"))["types"]
    # 演员 is in five lists, 歌手 in four, 导演 in three, 编剧 in one: each star takes its most common occupation
    assert {t: v["entities"] for t, v in types.items()} == {"star/演员": 5, "star/歌手": 1, "star/导演": 2}
    predicates = json.loads(cli("qa", "predicates", "film", "--workdir", str(film), "--json").stdout)["types"]
    jobs = next(p for p in predicates["star/演员"]["predicates"] if p["label"] == "职业")
    # 周迅, 刘德华, 王菲 and 姜文 list two each, 章子怡 one: nine facts, three distinct occupations
    assert (jobs["facts"], jobs["distinct_objects"], jobs["multi_valued"]) == (9, 3, 0.8)


WORD = st.text(st.sampled_from("演员歌手导演编剧制片人abcxyz"), min_size=1, max_size=LIST_WORD_CHARS)


@given(st.lists(WORD, min_size=1, max_size=5, unique=True), st.sampled_from(["、", ",", "，", ";", "；", "|", " / "]))
def test_a_list_of_words_splits_into_its_words_and_other_values_stay_whole(words, separator):
    values = [separator.join(words) + ("," if len(words) == 1 else ""), "1,000", "2018/01/02", "a" * 13 + ",b"]
    facts = pl.DataFrame(
        {
            "s": ["x"] * (len(values) + 2),
            "p": ["job"] * len(values) + ["plot", "link"],
            "o": [*values, "演员,歌手", "演员,歌手"],
            "o_is_entity": [False] * (len(values) + 1) + [True],
        }
    )
    split = word_lists_split(facts, whole=["plot"])
    assert split.filter(pl.col("p") == "job")["o"].to_list() == [*words, *values[1:]]
    assert split.filter(pl.col("p") != "job")["o"].to_list() == ["演员,歌手", "演员,歌手"]  # free text, an IRI
