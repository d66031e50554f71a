"""Cells that a spreadsheet shows as text: a value that begins with ``=``, ``+``, ``-`` or ``@`` (or a tab or
carriage return before one) is a formula to Excel, LibreOffice and Sheets, which run it when the file is
opened (CSV injection, OWASP). Such a value gets a leading ``'``, which the programs read as "text" and hide."""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(value: object) -> str:
    """``value`` as a cell's text that no spreadsheet program runs as a formula."""
    text = "" if value is None else str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text
