"""A domain's graph made ready for grounding: one automaton over every entity name, and each entity's facts
with their values in matching form.

Names are every label and alias of an entity, also without a trailing disambiguation (``恋恋笔记本（美国
2004年…）`` is said ``恋恋笔记本``), in :func:`~kgforge.grounding.normalise.form`. A name shorter than
``min_name_chars`` is not matched. Facts are the domain's facts under relations of its vocabulary, less the
schema's ``type_relation`` (``领域 电影`` is what an entity is, not a fact a message states).
"""

from __future__ import annotations

import marshal
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cached_property, lru_cache, partial
from itertools import repeat
from typing import Any, NamedTuple, TypedDict

import polars as pl

from kgforge.core.schema import Schema
from kgforge.core.text import Segmenter, SegmenterState
from kgforge.grounding.facts import SUBJECTS_KEPT, EntityValues, Fact, RecentlyUsed, SubjectFacts
from kgforge.grounding.keys import LongestMatches
from kgforge.grounding.normalise import date_writings, form
from kgforge.store.languages import language_labels
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

TEXT_CHARS = 24  # a literal value this long or longer is also matched as free text
LITERAL_CHARS = 8  # a literal value this short may be checked as a word said (a country, a genre)
WORD_VALUED = 0.95  # share of a relation's values that are words for its values to be judged as words
_DIGIT = re.compile(r"\d")
# a whole number and one character after it (12首): a counter, unless a date's part (dates are judged as dates)
_DIGITS = re.compile(r"\d+")
NUMBERED_WORDS = 4  # a numbered value is known by its words when it has this many characters besides its numbers
_COUNTED = re.compile(r"\d+([^\W\d_年月日])")
_QUALIFIER = re.compile(r"\s*[（(][^（）()]*[）)]\s*$")
_LIST_SEPARATORS = re.compile(r"[、,，;；/|《》“”\"]+|》\s*《")
_TRAILING_MARKS = "。.!！?？"
_TRAILING = re.compile(f"[{_TRAILING_MARKS}]+$")


class FactRows(NamedTuple):
    """A graph's facts as columns, each row what a :class:`Fact` holds but its subject (the table's offsets give
    that): made once a build (:mod:`kgforge.grounding.kept`), then kept a subject's rows a chunk
    (:meth:`chunked`). The strings a row shares with others (a relation's label, an entity value's label, a
    value that repeats, and its matching form and parts when they are the value itself) are one object in all
    of them, not a copy a row: each distinct value's fields are made once, and marshal writes an object a chunk
    holds twice (a value and its form) once."""

    relation: list[str]
    value: list[str]
    value_entity: list[str | None]
    text: list[bool]
    value_form: list[str]
    parts: list[tuple[str, ...]]

    @classmethod
    def of(cls, rows: pl.DataFrame, vocabulary: FactVocabulary, text_chars: int) -> FactRows:
        """The rows ``p, o, o_is_entity`` read through ``vocabulary``, each distinct value's matching form and
        parts made once (:func:`fact_fields`)."""
        relations = rows["p"].unique(maintain_order=True).to_list()  # a few dozen, each row points at its one
        codes = rows["p"].replace_strict(relations, range(len(relations)), return_dtype=pl.UInt32).to_list()
        labels = [vocabulary.relation.get(p, p) for p in relations]
        is_text = [p in vocabulary.text for p in relations]
        # equal strings as one object (polars gives each row its own: 2.5M value objects for 335k values), so that
        # a value that is its own matching form and only part is one string in the row, written once in its chunk
        one: dict[Any, Any] = {}
        label = {iri: one.setdefault(name, name) for iri, name in vocabulary.label.items()}
        o = [one.setdefault(v, v) for v in rows["o"].to_list()]
        o_is_entity = rows["o_is_entity"].to_list()
        value = [label.get(v, v) if e else v for v, e in zip(o, o_is_entity)]
        value_entity = [v if e else None for v, e in zip(o, o_is_entity)]
        keys = list(zip(value, o_is_entity, [is_text[c] for c in codes]))
        # a graph's values repeat: each distinct one is made once
        fields: dict[tuple[str, bool, bool], tuple[bool, str, tuple[str, ...]]] = {}
        for key in dict.fromkeys(keys):
            text, value_form, parts = fact_fields(*key, text_chars)
            parts = tuple(one.setdefault(part, part) for part in parts)
            fields[key] = (text, one.setdefault(value_form, value_form), one.setdefault(parts, parts))
        made = list(map(fields.__getitem__, keys))
        texts = [field[0] for field in made]
        value_forms = [field[1] for field in made]
        parts_of = [field[2] for field in made]
        return cls([labels[c] for c in codes], value, value_entity, texts, value_forms, parts_of)

    def chunked(self, offsets: dict[str, tuple[int, int]]) -> tuple[bytes, dict[str, tuple[int, int]]]:
        """Each subject's rows (``offsets[subject]``: ``start, end``) as one marshal chunk of these columns, the
        chunks one after another: the bytes, and where each subject's chunk lies in them."""
        chunks, where, at = [], {}, 0
        dumps = marshal.dumps
        for subject, (start, end) in offsets.items():
            chunk = dumps(tuple(column[start:end] for column in self))
            chunks.append(chunk)
            where[subject] = (at, at + len(chunk))
            at += len(chunk)
        return b"".join(chunks), where


