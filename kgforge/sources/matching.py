"""Matching entities of one source to their counterparts in another by name: the rule every link uses.

By exact (normalised) match of zh and en labels and aliases, with a type check. A label match beats an
alias match (a trailing disambiguation such as ``（1993年电影）`` is dropped as an alias form); when more
than one counterpart remains at the best level the entity is reported as ambiguous with every candidate,
and never linked by guess. Importers use it to find seeds by name; ``kgforge.publish.link`` to write
``owl:sameAs`` inside a domain.
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from kgforge.core.text import normalise_label, to_simplified

_DISAMBIGUATION = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")


def name_key(text: str) -> str:
    """The form names are compared in: NFKC, DuConv's segmentation spaces removed, Traditional characters made
    Simplified (so 霧城之夜 links to its twin 雾城之夜), case-folded."""
    return to_simplified(normalise_label(unicodedata.normalize("NFKC", text))).casefold()


@dataclass(frozen=True)
class Named:
    """An entity to link or a candidate counterpart: its key, names and types (any type ids)."""

    key: str
    labels: tuple[str, ...]
    aliases: tuple[str, ...] = ()
    types: frozenset[str] = frozenset()


@dataclass
class LinkReport:
    linked: dict[str, str] = field(default_factory=dict)
    ambiguous: dict[str, list[str]] = field(default_factory=dict)
    unmatched: list[str] = field(default_factory=list)
    type_rejected: int = 0

    def as_dict(self, examples: int = 20) -> dict[str, Any]:
        return {
            "linked": len(self.linked),
            "ambiguous": len(self.ambiguous),
            "unmatched": len(self.unmatched),
            "type_rejected": self.type_rejected,
            "ambiguous_examples": dict(list(self.ambiguous.items())[:examples]),
        }


def types_compatible(a: frozenset[str], b: frozenset[str]) -> bool:
    """Unknown types never block a match; two known, disjoint type sets do."""
    return not a or not b or bool(a & b)


class Linker:
    """Collects candidates for a fixed set of entities, then decides: linked, ambiguous or unmatched."""

    def __init__(self, entities: Iterable[Named]) -> None:
        self.entities = {e.key: e for e in entities}
        self._by_name: dict[str, set[str]] = defaultdict(set)
        for entity in self.entities.values():
            for name in (*entity.labels, *entity.aliases):
                if name.strip():
                    self._by_name[name_key(name)].add(entity.key)
                    bare = _DISAMBIGUATION.sub("", name)
                    if bare.strip() and bare != name:  # "霸王别姬（1993年陈凯歌执导电影）" also as "霸王别姬"
                        self._by_name[name_key(bare)].add(entity.key)
        # entity key → level (0: label = label, 1: any other name match) → candidate keys
        self._found: dict[str, dict[int, set[str]]] = defaultdict(lambda: defaultdict(set))
        self.type_rejected = 0

    def offer(self, candidate: Named) -> None:
        """Consider one counterpart (stream all of them through here)."""
        label_keys = {name_key(n) for n in candidate.labels}
        for name in label_keys | {name_key(n) for n in candidate.aliases}:
            for key in self._by_name.get(name, ()):
                entity = self.entities[key]
                if not types_compatible(entity.types, candidate.types):
                    self.type_rejected += 1
                    continue
                level = 0 if name in label_keys and name in {name_key(n) for n in entity.labels} else 1
                self._found[key][level].add(candidate.key)

    def report(self) -> LinkReport:
        report = LinkReport(type_rejected=self.type_rejected)
        for key in self.entities:
            levels = self._found.get(key)
            if not levels:
                report.unmatched.append(key)
                continue
            best = levels[min(levels)]
            if len(best) == 1:
                report.linked[key] = next(iter(best))
            else:
                report.ambiguous[key] = sorted(best)
        return report


def link(entities: Iterable[Named], candidates: Iterable[Named]) -> LinkReport:
    linker = Linker(entities)
    for candidate in candidates:
        linker.offer(candidate)
    return linker.report()
