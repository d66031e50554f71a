"""The grounder's shortcuts give the answers of the long way: a cut asked around one position equals the cut
of the whole text, the frequency a name gets equals ``Tokenizer.suggest_freq``, a message's matching form made
in one step equals the character-by-character one, the ends of jieba's words of a run are jieba's, and a
relation's cue is the longest piece of its name said."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.text import _JIEBA_BLOCK, Segmenter, block_cut_ends, suggested_freq
from kgforge.grounding.matching import _cue
from kgforge.grounding.normalise import _char_form, form, surface

NAMES = ["游乐场", "儿童游乐场", "致青春", "阿甘正传", "王牌", "Tom's", "ab12", "长城", "电影节", "c++"]
SEGMENTER = Segmenter(NAMES)  # one for every example: a jieba tokenizer takes a second to load

# words and pieces that make jieba choose: names, their parts, Latin runs, digits, punctuation and spaces
PIECES = [
    *NAMES,
    "儿童",
    "游乐",
    "场",
    "致",
    "青春",
    "推荐",
    "电影",
    "导演",
    "的",
    "是",
    "了",
    "我",
    "a",
    "Z",
    "7",
    "2004",
    "abc",
    "x-y",
    "3.5",
    "50%",
    "，",
    "。",
    "·",
    "《",
    "》",
    "!",
    " ",
    "\u3000",
    "é",
]
texts = st.lists(st.sampled_from(PIECES), max_size=14).map("".join)


@settings(max_examples=400, deadline=None)
@given(texts)
def test_cut_at_equals_the_cuts_of_the_whole_text(text: str) -> None:
    whole = SEGMENTER.cut_positions(text)
    assert {p for p in range(-1, len(text) + 2) if SEGMENTER.cut_at(text, p)} == whole


def test_cut_at_on_messages_that_mislead_a_local_cut() -> None:
    for text in [
        "儿童游乐场很好玩",
        "游乐场",
        "儿童游乐场",
        "abc 儿童游乐场",
        "Tom's电影《阿甘正传》",
        "致青春ab12长城",
    ]:
        whole = SEGMENTER.cut_positions(text)
        assert [p for p in range(len(text) + 1) if SEGMENTER.cut_at(text, p)] == sorted(whole)
    assert not SEGMENTER.cut_at("儿童游乐场很好玩", 2)  # 游乐场 inside 儿童游乐场 is no word


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from([p for p in PIECES if _JIEBA_BLOCK.fullmatch(p)]), min_size=1, max_size=6))
def test_suggested_freq_is_jiebas(pieces: list[str]) -> None:
    word = "".join(pieces)
    tokenizer = SEGMENTER._ready()
    assert suggested_freq(tokenizer, word) == tokenizer.suggest_freq(word)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from("电影《长城》 ·ＡＢ㎞ab1２，。\u3000\u00a0臺灣Éé\u0301【】"), max_size=20))
def test_surface_fast_path_equals_the_character_by_character_form(text: str) -> None:
    pairs = [(out, i) for i, ch in enumerate(text) for out in _char_form(ch)]
    said = surface(text)
    assert (said.form, tuple(said.origin)) == ("".join(c for c, _ in pairs), tuple(i for _, i in pairs))


# runs of jieba's word characters with characters no dictionary word holds (jieba's HMM cuts those runs)
BLOCK_PIECES = [p for p in PIECES if _JIEBA_BLOCK.fullmatch(p)] + ["佺", "你", "厢", "仓", "堘", "后", "啷", "僺", "噬"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(BLOCK_PIECES), min_size=1, max_size=12).map("".join))
def test_block_cut_ends_are_jiebas_words(block: str) -> None:
    tokenizer = SEGMENTER._ready()
    ends, position = [], 0
    for word in tokenizer.lcut(block):
        position += len(word)
        ends.append(position)
    assert block_cut_ends(tokenizer, block) == ends


def test_block_cut_ends_on_runs_jieba_cuts_by_its_hmm() -> None:
    tokenizer = SEGMENTER._ready()
    for block in ["佺你厢的搭档是仓堘后", "我爱北京天安门", "儿童游乐场很好玩abc12", "啷僺噬", "的了是"]:
        words = tokenizer.lcut(block)
        assert block_cut_ends(tokenizer, block) == [sum(map(len, words[: i + 1])) for i in range(len(words))]


@settings(max_examples=400, deadline=None)
@given(
    st.text(alphabet="出生日期导演代表作品是的", max_size=6),
    st.text(alphabet="出生日期导演代表作品是的1。", max_size=14),
)
def test_cue_is_the_longest_piece_of_the_relation_said(relation: str, message: str) -> None:
    name = form(relation)
    pieces = [name[i : i + size] for size in range(1, len(name) + 1) for i in range(len(name) - size + 1)]
    assert _cue(relation, message) == max((len(p) for p in pieces if p in message), default=0)