class FactTableState(TypedDict):
    """A prepared :class:`FactTable` as plain data (marshal writes it into a kept grounding index)."""

    offsets: dict[str, tuple[int, int]]  # subject -> where its rows are in ``rows``
    rows: bytes  # every subject's rows, one marshal chunk each
    literals: list[tuple[str, str, int]]  # FactTable.literals
    values_of: dict[str, frozenset[str]]  # FactTable.values_of


class FactTable:
    """Each entity's facts, made into :class:`Fact` records the first time the entity is in focus. A graph of
    millions of facts stays bytes: each subject's rows (:class:`FactRows`, in the order its facts are listed)
    one marshal chunk, read back when the entity first comes into focus. Everything a fact holds (its relation's
    label, its entity value's label, its value's matching form and parts) is put in the rows when the table is
    made, once a build (:mod:`kgforge.grounding.kept`), not each time an entity comes into focus; and a run
    reads the rows of the entities its dialogues are about, not the millions of the others (a worker process
    those of its own dialogues, from bytes it shares with the others, see
    :func:`kgforge.core.processes.forked_map`). Nothing after the constructor and :meth:`prepare` calls polars,
    so that forked processes read the rows without it."""

    def __init__(
        self,
        offsets: dict[str, tuple[int, int]],
        rows: bytes,
        whole: tuple[pl.DataFrame, FactVocabulary] | None = None,
    ) -> None:
        """``rows``: the chunks of :meth:`FactRows.chunked`, a subject's at ``offsets[subject]`` (``start, end``);
        ``whole``: the facts ``s, p, o, o_is_entity`` as a frame and the vocabulary they read through, for what is
        counted over the whole graph (:meth:`prepare`; None: counted already)."""
        self._offsets = offsets
        self._rows = rows
        self._made: dict[str, list[Fact]] = {}
        self._whole = whole
        self._literals: list[tuple[str, str, int]] | None = None
        self._values_of: dict[str, frozenset[str]] | None = None

    @classmethod
    def from_frame(cls, frame: pl.DataFrame, text_chars: int, vocabulary: FactVocabulary) -> FactTable:
        """The facts ``s, p, o, o_is_entity`` of ``frame``, each subject's rows made adjacent and put in the order
        its facts are listed: by relation label, then value (ties as the frame gives them)."""
        # a hash group-by, then one sort of the rows by their group's number and labels: sorting the millions of
        # rows by their subjects' IRIs too took seconds more
        grouped = frame.select("s").with_row_index("row").group_by("s").agg("row").with_row_index("group")
        ends = grouped["row"].list.len().cum_sum().to_list()
        offsets = {
            subject: (end - n, end)
            for subject, end, n in zip(grouped["s"].to_list(), ends, grouped["row"].list.len().to_list())
        }
        order = grouped.select("group", "row").explode("row")
        entity = pl.col("o_is_entity")
        # the labels here only put the rows in order: FactRows.of reads the vocabulary's own strings, one each
        rows = (
            frame.select("p", "o", "o_is_entity")[order["row"]]
            .with_columns(
                order["group"],
                pl.col("p").replace_strict(vocabulary.relation, default=pl.col("p")).alias("relation"),
                pl.when(entity)
                .then(pl.col("o").replace_strict(vocabulary.label, default=pl.col("o")))
                .otherwise(pl.col("o"))
                .alias("value"),
            )
            .sort("group", "relation", "value", maintain_order=True)
        )
        chunks, where = FactRows.of(rows, vocabulary, text_chars).chunked(offsets)
        return cls(where, chunks, (frame, vocabulary))

    def state(self) -> FactTableState:
        """The table as plain data, what is counted over the whole graph included (see
        :meth:`GroundingIndex.state`)."""
        self.prepare()
        return {
            "offsets": self._offsets,
            "rows": self._rows,
            "literals": self.literals(),
            "values_of": self.values_of(),
        }

    @classmethod
    def from_state(cls, state: FactTableState) -> FactTable:
        """The table :meth:`state` gave, prepared."""
        table = cls(state["offsets"], state["rows"])
        table._literals, table._values_of = state["literals"], state["values_of"]
        return table

    def get(self, subject: str, default: Any = ()) -> list[Fact]:
        made = self._made.get(subject)
        if made is None:
            where = self._offsets.get(subject)
            if where is None:
                return list(default)
            columns = marshal.loads(self._rows[where[0] : where[1]])
            made = self._made[subject] = list(map(_as_fact, zip(repeat(subject, len(columns[0])), *columns)))
        return made

    def prepare(self) -> None:
        """What is counted over the whole graph (:meth:`literals`, :meth:`values_of`) counted now, and the
        frame and the vocabulary let go: nothing is left to ask polars, and the rows hold what a fact reads."""
        self.literals()
        self.values_of()
        self._whole = None

    def literals(self) -> list[tuple[str, str, int]]:
        """``(relation, value, facts)`` of every literal value that is no free text, with the number of facts
        holding it (column-wise, no :class:`Fact` made: a graph's values repeat); counted once, asked twice."""
        if self._literals is None:
            self._literals = self._count_literals()
        return self._literals

    def _count_literals(self) -> list[tuple[str, str, int]]:
        frame, vocabulary = self._whole_graph()
        literal = (
            frame.filter(~pl.col("o_is_entity"), ~pl.col("p").is_in(list(vocabulary.text))).group_by("p", "o").len()
        )
        relation = vocabulary.relation
        return [(relation.get(p, p), o, n) for p, o, n in zip(*(literal[c].to_list() for c in ("p", "o", "len")))]

    def values_of(self) -> dict[str, frozenset[str]]:
        """Entity value -> the relations it is a value of (counted once)."""
        if self._values_of is None:
            frame, vocabulary = self._whole_graph()
            grouped = frame.filter(pl.col("o_is_entity")).group_by("o").agg(pl.col("p").unique())
            relation = vocabulary.relation
            one = shared_sets()
            self._values_of = {entity: one(relation.get(p, p) for p in ps) for entity, ps in grouped.iter_rows()}
        return self._values_of

    def _whole_graph(self) -> tuple[pl.DataFrame, FactVocabulary]:
        assert self._whole is not None, "what is counted over the whole graph is counted before prepare() ends"
        return self._whole


