"""What real users do to a question: typos (text) and disfluencies (voice). Deixis lives in the templates.

Typos are exactly one edit in one meaningful word (not a function word), of one of the three kinds
ConvKGYarn takes from TextAttack, as TextAttack defines them (``random_one``, first and last character
allowed):

* ``deletion`` — a character of the word is dropped (``WordSwapRandomCharacterDeletion``);
* ``swap`` — a character and the next one trade places (``WordSwapNeighboringCharacterSwap``); pairs of
  equal characters are skipped, since swapping them changes nothing;
* ``qwerty`` — a character becomes one of the keys next to it on a QWERTY keyboard, keeping its case
  (``WordSwapQWERTY``; characters off the letter keys are not replaced).

Chinese is typed through pinyin, so a Chinese question gets a ``homophone``: a character replaced by a
common character (GB2312 level 1) read with the same pinyin and tone (pypinyin), as a pinyin input
method would offer it.

Disfluencies for voice, one per question: a filler, a takeback (a false start naming another
predicate, then the question), an apology, thanks, or a repetition of the question's first words.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

TYPO_KINDS = ("deletion", "swap", "qwerty")
DISFLUENCY_KINDS = ("filler", "takeback", "apology", "thanks", "repetition")
# TextAttack's WordSwapQWERTY adjacency: the keys around each letter key.
QWERTY = {
    "q": "was",
    "w": "qeasd",
    "e": "wsdfr",
    "r": "edfgt",
    "t": "rfghy",
    "y": "tghju",
    "u": "yhjki",
    "i": "ujklo",
    "o": "iklp",
    "p": "ol",
    "a": "qwszx",
    "s": "qweadzx",
    "d": "werfcxs",
    "f": "ertgvcd",
    "g": "rtyhbvd",
    "h": "tyugjbn",
    "j": "yuikmnh",
    "k": "uiolmj",
    "l": "iopk",
    "z": "asx",
    "x": "sdzc",
    "c": "xdfv",
    "v": "cfgb",
    "b": "vghn",
    "n": "bhjm",
    "m": "njk",
}
_LATIN_WORD = re.compile(r"[A-Za-z]{3,}")
_HAN = re.compile(r"[\u4e00-\u9fff]")
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "can",
        "did",
        "do",
        "does",
        "for",
        "from",
        "had",
        "has",
        "have",
        "how",
        "in",
        "is",
        "it",
        "its",
        "me",
        "of",
        "on",
        "or",
        "tell",
        "that",
        "the",
        "their",
        "them",
        "then",
        "they",
        "this",
        "to",
        "was",
        "were",
        "what",
        "when",
        "where",
        "which",
        "who",
        "whom",
        "whose",
        "why",
        "with",
        "you",
        "your",
        "about",
        "all",
        "any",
        "every",
        "list",
        "please",
        "know",
        "entries",
        "values",
        "there",
    ]
)
FUNCTION_CHARS = frozenset("的是了吗呢吧呀啊么什谁哪里那这它他她个在有和与或都也就还请问你我说知道好")


@dataclass(frozen=True)
class Typo:
    kind: str
    position: int  # character offset in the question
    before: str  # the edited span as it was
    after: str  # and as it is

    def as_dict(self, clean: str) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "position": self.position,
            "before": self.before,
            "after": self.after,
            "clean": clean,
        }


def add_typo(question: str, rng: random.Random, chinese: bool) -> tuple[str, Typo] | None:
    """``question`` with one typo, or None when it has no word to misspell."""
    if chinese:
        found = _homophone(question, rng)
        if found is not None:
            return found
    words = [m for m in _LATIN_WORD.finditer(question) if m.group().lower() not in STOPWORDS]
    for kind in rng.sample(TYPO_KINDS, len(TYPO_KINDS)):
        for word in rng.sample(words, len(words)):
            edited = _edit(word.group(), kind, rng)
            if edited is not None:
                offset, before, after = edited
                position = word.start() + offset
                return (
                    question[:position] + after + question[position + len(before) :],
                    Typo(kind, position, before, after),
                )
    return None


def _edit(word: str, kind: str, rng: random.Random) -> tuple[int, str, str] | None:
    """(offset in word, old span, new span) for one edit of ``kind``, or None when none applies."""
    if kind == "deletion":
        i = rng.randrange(len(word))
        return i, word[i], ""
    if kind == "swap":
        places = [i for i in range(len(word) - 1) if word[i] != word[i + 1]]
        if not places:
            return None
        i = rng.choice(places)
        return i, word[i : i + 2], word[i + 1] + word[i]
    places = [i for i in range(len(word)) if word[i].lower() in QWERTY]
    i = rng.choice(places)
    key = rng.choice(QWERTY[word[i].lower()])
    return i, word[i], key.upper() if word[i].isupper() else key


def _homophone(question: str, rng: random.Random) -> tuple[str, Typo] | None:
    places = [i for i, char in enumerate(question) if alternatives(char)]
    if not places:
        return None
    i = rng.choice(places)
    original = question[i]
    replacement = rng.choice(alternatives(original))
    return question[:i] + replacement + question[i + 1 :], Typo("homophone", i, original, replacement)


@lru_cache(maxsize=1 << 16)
def alternatives(char: str) -> tuple[str, ...]:
    """The common characters read like ``char`` (none for function characters and non-Han ones)."""
    if char in FUNCTION_CHARS or not _HAN.match(char):
        return ()
    return tuple(c for c in homophones().get(reading(char), ()) if c != char)


@lru_cache(maxsize=1 << 14)
def reading(char: str) -> str:
    """The character's most common pinyin, with its tone (pypinyin); "" for a character it cannot read."""
    import pypinyin  # lazy: its dictionaries take a quarter of a second to load, and only homophones need them

    found = pypinyin.pinyin(char, style=pypinyin.Style.TONE3, heteronym=False, errors="ignore") if char else []
    return found[0][0] if found and found[0] else ""


