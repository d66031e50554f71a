"""A domain's graph made ready for grounding: one automaton over every entity name, and each entity's facts
with their values in matching form.

Names are every label and alias of an entity, also without a trailing disambiguation (``恋恋笔记本（美国
2004年…）`` is said ``恋恋笔记本``), in :func:`~kgforge.grounding.normalise.form`. A name shorter than
``min_name_chars`` is not matched. Facts are the domain's facts under relations of its vocabulary, less the
schema's ``type_relation`` (``领域 电影`` is what an entity is, not a fact a message states).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

import ahocorasick
import polars as pl

from kgforge.core.schema import Schema
from kgforge.core.text import Segmenter
from kgforge.grounding.normalise import date_writings, form, value_key
from kgforge.store.tables import GraphTables

_QUALIFIER = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")
_LIST_SEPARATORS = re.compile(r"[、,，;；/|《》“”\"]+|》\s*《")
_TRAILING = re.compile(r"[。.!！?？]+$")


@dataclass(frozen=True)
class Fact:
    """One fact of an entity as grounding sees it: the relation's label, the value as the graph gives it
    (an entity value by its label), and the forms it is matched by."""

    subject: str  # IRI
    relation: str  # the relation's label (KdConv ``attrname``)
    value: str  # the value as written in the graph (an entity value: its label)
    value_entity: str | None  # the value's IRI when it is an entity
    text: bool  # long free text (matched by overlap, see ``matching``)
    value_form: str
    parts: tuple[str, ...]  # a list value's parts in matching form (the whole value when it is one part)
    key: str  # value_key(value)


@dataclass
class GroundingIndex:
    """Names (automaton), labels and facts of a graph, see the module docstring."""

    names: dict[str, list[str]]  # IRI -> labels, the preferred one first
    facts_of: dict[str, list[Fact]]
    types_of: dict[str, frozenset[str]] = field(default_factory=dict)  # IRI -> classes
    min_name_chars: int = 2
    text_chars: int = 24  # a literal value this long or longer is also matched as free text
    automaton: ahocorasick.Automaton = field(init=False, repr=False)
    entities_of: dict[str, tuple[str, ...]] = field(init=False, repr=False)  # name form -> IRIs
    segmenter: Segmenter = field(init=False, repr=False)  # jieba, the graph's names in its dictionary
    relation_words: set[str] = field(default_factory=set)  # the relations' labels (导演, 编剧), in matching form
    text_relation_names: set[str] = field(default_factory=set)  # labels of the free-text relations (评论)

    def __post_init__(self) -> None:
        entities_of: dict[str, set[str]] = {}
        for iri, labels in self.names.items():
            for name in name_forms(labels):
                if len(name) >= self.min_name_chars:
                    entities_of.setdefault(name, set()).add(iri)
        self.entities_of = {name: tuple(sorted(iris)) for name, iris in entities_of.items()}
        self.segmenter = Segmenter(self.entities_of)
        self.automaton = ahocorasick.Automaton()
        for name, iris in self.entities_of.items():
            self.automaton.add_word(name, (len(name), iris))
        if len(self.automaton):
            self.automaton.make_automaton()

    def label(self, iri: str) -> str:
        labels = self.names.get(iri)
        return labels[0] if labels else iri

    def is_value_of(self, entity: str, relation: str) -> bool:
        """Whether ``entity`` is a value of ``relation`` (a label) for some subject of the graph."""
        if not hasattr(self, "_values_of"):
            values: dict[str, set[str]] = {}
            for facts in self.facts_of.values():
                for fact in facts:
                    if fact.value_entity is not None:
                        values.setdefault(fact.value_entity, set()).add(fact.relation)
            self._values_of = values
        return relation in self._values_of.get(entity, set())

    def same_kind(self, a: str, b: str) -> bool:
        """Whether two entities share a class (two attractions, two films)."""
        return bool(self.types_of.get(a, frozenset()) & self.types_of.get(b, frozenset()))

    def resolve(self, name: str) -> tuple[str, ...]:
        """The entities a declared name (a dialogue's topic, an attr's ``name``) stands for."""
        for candidate in (form(name), form(strip_qualifier(name))):
            if candidate in self.entities_of:
                return self.entities_of[candidate]
        return ()

    @classmethod
    def from_tables(cls, tables: GraphTables, schema: Schema | None, text_relations: Iterable[str] = ()) -> "GroundingIndex":
        labels = tables.labels.sort("iri", pl.col("preferred").not_(), "label")
        names: dict[str, list[str]] = {}
        classes = set(tables.types["class"].to_list())  # 电影, 歌手: what entities are, never what a message names
        for iri, label in labels.filter(~pl.col("iri").is_in(list(classes))).select("iri", "label").iter_rows():
            names.setdefault(iri, []).append(label)
        relations = tables.relations
        relation_label = {iri: zh or en or iri for iri, zh, en in relations.select("iri", "zh", "en").iter_rows()}
        text = set(relations.filter(pl.col("kind") == "text")["iri"].to_list()) | set(text_relations)
        skipped = set()
        if schema is not None and schema.type_relation in schema.relations:
            skipped.add(schema.relations[schema.type_relation].iri)
        facts = tables.domain_facts().filter(~pl.col("p").is_in(list(skipped))).select("s", "p", "o", "o_is_entity").unique()
        types: dict[str, set[str]] = {}
        for iri, klass in tables.types.select("iri", "class").iter_rows():
            types.setdefault(iri, set()).add(klass)
        index = cls(names=names, facts_of={}, types_of={iri: frozenset(c) for iri, c in types.items()})
        index.relation_words = {form(label) for label in relation_label.values()}
        index.text_relation_names = {form(relation_label[iri]) for iri in text if iri in relation_label}
        for s, p, o, is_entity in facts.sort("s", "p", "o").iter_rows():
            value = index.label(o) if is_entity else o
            index.facts_of.setdefault(s, []).append(make_fact(s, relation_label[p], value, o if is_entity else None,
                                                              p in text, index.text_chars))
        return index


def make_fact(subject: str, relation: str, value: str, value_entity: str | None, text: bool, text_chars: int) -> Fact:
    value_form = _TRAILING.sub("", form(value))
    split = [_TRAILING.sub("", form(p)) for p in _LIST_SEPARATORS.split(value)]
    parts = tuple(dict.fromkeys(p for p in [*split, *date_writings(value)] if p and p != "等")) or (value_form,)
    if value_entity is not None:
        # an entity named by a list (《小凯撒》；《绿野仙踪》, as dialogue annotations make them) is said by a part;
        # any other by its name (the automaton's mentions)
        parts = parts if len(parts) > 1 else ()
    elif text:
        parts = ()  # free text is matched by overlap only: the names inside it are other facts' business
    return Fact(subject, relation, value, value_entity, text or len(value_form) >= text_chars, value_form, parts,
                value_key(value))


def strip_qualifier(name: str) -> str:
    """A name without its trailing disambiguation: ``李安（华人导演、编剧）`` → ``李安``."""
    return _QUALIFIER.sub("", name) or name


def name_forms(labels: Iterable[str]) -> list[str]:
    """Every matching form of an entity's labels: as written, without a qualifier, without 《》 quotes."""
    found: dict[str, None] = {}
    for label in labels:
        for variant in (label, strip_qualifier(label)):
            name = form(variant).strip("《》“”\"'")
            if name:
                found[name] = None
    return list(found)
