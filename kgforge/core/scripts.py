"""Which script a text is written in, and which script a language writes: light enough for the query worker."""

from __future__ import annotations

import re

CJK_RANGES = "\u2e80-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\U00020000-\U0003ffff"
CJK_CLASS = f"[{CJK_RANGES}]"  # a regex character class (Python and polars/Rust syntax alike)
_CJK_CHAR = re.compile(CJK_CLASS)
CJK_LANGUAGES = ("zh", "ja", "ko", "yue", "wuu", "lzh")


def has_cjk(text: str) -> bool:
    """Whether ``text`` holds a Han, kana or Hangul character (or CJK punctuation, fullwidth forms)."""
    return _CJK_CHAR.search(text) is not None


def is_cjk_language(tag: str) -> bool:
    """Whether the language ``tag`` names is written in CJK characters (zh, zh-Hans, ja, ko, …)."""
    return tag.lower().split("-")[0] in CJK_LANGUAGES


def fits_script(text: str, language: str) -> bool:
    """Whether ``text`` may stand in text of ``language`` as it is written: anything in a CJK language
    (Chinese writes a foreign name as it is spelled), no CJK character in any other."""
    return is_cjk_language(language) or not has_cjk(text)