@dataclass(frozen=True)
class FactVocabulary:
    """What a fact row ``p, o, o_is_entity`` reads as: its relation's label, its value's label when the value
    is an entity (the IRI when it has none), whether its relation is free text."""

    relation: dict[str, str]  # relation IRI -> its label
    text: frozenset[str]  # the IRIs of the free-text relations
    label: dict[str, str]  # IRI -> its first label


class IndexState(TypedDict):
    """A prepared :class:`GroundingIndex` as plain data (:meth:`GroundingIndex.state`; marshal writes it beside
    the build, :mod:`kgforge.grounding.kept`): its fields, what :meth:`GroundingIndex.prepare` makes, the automata
    as their keys."""

    names: dict[str, list[str]]
    types_of: dict[str, frozenset[str]]
    min_name_chars: int
    text_chars: int
    relation_words: set[str]
    text_relation_names: set[str]
    borrowed: dict[str, str]
    entities_of: dict[str, tuple[str, ...]]
    literal_words: dict[str, frozenset[str]]  # the literal automaton's keys
    role_relations: frozenset[str]
    counted_by: dict[str, frozenset[str]]
    numbered: dict[str, tuple[tuple[str, str], ...]]  # the numbered automaton's keys
    facts: FactTableState
    segmenter: SegmenterState


