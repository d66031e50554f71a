"""Lexical metrics: kgforge against the official DuConv script (loaded from its mirror, tests/eval_oracle.py)
on the real DuConv sample and on generated corpora, and against hand-computed values that need no oracle."""

from __future__ import annotations

import json
import math
import sys
import unicodedata

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.text import normalise_label
from kgforge.evaluation import evaluate
from kgforge.evaluation.lexical import LexicalStats, lcs_length
from kgforge.evaluation.metrics import official_lines
from kgforge.evaluation.segmentation import (
    PY_WHITESPACE,
    label_form,
    match_form,
    tokenize,
)
from tests.eval_oracle import load_official, run_official

TOLERANCE = 1e-9


@pytest.fixture(scope="module")
def official(tmp_path_factory):
    return load_official(tmp_path_factory.mktemp("official"))


def stats_for(pairs: list[tuple[str, str]]) -> LexicalStats:
    predictions = pl.Series([p for p, _ in pairs], dtype=pl.String)
    golds = pl.Series([g for _, g in pairs], dtype=pl.String)
    return LexicalStats(tokenize(predictions, "whitespace"), tokenize(golds, "whitespace"))


def official_tokens(pairs: list[tuple[str, str]]) -> list[list[list[str]]]:
    """The pairs cut as the official script cuts each field."""
    return [[p.strip().split(" "), g.strip().split(" ")] for p, g in pairs]


def or_none(function, *args):
    """The official function's value, or None where it divides by zero (or takes the log of zero)."""
    try:
        return function(*args)
    except (ZeroDivisionError, ValueError):
        return None


def official_bleu(module, sents, n: int) -> float:
    """BLEU-n composed of the official script's own brevity penalty and cover rates (as its calc_bleu composes
    BLEU-1..3); an order with no n-gram at all or no match gives 0."""
    rates = [or_none(module.calc_cover_rate, sents, k) for k in range(1, n + 1)]
    if any(rate is None or rate == 0 for rate in rates):
        return 0.0
    return module.calc_bp(sents) * math.exp(sum(math.log(rate) for rate in rates) / n)


def close(ours: float, theirs: float) -> bool:
    return abs(ours - theirs) <= TOLERANCE


# ---------------------------------------------------------------- the real DuConv sample


def previous_utterance_pairs(path) -> list[tuple[str, str]]:
    """As ../shared/readers builds its duconv-eval input: every sample of the official convert_session_to_sample.py
    (even j) with a history, the previous utterance standing for a prediction of the gold response."""
    pairs = []
    for line in open(path, encoding="utf-8"):
        conversation = json.loads(line)["conversation"]
        pairs += [(conversation[j - 1], conversation[j]) for j in range(2, len(conversation), 2)]
    return pairs


def test_official_metrics_on_the_duconv_sample(shared, official, tmp_path):
    pairs = previous_utterance_pairs(shared("duconv/dev.head250.jsonl"))
    eval_file = tmp_path / "duconv-eval.txt"
    eval_file.write_text("".join(f"{p}\t{g}\n" for p, g in pairs), encoding="utf-8")
    report = evaluate(eval_file)
    ours, sents = report.metrics, official_tokens(pairs)
    assert report.responses == 864 and report.inputs["predictions"]["layout"] == "duconv-eval"
    assert report.segmentation == "whitespace"
    assert close(ours["f1"], official.calc_f1(sents))
    bleu1, bleu2 = official.calc_bleu(sents)
    assert close(ours["bleu1"], bleu1) and close(ours["bleu2"], bleu2)
    distinct1, distinct2 = official.calc_distinct(sents)
    assert close(ours["distinct1"], distinct1) and close(ours["distinct2"], distinct2)
    assert close(ours["bleu3"], official_bleu(official, sents, 3))
    assert close(ours["bleu4"], official_bleu(official, sents, 4))
    assert round(ours["f1"] * 100, 2) == 16.09  # the readers README's figure for this file
    # what the script prints, byte for byte, from the script run on the same file
    assert report.official == run_official(tmp_path, eval_file)


