"""Text normalisation shared by importers, goal validation and exports."""

from __future__ import annotations

import logging
import re
import unicodedata
from array import array
from collections.abc import Iterable
from functools import lru_cache
from math import log
from types import ModuleType
from typing import Any, TypedDict, overload

import opencc

from kgforge.core.scripts import CJK_RANGES, has_cjk, is_cjk_language

# In word-segmented text a space is an artefact ("玛姬 · 格蕾斯", "出生 日期", "( 2016") unless it stands inside
# Latin text: a run without CJK characters from a Latin letter or digit to another ("Sarab Neelam", "3 Idiots",
# "The Equation of Love & Death"). Inside such a run a segmenter's cuts around punctuation that is written
# tight in English ("Tom ' s", "Spider - Man", "Mr . Bean", "Love , Death") are still taken out.
_SEGMENTATION_SPACE = re.compile(r"(?<![A-Za-z0-9]) +| +(?![A-Za-z0-9])")
_LATIN_RUN = re.compile(f"[A-Za-z0-9][^{CJK_RANGES}\u00b7\u2022]*[A-Za-z0-9]")
_TIGHT_SPACE = re.compile(r" +(?=[,.;:!?)\]}'’%-])|(?<=[(\[{'‘’$#-]) +")
_WHITESPACE_RUN = re.compile(r"\s+")
_JIEBA_LATIN = re.compile("[a-zA-Z0-9]")  # jieba's re_eng: a single one is run together with its neighbours
_ANY_SPACE = re.compile(r"\s")
# A list written in one text cell (演员,歌手; 导演、编剧; rock / pop): the separators the importers split lists
# on (a crawl spec's 、 and /, XLORE's , and ，, a table's |) and the semicolons, as one character class that both
# Python's re and polars' regular expressions read. A value is a list of words when it has two parts or more and
# every part, trimmed, is a word: 1 to LIST_WORD_CHARS characters and no digit (so 1,000, 2018/01/02 and a
# sentence with commas stay whole).
LIST_SEPARATORS = "[、,，;；|/]"
LIST_WORD_CHARS = 12
_BLOCKS_KEPT = 1 << 18  # runs of text whose cuts are kept (see Segmenter._block_cuts)
_JIEBA_BLOCK = re.compile(r"[\u4E00-\u9FD5a-zA-Z0-9+#&\._%\-]+")  # a run jieba cuts by its dictionary (re_han_default)


class NotUtf8Error(ValueError):
    """A line of an input file that is not UTF-8; the message names the byte offset in the file."""


def decode_utf8(raw: bytes, offset: int) -> str:
    """``raw`` (found at byte ``offset`` of its file) as text; raises :class:`NotUtf8Error` naming the
    offset of its first invalid byte, so that the line is quarantined, never silently altered."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise NotUtf8Error(f"not UTF-8 at byte offset {offset + exc.start}") from None


def normalise_label(text: str, segmented: bool = True) -> str:
    """NFC and trimmed; for word-segmented text (DuConv) also whitespace runs collapsed and
    segmentation spaces removed. Unsegmented text (KdConv) keeps its spaces as they are."""
    text = unicodedata.normalize("NFC", text).strip()
    if not segmented:
        return text
    for _ in range(8):  # removing a space can bring combining marks together: repeat to a fixed point
        cleaned = unicodedata.normalize("NFC", _without_segmentation_spaces(_WHITESPACE_RUN.sub(" ", text))).strip()
        if cleaned == text:
            break
        text = cleaned
    return text


def _without_segmentation_spaces(text: str) -> str:
    """``text`` (whitespace collapsed) with the spaces of word segmentation taken out, Latin runs' own kept."""
    kept = kept_spaces(text)
    return "".join(ch for i, ch in enumerate(text) if ch != " " or i in kept)


