"""A fact as grounding sees it; an entity's facts arranged for the messages that try them; a message's runs of
characters they are compared with. This is the grounder's inner loop: :mod:`kgforge.grounding.matching` asks
it for every message and every entity in focus. An installed kgforge runs it compiled with mypyc, an editable
one as written (``hatch_build.py``): the same code either way.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Generic, NamedTuple, TypeVar

import ahocorasick

K = TypeVar("K")
V = TypeVar("V")


class Fact(NamedTuple):
    """One fact of an entity as grounding sees it: the relation's label, the value as the graph gives it
    (an entity value by its label), and the forms it is matched by. (A tuple: the facts of every entity in
    focus are made, millions in a corpus, and a tuple is made several times faster than a frozen dataclass.)"""

    subject: str  # IRI
    relation: str  # the relation's label (KdConv ``attrname``)
    value: str  # the value as written in the graph (an entity value: its label)
    value_entity: str | None  # the value's IRI when it is an entity
    text: bool  # long free text (matched by overlap, see ``matching``)
    value_form: str
    parts: tuple[str, ...]  # a list value's parts in matching form (the whole value when it is one part)


AFFIX_LONGEST = 12  # a part at most this long is also looked for by a prefix or suffix of it (other_writings)
_DATE = re.compile(r"(\d{4})(年|[-/.])(\d{1,2})(?:月|[-/.])(\d{1,2})")


def other_writings(fact: Fact) -> tuple[str, ...]:
    """How a literal may be said otherwise than by its parts, longest first, for the learned choice to weigh (the
    rules never state a value by these): a date the graph writes with dashes, said with 年月日 as the graph's other
    dates are (2002-06-21: 2002年6月21日, 2002年6月, 2002年, 02年); a prefix or suffix of a part of 3 to
    :data:`AFFIX_LONGEST` characters that holds at least half of it and cuts no number (天蝎 of 天蝎座, 香港 of
    中国香港, 183 of 183cm, 110分钟 of 正式版110分钟 — not 18 of 183)."""
    if fact.text or fact.value_entity is not None:
        return ()
    return _writings(fact.value_form, fact.parts)


@lru_cache(maxsize=1 << 16)
def _writings(value_form: str, parts: tuple[str, ...]) -> tuple[str, ...]:
    found: dict[str, None] = {}
    date = _DATE.search(value_form)
    if date is not None:  # a date's writings (a 年月日 date has them as parts already), not its prefixes (2002-06)
        year, month, day = date[1], int(date[3]), int(date[4])
        if date[2] != "年":
            for writing in (f"{year}年{month}月{day}日", f"{year}年{month}月", f"{year}年", f"{year[2:]}年"):
                found[writing] = None
        parts = ()
    for part in parts:
        size = len(part)
        if size < 3 or size > AFFIX_LONGEST:
            continue
        for k in range(max(2, (size + 1) // 2), size):
            if not (part[k - 1].isdigit() and part[k].isdigit()):
                found[part[:k]] = None
            if not (part[size - k - 1].isdigit() and part[size - k].isdigit()):
                found[part[size - k :]] = None
    for part in parts:
        found.pop(part, None)
    return tuple(sorted(found, key=len, reverse=True))


class MessageGrams:
    """A message's characters, and its runs of characters of each length the matcher compares with values (made
    once a message, when first asked for)."""

    def __init__(self, form_text: str, ngram: int) -> None:
        self.form, self.ngram = form_text, ngram
        self.chars = frozenset(form_text)
        self._of: dict[int, set[str]] = {}

    def of(self, size: int) -> set[str]:
        made = self._of.get(size)
        if made is None:
            made = self._of[size] = runs(self.form, size)
        return made


def runs(text: str, size: int) -> set[str]:
    return {text[i : i + size] for i in range(len(text) - size + 1)}


class SubjectFacts:
    """One entity's facts, arranged so that a message tries only those it could state: the entity values it
    names, the literals one of whose parts it says (one automaton over the parts), the long literals and
    free texts with which it shares a run of characters. The rest cannot be stated (the matcher's rules
    all need one of these), so leaving them out changes no result, only the time a message takes."""

    def __init__(self, facts: list[Fact], said_most_chars: int, ngram: int) -> None:
        self.facts = facts
        self.by_entity: dict[str, list[int]] = {}
        parts: dict[str, list[int]] = {}
        # the long literals (runs of ngram - 1) and free texts (runs of ngram): a value's own runs are made only
        # when a message shares one with the entity (LongValues)
        long_values: dict[int, list[tuple[int, str]]] = {ngram - 1: [], ngram: []}
        for i, fact in enumerate(facts):
            if fact.value_entity is not None:
                self.by_entity.setdefault(fact.value_entity, []).append(i)
            for part in fact.parts:
                if len(part) >= 2 or part.isdigit():  # a single character is no value said (see matching)
                    parts.setdefault(part, []).append(i)
            for writing in other_writings(fact):
                parts.setdefault(writing, []).append(i)
            size = ngram if fact.text else ngram - 1
            if fact.text or (fact.value_entity is None and len(fact.value_form) >= said_most_chars):
                long_values[size].append((i, fact.value_form))
        self._long = [LongValues(size, values) for size, values in long_values.items() if values]
        self._runs: dict[int, set[str]] = {}  # fact position -> the runs of its value, made on first use
        self.automaton: ahocorasick.Automaton | None = None
        if parts:
            self.automaton = ahocorasick.Automaton()
            for part, positions in parts.items():
                self.automaton.add_word(part, positions)
            self.automaton.make_automaton()

    def tried(self, message: str, mentioned: Iterable[str], grams: MessageGrams) -> list[Fact]:
        """The facts ``message`` could state, in the order of :attr:`facts`."""
        chosen: set[int] = set()
        by_entity = self.by_entity
        if by_entity:
            for entity in mentioned:
                if entity in by_entity:
                    chosen.update(by_entity[entity])
        if self.automaton is not None:
            for _, positions in self.automaton.iter(message):
                chosen.update(positions)
        for long in self._long:
            if not long.chars.isdisjoint(grams.chars) and long.shares(grams):
                said, size = grams.of(long.size), long.size
                chosen.update(i for i, value in long.values if not self._runs_of(i, value, size).isdisjoint(said))
        if not chosen:
            return []
        facts = self.facts
        return [facts[i] for i in sorted(chosen)]

    def _runs_of(self, position: int, value: str, size: int) -> set[str]:
        made = self._runs.get(position)
        if made is None:
            made = self._runs[position] = runs(value, size)
        return made


RUNS_AFTER = 8  # messages sharing characters with an entity's long values before their runs are made a set


class LongValues:
    """An entity's long values of one size of run (free texts: runs of ``ngram``; long literals: of ``ngram - 1``),
    and whether a message shares a run with one of them. Most messages share none, and most share none of the
    characters at every ``size``-th place of the values either (:attr:`chars`: any run of ``size`` characters holds
    one of them, so a message that says none of them shares no run): one set test a message. A message that
    says some is looked for in the values (``in``), until ``RUNS_AFTER`` have been, and from then on in the set
    of all their runs, made then. (Making every entity's runs at once took a twentieth of a large corpus's time
    and half the memory of the entities in focus, for the few entities a message shares a run with.)"""

    __slots__ = ("size", "values", "chars", "_joined", "_runs", "_shared")

    def __init__(self, size: int, values: list[tuple[int, str]]) -> None:
        self.size, self.values = size, values  # values: (fact position, value's form)
        # one string, a NUL between values: a run across two values holds the NUL, which no run of a message
        # shares with a value (a message holding a NUL only makes the values be looked at one by one)
        self._joined = "\0".join(value for _, value in values)
        self.chars = frozenset(self._joined[:: self.size])
        self._runs: set[str] | None = None
        self._shared = 0

    def shares(self, grams: MessageGrams) -> bool:
        """Whether the message ``grams`` are of, saying one of :attr:`chars`, shares a run of ``size`` characters
        with one of the values (or may: a run across two values holding a NUL the message says too)."""
        said = grams.of(self.size)
        if self._runs is None:
            self._shared += 1
            if self._shared < RUNS_AFTER:
                joined = self._joined
                return any(run in joined for run in said)
            self._runs = runs(self._joined, self.size)
        return not self._runs.isdisjoint(said)


@dataclass(frozen=True)
class EntityValues:
    """An entity's facts with an entity value: per relation (label) the labels of its values in the facts'
    order and the classes of those values together; and all the values."""

    labels: dict[str, tuple[str, ...]]
    kinds: dict[str, frozenset[str]]  # relation -> the classes of its values (a name of one of them is of its kind)
    related: frozenset[str]
    _against: dict[tuple[frozenset[str], frozenset[str]], list[tuple[str, tuple[str, ...]]]] = field(
        default_factory=dict, repr=False, compare=False
    )

    @classmethod
    def of(cls, facts: Iterable[Fact], types_of: dict[str, frozenset[str]]) -> EntityValues:
        relations: dict[str, list[tuple[str, str]]] = {}
        for fact in facts:
            if fact.value_entity is not None:
                relations.setdefault(fact.relation, []).append((fact.value, fact.value_entity))
        empty: frozenset[str] = frozenset()
        return cls(
            {relation: tuple(label for label, _ in values) for relation, values in relations.items()},
            # the values' classes are a few shared sets (see shared_sets): each is joined in once
            {
                relation: empty.union(*{types_of.get(iri, empty) for _, iri in values})
                for relation, values in relations.items()
            },
            frozenset(iri for values in relations.values() for _, iri in values),
        )

    def against(self, kinds: frozenset[str], value_of: frozenset[str]) -> list[tuple[str, tuple[str, ...]]]:
        """The relations (with their values' labels) that a name could be claimed against: the entity it names
        has a class in common with their values (``kinds``: its classes) or is a value of such a relation
        somewhere in the graph (``value_of``). Kept by the two sets: the graph has few distinct ones, and a
        dialogue's names are asked of its subject message after message."""
        key = (kinds, value_of)
        found = self._against.get(key)
        if found is None:
            found = self._against[key] = [
                (relation, self.labels[relation])
                for relation, classes in self.kinds.items()
                if relation in value_of or not kinds.isdisjoint(classes)
            ]
        return found


# arranged entities kept, those not used lately dropped first: all those in focus at 30k KdConv dialogues on the
# 144k-entity graph (56k). Arranging one again costs more than the memory it holds (~30 KB: its runs, its automaton)
SUBJECTS_KEPT = 1 << 16


class RecentlyUsed(Generic[K, V]):
    """At most ``size`` values by key, those used lately kept: the entities a corpus keeps coming back to (its
    popular films and singers) stay, where dropping the oldest first made each again every ``size`` entities
    (45k of the 101k made at 30k dialogues). Two generations: a value is put in the young one, and moved back
    to it when asked for from the old one; when the young one is full it becomes the old one, and the old
    one's values, none asked for since, are dropped. A value asked for again (most of them, most of the
    time) costs one lookup, where keeping the exact order of use cost a removal and an insertion."""

    __slots__ = ("_young", "_old", "_half")

    def __init__(self, size: int) -> None:
        self._young: dict[K, V] = {}
        self._old: dict[K, V] = {}
        self._half = max(1, size // 2)

    def __len__(self) -> int:
        return len(self._young) + len(self._old)

    def get(self, key: K) -> V | None:
        found = self._young.get(key)
        if found is None:
            found = self._old.pop(key, None)
            if found is not None:
                self.put(key, found)
        return found

    def put(self, key: K, value: V) -> None:
        if len(self._young) >= self._half:
            self._old, self._young = self._young, {}
        self._young[key] = value
