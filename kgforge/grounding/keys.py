"""A large set of keys found in a text at once: leftmost-longest, as a reader takes names in a message.

The keys are a graph's names (100,000s of them, thousands of different first characters). pyahocorasick,
which the grounder uses for an entity's few list parts, walks a node's children in turn, so a search over
such a key set costs more the more first characters the keys have; ahocorasick_rs (Rust's aho-corasick) finds
the same matches about eight times faster (0.42 s against 3.2 s for 480,000 messages and 144k names, the same
matches in every message; the 2,938 word-valued literals, 1.33 s with a pre-check of each message's pairs of
characters against 0.36 s). An entity's few list parts stay with pyahocorasick, which makes and searches
such small automata faster.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Generic, TypeVar

import ahocorasick_rs

V = TypeVar("V")


class LongestMatches(Generic[V]):
    """Keys (non-empty strings), each with a value, found in texts leftmost-longest: from the left, at each
    position the longest key that starts there, the next search after its end; a key inside a longer one
    found is not found again (儿童游乐场, not 游乐场)."""

    def __init__(self, keyed: Mapping[str, V]) -> None:
        self.keys = list(keyed)
        self._values = [keyed[key] for key in self.keys]
        self._automaton = (
            ahocorasick_rs.AhoCorasick(self.keys, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
            if self.keys
            else None
        )

    def __len__(self) -> int:
        return len(self.keys)

    def keyed(self) -> dict[str, V]:
        """The keys with their values, as the constructor took them."""
        return dict(zip(self.keys, self._values))

    def find(self, text: str) -> list[tuple[int, int, V]]:
        """``(start, end, value)`` of each key found in ``text`` (character offsets, ``text[start:end]`` the key)."""
        if self._automaton is None:
            return []
        values = self._values
        return [(start, end, values[key]) for key, start, end in self._automaton.find_matches_as_indexes(text)]
