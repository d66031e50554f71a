"""Text normalisation shared by importers, goal validation and exports."""

from __future__ import annotations

import re
import unicodedata

# In word-segmented text a space is an artefact ("玛姬 · 格蕾斯", "出生 日期", "( 2016") unless it
# stands between two Latin letters or digits ("Sarab Neelam", "3 Idiots").
_SEGMENTATION_SPACE = re.compile(r"(?<![A-Za-z0-9]) +| +(?![A-Za-z0-9])")
_WHITESPACE_RUN = re.compile(r"\s+")


def normalise_label(text: str, segmented: bool = True) -> str:
    """NFC and trimmed; for word-segmented text (DuConv) also whitespace runs collapsed and
    segmentation spaces removed. Unsegmented text (KdConv) keeps its spaces as they are."""
    text = unicodedata.normalize("NFC", text).strip()
    if not segmented:
        return text
    for _ in range(8):  # removing a space can bring combining marks together: repeat to a fixed point
        cleaned = unicodedata.normalize("NFC", _SEGMENTATION_SPACE.sub("", _WHITESPACE_RUN.sub(" ", text))).strip()
        if cleaned == text:
            break
        text = cleaned
    return text


def is_segmented(text: str) -> bool:
    """Whether ``text`` carries word-segmentation spaces that normalisation removes."""
    return normalise_label(text) != _WHITESPACE_RUN.sub(" ", text.strip())
