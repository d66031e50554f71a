"""How a response becomes tokens (lexical metrics) and the text that labels are matched against (knowledge).

Tokens: a text is first put in *segmented form* (words joined by single spaces), then cut exactly as the
official DuConv script cuts its input: ``text.strip().split(" ")``. So an empty response is one empty token
and a double space makes an empty token between two words, as in the official numbers. The segmented form is

* ``whitespace``: the text as it is (pre-segmented data: DuConv, DuRecDial, the official eval input);
* ``jieba``: :func:`kgforge.core.text.segment`, the segmenter the DuConv exports use (text that is segmented
  already keeps its cuts);
* ``char``: every non-space character a word.

Matching: labels in a domain built from segmented text are stored unsegmented ("玛姬·格蕾斯", "2008年3月2日"),
so a segmented response is matched in its unsegmented form, spaces removed where
:func:`kgforge.core.text.normalise_label` removes them (kept only between two Latin letters or digits), and every
character of that form remembers its place in the response, so a match maps back to the words as written.
"""

from __future__ import annotations

import bisect
import re
import unicodedata
from dataclasses import dataclass

import polars as pl

from kgforge.core.errors import ArgumentError
from kgforge.core.progress import iterate
from kgforge.core.text import kept_spaces, normalise_label, segment

SEGMENTATIONS = ("whitespace", "jieba", "char")
# str.strip() strips what str.isspace() calls whitespace; polars would strip Unicode White_Space, which
# leaves out \x1c-\x1f. The official script strips with Python, so the same characters are named here.
PY_WHITESPACE = (  # every character str.isspace() accepts, written out: scanning all of Unicode at import costs 50 ms
    "\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)
_HAS_SPACE = re.compile(r"\s")


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
        return pl.Series(
            texts.name, [segment(text) for text in iterate(texts.to_list(), "segment with jieba")], dtype=pl.String
        )
    return pl.Series(
        texts.name, [" ".join(ch for ch in text if not ch.isspace()) for text in texts.to_list()], dtype=pl.String
    )


def tokenize(texts: pl.Series, segmentation: str) -> pl.Series:
    """A list of tokens per text, cut as the official DuConv script cuts: ``strip().split(" ")``."""
    return segmented_form(texts, segmentation).str.strip_chars(PY_WHITESPACE).str.split(" ")


@dataclass(frozen=True)
class MatchText:
    """A response as labels are matched against it (see :func:`match_form`): ``form`` is made of the words of
    ``written`` (the response, NFC), word ``i`` copied to ``form[starts[i]:]`` from ``written[origins[i]:]``."""

    form: str
    written: str
    starts: list[int]  # where each word begins in ``form``
    origins: list[int]  # where each word begins in ``written``
    lengths: list[int]
    segmented: bool

    def _word(self, position: int) -> int:
        return bisect.bisect_right(self.starts, position) - 1

    def aligned(self, start: int, end: int) -> bool:
        """Whether ``form[start:end + 1]`` begins and ends on word boundaries (always, for unsegmented text)."""
        if not self.segmented:
            return True
        first, last = self._word(start), self._word(end)
        return self.starts[first] == start and end == self.starts[last] + self.lengths[last] - 1

    def said(self, start: int, end: int) -> str:
        """``form[start:end + 1]`` as the response wrote it (its segmentation spaces kept)."""
        return self.written[self._written_at(start) : self._written_at(end) + 1]

    def _written_at(self, position: int) -> int:
        word = self._word(position)
        offset = position - self.starts[word]
        return self.origins[word] + offset if offset >= 0 else self.origins[word] - 1  # a kept space


def match_form(text: str, segmented: bool) -> MatchText:
    """The text labels are matched against, mapped back to the response.

    For ``segmented`` text the form equals ``normalise_label(text)``: words joined without the
    segmentation spaces, the spaces of Latin text kept ("Sarab Neelam", "Love & Death"); a match
    must begin and end on the segmentation's word boundaries (so "北京" is not found in "北京电影学院",
    nor "科幻" in "科幻片"), while a name may span words cut differently ("时光 网" for "时光网")."""
    written = unicodedata.normalize("NFC", text)
    if not segmented:
        return MatchText(written, written, [0], [0], [len(written)], False)
    pieces: list[str] = []
    starts: list[int] = []
    origins: list[int] = []
    lengths: list[int] = []
    size = position = 0
    tokens = written.split()  # str.split() cuts at the whitespace runs that \S+ stops at
    kept = kept_spaces(" ".join(tokens))  # the spaces normalise_label keeps, by place in the collapsed text
    gap = -1
    for token in tokens:
        origin = written.find(token, position)
        position = origin + len(token)
        if gap in kept:
            pieces.append(" ")
            size += 1
        gap += len(token) + 1
        starts.append(size)
        origins.append(origin)
        lengths.append(len(token))
        pieces.append(token)
        size += len(token)
    return MatchText("".join(pieces), written, starts or [0], origins or [0], lengths or [0], True)


def label_form(label: str, segmented: bool) -> str:
    """A label as it is matched: what :func:`match_form` makes of a text equal to it."""
    if unicodedata.is_normalized("NFC", label) and not _HAS_SPACE.search(label):
        return label  # what normalise_label gives for it, without its regular expressions
    return normalise_label(label, segmented)