@lru_cache(maxsize=1)
def homophones() -> dict[str, tuple[str, ...]]:
    """Toned pinyin → the common characters (GB2312 level 1, the 3,755 most used) read that way."""
    table: dict[str, list[str]] = {}
    for high in range(0xB0, 0xD8):
        for low in range(0xA1, 0xFF):
            try:
                char = bytes((high, low)).decode("gb2312")
            except UnicodeDecodeError:
                continue
            table.setdefault(reading(char), []).append(char)
    return {key: tuple(chars) for key, chars in table.items() if key}


def add_disfluency(
    question: str, rng: random.Random, words: dict[str, Any], false_start: str | None, chinese: bool
) -> tuple[str, str]:
    """``question`` said with one disfluency; returns (text, kind). ``false_start`` (the entity with
    another predicate) makes a takeback possible."""
    kinds = [k for k in DISFLUENCY_KINDS if k != "takeback" or false_start]
    kind = rng.choice(kinds)
    if kind == "filler":
        return _with_filler(question, rng.choice(words["fillers"]), rng, chinese), kind
    if kind == "takeback":
        return words["takeback"].format(false_start=false_start) + _lower_first(question, chinese), kind
    if kind == "apology":
        return rng.choice(words["apologies"]) + _lower_first(question, chinese), kind
    if kind == "thanks":
        return question + rng.choice(words["thanks"]), kind
    head = question[:2] if chinese else " ".join(question.split()[:2])
    return words["repetition"].format(head=head) + question, kind


def _with_filler(question: str, filler: str, rng: random.Random, chinese: bool) -> str:
    if chinese:
        return filler + question
    spaces = [m.start() for m in re.finditer(" ", question)]
    if not spaces:
        return filler.capitalize() + question
    at = rng.choice(spaces)
    return question[:at] + ", " + filler.rstrip(", ").strip() + "," + question[at:]


def _lower_first(question: str, chinese: bool) -> str:
    """The question after a prefix: a leading question word loses its capital (names keep theirs)."""
    words = question.split(maxsplit=1)
    if chinese or not words or words[0].lower() not in STOPWORDS:
        return question
    return question[0].lower() + question[1:]
