"""Decoding fetched pages: BOM, then the HTTP charset, then the meta charset, then detection.

Chinese sites label their pages inconsistently (GBK sent as ``gb2312``, no charset at all, or a
wrong one). GB2312 and GBK are decoded as GB18030, their superset, so no character is lost; a
declared charset that does not decode the bytes is ignored and the encoding is detected from the
bytes with charset-normalizer. The final decode replaces bad bytes and counts them.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from charset_normalizer import from_bytes

_BOMS = ((codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))
_SUPERSETS = {
    "gb2312": "gb18030",
    "gbk": "gb18030",
    "x-gbk": "gb18030",
    "gb_2312-80": "gb18030",
    "csgb2312": "gb18030",
    "iso-8859-1": "cp1252",
    "latin1": "cp1252",
    "ascii": "utf-8",
    "us-ascii": "utf-8",
}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_:.-]+)""", re.IGNORECASE)
_HEADER_CHARSET = re.compile(r"""charset\s*=\s*["']?([A-Za-z0-9_:.-]+)""", re.IGNORECASE)
_META_WINDOW = 4096


@dataclass(frozen=True)
class Decoded:
    text: str
    encoding: str  # the codec actually used
    source: str  # bom | header | meta | detected | fallback
    replacements: int  # characters that could not be decoded and became U+FFFD


def canonical_codec(label: str | None) -> str | None:
    """The Python codec for a charset label, with GB2312/GBK widened to GB18030; None if unknown."""
    if not label:
        return None
    label = label.strip().lower()
    label = _SUPERSETS.get(label, label)
    try:
        name = codecs.lookup(label).name
    except LookupError:
        return None
    return _SUPERSETS.get(name, name)


def header_charset(content_type: str | None) -> str | None:
    match = _HEADER_CHARSET.search(content_type or "")
    return match.group(1) if match else None


def meta_charset(body: bytes) -> str | None:
    match = _META_CHARSET.search(body[:_META_WINDOW])
    return match.group(1).decode("ascii", "replace") if match else None


def _decodes(body: bytes, codec: str) -> bool:
    try:
        body.decode(codec)
    except (UnicodeDecodeError, LookupError):
        return False
    return True


def choose_encoding(body: bytes, content_type: str | None = None) -> tuple[str, str]:
    """``(codec, how it was found)`` for ``body``."""
    for bom, bom_codec in _BOMS:
        if body.startswith(bom):
            return bom_codec, "bom"
    for label, source in ((header_charset(content_type), "header"), (meta_charset(body), "meta")):
        codec = canonical_codec(label)
        if codec and _decodes(body, codec):
            return codec, source
    best = from_bytes(body[:200_000]).best()
    if best is not None:
        codec = canonical_codec(best.encoding)
        if codec:
            return codec, "detected"
    return "utf-8", "fallback"


def decode_body(body: bytes, content_type: str | None = None) -> Decoded:
    """Decode a page's bytes; undecodable bytes become U+FFFD and are counted, never raised."""
    codec, source = choose_encoding(body, content_type)
    text = body.decode(codec, errors="replace")
    replacements = text.count("\ufffd") - _count_literal_replacement_chars(body, codec)
    return Decoded(text=text, encoding=codec, source=source, replacements=max(replacements, 0))


def _count_literal_replacement_chars(body: bytes, codec: str) -> int:
    """U+FFFD characters genuinely present in the page (encoded), not produced by decoding."""
    try:
        marker = "\ufffd".encode(codec)
    except (UnicodeEncodeError, LookupError):
        return 0
    return body.count(marker) if marker else 0