def kept_spaces(text: str) -> set[int]:
    """The positions of the spaces of ``text`` (whitespace collapsed to single spaces) that a segmented label
    keeps: inside a Latin run those that are not tight against punctuation ("Love & Death", "Tom's"), outside
    one those between two Latin letters or digits. The evaluation maps matches back with the same answer."""
    kept: set[int] = set()

    def keep(start: int, end: int, dropped: re.Pattern[str]) -> None:
        piece = text[start:end]
        gone = {start + i for m in dropped.finditer(piece) for i in range(m.start(), m.end())}
        kept.update(start + i for i, ch in enumerate(piece) if ch == " " and start + i not in gone)

    start = 0
    for run in _LATIN_RUN.finditer(text):
        keep(start, run.start(), _SEGMENTATION_SPACE)
        keep(run.start(), run.end(), _TIGHT_SPACE)
        start = run.end()
    keep(start, len(text), _SEGMENTATION_SPACE)
    return kept


_LATIN_LETTER = re.compile(r"[A-Za-z\u00C0-\u024F]")


def text_language(text: str, default: str, latin: str = "en") -> str:
    """The language tag for ``text`` from a source whose language is ``default`` when the source does not tag
    its fields: a string in Latin script (no CJK character, more letters than digits: ``3 Idiots`` but not
    ``178cm``) is ``latin`` in a CJK-language source, a string with CJK characters is ``zh`` in a Latin-script source; anything else (digits, symbols, text in the
    source's own script) keeps ``default``. A source that tags its text is taken as written, never this."""
    if is_cjk_language(default):  # letters outnumbering digits: "3 Idiots" is English, "178cm" a measure
        letters = len(_LATIN_LETTER.findall(text))
        return latin if not has_cjk(text) and letters > sum(c.isdigit() for c in text) else default
    return "zh" if has_cjk(text) else default


def is_segmented(text: str) -> bool:
    """Whether ``text`` carries word-segmentation spaces that normalisation removes."""
    if unicodedata.is_normalized("NFC", text) and not _WHITESPACE_RUN.search(text):
        return False  # nothing normalisation could change: decided without it (a segmenter asks per text)
    return normalise_label(text) != _WHITESPACE_RUN.sub(" ", text.strip())


