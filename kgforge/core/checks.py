"""Argument checks shared by the library and the command line.

Each function returns the value it was given when it is acceptable and raises
:class:`~kgforge.core.errors.ArgumentError` otherwise; the command line's click types
(:mod:`kgforge.cli._app`) call the same functions, so a Python caller and a shell user are
refused the same values with the same words.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from typing import Any, cast
from urllib.parse import urlsplit

import pyoxigraph as ox

from kgforge.core.errors import ArgumentError

# A folder name that cannot be a path: no separator, no leading dot, no "..".
_FOLDER_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
FOLDER_NAME_RULE = "letters, digits, '_', '.' and '-', at most 64, starting with a letter or digit, no '..'"


def whole(value: object, what: str, minimum: int = 0, maximum: int | None = None) -> int:
    """An int (not a bool) in ``[minimum, maximum]``."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int)
        or value < minimum
        or (maximum is not None and value > maximum)
    ):
        bound = f"from {minimum} to {maximum}" if maximum is not None else f">= {minimum}"
        raise ArgumentError(what, f"{value!r} is not a whole number {bound}")
    return value


def number(value: Any, what: str, minimum: float = 0.0, *, above: bool = False, maximum: float | None = None) -> float:
    """A finite number ``>= minimum`` (``> minimum`` with ``above``) and ``<= maximum``: never nan or inf."""
    if (
        isinstance(value, bool)
        or not isinstance(value, (int, float))
        or not math.isfinite(value)
        or (value <= minimum if above else value < minimum)
        or (maximum is not None and value > maximum)
    ):
        bound = f"{'>' if above else '>='} {minimum:g}" + (f" and <= {maximum:g}" if maximum is not None else "")
        raise ArgumentError(what, f"{value!r} is not a finite number {bound}")
    return float(value)


def optional(check: Any, value: Any, what: str, *args: Any, **kwargs: Any) -> Any:
    """``check(value, what, ...)`` unless ``value`` is None (the option was left out)."""
    return None if value is None else check(value, what, *args, **kwargs)


def in_words(names: Iterable[str]) -> str:
    """``duconv, kdconv or durecdial``: choices as a sentence says them, for an option's help or a refusal (read
    from the registry that holds them, a plug-in's choice is listed too; a list written by hand goes stale)."""
    listed = list(names)
    return ", ".join(listed[:-1]) + f" or {listed[-1]}" if len(listed) > 1 else "".join(listed)


def choice(value: Any, what: str, options: Iterable[str]) -> str:
    options = list(options)
    if value not in options:
        raise ArgumentError(what, f"{value!r} is not one of {', '.join(options)}")
    return cast(str, value)  # equal to one of the options, all of them str


def folder_name(value: object, what: str) -> str:
    """A name that becomes exactly one folder under its parent: never a path, never hidden."""
    if not isinstance(value, str) or not _FOLDER_NAME.fullmatch(value) or ".." in value:
        raise ArgumentError(what, f"{value!r} is not a plain name ({FOLDER_NAME_RULE})")
    return value


def language_tag(value: Any, what: str) -> str:
    """A BCP 47 language tag as the store's own parser accepts it (``zh``, ``zh-Hans``, ``en-GB``)."""
    try:
        ox.Literal("", language=value)
    except (TypeError, ValueError) as exc:
        raise ArgumentError(what, f"{value!r} is not a language tag ({exc})") from None
    return cast(str, value)  # the store's Literal takes a str as language and raises TypeError on anything else


def device(value: object, what: str) -> str:
    """``auto``, ``cpu``, ``cuda`` or ``cuda:N``."""
    if not isinstance(value, str) or not re.fullmatch(r"auto|cpu|cuda(:\d+)?", value):
        raise ArgumentError(what, f"{value!r} is not a device (auto, cpu, cuda or cuda:N)")
    return value


def http_url(value: object, what: str) -> str:
    """An ``http://`` or ``https://`` URL with a host."""
    try:
        parts = urlsplit(value) if isinstance(value, str) else None
    except ValueError:  # an unclosed IPv6 bracket
        parts = None
    if (
        not isinstance(value, str)
        or parts is None
        or parts.scheme not in ("http", "https")
        or not parts.hostname
        or any(c.isspace() for c in value)
    ):
        raise ArgumentError(what, f"{value!r} is not an http:// or https:// URL with a host")
    return value


def hop_range(value: Any, what: str, low: int = 1, high: int = 3) -> tuple[int, int]:
    """``N`` or ``LOW..HIGH`` (a string) or a (low, high) pair, within ``low..high``."""
    given = value
    if isinstance(value, str):
        first, sep, last = value.partition("..")
        try:
            value = (int(first), int(last) if sep else int(first))
        except ValueError:
            raise ArgumentError(what, f"{given!r} is not N or LOW..HIGH (e.g. 1..3)") from None
    if (
        not isinstance(value, tuple)
        or len(value) != 2
        or not all(isinstance(v, int) for v in value)
        or not low <= value[0] <= value[1] <= high
    ):
        raise ArgumentError(what, f"{given!r} is not a range within {low}..{high} such as 1..3 or 2..2")
    return value


def selection_options(options: Mapping[str, Any], what: str = "import options") -> Mapping[str, Any]:
    """The knowledge-base selection options (``hops``, ``fanout_cap``, ``workers``) a dump import takes."""
    optional(whole, options.get("hops"), f"{what} hops", 0)
    optional(whole, options.get("fanout_cap"), f"{what} fanout_cap", 0)  # 0: no cap
    optional(whole, options.get("workers"), f"{what} workers", 0)
    return options