def test_gold_against_itself_is_perfect(shared):
    sessions = shared("duconv/dev.head250.jsonl")
    report = evaluate(sessions, gold=sessions)
    assert report.responses == 1114  # as convert_session_to_sample.py makes them
    for name in ("f1", "bleu1", "bleu2", "bleu3", "bleu4", "rouge_l"):
        assert report.metrics[name] == 1.0, name
    assert report.official.startswith("F1: 100.00%\n")


# ---------------------------------------------------------------- generated corpora

# small pieces that make ties, repeats, empty tokens (double spaces), empty responses, one-token
# responses and n-grams whose joined keys collide ("a"+"bc" == "ab"+"c")
PIECES = ["a", "b", "ab", "bc", "c", "中", "文", "中文", "é", "e\u0301", " ", "  ", "\u3000", "\x1f", "。"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=8).map("".join)
CORPUS = st.lists(st.tuples(TEXT, TEXT), min_size=1, max_size=6)


@pytest.mark.slow  # generated corpora through the official DuConv script
@settings(max_examples=400, deadline=None)
@given(CORPUS)
def test_generated_corpora_match_the_official_script(official, pairs):
    stats, sents = stats_for(pairs), official_tokens(pairs)
    assert stats.frame["pred"].to_list() == [p for p, _ in sents]  # tokens cut exactly as the script cuts them
    expected_f1 = or_none(official.calc_f1, sents)
    assert close(stats.f1_corpus(), 0.0 if expected_f1 is None else expected_f1)
    expected_bleu = or_none(official.calc_bleu, sents)
    if expected_bleu is not None:  # the script stops when some order up to 3 has no predicted n-gram
        assert close(stats.bleu_corpus(1), expected_bleu[0]) and close(stats.bleu_corpus(2), expected_bleu[1])
    for n in (1, 2, 3, 4):
        assert close(stats.bleu_corpus(n), official_bleu(official, sents, n))
    for n in (1, 2):
        expected = or_none(official.calc_distinct_ngram, sents, n)
        assert close(stats.distinct_corpus(n), 0.0 if expected is None else expected)


@pytest.mark.slow  # runs the official script per response
@settings(max_examples=200, deadline=None)
@given(CORPUS)
def test_per_response_values_are_the_official_formulas_on_one_response(official, pairs):
    stats, sents = stats_for(pairs), official_tokens(pairs)
    f1 = stats.f1_per_response().to_list()
    bleu2 = stats.bleu_per_response(2).to_list()
    distinct1 = stats.distinct_per_response(1).to_list()
    for i, pair in enumerate(sents):
        expected = or_none(official.calc_f1, [pair])
        assert close(f1[i], 0.0 if expected is None else expected)
        assert close(bleu2[i], official_bleu(official, [pair], 2))
        expected = or_none(official.calc_distinct_ngram, [pair], 1)
        assert close(distinct1[i], 0.0 if expected is None else expected)


# ---------------------------------------------------------------- hand-computed (no oracle needed)


def test_hand_computed_values():
    stats = stats_for([("a b c", "a b d")])
    assert stats.f1_corpus() == pytest.approx(2 / 3)  # characters abc / abd: 2 shared
    assert stats.bleu_corpus(1) == pytest.approx(2 / 3)
    assert stats.bleu_corpus(2) == pytest.approx(math.sqrt(2 / 3 * 1 / 2))  # bigrams ab, bc / ab, bd
    assert stats.distinct_corpus(1) == 1.0
    lcs = 2  # a b
    precision = recall = lcs / 3
    assert stats.rouge_l_per_response()[0] == pytest.approx(
        (1 + 1.44) * precision * recall / (recall + 1.44 * precision)
    )