@lru_cache(maxsize=1)
def jieba_module() -> ModuleType:
    """jieba, imported on first use (its dictionary takes a second to load) and kept quiet."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    module: ModuleType = jieba  # jieba ships no types
    return module


class SegmenterState(TypedDict):
    """A ready :class:`Segmenter` as plain data (marshal writes it into a kept grounding index)."""

    names: set[str]  # the names added to jieba's dictionary
    freq: tuple[str, bytes] | dict[str, int]  # jieba's dictionary with them, :func:`packed`
    total: int  # the dictionary's total count
    raised: dict[str, int]  # a name given a higher frequency -> its frequency


class Segmenter:
    """Text cut into words joined by single spaces, as DuConv writes every string.

    Text that is segmented already (DuConv's own comments) keeps its cuts. Elsewhere a private jieba
    tokenizer cuts it, with ``names`` (a KG's entity names) in its dictionary so that a name is never cut
    inside: jieba alone gives ``王牌 推荐`` but also ``致 青春``; with the name known it gives ``致青春``.
    Each name gets the least frequency that keeps it whole (jieba's ``suggest_freq``), so ordinary text
    around it is cut as before. :func:`normalise_label` gives back the unsegmented text either way.
    """

    def __init__(self, names: Iterable[str] = ()) -> None:
        self._names = {name for name in names if len(name) >= 2 and not is_segmented(name)}
        self._tokenizer: Any = None
        self._cache: dict[str, str] = {}
        self._blocks: dict[str, frozenset[int]] = {}
        self._raised: dict[str, int] = {}  # a name given a higher frequency -> its frequency in jieba's dictionary

    def prepare(self) -> None:
        """jieba's dictionary loaded and the names added now, not at the first cut."""
        self._ready()

    def state(self) -> SegmenterState:
        """The segmenter, ready, as plain data: its names and its jieba dictionary with them added."""
        tokenizer = self._ready()
        return {"names": self._names, "freq": packed(tokenizer.FREQ), "total": tokenizer.total, "raised": self._raised}

    @classmethod
    def from_state(cls, state: SegmenterState) -> Segmenter:
        """The segmenter :meth:`state` gave, its jieba tokenizer holding that dictionary."""
        segmenter = cls()
        segmenter._names, segmenter._raised = state["names"], state["raised"]
        segmenter._tokenizer = _tokenizer(unpacked(state["freq"]), state["total"])
        return segmenter

    def _ready(self) -> Any:
        if self._tokenizer is None:
            freq, total = _jieba_dictionary()
            tokenizer = _tokenizer(dict(freq), total)  # a copy: the names are added to it
            for name in sorted(self._names):
                if _JIEBA_BLOCK.fullmatch(name):  # jieba cuts at anything else (·, spaces) whatever its dictionary
                    suggested = suggested_freq(tokenizer, name)
                    if tokenizer.FREQ.get(name, 0) < suggested:
                        self._raised[name] = tokenizer.FREQ.get(name, 0)
                        tokenizer.add_word(name, suggested)
            self._tokenizer = tokenizer
        return self._tokenizer

    def dictionary_frequency(self, word: str) -> int:
        """``word``'s frequency in jieba's own dictionary (0 when it is no word there), the names as jieba has
        them before they were added: how ordinary a word is, whatever else this process did with jieba."""
        tokenizer = self._ready()  # made first: it records the names it raises
        return self._raised[word] if word in self._raised else tokenizer.FREQ.get(word, 0)

    def __call__(self, text: str) -> str:
        cut = self._cache.get(text)
        if cut is None:
            if is_segmented(text):
                cut = _WHITESPACE_RUN.sub(" ", text.strip())
            elif (
                text in self._names
            ):  # a name jieba would cut at its punctuation (超级无敌掌门狗：剃刀边缘) stays whole
                cut = text
            else:
                cut = " ".join(self._cut(text))
            self._cache[text] = cut
        return cut

    def cut_positions(self, text: str) -> set[int]:
        """The positions of ``text`` where :meth:`__call__`'s words begin or end (each word's length added up,
        the spaces that join them left out)."""
        cuts, position = {0}, 0
        for word in self(text).split(" "):
            position += len(word)
            cuts.add(position)
        return cuts

    def cut_at(self, text: str, position: int) -> bool:
        """Whether ``position`` is in :meth:`cut_positions` of ``text``, found by cutting only the stretch
        around it. jieba cuts each run of its word characters (``re_han_default``) by itself, every other
        character is a word alone, and :meth:`_cut` keeps a Latin run whole: so the cuts inside one run
        depend on that run alone. Text where words and positions could part (whitespace, already segmented,
        a name kept whole) is cut whole instead."""
        if not self._plain(text):
            return position in self.cut_positions(text)
        if position <= 0 or position >= len(text):
            return position in (0, len(text))
        start, end = 0, len(text)  # the piece between Latin runs that holds position
        for run in _LATIN_RUN.finditer(text):
            if run.start() <= position <= run.end():
                return position in (run.start(), run.end())
            if run.end() < position:
                start = run.end()
            else:
                end = run.start()
                break
        for block in jieba_module().re_han_default.finditer(text, start, end):
            if block.start() < position < block.end():
                return position - block.start() in self._block_cuts(block.group())
            if block.start() > position:
                break
        return True  # at a run's edge, or beside a character jieba keeps alone

    def _plain(self, text: str) -> bool:
        """Text that :meth:`__call__` cuts into words by :meth:`_cut`, with no whitespace to drop."""
        return text not in self._names and not _ANY_SPACE.search(text) and not is_segmented(text)

    def _block_cuts(self, block: str) -> frozenset[int]:
        """Where jieba cuts one run of its word characters, inside it (kept: runs repeat across messages)."""
        cuts = self._blocks.get(block)
        if cuts is None:
            if len(self._blocks) >= _BLOCKS_KEPT:
                self._blocks.clear()
            cuts = self._blocks[block] = frozenset(block_cut_ends(self._ready(), block))
        return cuts

    def _cut(self, text: str) -> list[str]:
        """The words of ``text``: a Latin run ("Love&Death", "9:9", "Tom's") is kept as written, since
        :func:`normalise_label` keeps the spaces inside one and could not tell a cut from the title's own."""
        pieces, start = [], 0
        for run in _LATIN_RUN.finditer(text):
            pieces += self._words(text[start : run.start()])
            pieces.append(_WHITESPACE_RUN.sub(" ", run.group()))
            start = run.end()
        return pieces + self._words(text[start:])

    def _words(self, text: str) -> list[str]:
        return [word for word in self._ready().lcut(text) if not word.isspace()] if text.strip() else []


@lru_cache(maxsize=1)
def _jieba_dictionary() -> tuple[dict[str, int], int]:
    """jieba's own dictionary (word -> frequency, and their total), read once a process: each segmenter adds its
    names to a copy."""
    tokenizer = jieba_module().Tokenizer()
    tokenizer.initialize()
    return tokenizer.FREQ, tokenizer.total


def packed(counts: dict[str, int]) -> tuple[str, bytes] | dict[str, int]:
    """``counts`` as one string of its words (NUL between them) and one array of their counts, as plain data:
    :func:`unpacked` makes the dict again by a split and a zip, in half the time marshal reads 800k words of a
    dict back (every grounding run reads jieba's dictionary with the graph's names). A word holding a NUL, or a
    count wider than 64 bits, leaves the dict as it is."""
    words = "\0".join(counts)
    if words.count("\0") != len(counts) - 1:
        return counts
    try:
        return words, array("q", counts.values()).tobytes()
    except OverflowError:
        return counts


def unpacked(packed_counts: tuple[str, bytes] | dict[str, int]) -> dict[str, int]:
    """The dict :func:`packed` was given."""
    if isinstance(packed_counts, dict):
        return packed_counts
    words, counts = packed_counts
    return dict(zip(words.split("\0"), array("q", counts)))


def _tokenizer(freq: dict[str, int], total: int) -> Any:
    """A jieba tokenizer holding the dictionary ``freq`` (its own from then on), as ``initialize`` leaves one: it
    sets nothing else that a cut reads."""
    tokenizer = jieba_module().Tokenizer()
    tokenizer.FREQ, tokenizer.total, tokenizer.initialized = freq, total, True
    return tokenizer


def suggested_freq(tokenizer: Any, word: str) -> int:
    """``tokenizer.suggest_freq(word)`` for a ``word`` that is one run of jieba's word characters, computed
    as jieba does (the same words, the same floating-point steps), without the generators and checks of
    ``Tokenizer.cut`` around it: a graph's names are 100,000s, and this is the whole start-up of a segmenter."""
    freq_of: dict[str, int] = tokenizer.FREQ  # jieba's Tokenizer ships no types
    total: int = tokenizer.total
    ftotal = float(total)
    freq: float = 1
    for seg in _words_without_hmm(freq_of, log(total), word):
        freq *= freq_of.get(seg, 1) / ftotal
    return max(int(freq * total) + 1, freq_of.get(word, 1))


def block_cut_ends(tokenizer: Any, block: str) -> list[int]:
    """Where each word of ``tokenizer.lcut(block)`` ends, for a ``block`` that is one run of jieba's word
    characters: its ``Tokenizer.__cut_DAG`` (the HMM on), computed as jieba does without the generators, the
    DAG dict and the second pass around it; the runs of single characters that are no word go to jieba's own
    ``finalseg``, as there. The matcher asks this of most messages, where the cut itself was most of the time."""
    freq_of = tokenizer.FREQ
    route = _route(freq_of, log(tokenizer.total), block)
    ends: list[int] = []
    size, x, alone = len(block), 0, 0  # block[alone:x]: the run of single characters not yet given out
    while x < size:
        y = route[x] + 1
        if y - x > 1:
            if alone < x:
                _single_run_ends(freq_of, block, alone, x, ends)
            ends.append(y)
            alone = y
        x = y
    if alone < size:
        _single_run_ends(freq_of, block, alone, size, ends)
    return ends


def _single_run_ends(freq_of: dict[str, int], block: str, start: int, end: int, ends: list[int]) -> None:
    """``__cut_DAG``'s words of a run of characters the route takes one by one: one character is a word; a
    run that is a word of the dictionary (of frequency 0 there) is cut into its characters; any other run
    is cut by jieba's HMM (``finalseg.cut``)."""
    run = block[start:end]
    if len(run) == 1:
        ends.append(end)
    elif not freq_of.get(run):
        for word in jieba_module().finalseg.cut(run):
            start += len(word)
            ends.append(start)
    else:
        ends.extend(range(start + 1, end + 1))


def _route(freq_of: dict[str, int], logtotal: float, sentence: str) -> list[int]:
    """jieba's ``get_DAG`` and ``calc`` in one pass: at each position the last character of the most probable
    word that begins there (ties to the longer word: ``max`` of jieba's ``(score, end)`` pairs), the score of
    each word summed in jieba's order, so the floating-point steps are the same."""
    size = len(sentence)
    scores, last = [0.0] * (size + 1), [0] * (size + 1)
    for k in range(size - 1, -1, -1):
        best, best_end, i, frag = 0.0, -1, k, sentence[k]
        while i < size and frag in freq_of:
            freq = freq_of[frag]
            if freq:  # a word (a prefix of one only, at 0)
                score = log(freq) - logtotal + scores[i + 1]
                if best_end < 0 or score >= best:  # the ends come in increasing order: a tie goes to the longer
                    best, best_end = score, i
            i += 1
            frag = sentence[k : i + 1]
        if best_end < 0:  # no word from here: the character alone, of frequency 1
            best, best_end = log(freq_of.get(sentence[k]) or 1) - logtotal + scores[k + 1], k
        scores[k], last[k] = best, best_end
    return last


def _words_without_hmm(freq_of: dict[str, int], logtotal: float, sentence: str) -> list[str]:
    """jieba's ``Tokenizer.__cut_DAG_NO_HMM`` of one run: the most probable words by the dictionary (its DAG
    and route, ties to the longer word), single Latin letters and digits run together."""
    size, route = len(sentence), _route(freq_of, logtotal, sentence)
    words, buf, x = [], "", 0
    while x < size:
        y = route[x] + 1
        word = sentence[x:y]
        if y - x == 1 and _JIEBA_LATIN.match(word):
            buf += word
        else:
            if buf:
                words.append(buf)
                buf = ""
            words.append(word)
        x = y
    if buf:
        words.append(buf)
    return words


_PLAIN = Segmenter()


def segment(text: str) -> str:
    """``text`` cut into words as DuConv writes it, by jieba's own dictionary (see :class:`Segmenter`)."""
    return _PLAIN(text)


TRADITIONAL_TAGS = {"zh-hant": "t2s", "zh-tw": "tw2s", "zh-hk": "hk2s", "zh-mo": "hk2s"}
"""Chinese language tags whose text is in Traditional script, with the OpenCC conversion to Simplified that
fits each region's usage (Taiwan's and Hong Kong's own phrasing; Macau writes as Hong Kong does)."""
SIMPLIFIED_TAG = "zh-hans"


@lru_cache(maxsize=8)
def _opencc(config: str) -> opencc.OpenCC:
    return opencc.OpenCC(config)


@lru_cache(maxsize=1 << 16)
def to_simplified(text: str, tag: str = "zh-hant") -> str:
    """``text`` in Simplified characters (OpenCC), converted as the Traditional variant ``tag`` writes it;
    text with no Traditional characters comes back unchanged."""
    simplified: str = _opencc(TRADITIONAL_TAGS.get(tag.lower(), "t2s")).convert(text)
    return simplified


def is_traditional_tag(tag: str) -> bool:
    """Whether ``tag`` (``zh-Hant``, ``zh-TW``, …) names Chinese in Traditional script."""
    return tag.lower() in TRADITIONAL_TAGS


# A spreadsheet opening a CSV/TSV runs a cell that starts with one of these as a formula (=HYPERLINK(…),
# +cmd|…, -2+3, @SUM(…)); tab and CR start one in some of them too. OWASP's rule: write such a cell with
# a leading apostrophe, which every spreadsheet shows as text. A cell that itself starts with an
# apostrophe gets one more, so that :func:`spreadsheet_text` reads every cell back exactly. A plain
# number ("-3", "+1.5e3") is no formula and is left as it is, so numeric columns stay numeric.
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r", "'")
_PLAIN_NUMBER = re.compile(r"[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")


def spreadsheet_cell(value: str) -> str:
    """``value`` as a CSV/TSV cell a spreadsheet shows as text, never runs as a formula."""
    if value.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(value):
        return "'" + value
    return value


def spreadsheet_text(cell: str) -> str:
    """The value a :func:`spreadsheet_cell` was made from."""
    return cell[1:] if cell.startswith("'") and cell[1:].startswith(_FORMULA_START) else cell


# ---------------------------------------------------------------- the text policy: lone surrogates

# A lone surrogate (a ``\ud800`` escape in a dataset's JSON) is the one thing a Python string can hold that no
# UTF-8 encoder writes: polars, OpenCC, jieba's dictionary and every writer raise UnicodeEncodeError on it. The
# readers (kgforge.core.jsonio, the one place JSON from an input is turned into records) ask these functions of
# every record that could hold one, and refuse it naming its line, or, with ``--replace-invalid``
# (``ReadPolicy.replace_invalid``), replace each with U+FFFD and count them; nothing after the reader sees one.
_LONE_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def lone_surrogate(value: Any) -> str | None:
    """Where the first lone surrogate in ``value`` (a string, or lists and objects of them, keys included)
    stands, as ``messages[0].message`` with the character's escape (``\\ud800``), or None when there is none."""
    found = _first_surrogate(value, "")
    return None if found is None else f"{found[1]!r}"[1:-1] + (f" in {found[0]}" if found[0] else "")


def _first_surrogate(value: Any, where: str) -> tuple[str, str] | None:
    if isinstance(value, str):
        match = None if value.isascii() else _LONE_SURROGATE.search(value)
        return None if match is None else (where, match.group())
    if isinstance(value, dict):
        for key, item in value.items():
            inner = f"{where}.{key}" if where else str(key)
            found = _first_surrogate(key, f"a key of {where or 'the record'}") or _first_surrogate(item, inner)
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _first_surrogate(item, f"{where}[{index}]")
            if found:
                return found
    return None


@overload
def replace_lone_surrogates(value: str) -> tuple[str, int]: ...
@overload
def replace_lone_surrogates(value: Any) -> tuple[Any, int]: ...
def replace_lone_surrogates(value: Any) -> tuple[Any, int]:
    """``value`` with every lone surrogate (in strings, lists and objects, keys included) replaced by U+FFFD,
    and how many were replaced; what holds none is returned as it is."""
    if isinstance(value, str):
        if value.isascii():
            return value, 0
        replaced, count = _LONE_SURROGATE.subn(REPLACEMENT, value)
        return (replaced, count) if count else (value, 0)
    if isinstance(value, dict):
        total, pairs = 0, []
        for key, item in value.items():
            new_key, in_key = replace_lone_surrogates(key)
            new_item, in_item = replace_lone_surrogates(item)
            total += in_key + in_item
            pairs.append((new_key, new_item))
        return (dict(pairs), total) if total else (value, 0)
    if isinstance(value, list):
        total, items = 0, []
        for item in value:
            new_item, count = replace_lone_surrogates(item)
            total += count
            items.append(new_item)
        return (items, total) if total else (value, 0)
    return value, 0


def matchable(text: str) -> str:
    """``text`` for matching and for polars (which holds only valid UTF-8): the readers let no lone surrogate
    through, but a caller of the Python API may hand one in a record of its own."""
    return replace_lone_surrogates(text)[0]