@dataclass
class GroundingIndex:
    """Names (automaton), labels and facts of a graph, see the module docstring."""

    names: dict[str, list[str]]  # IRI -> labels, the preferred one first
    facts_of: FactTable | dict[str, list[Fact]]
    types_of: dict[str, frozenset[str]] = field(default_factory=dict)  # IRI -> classes
    min_name_chars: int = 2
    text_chars: int = TEXT_CHARS
    relation_words: set[str] = field(default_factory=set)  # the relations' labels (导演, 编剧), in matching form
    text_relation_names: set[str] = field(default_factory=set)  # labels of the free-text relations (评论)
    borrowed: dict[str, str] = field(default_factory=dict)  # IRI -> its owl:sameAs partner's name (see from_tables)
    _arranged: RecentlyUsed[tuple[str, int, int], SubjectFacts] = field(
        default_factory=partial(RecentlyUsed, SUBJECTS_KEPT), repr=False, compare=False
    )
    _related: RecentlyUsed[str, EntityValues] = field(
        default_factory=partial(RecentlyUsed, SUBJECTS_KEPT), repr=False, compare=False
    )

    @cached_property
    def entities_of(self) -> dict[str, tuple[str, ...]]:
        """Name form -> the entities it names."""
        entities_of: dict[str, set[str]] = {}
        for iri, labels in self.names.items():
            for name in name_forms(labels):
                if len(name) >= self.min_name_chars:
                    entities_of.setdefault(name, set()).add(iri)
        return {name: tuple(sorted(iris)) for name, iris in entities_of.items()}

    @cached_property
    def segmenter(self) -> Segmenter:
        """jieba, the graph's names in its dictionary (ready on first use)."""
        return Segmenter(self.entities_of)

    @cached_property
    def automaton(self) -> LongestMatches[tuple[str, ...]]:
        """The names found in a text, each with the entities it names (:attr:`entities_of`)."""
        return LongestMatches(self.entities_of)

    def prepare(self) -> GroundingIndex:
        """Everything made on first use that the whole graph goes into, made now: the name automaton, jieba
        with the names, the literal and role relations, which relations each entity is a value of. Processes
        forked to share a corpus (:func:`kgforge.core.processes.forked_map`) then find it made once, in the
        parent, rather than each making its own; and none of them has anything left to ask polars."""
        self.automaton, self.literal_automaton, self.role_relations, self.word_relations, self._values_of  # noqa: B018 (made on first use)
        self.counted_by, self.numbered_automaton  # noqa: B018 (made on first use)
        self.segmenter.prepare()
        if isinstance(self.facts_of, FactTable):
            self.facts_of.prepare()
        return self

    def state(self) -> IndexState:
        """The index, prepared, as plain data (dicts, lists, tuples, sets, strings, numbers): what a build keeps
        so that grounding reads it back instead of making it again (:mod:`kgforge.grounding.kept`). The automata
        are kept as their keys (they are made again from them, in well under a second)."""
        if not isinstance(self.facts_of, FactTable):
            raise TypeError("only an index made from a graph's tables (GroundingIndex.from_tables) has a state")
        self.prepare()
        return {
            "names": self.names,
            "types_of": self.types_of,
            "min_name_chars": self.min_name_chars,
            "text_chars": self.text_chars,
            "relation_words": self.relation_words,
            "text_relation_names": self.text_relation_names,
            "borrowed": self.borrowed,
            "entities_of": self.entities_of,
            "literal_words": self.literal_automaton.keyed(),
            "role_relations": self.role_relations,
            "counted_by": self.counted_by,
            "numbered": self.numbered_automaton.keyed(),
            "facts": self.facts_of.state(),
            "segmenter": self.segmenter.state(),
        }

    @classmethod
    def from_state(cls, state: IndexState) -> GroundingIndex:
        """The index :meth:`state` gave, prepared as :meth:`prepare` leaves it."""
        facts = FactTable.from_state(state["facts"])
        index = cls(
            names=state["names"],
            facts_of=facts,
            types_of=state["types_of"],
            min_name_chars=state["min_name_chars"],
            text_chars=state["text_chars"],
            relation_words=state["relation_words"],
            text_relation_names=state["text_relation_names"],
            borrowed=state["borrowed"],
        )
        # what prepare() makes on first use, set as made (a cached_property is an attribute once set)
        index.entities_of = state["entities_of"]
        index.automaton = LongestMatches(index.entities_of)
        index.literal_automaton = LongestMatches(state["literal_words"])
        index.role_relations = state["role_relations"]
        index.counted_by = state["counted_by"]
        index.numbered_automaton = LongestMatches(state["numbered"])
        index.segmenter = Segmenter.from_state(state["segmenter"])
        return index

    def subject_facts(self, subject: str, said_most_chars: int, ngram: int) -> SubjectFacts:
        """``subject``'s facts arranged for trying (:class:`SubjectFacts`), made on first use and kept."""
        key = (subject, said_most_chars, ngram)
        kept = self._arranged.get(key)
        if kept is None:
            kept = SubjectFacts(list(self.facts_of.get(subject, ())), said_most_chars, ngram)
            self._arranged.put(key, kept)
        return kept

    def related(self, subject: str) -> frozenset[str]:
        """The entities ``subject``'s facts have as values."""
        return self.entity_values(subject).related

    def entity_values(self, subject: str) -> EntityValues:
        """``subject``'s entity values (:class:`EntityValues`), made once an entity and kept like
        :meth:`subject_facts`: a message's claims ask them of every name it says."""
        kept = self._related.get(subject)
        if kept is None:
            kept = EntityValues.of(self.facts_of.get(subject, ()), self.types_of)
            self._related.put(subject, kept)
        return kept

    def label(self, iri: str) -> str:
        """The name a grounded fact gives ``iri``: its first label, or its partner's (:attr:`borrowed`)."""
        borrowed = self.borrowed.get(iri)
        if borrowed is not None:
            return borrowed
        labels = self.names.get(iri)
        return labels[0] if labels else iri

    @cached_property
    def _values_of(self) -> dict[str, frozenset[str]]:
        if isinstance(self.facts_of, FactTable):
            return self.facts_of.values_of()
        values: dict[str, set[str]] = {}
        for facts in self.facts_of.values():
            for fact in facts:
                if fact.value_entity is not None:
                    values.setdefault(fact.value_entity, set()).add(fact.relation)
        return {entity: frozenset(relations) for entity, relations in values.items()}

    @cached_property
    def literal_automaton(self) -> LongestMatches[frozenset[str]]:
        """The literal values of the word-valued relations (a country, a genre, an occupation) -> the relations
        they are values of. A relation is word-valued when ``WORD_VALUED`` of its values are words: each list
        part ``literal_chars`` characters at most, with no digit (numbers are judged by their units). Prices,
        hours and addresses are phrases, not a closed vocabulary one word of which could contradict another."""
        rows: Iterable[tuple[str, str, int]]
        if isinstance(self.facts_of, FactTable):
            rows = self.facts_of.literals()
        else:
            rows = (
                (f.relation, f.value, 1)
                for facts in self.facts_of.values()
                for f in facts
                if f.value_entity is None and not f.text
            )
        words_of: dict[str, list[tuple[list[str] | None, int]]] = {}
        for relation, value, count in rows:
            words = [w for w in list_words(value) if w]
            is_words = bool(words) and all(len(w) <= LITERAL_CHARS and not _DIGIT.search(w) for w in words)
            words_of.setdefault(relation, []).append((words if is_words else None, count))
        relations_of: dict[str, set[str]] = {}
        for relation, values in words_of.items():  # the share of the relation's facts, each counted
            if sum(n for v, n in values if v is not None) < WORD_VALUED * sum(n for _, n in values):
                continue
            for words in filter(None, (v for v, _ in values)):
                for word in words:
                    if len(word) >= 2 and word not in self.relation_words:
                        relations_of.setdefault(word, set()).add(relation)
        return LongestMatches({word: frozenset(relations) for word, relations in relations_of.items()})

    @cached_property
    def word_relations(self) -> frozenset[str]:
        """The word-valued relations (:attr:`literal_automaton`'s): 国家, 类型, 职业."""
        return frozenset().union(*self.literal_automaton.keyed().values())

    @cached_property
    def role_relations(self) -> frozenset[str]:
        """The relations whose values are roles people have (职业: 导演、编剧、制片人): those with a literal value
        one of whose parts names a relation of the domain — the graph's own relations are roles (导演, 制作人)."""
        if isinstance(self.facts_of, FactTable):
            rows = ((relation, value) for relation, value, _ in self.facts_of.literals())
        else:
            rows = ((f.relation, f.value) for facts in self.facts_of.values() for f in facts if f.value_entity is None)
        return frozenset(
            relation for relation, value in rows if any(word in self.relation_words for word in list_words(value))
        )

    @cached_property
    def counted_by(self) -> dict[str, frozenset[str]]:
        """Relation -> the counters its numbers carry in the graph (曲目数量: 首, of 12首): a number said with one
        of them (15首) is checked against the relation's values, those written bare (12) too. Learned from the
        graph's own values, so that a domain's counters (首, 张, 集) need no list of units."""
        if isinstance(self.facts_of, FactTable):
            rows = ((relation, value) for relation, value, _ in self.facts_of.literals())
        else:
            rows = ((f.relation, f.value) for facts in self.facts_of.values() for f in facts if f.value_entity is None)
        found: dict[str, set[str]] = {}
        for relation, value in rows:
            counted = _COUNTED.fullmatch(form(value))
            if counted is not None:
                found.setdefault(relation, set()).add(counted[1])
        return {relation: frozenset(units) for relation, units in found.items()}

    @cached_property
    def numbered_automaton(self) -> LongestMatches[tuple[tuple[str, str], ...]]:
        """The literal values that hold a number and ``NUMBERED_WORDS`` other characters or more (第64届奥斯卡最佳
        男主角奖, 2009年台湾金曲奖最佳新人奖; not a bare date), keyed by their matching form with each number made
        ``#`` (:func:`numbers_masked`) -> ``(relation, value)`` of every such value: a message that says those words
        with numbers no value of them holds says a wrong value, whoever's it is."""
        if isinstance(self.facts_of, FactTable):
            rows = ((relation, value) for relation, value, _ in self.facts_of.literals())
        else:
            rows = ((f.relation, f.value) for facts in self.facts_of.values() for f in facts if f.value_entity is None)
        found: dict[str, set[tuple[str, str]]] = {}
        for relation, value in rows:
            key = numbers_masked(form(value))
            if "#" in key and len(key) - key.count("#") >= NUMBERED_WORDS:
                found.setdefault(key, set()).add((relation, value))
        return LongestMatches({key: tuple(sorted(values)) for key, values in found.items()})

    def value_relations(self, entity: str) -> frozenset[str]:
        """The relations (labels) ``entity`` is a value of somewhere in the graph."""
        return self._values_of.get(entity, frozenset())

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
    def from_snapshot(cls, snapshot: Snapshot) -> GroundingIndex:
        """The index of ``snapshot``'s build, its entities named by the snapshot's naming rule (its
        ``owl:sameAs`` pairs: :meth:`~kgforge.store.snapshot.Snapshot.same_as_pairs`)."""
        return cls.from_tables(snapshot.tables(), snapshot.schema, links=snapshot.same_as_pairs())

    @classmethod
    def from_tables(
        cls,
        tables: GraphTables,
        schema: Schema | None,
        text_relations: Iterable[str] = (),
        links: Iterable[tuple[str, str]] = (),
    ) -> GroundingIndex:
        # the domain's language first: an entity linked to Wikidata also has English labels, and the name a
        # grounded fact carries is the first one (霸王别姬, not Farewell My Concubine, in a zh domain); an
        # entity with no name in the language borrows its owl:sameAs partner's (``links``), as labels in every
        # other stage do (kgforge.store.languages): a name to write, never one to match
        language = schema.language if schema is not None else "zh"
        in_language = pl.col("lang").str.starts_with(language)
        labels = tables.labels.sort("iri", in_language.not_(), pl.col("preferred").not_(), "label")
        # 电影, 歌手: what entities are, never what a message names; the schema's classes too, typed entities or none
        # (a graph made of dialogues' attrs types the people but not the films: 电影 said was a name in focus)
        classes = set(tables.types["class"].to_list()) | ({t.iri for t in schema.types.values()} if schema else set())
        names: dict[str, list[str]] = {}
        for iri, label in labels.filter(~pl.col("iri").is_in(list(classes))).select("iri", "label").iter_rows():
            names.setdefault(iri, []).append(label)
        relations = tables.relations
        relation_label = {iri: zh or en or iri for iri, zh, en in relations.select("iri", "zh", "en").iter_rows()}
        text = set(relations.filter(pl.col("kind") == "text")["iri"].to_list()) | set(text_relations)
        skipped = set()
        if schema is not None and schema.type_relation in schema.relations:
            skipped.add(schema.relations[schema.type_relation].iri)
        first_label = labels.unique("iri", keep="first")
        borrowed = _borrowed_names(tables, language, links)
        vocabulary = FactVocabulary(
            relation_label,
            frozenset(text),
            dict(zip(first_label["iri"].to_list(), first_label["label"].to_list())) | borrowed,
        )
        # the rows as the graph holds them: relation and entity labels are read when a subject comes into focus
        # (FactVocabulary), not for the millions of rows most of which a corpus never brings into focus
        facts = tables.domain_facts().filter(~pl.col("p").is_in(list(skipped))).select("s", "p", "o", "o_is_entity")
        facts = facts.unique()
        types: dict[str, set[str]] = {}
        for iri, klass in tables.types.select("iri", "class").iter_rows():
            types.setdefault(iri, set()).add(klass)
        return cls(
            names=names,
            facts_of=FactTable.from_frame(facts, TEXT_CHARS, vocabulary),
            types_of={iri: one_set(c) for one_set in [shared_sets()] for iri, c in types.items()},
            relation_words={form(label) for label in relation_label.values()},
            text_relation_names={form(relation_label[iri]) for iri in text if iri in relation_label},
            borrowed={iri: name for iri, name in borrowed.items() if iri in names},
        )


