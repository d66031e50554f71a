"""How a response becomes tokens (lexical metrics) and the text that labels are matched against (knowledge).

Tokens: a text is first put in *segmented form* (words joined by single spaces), then cut exactly as the
official DuConv script cuts its input: ``text.strip().split(" ")``. So an empty response is one empty token
and a double space makes an empty token between two words, as in the official numbers. The segmented form is

* ``whitespace``: the text as it is (pre-segmented data: DuConv, DuRecDial, the official eval input);
* ``jieba``: :func:`kgforge.text.segment`, the segmenter the DuConv exports use (text that is segmented
  already keeps its cuts);
* ``char``: every non-space character a word.

Matching: labels in a domain built from segmented text are stored unsegmented ("玛姬·格蕾斯", "2008年3月2日"),
so a segmented response is matched in its unsegmented form, spaces removed where
:func:`kgforge.text.normalise_label` removes them (kept only between two Latin letters or digits), and every
character of that form remembers its place in the response, so a match maps back to the words as written.
"""

from __future__ import annotations

import re
import sys
import unicodedata
from dataclasses import dataclass

import polars as pl

from kgforge.evaluation._kgforge import ArgumentError, normalise_label, segment

SEGMENTATIONS = ("whitespace", "jieba", "char")
# str.strip() strips what str.isspace() calls whitespace; polars would strip Unicode White_Space, which
# leaves out \x1c-\x1f. The official script strips with Python, so the same characters are named here.
PY_WHITESPACE = "".join(ch for ch in map(chr, range(sys.maxunicode + 1)) if ch.isspace())
_WORD = re.compile(r"\S+")
_LATIN_OR_DIGIT = re.compile(r"[A-Za-z0-9]")


def check_segmentation(value: str, what: str = "segmentation") -> str:
    if value not in SEGMENTATIONS:
        raise ArgumentError(what, f"{value!r} is not one of {', '.join(SEGMENTATIONS)}")
    return value


def segmented_form(texts: pl.Series, segmentation: str) -> pl.Series:
    """``texts`` with words joined by single spaces (``whitespace``: unchanged)."""
    check_segmentation(segmentation)
    if segmentation == "whitespace":
        return texts
    if segmentation == "jieba":
        return pl.Series(texts.name, [segment(text) for text in texts.to_list()], dtype=pl.String)
    return pl.Series(texts.name, [" ".join(ch for ch in text if not ch.isspace()) for text in texts.to_list()],
                     dtype=pl.String)


def tokenize(texts: pl.Series, segmentation: str) -> pl.Series:
    """A list of tokens per text, cut as the official DuConv script cuts: ``strip().split(" ")``."""
    return segmented_form(texts, segmentation).str.strip_chars(PY_WHITESPACE).str.split(" ")


@dataclass(frozen=True)
class MatchText:
    """A response as labels are matched against it (see :func:`match_form`)."""

    form: str  # the text matched against
    written: str  # the response, NFC
    origin: list[int]  # for each character of ``form``, its index in ``written``
    starts: frozenset[int] | None  # positions of ``form`` where a word begins (None: unsegmented, any)
    ends: frozenset[int] | None  # positions of ``form`` where a word ends

    def aligned(self, start: int, end: int) -> bool:
        """Whether ``form[start:end + 1]`` begins and ends on word boundaries (always, for unsegmented text)."""
        return self.starts is None or (start in self.starts and end in self.ends)

    def said(self, start: int, end: int) -> str:
        """``form[start:end + 1]`` as the response wrote it (its segmentation spaces kept)."""
        return self.written[self.origin[start]:self.origin[end] + 1]


def match_form(text: str, segmented: bool) -> MatchText:
    """The text labels are matched against, mapped back to the response.

    For ``segmented`` text the form equals ``normalise_label(text)``: words joined without the
    segmentation spaces, one space kept between two Latin letters or digits ("Sarab Neelam"); a match
    must begin and end on the segmentation's word boundaries (so "北京" is not found in "北京电影学院",
    nor "科幻" in "科幻片"), while a name may span words cut differently ("时光 网" for "时光网")."""
    written = unicodedata.normalize("NFC", text)
    if not segmented:
        return MatchText(written, written, list(range(len(written))), None, None)
    pieces: list[str] = []
    origin: list[int] = []
    starts, ends = set(), set()
    previous = ""
    for word in _WORD.finditer(written):
        token = word.group()
        if previous and _LATIN_OR_DIGIT.match(previous[-1]) and _LATIN_OR_DIGIT.match(token[0]):
            pieces.append(" ")
            origin.append(word.start() - 1)
        starts.add(len(origin))
        pieces.append(token)
        origin.extend(range(word.start(), word.end()))
        ends.add(len(origin) - 1)
        previous = token
    return MatchText("".join(pieces), written, origin, frozenset(starts), frozenset(ends))


def label_form(label: str, segmented: bool) -> str:
    """A label as it is matched: what :func:`match_form` makes of a text equal to it."""
    return normalise_label(label, segmented)
