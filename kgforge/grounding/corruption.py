"""Corrupted copies of annotated dialogues: what the claims' contradiction detector is trained and measured on.

In each message that states a gold fact by saying its value as written (free text left out), the value is
replaced by a wrong one of the same shape, once a message, seeded:

* a value with digits: each run of digits changed, keeping its width (10:00 → 13:00), and 元 → 美元 for half of
  the prices (``digits``);
* an entity value: another entity of the same kind — one sharing a class with it, or a value of the same
  relation elsewhere in the graph — that the subject does not hold under that relation (a nearby attraction
  for one that is not nearby, an actor for another person; ``entity``);
* a word of a word-valued relation (a country, a genre: ``GroundingIndex.word_relations``): another word the
  relation has elsewhere in the graph and the subject does not (``word``).

The copy has no ``attrs``; :class:`Corrupted` says which messages were changed, how, and to what.
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass
from typing import Any

from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.normalise import form

_DIGITS = re.compile(r"\d+")


@dataclass(frozen=True)
class Corrupted:
    """One changed message: its dialogue and position, the kind of change, the value said before and after."""

    dialogue: int
    message: int
    kind: str  # digits | entity | word
    before: str
    after: str


def corrupted_copy(
    index: GroundingIndex, dialogues: list[dict[str, Any]], seed: int
) -> tuple[list[dict[str, Any]], list[Corrupted]]:
    """The dialogues with one stated value changed in each message that says one (see the module docstring),
    every ``attrs`` removed; and the changes."""
    rng = random.Random(seed)
    words = word_values(index)
    out, changed = copy.deepcopy(dialogues), []
    for d, dialogue in enumerate(out):
        for m, message in enumerate(dialogue["messages"]):
            attrs = message.pop("attrs", None)
            for attr in attrs if isinstance(attrs, list) else []:
                found = _changed(index, attr, message["message"], rng, words)
                if found is not None:
                    kind, before, after = found
                    message["message"] = message["message"].replace(before, after)
                    changed.append(Corrupted(d, m, kind, before, after))
                    break
    return out, changed


def shifted_digits(value: str, rng: random.Random) -> str:
    """``value`` with each run of digits changed, as many digits as before (10:00 becomes 13:00, not 13:5), and
    元 → 美元 for half of the prices."""

    def other(match: re.Match[str]) -> str:
        width = len(match[0])
        return str((int(match[0]) + rng.randint(1, 9)) % 10**width).zfill(width)

    changed = _DIGITS.sub(other, value)
    if "元" in changed and rng.random() < 0.5:
        changed = changed.replace("元", "美元")
    return changed


def _changed(
    index: GroundingIndex, attr: Any, text: str, rng: random.Random, words: dict[str, list[str]]
) -> tuple[str, str, str] | None:
    """How one gold attr's value said in ``text`` is changed: (kind, the value as said, the wrong one)."""
    if not isinstance(attr, dict):
        return None
    value, relation = str(attr.get("attrvalue", "")), str(attr.get("attrname", ""))
    if not value or value not in text or form(relation) in index.text_relation_names:
        return None
    if _DIGITS.search(value):
        changed = shifted_digits(value, rng)
        return ("digits", value, changed) if changed != value else None
    subjects = index.resolve(str(attr.get("name", "")))
    held = {form(f.value) for s in subjects for f in index.facts_of.get(s, ()) if f.relation == relation}
    entities = index.resolve(value)
    if entities:
        kinds = {k for e in entities for k in index.types_of.get(e, frozenset())}
        names = sorted(
            {
                index.label(e)
                for e in index.names
                if (not kinds.isdisjoint(index.types_of.get(e, frozenset())) or relation in index.value_relations(e))
                and e not in entities
                and e not in subjects
            }
        )
        pool = [n for n in names if form(n) not in held and n not in text and n]
        return ("entity", value, rng.choice(pool)) if pool else None
    if relation in index.word_relations and value in words.get(relation, ()):
        pool = [w for w in words[relation] if form(w) not in held and w not in text]
        return ("word", value, rng.choice(pool)) if pool else None
    return None


def word_values(index: GroundingIndex) -> dict[str, list[str]]:
    """The words of each word-valued relation (:attr:`GroundingIndex.literal_automaton`'s), sorted."""
    words: dict[str, set[str]] = {}
    for word, relations in index.literal_automaton.keyed().items():
        for relation in relations:
            words.setdefault(relation, set()).add(word)
    return {relation: sorted(found) for relation, found in words.items()}
