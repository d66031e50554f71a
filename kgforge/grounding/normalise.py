"""Text and values in one comparable form.

Two layers. :func:`surface` is the form both a message and a value are matched in: NFKC (full-width
letters, digits and punctuation become half-width), Simplified script (OpenCC ``t2s``, character by
character so that every character of the form still points at one character of the text), case folded,
whitespace and word-segmentation spaces dropped. It keeps an offset map, so a match in the form is a span
of the text as written.

:func:`value_key` goes further for comparing two values that may be written differently: dates
(``2004年06月25日``, ``2004-6-25``, ``2004/06/25`` → ``2004-6-25``), clock times (``9点半``, ``09:30``
→ ``9:30``), ranges (``9:00至17:00``, ``9:00~17:00`` → ``9:00-17:00``), currencies (``40元``, ``40块``,
``40``, ``人民币40`` → ``40``; ``美元`` stays a different unit), administrative suffixes (``延庆县`` and
``延庆区`` both → ``延庆区``, as both names of one place occur in the data after 2015's county reforms)
and the order of a list's parts (``周一…，周二…`` and ``周二…，周一…``; ``、 , ; /`` separate parts).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache
from typing import NamedTuple

from kgforge.core.text import to_simplified

# spaces, name dots and the quotes and brackets annotators put round names and titles (【最佳女主角】, 《长城》)
_DROPPED = {" ", "\t", "\n", "\r", "\u3000", "\u00a0", "·", "•", "・", "【", "】", "《", "》", "「", "」", "“", "”"}


class Surface(NamedTuple):  # a tuple: one is made for every message, and a tuple is made fastest
    """``form``: the matching form of ``text``; ``origin[i]``: the index in ``text`` of ``form[i]`` (a ``range``
    where each character of the text is one of the form: the usual message, whose map is then never made)."""

    text: str
    form: str
    origin: Sequence[int]

    def span(self, start: int, end: int) -> tuple[int, int]:
        """The ``[start, end)`` span of ``text`` that ``form[start:end]`` came from."""
        return self.origin[start], self.origin[end - 1] + 1

    def said(self, start: int, end: int) -> str:
        first, last = self.span(start, end)
        return self.text[first:last]


@lru_cache(maxsize=1 << 16)
def _char_form(char: str) -> str:
    if char in _DROPPED:
        return ""
    folded = unicodedata.normalize("NFKC", char)
    if folded.isspace() or folded in _DROPPED:
        return ""
    return to_simplified(folded).casefold()


def surface(text: str) -> Surface:
    """``text`` in matching form with its offset map (see the module docstring)."""
    made = text.translate(_FORM_TABLE)  # not form(): its cache is for values, which repeat; messages do not
    if len(made) == len(text) and (not _EXPANDED or _EXPANDED.isdisjoint(text)):
        # no character became two or more, so none was dropped either: one character each, the usual message
        return Surface(text, made, range(len(text)))
    chars: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        for out in _char_form(char):
            chars.append(out)
            origin.append(index)
    return Surface(text, "".join(chars), tuple(origin))


class _FormTable(dict[int, str]):
    """Code point -> its matching form, filled on first sight, for :meth:`str.translate` (the loop over the
    characters then runs in C)."""

    def __missing__(self, code: int) -> str:
        made = self[code] = _char_form(chr(code))
        if len(made) > 1:
            _EXPANDED.add(chr(code))
        return made


_EXPANDED: set[str] = set()  # the characters seen whose matching form is several (NFKC's ㎞, ½): rare


_FORM_TABLE = _FormTable()


@lru_cache(maxsize=1 << 17)
def form(text: str) -> str:
    """The matching form of ``text`` alone (no offsets)."""
    return text.translate(_FORM_TABLE)


# ---------------------------------------------------------------- value keys

_CN_DIGITS = {
    "零": 0,
    "〇": 0,
    "一": 1,
    "二": 2,
    "两": 2,
    "三": 3,
    "四": 4,
    "五": 5,
    "六": 6,
    "七": 7,
    "八": 8,
    "九": 9,
}
_DATE = re.compile(r"(\d{4})(?:年|[-/.])(\d{1,2})(?:月|[-/.])(\d{1,2})日?")
_MONTH = re.compile(r"(\d{4})(?:年|[-/.])(\d{1,2})月?(?!\d)")
_DAY = re.compile(r"(?<![\d-])(\d{1,2})月(\d{1,2})日?")
_CLOCK = re.compile(r"(\d{1,2})(?::|点|时)(\d{2}|半)?(?:分)?")
_RANGE = re.compile(r"(?<=[\d日时点分])\s*(?:~|至|到|—|–|-|－)\s*(?=[\d周星])")
_CURRENCY = re.compile(r"(?:人民币|rmb|¥|￥)?(\d+(?:\.\d+)?)(?:元人民币|元|块钱|块|rmb)")
_CURRENCY_PREFIX = re.compile(r"(?:人民币|rmb|¥|￥)(\d+(?:\.\d+)?)")
_LEADING_ZERO = re.compile(r"(?<!\d)0+(?=\d)")
_PARTS = re.compile(r"[、,，;；|]+|(?<!\d)/|/(?!\d)")  # a slash between digits is a date's
_TRAILING = re.compile(r"[。.!！?？]+$")
_COUNTY = re.compile(r"(?<=[\u4e00-\u9fff]{2})县")


def value_key(text: str) -> str:
    """A value in the form two writings of it share (see the module docstring)."""
    return _value_key(form(text))


@lru_cache(maxsize=1 << 17)
def _value_key(folded: str) -> str:
    parts = [_part_key(part) for part in _PARTS.split(_TRAILING.sub("", folded))]
    return "|".join(sorted({part for part in parts if part}))


def _part_key(part: str) -> str:
    part = _COUNTY.sub("区", part)
    part = _CURRENCY.sub(r"\1", part)
    part = _CURRENCY_PREFIX.sub(r"\1", part)
    part = _DATE.sub(lambda m: f"{int(m[1])}-{int(m[2])}-{int(m[3])}", part)
    part = _MONTH.sub(lambda m: f"{int(m[1])}-{int(m[2])}", part)
    part = _DAY.sub(lambda m: f"{int(m[1])}月{int(m[2])}日", part)
    part = _CLOCK.sub(_clock, part)
    part = _RANGE.sub("-", part)
    return _LEADING_ZERO.sub("", part)


def _clock(match: re.Match[str]) -> str:
    minutes = match[2]
    minutes = "30" if minutes == "半" else minutes or "00"
    return f"{int(match[1])}:{minutes}"


# ---------------------------------------------------------------- numbers said in text

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def numbers(text: str) -> tuple[str, ...]:
    """The numbers in ``text``'s matching form, without leading zeros (``09`` is ``9``)."""
    return tuple(_LEADING_ZERO.sub("", n) for n in _NUMBER.findall(form(text)))


_DATE_VALUE = re.compile(r"(\d{4})年(\d{1,2})月(?:(\d{1,2})日)?")


def date_writings(text: str) -> tuple[str, ...]:
    """A date value's other writings in matching form, the partial ones too (a message says ``1964年出生``
    of ``1964年01月07日``): without leading zeros, year and month, the year, the year's last two digits."""
    match = _DATE_VALUE.search(form(text)) if "年" in text else None
    if match is None:
        return ()
    year, month, day = match[1], int(match[2]), match[3]
    # 84年出生 says 1984年10月18日: the year by its last two digits, as it is said of birth and release dates
    found = [f"{year}年{month}月{int(day)}日" if day else "", f"{year}年{month}月", f"{year}年", f"{year[2:]}年"]
    return tuple(w for w in found if w)
