"""jieba's dictionary is kept as one string of words and one array of counts: read back, it is the dict it was."""

from __future__ import annotations

import marshal
from array import array

from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.text import packed, unpacked

_COUNTS = st.dictionaries(st.text(max_size=6), st.integers(min_value=-(2**70), max_value=2**70), max_size=20)


@given(_COUNTS)
def test_packed_counts_read_back_are_the_counts(counts: dict[str, int]) -> None:
    kept = marshal.loads(marshal.dumps(packed(counts)))
    assert unpacked(kept) == counts
    assert list(unpacked(kept)) == list(counts)  # jieba's dictionary order too


def test_words_of_the_dictionary_are_packed_and_what_cannot_be_is_kept_as_it_is() -> None:
    words, counts = packed({"北京": 34488, "北": 0})
    assert words == "北京\0北" and array("q", counts).tolist() == [34488, 0]
    assert isinstance(packed({"北京": 1, "北\0京": 2}), dict)  # a word holding the separator
    assert isinstance(packed({"北京": 2**64}), dict)  # a count wider than the array's