def test_quirks_of_the_official_counting():
    # n-gram keys are tokens joined without a separator: "a"+"bc" and "ab"+"c" are one bigram
    joined = stats_for([("a bc", "ab c")])
    assert joined.overlap(2)["hits"].to_list() == [1] and joined.overlap(1)["hits"].to_list() == [0]
    assert joined.bleu_corpus(2) == 0.0  # no unigram matches (the script takes log(0) here and stops)
    assert joined.f1_corpus() == 1.0  # characters: abc / abc
    # an empty response is one empty token: no characters, one unigram "" that matches nothing in "x"
    empty = stats_for([("", "x"), ("x y z", "x y z")])
    assert empty.lengths["pred_len"].to_list() == [1, 3]
    assert empty.f1_per_response().to_list() == [0.0, 1.0]
    assert empty.overlap(1)["total"].to_list() == [1, 3]
    # the brevity penalty compares token counts over the corpus: 4 predicted vs 4 gold here, so 1
    assert empty.bleu_corpus(1) == pytest.approx(3 / 4)
    # a corpus of single tokens has no bigram: the script divides by zero, kgforge says 0
    single = stats_for([("a", "a"), ("b", "c")])
    assert single.bleu_corpus(2) == 0.0 and single.distinct_corpus(2) == 0.0
    assert single.bleu_corpus(1) == pytest.approx(1 / 2)


def test_official_lines_format():
    values = {
        "f1": 0.1609286113577324,
        "bleu1": 0.11598043208567922,
        "bleu2": 0.03528432241194255,
        "distinct1": 0.13320301591734152,
        "distinct2": 0.4904731660844713,
    }
    assert official_lines(values) == (
        "F1: 16.09%\nBLEU1: 0.116%\nBLEU2: 0.035%\nDISTINCT1: 0.133%\nDISTINCT2: 0.490%\n"
    )
    assert official_lines({**values, "f1": None}) is None


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from("abcd"), max_size=12), st.lists(st.sampled_from("abcd"), max_size=12))
def test_bit_parallel_lcs_equals_the_table(a, b):
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            table[i + 1][j + 1] = table[i][j] + 1 if x == y else max(table[i][j + 1], table[i + 1][j])
    assert lcs_length(a, b) == table[len(a)][len(b)]


@given(st.text(alphabet=st.sampled_from(["a", " ", "\t", "\u3000", "\x1c", "\x85", "中", "\u2028"]), max_size=12))
def test_tokens_strip_what_python_strips(text):
    assert tokenize(pl.Series([text]), "whitespace").to_list() == [text.strip().split(" ")]
    assert PY_WHITESPACE.count(" ") == 1


def test_the_whitespace_written_out_is_what_python_strips():
    assert set(PY_WHITESPACE) == {chr(c) for c in range(sys.maxunicode + 1) if chr(c).isspace()}


WORDS = st.lists(
    st.sampled_from(["玛姬", "·", "格蕾斯", "Sarab", "Neelam", "3", "Idiots", "2008年", "3月2日", "(", "。"]),
    min_size=1,
    max_size=6,
)


@given(WORDS)
def test_matched_form_is_the_normalised_label_and_maps_back(words):
    text = " ".join(words)
    matched = match_form(text, segmented=True)
    assert matched.form == normalise_label(text)
    for i, ch in enumerate(matched.form):  # every character comes from its place in the response
        assert matched.said(i, i) == ch
    whole = matched.said(0, len(matched.form) - 1)
    assert whole == unicodedata.normalize("NFC", text).strip()
    assert matched.aligned(0, len(matched.form) - 1)


@given(
    st.text(alphabet=st.sampled_from(["a", "中", " ", "\u3000", "e", "\u0301", "é", "·", "1", "\x1f"]), max_size=10),
    st.booleans(),
)
def test_label_forms_are_normalised_labels(text, segmented):
    assert label_form(text, segmented) == normalise_label(text, segmented)