def _borrowed_names(tables: GraphTables, language: str, links: Iterable[tuple[str, str]]) -> dict[str, str]:
    """The entities that have no name in ``language`` of their own and one through an ``owl:sameAs`` partner
    (``links``), with that name: the "linked" step of :func:`kgforge.store.languages.language_labels`."""
    links = list(links)
    if not links:
        return {}
    chosen = language_labels(tables.labels, language, links)
    return {iri: chosen.labels[iri] for iri, step in chosen.fell_back.items() if step == "linked"}


def shared_sets() -> Callable[[Iterable[str]], frozenset[str]]:
    """A maker of frozensets that gives one object for equal sets: the graph's entities have a few dozen
    distinct sets of classes (of relations they are values of) among them, and the kept index (marshal)
    writes and reads a shared object once."""
    made: dict[frozenset[str], frozenset[str]] = {}

    def one(items: Iterable[str]) -> frozenset[str]:
        key = frozenset(items)
        return made.setdefault(key, key)

    return one


def make_fact(subject: str, relation: str, value: str, value_entity: str | None, text: bool, text_chars: int) -> Fact:
    return Fact(subject, relation, value, value_entity, *fact_fields(value, value_entity is not None, text, text_chars))


# a row's fields as one Fact: what Fact(...) makes, without its Python-level __new__ (a call a fact, made in C by map)
_as_fact = partial(tuple.__new__, Fact)


