"""The seed corpora's clean-up steps, configured in the schema (``[options.crawl]``) or per source.

- ``min_triples = N`` — drop start entities (those the list pages lead to) with fewer than N
  facts, as KdConv did;
- ``rating_symbols = {relation = "rating", target = "reputation", cuts = [6.0, 8.0],
  symbols = ["口碑很差", "口碑一般", "口碑很好"]}`` — add a discrete symbol for a numeric rating, as
  DuConv did (a value below ``cuts[0]`` gets ``symbols[0]``, and so on);
- ``drop_text_words = ["微信", "公众号"]`` — drop texts containing any of these words, as DuConv
  filtered dirty comments.

Everything dropped is returned with its reason so the caller can quarantine it.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from typing import Any

from kgforge.core.errors import SchemaError
from kgforge.crawl.spec import Fact, Record

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


@dataclass(frozen=True)
class RatingSymbols:
    relation: str
    target: str
    cuts: tuple[float, ...]
    symbols: tuple[str, ...]

    def symbol(self, value: str) -> str | None:
        match = _NUMBER.search(value)
        if not match:
            return None
        return self.symbols[bisect.bisect_right(self.cuts, float(match.group()))]


@dataclass(frozen=True)
class CleanupOptions:
    min_triples: int = 0
    rating: RatingSymbols | None = None
    drop_text_words: tuple[str, ...] = ()

    @classmethod
    def from_options(cls, options: dict[str, Any], where: str = "options.crawl") -> CleanupOptions:
        min_triples = options.get("min_triples", 0)
        if not isinstance(min_triples, int) or min_triples < 0:
            raise SchemaError(f"{where}.min_triples must be a non-negative integer, got {min_triples!r}")
        words = options.get("drop_text_words", [])
        if not isinstance(words, list) or not all(isinstance(w, str) and w for w in words):
            raise SchemaError(f"{where}.drop_text_words must be a list of non-empty strings")
        return cls(min_triples, _rating(options.get("rating_symbols"), where), tuple(words))


def _rating(spec: Any, where: str) -> RatingSymbols | None:
    if spec is None:
        return None
    where = f"{where}.rating_symbols"
    if not isinstance(spec, dict):
        raise SchemaError(f"{where} must be a table with relation, target, cuts and symbols")
    cuts, symbols = spec.get("cuts"), spec.get("symbols")
    if not isinstance(cuts, list) or not all(isinstance(c, (int, float)) for c in cuts) or cuts != sorted(cuts):
        raise SchemaError(f"{where}.cuts must be an ascending list of numbers, got {cuts!r}")
    if not isinstance(symbols, list) or len(symbols) != len(cuts) + 1:
        raise SchemaError(
            f"{where}.symbols must list one more symbol than there are cuts ({len(cuts) + 1}), got {symbols!r}"
        )
    return RatingSymbols(
        str(spec.get("relation", "rating")),
        str(spec.get("target", "reputation")),
        tuple(float(c) for c in cuts),
        tuple(str(s) for s in symbols),
    )


@dataclass
class Dropped:
    url: str
    reason: str
    value: Any = None


@dataclass
class CleanupResult:
    records: list[Record]
    dropped: list[Dropped] = field(default_factory=list)


def clean(
    records: list[Record], options: CleanupOptions, text_relations: set[str], start_kinds: set[str]
) -> CleanupResult:
    """Apply the configured steps; ``text_relations`` are the relations whose values are texts."""
    result = CleanupResult([])
    for record in records:
        kept = []
        for fact in record.facts:
            word = _dirty_word(fact, options.drop_text_words, text_relations)
            if word:
                result.dropped.append(
                    Dropped(
                        record.url,
                        f"text contains the dropped word {word!r}",
                        {"relation": fact.relation, "text": fact.value},
                    )
                )
                continue
            kept.append(fact)
            if options.rating and fact.relation == options.rating.relation:
                symbol = options.rating.symbol(fact.value)
                if symbol:
                    kept.append(Fact(options.rating.target, symbol))
        record.facts = kept
        if record.kind in start_kinds and len(record.facts) < options.min_triples:
            result.dropped.append(
                Dropped(
                    record.url,
                    f"start entity has {len(record.facts)} facts, fewer than min_triples = {options.min_triples}",
                    record.name,
                )
            )
            continue
        result.records.append(record)
    return result


def _dirty_word(fact: Fact, words: tuple[str, ...], text_relations: set[str]) -> str | None:
    if fact.relation not in text_relations:
        return None
    return next((w for w in words if w in fact.value), None)
