"""Keys found leftmost-longest: what the definition gives, on small alphabets where keys overlap often."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.grounding.keys import LongestMatches

CHARS = st.sampled_from("游乐场儿童ab1·")
KEYS = st.dictionaries(st.text(CHARS, min_size=1, max_size=4), st.integers(), max_size=12)


def by_definition(keyed: dict[str, int], text: str) -> list[tuple[int, int, int]]:
    """From the left: the longest key starting at each position, the search going on after its end."""
    found, at = [], 0
    while at < len(text):
        starting = [key for key in keyed if text.startswith(key, at)]
        if not starting:
            at += 1
            continue
        key = max(starting, key=len)
        found.append((at, at + len(key), keyed[key]))
        at += len(key)
    return found


@settings(max_examples=600, deadline=None)
@given(KEYS, st.text(CHARS, max_size=24))
def test_the_matches_are_the_leftmost_longest_keys(keyed, text):
    assert LongestMatches(keyed).find(text) == by_definition(keyed, text)


def test_a_name_inside_a_longer_one_is_not_found_again():
    names = LongestMatches({"游乐场": "place", "儿童游乐场": "park", "北京": "city"})
    assert names.find("北京的儿童游乐场") == [(0, 2, "city"), (3, 8, "park")]
    assert len(LongestMatches({})) == 0 and LongestMatches({}).find("北京") == []