def fact_fields(value: str, is_entity: bool, text: bool, text_chars: int) -> tuple[bool, str, tuple[str, ...]]:
    """What a fact with ``value`` is matched by: whether it is free text, the value's matching form and its parts
    (see :class:`Fact`). ``text``: the relation is a free-text one."""
    if text and not is_entity:
        # free text is matched by overlap only: the names inside it are other facts' business, so its parts
        # (a long comment splits into many) are never made
        return True, text_form(value), ()
    form_of_value, parts = value_forms(value)
    if is_entity and len(parts) < 2:
        # an entity named by a list (《小凯撒》；《绿野仙踪》, as dialogue annotations make them) is said by a
        # part; any other by its name (the automaton's mentions)
        parts = ()
    return text or len(form_of_value) >= text_chars, form_of_value, parts


@lru_cache(maxsize=1 << 20)
def numbers_masked(text: str) -> str:
    """``text`` with each run of digits made one ``#`` (第64届 → 第#届)."""
    return _DIGITS.sub("#", text)


def value_form(value: str) -> str:
    """A value's matching form, made once a value (a graph's values repeat)."""
    return text_form(value)


def text_form(value: str) -> str:
    """:func:`value_form` made each time: a free text is rarely the value of two facts, and kept it (here or in
    :func:`form`'s cache) would push out values that repeat."""
    folded = form.__wrapped__(value)
    if folded.endswith("\n"):  # never in a matching form (whitespace is dropped); _TRAILING's $ would skip it
        return _TRAILING.sub("", folded)
    return folded.rstrip(_TRAILING_MARKS)  # what _TRAILING.sub("", folded) leaves, without a regex's scan


