"""Every string an export of new goals writes is in the export's language, or said not to be.

The labels of entities, relations and types, and literal values, are checked where they are chosen
(:class:`kgforge.exports.labels.Labels`); a goal also carries text of its own (a DuRecDial goal's user profile,
its situation, its goal types), and a format may write more. So once a goal's records are made, every string in
them — keys and values, at any depth — is read: in a language not written in CJK characters, one holding a Han,
kana or Hangul character (or CJK punctuation) is not in the language, unless it is one of the format's own marks
(DuRecDial's 『 』 around a goal's topic, DuConv's 领域) or a name or value already reported as written in another
language (``--allow-mixed``). Without ``--allow-mixed`` such a string makes its goal fail the export's checks,
naming where it is; with it the string is written and listed in the report (``labels.text_mixed``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import ahocorasick_rs

from kgforge.core.scripts import has_cjk, is_cjk_language
from kgforge.exports.labels import Labels

SHOWN = 60  # characters of a string quoted in a problem


def _strings(value: Any, where: str) -> Iterator[tuple[str, str]]:
    """Every string in ``value`` (dict keys included) with where it is (``user_profile.residence``)."""
    if isinstance(value, str):
        yield where, value
    elif isinstance(value, dict):
        for key, item in value.items():
            inside = f"{where}.{key}" if where else str(key)
            if isinstance(key, str):
                yield f"{inside} (the key)", key
            yield from _strings(item, inside)
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            yield from _strings(item, f"{where}[{i}]")


class LanguageCheck:
    """Reads the records of an export in ``labels``' language; ``marks`` are the format's own words."""

    def __init__(self, labels: Labels, marks: tuple[str, ...] = ()) -> None:
        self.labels = labels
        self.marks = tuple(mark for mark in marks if mark)
        self._explained: Any = None

    def problems(self, record: dict[str, Any]) -> list[str]:
        """Where ``record`` holds text not in the language, each as ``where 'text'``; with ``allow_mixed``
        none (each such text is listed in ``labels.text_mixed`` instead, unless it is only names and values
        already listed as written in another language)."""
        if is_cjk_language(self.labels.language):
            return []
        found = []
        for where, text in _strings(record, ""):
            rest = self._without(text, self.marks)
            if not has_cjk(rest):
                continue
            if self.labels.allow_mixed:
                if has_cjk(self._without_mixed(rest)):
                    self.labels.text_mixed.setdefault(_shown(text), where)
                continue
            found.append(f"{where} {_shown(text)!r}")
        return found

    @staticmethod
    def _without(text: str, marks: tuple[str, ...]) -> str:
        for mark in marks:
            text = text.replace(mark, " ")
        return text

    def _without_mixed(self, text: str) -> str:
        """``text`` without the names and values written in another language (``allow_mixed``), longest first."""
        names = sorted(
            {name for name in [*self.labels.mixed.values(), *self.labels.values_mixed] if has_cjk(name)},
            key=lambda name: (-len(name), name),
        )
        if not names:
            return text
        if self._explained is None or self._explained[0] != len(names):
            automaton = ahocorasick_rs.AhoCorasick(names, matchkind=ahocorasick_rs.MatchKind.LeftmostLongest)
            self._explained = (len(names), automaton)
        kept, at = [], 0
        for _, start, end in self._explained[1].find_matches_as_indexes(text):
            kept.append(text[at:start])
            at = end
        return " ".join([*kept, text[at:]])


def _shown(text: str) -> str:
    return text if len(text) <= SHOWN else text[:SHOWN] + "…"