# a value with none of these has no list parts, qualifier, transcribed spelling or date: its only part is itself
_WRITTEN_IN_PARTS = re.compile(r"[、,，;；/|《》“”\"（()）A-Za-z年]")


@lru_cache(maxsize=1 << 20)
def value_forms(value: str) -> tuple[str, tuple[str, ...]]:
    """A value's matching form and its parts (list parts, a date's other writings), made once a value: a
    graph's values repeat (dates, genres, the names of linked entities)."""
    whole = value_form(value)
    if not _WRITTEN_IN_PARTS.search(value):
        return whole, (whole,)  # most values: a name, a number, a word (what the general case gives them too)
    return whole, value_parts(value, whole)


@lru_cache(maxsize=1 << 18)
def list_words(value: str) -> tuple[str, ...]:
    """A literal's list parts (``、，/;``…) in matching form, empty ones included, made once a value: the
    word-valued relations and the role relations are both found from them."""
    if not _LIST_SEPARATORS.search(value):
        return (value_form(value),)  # what the split gives a value of one part, its form shared with its facts
    return tuple(_TRAILING.sub("", form(part)) for part in _LIST_SEPARATORS.split(value))


def value_parts(value: str, whole: str) -> tuple[str, ...]:
    """The parts of ``value`` (whose matching form is ``whole``) in matching form, the value itself when it has
    no other."""
    split = [_TRAILING.sub("", form(w)) for p in _LIST_SEPARATORS.split(value) for w in (p, *short_writings(p))]
    return tuple(dict.fromkeys(p for p in [*split, *date_writings(value)] if p and p != "等")) or (whole,)


_LATIN_TAIL = re.compile(r"(?<=[\u4e00-\u9fff])\s*[A-Za-z][A-Za-z .'-]*$")


def short_writings(part: str) -> tuple[str, ...]:
    """How a value is said without what the graph adds to it: a qualifier in brackets (162分钟(公映版),
    1995年10月27日(美国)) or the original spelling after a transcribed name (西蒙比尤弗伊simonbeaufoy)."""
    found = []
    for pattern in (_QUALIFIER, _LATIN_TAIL):
        shorter = pattern.sub("", part)
        if shorter and shorter != part:
            found.append(shorter)
    return tuple(found)


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
