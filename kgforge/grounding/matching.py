"""Which facts a message states, and what it claims about the entities in focus.

**Mentions.** The index's automaton runs over the message's matching form; matches are taken
leftmost-longest (a longer name hides the names inside it: 儿童游乐场 is not 游乐场).

**Focus.** The entities a message may be about: the ones it names, then the ones the dialogue is about so
far, most recent first — its declared topics, every entity an earlier message named or stated a fact of.
Only the latest ``focus_size`` of the earlier ones stay in focus.

**Facts stated.** For each entity in focus, each of its facts is tried:

* an entity value is stated when the message names it (not when it also names the subject and both are of
  one kind — a list of places relates none of them — nor again once stated in the dialogue);
* a literal value when its matching form, or one of its list parts (``、，/;``), occurs in the message (a
  part of two characters must be a word of the message by jieba's cuts; a part that names a relation of the
  domain, such as 导演, is the relation, see below); a date also by its year-month or year; a literal of
  ``said_most_chars`` or more when ``said_most`` of its characters are in runs the message says, with all
  of its numbers;
* free text (a ``text`` relation, or a literal of ``text_chars`` characters or more) by overlap: the
  characters of the message, its names and stated values masked, covered by runs of ``ngram`` characters
  found in the text; stated when at least ``overlap_chars``, or ``overlap_share`` of the message's
  characters (punctuation left out), or when the whole text is said. One per relation per message. A
  question's clauses cover nothing (:func:`questions`); the text of the entity the message is about is also
  stated by a 《title》 or a year it gives that the message says and no other fact explains
  (:func:`title_in_text`, :func:`year_in_text`);
* a role (a value of a relation whose values include the domain's relation names: 职业) is not stated when it
  is said of a group or of someone asked for (:func:`said_of_many`); an entity value named by a list of works
  is stated again by a work of it that is news in the dialogue.

One stretch of the message states one fact: among the facts found at the same span, the relation the
message names (two characters of its name, then more of it) wins, then the subject named or most recent in
focus; a fact found inside the stretch of a longer one (free text included) is part of it (美国 of
美国马萨诸塞州波士顿). Three exceptions: relations of the winner's subject that the message names in full
and that hold the same value are stated too (它的编剧和导演都是陆川); values of one relation each said by most
of their characters share their stretch (第64届、74届奥斯卡奖最佳男配角提名 states both awards); and a name
of two entities (the album 孙燕姿 and its singer) relates neither to the other.

Only the facts a message could state are tried (:class:`~kgforge.grounding.facts.SubjectFacts`: the entity
values it names, the literals one of whose parts it says, the long values with which it shares a run of
characters); the rules above need one of these, so this changes no result, only the time.
A value that names a relation (导演) is a value only of the subject the message is about, and only when the
message names no value of that relation.

**The learned choice.** The rules above decide alone with ``MatchOptions(model="rules")``. With a model (the
shipped one by default, :mod:`kgforge.grounding.model_file`) they find the **candidates**: every fact a rule
states, and those a rule refuses for a reason the model weighs (:class:`Candidate`: a short value not cut as a
word, a role said of many, a relation's word, the subject's own name, a literal said by ``loose_most`` of it or by
another writing of it (:func:`~kgforge.grounding.facts.other_writings`), a
stretch's losers, any free text sharing a run); each gets its features (:mod:`kgforge.grounding.choice`) and is
stated when its probability reaches the stage's threshold, one likeliest fact a stretch. What the rules refuse on
structure stays refused (two entities of one kind named together, an entity value said again, a relation stated by
a value and a text). A claim carries a score: a fact stated its probability, a value said against the graph how
likely it is wrong (``contradicted`` from the claims stage's threshold on, else ``unsupported``).

**Claims.** Every fact stated is a ``supported`` claim. A value said against the graph is checked against the
first entity in focus that holds values of its kind. Each number with a unit (``40元``, ``9:00``, ``3小时``, a
bare number of 3+ digits, or a counter the graph's values carry: 首 of 12首, ``GroundingIndex.counted_by``)
against values of that unit's family (free text left out): ``contradicted`` (with those values) when none holds
that number with that unit, ``unsupported`` when no entity in focus has such values. The words of a numbered
value of the graph (第64届奥斯卡最佳男主角奖) said with numbers none of those values holds: ``contradicted``
against the first entity in focus holding one. An entity named outside the facts stated, related to nothing in
focus, against the entity values of the first entity in focus with values of its kind: ``contradicted``,
unless its name is an ordinary word (jieba) or, short, inside a longer word. A short literal of a word-valued
relation (``GroundingIndex.literal_automaton``: 国家, 类型) said as a word, outside the names and facts stated, is
``contradicted`` when the first entity in focus with values of that relation holds others and no entity in
focus holds it; one jieba does not cut is left to a model's claims stage (``Claim.refused``).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from math import log1p
from typing import NamedTuple

from kgforge.core.jsonio import JsonObject
from kgforge.grounding.choice import Choice, Stage, probability
from kgforge.grounding.facts import EntityValues, Fact, MessageGrams, other_writings
from kgforge.grounding.index import FactTable, GroundingIndex, strip_qualifier
from kgforge.grounding.model_file import chosen_model
from kgforge.grounding.normalise import Surface, form, surface

_PUNCTUATION = re.compile(r"[\W_]", re.UNICODE)
_BY_RUNS, _SAID_WHOLE, _BY_TITLE, _BY_YEAR = 0, 1, 2, 3  # how a free text was found: runs, whole, title, year
_NUMBERS = re.compile(r"\d+")
_NO_CLASSES: frozenset[str] = frozenset()
COMMON_WORD_FREQ = 100  # jieba frequency from which a name is an ordinary word first
# why the hand rules refuse a candidate (bits of Candidate.refused; 0: the rules' filters pass it)
NOT_A_WORD = 8  # a short value jieba does not cut as a word
SAID_OF_MANY = 16  # a role said of a group or asked about
NAMES_RELATION = 32  # a value that names a relation, said as the relation
MOST_LOOSELY = 64  # a literal said by fewer of its characters than ``said_most``
SAME_NAME = 128  # an entity value named by the name that names the subject too (one name, two entities)
OTHER_WRITING = 256  # a literal said by another writing of it (facts.other_writings: an affix, a date's 年月日)


@dataclass(frozen=True)
class MatchOptions:
    focus_size: int = 4  # earlier entities kept in focus
    ngram: int = 4  # the shortest run of characters that counts as overlap with free text
    overlap_chars: int = 6  # characters covered by overlap that state a free-text fact on their own
    overlap_share: float = 0.3  # or this share of the message's characters
    word_chars: int = 2  # a value this short must be a word of the message (jieba's cuts)
    said_most_chars: int = 8  # a literal this long is also stated when most of it is said
    said_most: float = 0.8  # that share of its characters
    link_beside_facts: bool = False  # an entity value is stated also when the message states facts of it
    loose_most: float = 0.5  # a candidate of the learned choice: a literal this share of whose characters is said
    model: str = "shipped"  # who chooses among the candidates: "shipped", "rules", or a model file (model_file)


DEFAULT_OPTIONS = MatchOptions()


class Mention(NamedTuple):  # a tuple: messages say several names each, and a tuple is made fastest
    start: int
    end: int
    entities: tuple[str, ...]


class Stated(NamedTuple):  # a tuple, as Fact: several are made for every message, and a tuple is made fastest
    """A fact a message states, where, and how strongly (overlap characters for free text, else its length)."""

    fact: Fact
    span: tuple[int, int]
    score: float
    whole: bool = True  # False: a literal stated by most of its characters (``MatchOptions.said_most``)
    confidence: float = 1.0  # the learned choice's probability (1.0: stated by the hand rules alone)


class Claim(NamedTuple):  # a tuple: made for every fact stated and every value said
    """What a message says of an entity (``relation`` None: no fact of that kind to check) and its status."""

    subject: str
    relation: str | None
    said: str
    span: tuple[int, int]
    graph: tuple[str, ...]
    status: str  # supported | contradicted | unsupported
    score: float = 1.0  # supported: the fact's probability; else how likely the value said is wrong (1.0: rules alone)
    kind: str = "fact"  # what was checked: fact (stated), amount, entity, word or numbered
    refused: bool = False  # a word the rules leave unclaimed (not cut as a word): for the claims stage to weigh


class Candidate:
    """A fact a message may state, as the learned choice sees it (:mod:`kgforge.grounding.choice`): found where
    the hand rules look, and also where their filters refuse it (``refused``: the reasons, bits)."""

    def __init__(self, stated: Stated, refused: int, order: tuple[int, int, int], named: bool, recency: float) -> None:
        self.stated, self.refused, self.order = stated, refused, order  # order: the rules' at one stretch
        self.named, self.recency = named, recency  # recency: 1 named, else 1 / (2 + entities in focus since)
        self.cue_full = False  # the message says the relation's name whole
        self.rule = False  # the hand rules state it
        self.text = False  # a free text (the second stage)
        self.features: list[float] = []
        self.probability = 1.0


class DialogueMatcher:
    """Grounds one dialogue's messages in order (focus carries over from message to message)."""

    def __init__(
        self,
        index: GroundingIndex,
        topics: list[str],
        options: MatchOptions = DEFAULT_OPTIONS,
        collect: list[Candidate] | None = None,
    ) -> None:
        """``collect``: a list every candidate of every message is added to, with its features (training)."""
        self.index, self.options = index, options
        self.focus: list[str] = []
        for topic in topics:
            for iri in index.resolve(topic):
                self._bring(iri)
        self.topics = list(self.focus)
        self.stated: set[tuple[str, str]] = set()
        self.focus_facts = FocusFacts(index)
        self.choice: Choice | None = chosen_model(options.model)
        self.collect = collect
        self.collect_claims: list[tuple[Claim, list[float]]] | None = None  # each value said against the graph
        self.messages = 0  # messages grounded so far
        self.previous = ""  # the message before, in matching form
        self.current = ""  # the message being grounded, in matching form
        # whether it asks, and the one before (:func:`questions`): -1 not known yet, asked only when a feature needs it
        self._asks = self._asked = -1

    def _not_restated(self, fact: Fact, mentioned: dict[str, Mention]) -> bool:
        """An entity value is not read from a message that names its subject and the value, two entities of
        one kind (两个景点: the message lists places, it does not relate them), nor said again once stated."""
        if (fact.relation, fact.value_form) in self.stated and not fact.parts:
            return True  # a list of works is said again by another of its parts (see _part_restated)
        return fact.subject in mentioned and self.index.same_kind(fact.subject, fact.value_entity or "")

    def _part_restated(self, stated: Stated, said: Surface) -> bool:
        """An entity value named by a list (代表作品 《阿甘正传》《费城故事》…) is stated by each part said, once:
        KdConv's annotators cite the list again when another of its works comes up (还有他的《拯救大兵瑞恩》),
        not when only works said or named before in the dialogue come up again (the film now talked about)."""
        if not stated.fact.parts:
            return False  # an entity named by its name: _not_restated
        said_now = [p for p in stated.fact.parts if len(p) >= 2 and p in said.form] or [_said_part(stated, said)]
        return all((stated.fact.relation, "\0" + p) in self.stated or ("", "\0" + p) in self.stated for p in said_now)

    def _in_focus_first(self, entities: tuple[str, ...]) -> tuple[str, ...]:
        """One name of several entities (阿凡达 and 阿凡达（2009年詹姆斯·卡梅隆执导科幻电影）: one film the
        annotations name two ways): the one the dialogue is already about comes first, so that a fact both hold
        is read of it. (Preferring the one linked to the focus, or the one with more facts, each helped one
        domain's tuning dialogues and hurt the other's held-back ones: no evidence beyond the focus is kept.)"""
        if len(entities) < 2:
            return entities
        focus = self.focus[: self.options.focus_size]
        return tuple(sorted(entities, key=lambda iri: iri not in focus))

    def _bring(self, iri: str) -> None:
        if iri in self.focus:
            self.focus.remove(iri)
        self.focus.insert(0, iri)

    def mentions(self, text: Surface) -> list[Mention]:
        """The names ``text`` says, leftmost-longest, each name's entities in focus first."""
        in_focus_first = self._in_focus_first
        return [
            Mention(start, end, iris if len(iris) < 2 else in_focus_first(iris))
            for start, end, iris in self.index.automaton.find(text.form)
        ]

    def message(self, text: str) -> tuple[list[Stated], list[Claim]]:
        """The facts ``text`` states and its claims (see the module docstring); moves the focus on."""
        said = surface(text)
        mentions = self.mentions(said)
        named = list(dict.fromkeys(iri for m in mentions for iri in m.entities))
        candidates = list(dict.fromkeys(named + self.focus[: self.options.focus_size]))
        self._asked, self._asks, self.current = self._asks, -1, said.form
        found = self._facts(said, mentions, named)
        self.messages += 1
        self.previous = said.form
        earlier = [iri for iri in candidates if iri not in named]
        candidates = earlier + [iri for iri in candidates if iri in named]  # the subject: in focus before
        broad = self.choice is not None or self.collect_claims is not None
        said_claims = claims(self.index, found, mentions, said, candidates, self.focus_facts, broad)
        if self.choice is None and self.collect_claims is None:
            return found, said_claims
        return found, self._scored(said_claims, found, {iri for m in mentions for iri in m.entities}, candidates)

    def _scored(
        self, said_claims: list[Claim], found: list[Stated], named: set[str], candidates: list[str]
    ) -> list[Claim]:
        """The claims with their scores: a fact stated its probability; a value said against the graph how likely
        it is wrong (the model's claims stage), ``contradicted`` from its threshold on and ``unsupported`` below
        it. Collected with their features when ``collect_claims`` is given."""
        stage = None if self.choice is None else self.choice.claims
        out = said_claims[: len(found)]  # the facts stated, one a claim, each with its probability (claims())
        for claim in said_claims[len(found) :]:
            features = [
                1.0 if claim.kind == "amount" else 0.0,
                1.0 if claim.kind == "entity" else 0.0,
                1.0 if claim.kind == "word" else 0.0,
                1.0 if claim.kind == "numbered" else 0.0,
                1.0 if claim.status == "unsupported" else 0.0,
                1.0 if claim.subject in named else 0.0,
                1.0 if candidates and claim.subject == candidates[0] else 0.0,
                log1p(len(claim.graph)) / 3,
                log1p(len(claim.said)) / 3,
                1.0 if _NUMBERS.search(claim.said) else 0.0,
                log1p(self.index.segmenter.dictionary_frequency(form(claim.said))) / 10
                if claim.kind == "entity"
                else 0.0,
                log1p(len(found)) / 2,
                1.0 if self.asks() else 0.0,
                1.0 if _in_relation_name(self.index, form(claim.said)) else 0.0,
                1.0 if claim.refused else 0.0,
            ]
            if self.collect_claims is not None:
                self.collect_claims.append((claim, features))
            if stage is None:
                out.append(claim)
                continue
            score = stage.probability(features)
            status = "contradicted" if claim.status == "contradicted" and score >= stage.threshold else "unsupported"
            out.append(claim._replace(status=status, score=score, refused=False))
        return out

    def _facts(self, said: Surface, mentions: list[Mention], named: list[str]) -> list[Stated]:
        """The facts ``said`` states (see the module docstring); moves the focus on."""
        earlier = [iri for iri in self.focus if iri not in named][: self.options.focus_size]
        candidates = named + earlier
        rank = {iri: r for r, iri in enumerate(candidates)}
        mentioned = {iri: m for m in mentions for iri in m.entities}
        values, texts = self._value_candidates(said, candidates, rank, mentioned)
        groups = _by_span(values)
        ruled = _outermost([s for facts in groups.values() for s in _at_one_span(facts)])
        found = self._choose(values, ruled, said, groups)
        stated_relations = {s.fact.relation for s in found}
        text_candidates, text_ruled = self._texts(texts, said, mentions, found, rank, stated_relations)
        text_found = self._choose(text_candidates, text_ruled, said, None)
        found = _outermost(found + text_found)
        if self.options.link_beside_facts is False:
            # KdConv annotates a fact of the entity named, not the link to it from the topic as well
            subjects = {s.fact.subject for s in found if s.fact.value_entity is None}
            found = [s for s in found if s.fact.value_entity is None or s.fact.value_entity not in subjects]
        self.stated.update((s.fact.relation, s.fact.value_form) for s in found)
        # the works of a list said now, and every name said: each is no news when said again (_part_restated);
        # a leading NUL keeps these keys apart from the whole values above
        self.stated.update(
            (s.fact.relation, "\0" + part) for s in found if s.fact.parts for part in s.fact.parts if part in said.form
        )
        self.stated.update(("", "\0" + said.form[m.start : m.end]) for m in mentions)
        for iri in reversed(named):
            self._bring(iri)
        for stated in found:
            if stated.fact.subject not in named:
                self._bring(stated.fact.subject)
        return found

    def _value_candidates(
        self, said: Surface, candidates: list[str], rank: dict[str, int], mentioned: dict[str, Mention]
    ) -> tuple[list[Candidate], list[Fact]]:
        """The values the message may state (:class:`Candidate`, in the order the rules try them), and the free
        texts to try by overlap. The rules' refusals are kept as reasons rather than dropped when a model
        chooses or candidates are collected; with the rules alone only what they accept is made."""
        broad = self.choice is not None or self.collect is not None
        values: list[Candidate] = []
        texts: list[Fact] = []
        grams = MessageGrams(said.form, self.options.ngram)
        named = sum(1 for iri in candidates if iri in mentioned)
        cues: dict[str, int] = {}
        for subject in candidates:
            leading = rank[subject] == 0 or subject in mentioned
            recency = 1.0 if subject in mentioned else 1.0 / (2 + rank[subject] - named)
            arranged = self.index.subject_facts(subject, self.options.said_most_chars, self.options.ngram)
            for fact in arranged.tried(said.form, mentioned, grams):
                if fact.value_entity is not None and self._not_restated(fact, mentioned):
                    continue  # two entities of one kind named together relate neither; said again, no news
                stated = self._stated(fact, said, mentioned, leading)
                if stated is not None and fact.value_entity is not None and self._part_restated(stated, said):
                    continue
                refused = 0
                if stated is None:
                    if fact.text:
                        texts.append(fact)
                        continue
                    loose = self._stated_loosely(fact, said, mentioned, leading) if broad else None
                    if loose is None:
                        continue
                    stated, reasons = loose
                    refused |= reasons
                if refused and not broad:
                    continue
                cue = cues.get(fact.relation, -1)
                if cue < 0:  # the relations of a message's candidates repeat: each one's name looked for once
                    cue = cues[fact.relation] = _cue(fact.relation, said.form)
                made = Candidate(stated, refused, (-min(cue, 2), -cue, rank[subject]), subject in mentioned, recency)
                made.cue_full = cue == len(form(fact.relation))
                values.append(made)
        return values, texts

    def _stated_loosely(
        self, fact: Fact, said: Surface, mentioned: dict[str, Mention], leading: bool
    ) -> tuple[Stated, int] | None:
        """A value the rules refuse (:meth:`_stated` gave None) said all the same, and why they refuse it: the
        first part of it said, or most of a long literal said (``loose_most`` of its characters)."""
        if fact.value_entity is not None and fact.value_entity in mentioned:
            mention = mentioned[fact.value_entity]  # the subject's own name (_stated refuses it)
            return Stated(fact, said.span(mention.start, mention.end), mention.end - mention.start), SAME_NAME
        for part in fact.parts:
            if len(part) < 2 and not part.isdigit():
                continue  # a single character says nothing
            at = said.form.find(part)
            if at < 0:
                continue
            reasons = 0
            if part in self.index.relation_words and not self._word_is_value(part, mentioned, leading):
                reasons |= NAMES_RELATION
            if len(part) <= self.options.word_chars and not self._word_at(said.form, at, len(part)):
                reasons |= NOT_A_WORD
            if fact.relation in self.index.role_relations and said_of_many(said.form, at, len(part)):
                reasons |= SAID_OF_MANY
            return Stated(fact, said.span(at, at + len(part)), len(part)), reasons
        if not fact.text and fact.value_entity is None and len(fact.value_form) >= self.options.said_most_chars:
            most = self._said_most(fact, said, self.options.loose_most)
            if most is not None:
                return most, MOST_LOOSELY
        return self._said_otherwise(fact, said)

    def _said_otherwise(self, fact: Fact, said: Surface) -> tuple[Stated, int] | None:
        """A literal said by another writing of it (:func:`~kgforge.grounding.facts.other_writings`, longest
        first), not inside a longer number of the message, nor part of a relation's name or of another value of its
        relation said whole (:meth:`_inside_other_value`); one jieba does not cut at both its ends is refused as a
        short value is (``NOT_A_WORD``)."""
        message = said.form
        for writing in other_writings(fact):
            if _in_relation_name(self.index, writing):
                continue  # 门票 of 无需门票, 开放 of 全天开放: the relation named, not its value said
            at = message.find(writing)
            end = at + len(writing)
            while at >= 0 and (
                (at > 0 and writing[0].isdigit() and message[at - 1].isdigit())
                or (end < len(message) and writing[-1].isdigit() and message[end].isdigit())
            ):
                at = message.find(writing, at + 1)
                end = at + len(writing)
            if at < 0 or self._inside_other_value(fact, message, at, end):
                continue
            reasons = OTHER_WRITING
            cut = self.index.segmenter.cut_at
            if not (cut(message, at) and cut(message, end)):
                reasons |= NOT_A_WORD  # inside a longer word of the message, as a short value may be
            return Stated(fact, said.span(at, end), len(writing)), reasons
        return None

    def _inside_other_value(self, fact: Fact, message: str, at: int, end: int) -> bool:
        """Whether a writing said at ``at``-``end`` lies inside another value of its relation that the message says
        whole (中国 of 中国内地 inside 中国大陆: the message says the other value, a word-valued literal of the graph)."""
        return any(
            start <= at and end <= stop and stop - start > end - at and fact.relation in relations
            for start, stop, relations in self.index.literal_automaton.find(message)
        )

    def _choose(
        self,
        candidates: list[Candidate],
        ruled: list[Stated],
        said: Surface,
        groups: dict[tuple[int, int], list[tuple[tuple[int, int, int], Stated, bool]]] | None,
    ) -> list[Stated]:
        """What the message states among ``candidates``: what the rules state (``ruled``), or, with a model, the
        candidates whose probability reaches its threshold. Collected candidates get their features either way.
        ``groups``: the values the rules' filters pass by stretch (:func:`_by_span`); None for the free texts."""
        if (self.choice is None and self.collect is None) or not candidates:
            return ruled
        chosen = {id(s) for s in ruled}
        for candidate in candidates:
            candidate.rule = id(candidate.stated) in chosen
        if groups is None:
            for candidate in candidates:
                candidate.features[0] = 1.0 if candidate.rule else 0.0
        else:
            self._value_features(candidates, {id(min(group, key=_first)[1]) for group in groups.values()}, said)
        stage = None if self.choice is None else self.choice.texts if groups is None else self.choice.values
        if self.collect is not None:
            self.collect.extend(candidates)
        if stage is None:
            return ruled
        return _chosen(stage, candidates)

    def asks(self) -> bool:
        """Whether the message being grounded asks (:func:`questions`), found out once, when first wanted."""
        if self._asks < 0:
            self._asks = 1 if questions(self.current) else 0
        return self._asks == 1

    def asked(self) -> bool:
        """Whether the message before asked."""
        if self._asked < 0:
            self._asked = 1 if questions(self.previous) else 0
        return self._asked == 1

    def _answers(self, relation: str, known: dict[str, float]) -> float:
        """1.0 when the message before named ``relation`` (two characters of its name or more), kept in ``known``."""
        found = known.get(relation)
        if found is None:
            found = known[relation] = 1.0 if _cue(relation, self.previous) >= 2 else 0.0
        return found

    def _value_features(self, candidates: list[Candidate], winners: set[int], said: Surface) -> None:
        """Each value candidate's features (:data:`kgforge.grounding.choice.VALUE_FEATURES`, in that order);
        ``winners``: the ids of the stated values that win their stretch by the rules' order."""
        spans = [c.stated.span for c in candidates]
        at_span: dict[tuple[int, int], int] = {}
        for span in spans:
            at_span[span] = at_span.get(span, 0) + 1
        answered: dict[str, float] = {}  # per relation: the message before named it
        asks, asked = 1.0 if self.asks() else 0.0, 1.0 if self.asked() else 0.0
        message = [log1p(len(said.form)) / 5, log1p(len(candidates)) / 3]
        roles, words, several = self.index.role_relations, self.index.word_relations, len(spans) > 1
        for c in candidates:
            stated = c.stated
            fact, span, said_chars = stated.fact, stated.span, stated.score  # score: the characters said
            value_chars = max(1, len(fact.value_form))
            by_name = fact.value_entity is not None and not fact.parts  # an entity value said by a name of it
            exact = not by_name and stated.whole and said_chars == len(fact.value_form)  # a part as long is the value
            c.features = [
                1.0 if c.rule else 0.0,
                0.0 if c.refused else 1.0,
                1.0 if by_name else 0.0,
                1.0 if exact else 0.0,
                1.0 if stated.whole and not exact and fact.parts else 0.0,
                0.0 if stated.whole else 1.0,
                1.0 if c.refused & OTHER_WRITING else 0.0,
                log1p(said_chars) / 3,
                min(1.0, said_chars / value_chars),
                log1p(value_chars) / 4,
                1.0 if c.named else 0.0,
                1.0 if c.order[2] == 0 or c.named else 0.0,
                c.recency,
                1.0 if fact.subject in self.topics else 0.0,
                1.0 if c.refused & SAME_NAME else 0.0,
                -c.order[0] / 2,
                1.0 if c.cue_full else 0.0,
                1.0 if (fact.relation, fact.value_form) in self.stated else 0.0,
                1.0 if c.refused & NOT_A_WORD else 0.0,
                1.0 if c.refused & SAID_OF_MANY else 0.0,
                1.0 if c.refused & NAMES_RELATION else 0.0,
                1.0 if id(stated) in winners else 0.0,
                log1p(at_span[span] - 1),
                1.0 if several and any(_inside(span, other) for other in spans) else 0.0,
                1.0 if fact.relation in roles else 0.0,
                1.0 if fact.relation in words else 0.0,
                1.0 if _numbers_in(fact.value_form) else 0.0,
                asks,
                self._answers(fact.relation, answered),
                asked,
                *message,
            ]

    def _stated(self, fact: Fact, said: Surface, mentioned: dict[str, Mention], leading: bool) -> Stated | None:
        if fact.value_entity is not None and fact.value_entity in mentioned:
            mention = mentioned[fact.value_entity]
            if mentioned.get(fact.subject) is mention:
                return None  # one name, two entities (the album 孙燕姿 and its singer): it relates nothing
            return Stated(fact, said.span(mention.start, mention.end), mention.end - mention.start)
        for part in fact.parts:
            if (len(part) < 2 and not part.isdigit()) or (
                part in self.index.relation_words and not self._word_is_value(part, mentioned, leading)
            ):
                continue  # 导演 said is the relation (导演是…), not someone's occupation
            at = said.form.find(part)
            while at >= 0 and (
                (len(part) <= self.options.word_chars and not self._word_at(said.form, at, len(part)))
                or (fact.relation in self.index.role_relations and said_of_many(said.form, at, len(part)))
            ):
                at = said.form.find(part, at + 1)
            if at >= 0:
                return Stated(fact, said.span(at, at + len(part)), len(part))
        if not fact.text and fact.value_entity is None and len(fact.value_form) >= self.options.said_most_chars:
            return self._said_most(fact, said)
        return None

    def _word_is_value(self, word: str, mentioned: dict[str, Mention], leading: bool) -> bool:
        """A word that names a relation (导演) is a value (an occupation) of the subject the message is about
        (named, or first in focus: 他还是导演) when the message names no value of that relation (导演是李安)."""
        return leading and not any(
            form(relation) == word for iri in mentioned for relation in self.index.value_relations(iri)
        )

    def _word_at(self, message: str, at: int, size: int) -> bool:
        """Whether a short value found at ``at`` begins a word of the message (演员 in 最佳女演员奖 is not the
        occupation; 爱情 in 爱情片 is the genre): jieba must cut the message where it begins."""
        return self.index.segmenter.cut_at(message, at)

    def _said_most(self, fact: Fact, said: Surface, share: float = -1.0) -> Stated | None:
        """A literal of some length (an award with its year, an address) is stated when ``said_most`` (or
        ``share``) of its characters are in runs of ``ngram`` - 1 characters that the message says too."""
        share = self.options.said_most if share < 0 else share
        n = self.options.ngram - 1
        value, message = fact.value_form, said.form
        if not _numbers_in(value) <= _numbers_in(message):
            return None  # 第24届 is not 第12届: most of a value said, and all of its numbers
        grams = _grams(message, n)
        hits = [i for i in range(len(value) - n + 1) if value[i : i + n] in grams]
        if len(hits) * n < share * len(value):
            return None  # too few runs in common even if none overlapped: the usual case, decided cheaply
        covered = [False] * len(value)
        for i in hits:
            covered[i : i + n] = [True] * n
        if sum(covered) < share * len(value):
            return None
        found = [at for at in (message.find(value[i : i + n]) for i in hits) if at >= 0]
        return Stated(fact, said.span(min(found), max(found) + n), sum(covered), whole=False)

    def _texts(
        self,
        facts: list[Fact],
        said: Surface,
        mentions: list[Mention],
        found: list[Stated],
        rank: dict[str, int],
        stated_relations: set[str],
    ) -> tuple[list[Candidate], list[Stated]]:
        """The free texts the message may state by overlap (candidates) and those the rules state: one per
        relation (the best overlap), none of a relation a value stated has, with the names the message says and
        the values stated masked (a name shared with a text is no overlap)."""
        if not facts:
            return [], []  # the usual message: no free text shares a run with it
        broad = self.choice is not None or self.collect is not None
        masked = [False] * len(said.form)
        for start, end in [(m.start, m.end) for m in mentions] + [form_span(said, s.span) for s in found]:
            for i in range(start, end):
                masked[i] = True
        asking = [False] * len(said.form)
        for start, end in questions(said.form):
            asking[start:end] = [True] * (end - start)
        size = message_size(said, masked)
        best: dict[str, tuple[tuple[float, int], Stated]] = {}
        named = {iri for m in mentions for iri in m.entities}
        leading = len(named)  # the names said, and the first in focus
        made: list[tuple[Candidate, int]] = []  # each candidate and how it was found (_BY_RUNS, _SAID_WHOLE…)
        for fact in facts:
            if fact.relation in stated_relations:
                continue  # a relation the message states by a value is not stated by a text too
            measured = overlap_measure(fact, said, masked, self.options.ngram, asking)
            stated = None
            kind = _BY_RUNS
            if measured is not None and (measured.whole or enough_overlap(measured.stated, size, self.options)):
                stated, kind = measured.stated, _SAID_WHOLE if measured.whole else _BY_RUNS
            if stated is None and rank[fact.subject] <= leading:
                stated, kind = self._short_span(fact, said, found)
            if stated is not None:
                order = (-stated.score, rank[fact.subject])
                if fact.relation not in best or order < best[fact.relation][0]:
                    best[fact.relation] = (order, stated)
            chosen = stated if stated is not None else None if measured is None else measured.stated
            if broad and chosen is not None:
                subject = fact.subject
                recency = 1.0 if subject in named else 1.0 / (2 + rank[subject] - leading)
                made.append((Candidate(chosen, 0, (0, 0, rank[subject]), subject in named, recency), kind))
        ruled = [stated for _, stated in best.values()]
        return self._text_features(made, said, asking, size), ruled

    def _text_features(
        self,
        made: list[tuple[Candidate, int]],
        said: Surface,
        asking: list[bool],
        size: int,
    ) -> list[Candidate]:
        """Each text candidate with its features (:data:`kgforge.grounding.choice.TEXT_FEATURES`, in order)."""
        size = max(1, size)
        best: dict[str, tuple[float, int]] = {}
        for c, _ in made:
            order = (-c.stated.score, c.order[2])
            relation = c.stated.fact.relation
            best[relation] = min(best.get(relation, order), order)
        asked = sum(asking) / max(1, len(said.form))
        message = [
            asked,
            1.0 if asked else 0.0,
            1.0 if self.asked() else 0.0,
            log1p(len(said.form)) / 5,
        ]
        for c, kind in made:
            c.text = True
            fact = c.stated.fact
            c.features = [
                0.0,  # the rules' verdict, set once the candidates are chosen among (_choose)
                log1p(c.stated.score) / 3,
                1.0 if kind == _SAID_WHOLE else min(1.0, c.stated.score / size),
                1.0 if kind == _SAID_WHOLE else 0.0,
                1.0 if kind == _BY_TITLE else 0.0,
                1.0 if kind == _BY_YEAR else 0.0,
                0.0 if form(fact.relation) in self.index.text_relation_names else 1.0,
                1.0 if best[fact.relation] == (-c.stated.score, c.order[2]) else 0.0,
                1.0 if c.named else 0.0,
                1.0 if c.order[2] == 0 or c.named else 0.0,
                c.recency,
                1.0 if fact.subject in self.topics else 0.0,
                1.0 if (fact.relation, fact.value_form) in self.stated else 0.0,
                *message,
            ]
        return [c for c, _ in made]

    def _short_span(self, fact: Fact, said: Surface, found: list[Stated]) -> tuple[Stated | None, int]:
        """The free text ``fact`` stated by a 《title》 or a year of it that the message says (see
        :func:`title_in_text`), and which (``_BY_TITLE``, ``_BY_YEAR``); what explains them is gathered only when the
        message could say one."""
        if "《" not in fact.value and not _YEAR.search(said.form):
            return None, _BY_RUNS
        explained = [f(s) for s in found for f in (lambda s: s.fact.value_form, self._subject_form)] + [
            other.value_form for other in self.index.facts_of.get(fact.subject, ()) if not other.text
        ]
        stated = title_in_text(fact, said, explained, self._subject_form(fact), self.options.ngram)
        if stated is not None:
            return stated, _BY_TITLE
        stated = year_in_text(fact, said, explained)
        return stated, _BY_YEAR if stated is not None else _BY_RUNS

    def _subject_form(self, stated: Stated | Fact) -> str:
        fact = stated.fact if isinstance(stated, Stated) else stated
        return form(strip_qualifier(self.index.label(fact.subject)))


def overlap(
    fact: Fact, said: Surface, masked: list[bool], options: MatchOptions, asking: list[bool] | None = None
) -> Stated | None:
    """Whether ``said`` states the free text ``fact`` (see the module docstring), ``masked`` characters left out;
    ``asking`` characters (a question's, see :func:`questions`) count in the message's size but cover nothing."""
    measured = overlap_measure(fact, said, masked, options.ngram, asking)
    if measured is not None and (
        measured.whole or enough_overlap(measured.stated, message_size(said, masked), options)
    ):
        return measured.stated
    return None


class Overlap(NamedTuple):
    """A stretch of a message that runs of a free text cover (:func:`overlap_measure`)."""

    stated: Stated  # its score: the characters covered, or the text's length when it is said whole
    whole: bool  # the whole text said


def overlap_measure(
    fact: Fact, said: Surface, masked: list[bool], n: int, asking: list[bool] | None = None
) -> Overlap | None:
    """The stretch of ``said`` covered by runs of ``n`` characters of the free text ``fact`` (``masked``
    characters, punctuation and ``asking`` ones cover nothing); None when they cover fewer than ``n``."""
    message = said.form
    whole = message.find(fact.value_form) if len(fact.value_form) >= n else -1
    if whole >= 0:  # a short text said whole (永远的最爱) is stated however short
        return Overlap(Stated(fact, said.span(whole, whole + len(fact.value_form)), len(fact.value_form)), True)
    covered = [False] * len(message)
    for i in range(len(message) - n + 1):
        if message[i : i + n] in fact.value_form:
            for j in range(i, i + n):
                covered[j] = True
    if asking is not None:
        covered = [c and not a for c, a in zip(covered, asking)]
    count = sum(1 for i, c in enumerate(covered) if c and not masked[i] and not _PUNCTUATION.match(message[i]))
    if count < n:
        return None
    first = covered.index(True)
    last = len(covered) - covered[::-1].index(True)
    return Overlap(Stated(fact, said.span(first, last), count), False)


def message_size(said: Surface, masked: list[bool]) -> int:
    """A message's characters that overlap with a free text is measured against (masked ones and punctuation
    left out)."""
    return sum(1 for i, ch in enumerate(said.form) if not masked[i] and not _PUNCTUATION.match(ch))


def enough_overlap(stated: Stated, size: int, options: MatchOptions) -> bool:
    """Whether the characters a free text covers state it: ``overlap_chars`` of them, or ``overlap_share`` of
    the message's ``size``."""
    return stated.score >= options.overlap_chars or stated.score >= options.overlap_share * size


_CLAUSE_END = re.compile(r"[,.;:!?。、…]")
_MANY_BEFORE = re.compile(r"都是|全是|这些|那些|一些|些|很多|许多|不少|[两三四五六七八九十几多]个|各位|哪")


def said_of_many(message: str, at: int, size: int) -> bool:
    """Whether a role (演员, 导演) found at ``at`` is said of a group or of someone asked for: a quantifier or 哪
    earlier in its clause (都是实力派演员, 这三个演员, 很多好演员, 哪个英国演员) or 们 after it. Such a role is no
    fact of one person: KdConv's annotators give a 职业 only when one is said to have it (他也是一名演员)."""
    clause = _CLAUSE_END.split(message[:at])[-1]
    return bool(_MANY_BEFORE.search(clause)) or message[at + size : at + size + 1] == "们"


_CLAUSE = re.compile(r"[^,;:!?。，；：！？]*[,;:!?。，；：！？]?")
_ASKING = re.compile(r"什么|啥|哪|谁|几|多少|多大|多长|怎么|怎样|如何|吗|呢")


def questions(message: str) -> list[tuple[int, int]]:
    """The clauses of a message (matching form) that ask (end in ? and hold a question word or 吗/呢: 第一张专辑叫
    什么?, 知道是哪年发行的吗?): their words are the asker's, not a citation of a free text, however many of
    them the text shares. A clause that states and asks to confirm (…改编而来的吧?) is no question."""
    found: list[tuple[int, int]] = []
    if "?" not in message and "？" not in message:
        return found  # most messages: no clause ends in a question mark
    for match in _CLAUSE.finditer(message):
        clause = match[0]
        if clause.endswith(("?", "？")) and _ASKING.search(clause):
            found.append((match.start(), match.end()))
    return found


_TITLE = re.compile(r"《([^《》]+)》")


def title_in_text(fact: Fact, said: Surface, explained: list[str], own: str, shortest: int) -> Stated | None:
    """A free text is stated by a work it names in 《》 that the message names too (执导过《出水芙蓉》、《魂断蓝桥》:
    他执导的魂断蓝桥): speakers cite one title from an entity's text, far below the overlap threshold. Not the
    subject's own title (《阿甘正传》是… opens the film's own text), and not a title that another fact explains —
    one the message states (its value, or its subject: 《可可西里》上映…), or a value of the subject's own
    (a 代表作品 said before in the dialogue): annotators cite that fact instead. ``explained``: those values and
    subjects in matching form; ``own``: the subject's name. A title of ``shortest`` (the n-gram) characters or more, so that the run it shares with the text has the
    fact tried."""
    for title in dict.fromkeys(form(t) for t in _TITLE.findall(fact.value)):
        if len(title) < shortest or title in own or own in title:
            continue
        at = said.form.find(title)
        if at < 0 or any(title in other for other in explained):
            continue
        return Stated(fact, said.span(at, at + len(title)), len(title))
    return None


_YEAR = re.compile(r"(?<!\d)(\d{4})年")


def year_in_text(fact: Fact, said: Surface, explained: list[str]) -> Stated | None:
    """A free text is stated by a year it gives that the message says (1994年。 of …1994年在红星生产社发行第一张专辑):
    a year is a short but distinctive span, and speakers answer with it alone. Not a year that another fact
    explains (a 出生日期 or 发行时间 of the subject, a value the message states), as for titles."""
    for match in _YEAR.finditer(said.form):
        year = match[1]
        if match[0] in fact.value_form and not any(year in other for other in explained):
            return Stated(fact, said.span(match.start(), match.end()), len(match[0]))
    return None


def _by_span(values: list[Candidate]) -> dict[tuple[int, int], list[tuple[tuple[int, int, int], Stated, bool]]]:
    """The candidates the rules' filters pass, by the stretch of the message they are said at, each with its
    order at that stretch (the relation the message names most of, then the subject first in focus) and whether
    the message names its relation whole."""
    at_span: dict[tuple[int, int], list[tuple[tuple[int, int, int], Stated, bool]]] = {}
    for c in values:
        if not c.refused:
            at_span.setdefault(c.stated.span, []).append((c.order, c.stated, c.cue_full))
    return at_span


def _first(item: tuple[tuple[int, int, int], Stated, bool]) -> tuple[int, int, int]:
    return item[0]


def _chosen(stage: Stage, candidates: list[Candidate]) -> list[Stated]:
    """The candidates whose probability reaches the stage's threshold, each once (a fact found at two stretches
    is stated once), with its probability as its confidence."""
    kept: list[Stated] = []
    seen: set[tuple[str, str, str]] = set()
    best: dict[tuple[int, int], float] = {}
    for c in candidates:
        c.probability = probability(stage.weights, stage.bias, c.features)
        best[c.stated.span] = max(best.get(c.stated.span, 0.0), c.probability)
    for c in candidates:
        fact = c.stated.fact
        key = (fact.subject, fact.relation, fact.value)
        if c.probability < best[c.stated.span] and not c.rule:
            continue  # one stretch states one fact: the likeliest (and what the rules state there, see _at_one_span)
        if c.probability >= stage.threshold and key not in seen:
            seen.add(key)
            stated = c.stated
            kept.append(Stated(stated.fact, stated.span, stated.score, stated.whole, c.probability))
    return kept


def _inside(span: tuple[int, int], other: tuple[int, int]) -> bool:
    """Whether ``span`` lies inside the longer ``other``."""
    return other[0] <= span[0] and span[1] <= other[1] and other[1] - other[0] > span[1] - span[0]


def _at_one_span(facts: list[tuple[tuple[int, int, int], Stated, bool]]) -> list[Stated]:
    """The fact one stretch of a message states: the relation the message names most of, then the subject
    first in focus. When the message names the winner's relation in full, the same subject's other relations
    it names in full that hold the same value are stated too (它的编剧和导演都是陆川)."""
    _, winner, named = min(facts, key=lambda f: f[0])
    if not winner.whole:  # values said together, their common words once: 第3/7/11/12届香港电影金像奖最佳动作指导提名
        return [winner] + [
            s
            for _, s, _ in facts
            if not s.whole
            and s is not winner
            and (s.fact.subject, s.fact.relation) == (winner.fact.subject, winner.fact.relation)
        ]
    if not named:
        return [winner]
    return [winner] + [s for _, s, full in facts if full and s is not winner and s.fact.subject == winner.fact.subject]


def _outermost(found: list[Stated]) -> list[Stated]:
    """The facts whose stretch of the message is not inside a longer one's: 美国 in 美国马萨诸塞州波士顿 (a
    birthplace) or in 第14届美国电影电视金球奖 (an award) is part of that value, not a nationality."""
    return [
        s
        for s in found
        if not any(
            o.span[0] <= s.span[0]
            and s.span[1] <= o.span[1]
            and o.span[1] - o.span[0] > s.span[1] - s.span[0]
            and not _coordinated(o, s)
            for o in found
        )
    ]


def _coordinated(outer: Stated, inner: Stated) -> bool:
    """Two values of one relation said together, the outer by most of its characters, their common words once
    (第64届、74届奥斯卡奖最佳男配角提名; 第22届香港电影金像奖最佳电影奖、最佳男主角奖, the first said whole): the
    longer stretch does not hide the other."""
    return not outer.whole and (outer.fact.subject, outer.fact.relation) == (inner.fact.subject, inner.fact.relation)


@lru_cache(maxsize=1 << 12)
def _grams(text: str, n: int) -> frozenset[str]:
    return frozenset(text[i : i + n] for i in range(len(text) - n + 1))


@lru_cache(maxsize=1 << 16)
def _numbers_in(text: str) -> frozenset[str]:
    return frozenset(_NUMBERS.findall(text))


def _cue(relation: str, message: str) -> int:
    """How much of a relation's name the message says (原唱 of 歌曲原唱): among the facts one value could
    state, the relation the message names wins."""
    name = form(relation)
    for size in range(len(name), 0, -1):  # the longest first: the first size said is the most
        for i in range(len(name) - size + 1):
            if name[i : i + size] in message:
                return size
    return 0


def _said_part(stated: Stated, said: Surface) -> str:
    """The stretch of the message (matching form) that states a fact."""
    start, end = form_span(said, stated.span)
    return said.form[start:end]


def form_span(said: Surface, span: tuple[int, int]) -> tuple[int, int]:
    """The span of ``said.form`` that the text span ``span`` became."""
    first, end = bisect_left(said.origin, span[0]), bisect_left(said.origin, span[1])  # origin never decreases
    return (first, end) if first < end else (0, 0)


# ---------------------------------------------------------------- claims

_AMOUNT = re.compile(
    r"(\d+(?:\.\d+)?)(:\d{2})?(美元|欧元|英镑|日元|港币|港元|人民币|元|块|小时|分钟|天|年前|米|公里|cm|厘米|kg|公斤|号|届|万|亿|%)?"
)
_UNIT_FAMILY = {
    "美元": "money",
    "欧元": "money",
    "英镑": "money",
    "日元": "money",
    "港币": "money",
    "港元": "money",
    "人民币": "money",
    "元": "money",
    "块": "money",
    "小时": "time",
    "分钟": "time",
    "天": "time",
    ":": "clock",
    "年前": "ago",
    "米": "length",
    "公里": "length",
    "cm": "height",
    "厘米": "height",
    "kg": "weight",
    "公斤": "weight",
    "号": "number",
    "届": "edition",
    "万": "amount",
    "亿": "amount",
    "%": "share",
    "#": "digits",
    ".": "decimal",
}
COUNTER = "counter:"  # the family of a number counted by a counter of the graph's (counter:首, ``counted_by``)
_SAME_UNIT = {"块": "元", "人民币": "元", "港元": "港币", "厘米": "cm", "公斤": "kg"}


def amounts(form_text: str) -> list[tuple[int, int, str, str]]:
    """``(start, end, number, unit)`` of each number with a unit in a matching form (``9:00`` has unit ``:``; a
    bare whole number of three digits or more, a year or a price, has unit ``#``; a bare fraction, a rating,
    has unit ``.``). The number is written
    without leading zeros or a fraction's trailing ones (1250.0万 is 1250万)."""
    found = []
    for match in _AMOUNT.finditer(form_text):
        whole, _, fraction = match[1].partition(".")
        fraction = fraction.rstrip("0")
        unit = ":" if match[2] else match[3] or ("." if "." in match[1] else "#" if len(whole) >= 3 else "")
        number = (whole.lstrip("0") or "0") + ("." + fraction if fraction else "")
        if match[2]:
            number += match[2]
        found.append((match.start(), match.end(), number, _SAME_UNIT.get(unit, unit)))
    return found


@lru_cache(maxsize=1 << 16)
def _value_amounts(value_form: str) -> tuple[tuple[str, str], ...]:
    """``(number, unit)`` of each amount in a value (matching form), kept: the values of the entities in focus
    are checked again for every message that says a number."""
    return tuple((number, unit) for _, _, number, unit in amounts(value_form))


class FocusFacts:
    """What the claims ask of an entity in focus, gathered once a dialogue: its literal facts (free text left
    out) with their values' forms, and its facts per unit family. A dialogue's focus changes little from
    message to message, so each entity's facts are gone through once a dialogue, not once a message."""

    def __init__(self, index: GroundingIndex, facts_of: Mapping[str, list[Fact]] | None = None) -> None:
        self.index = index
        # an entity's facts: the graph's (KdConv), or a session's own knowledge by subject (DuConv, DuRecDial)
        self.facts_of: Mapping[str, list[Fact]] | FactTable = index.facts_of if facts_of is None else facts_of
        self._literals: dict[str, tuple[list[Fact], list[str]]] = {}
        self._families: dict[str, list[tuple[Fact, frozenset[str | None]]]] = {}
        self._values: dict[str, EntityValues] = {}

    def values(self, iri: str) -> EntityValues:
        """``index.entity_values(iri)``, kept for the dialogue: a message's claims ask it of every entity in
        focus for every name the message says, and the index's own cache costs more to ask."""
        made = self._values.get(iri)
        if made is None:
            made = self._values[iri] = self.index.entity_values(iri)
        return made

    def literals(self, iri: str) -> tuple[list[Fact], list[str]]:
        """``iri``'s facts with a literal value that is no free text, in order, and those values' forms."""
        made = self._literals.get(iri)
        if made is None:
            facts = [f for f in self.facts_of.get(iri, ()) if f.value_entity is None and not f.text]
            made = self._literals[iri] = (facts, [f.value_form for f in facts])
        return made

    def with_family(self, iri: str, family: str) -> list[Fact]:
        """``iri``'s list-matched facts (free text left out) with an amount of the unit ``family``, in order."""
        families = self._families.get(iri)
        if families is None:
            counted_by = self.index.counted_by
            families = self._families[iri] = [
                (
                    f,
                    frozenset(_UNIT_FAMILY.get(u) for _, _, _, u in amounts(f.value_form))
                    | {COUNTER + unit for unit in counted_by.get(f.relation, ())},
                )
                for f in self.facts_of.get(iri, ())
                if f.parts
            ]
        return [f for f, found in families if family in found]


def claims(
    index: GroundingIndex,
    found: list[Stated],
    mentions: list[Mention],
    said: Surface,
    candidates: list[str],
    focus: FocusFacts | None = None,
    broad: bool = False,
) -> list[Claim]:
    """Every fact stated is a supported claim; a number with a unit is contradicted when the first entity in
    focus with values of that unit's family holds none of it (unsupported when none has such values); an
    entity named beside a relation of the subject's whose values it could be, but is not, is contradicted.
    ``focus``: the dialogue's :class:`FocusFacts` (a message alone makes its own). ``broad``: also the words the
    rules refuse (:func:`literal_claims`), for the claims stage to weigh."""
    focus = FocusFacts(index) if focus is None else focus
    out = [
        Claim(
            s.fact.subject,
            s.fact.relation,
            said.text[s.span[0] : s.span[1]],
            s.span,
            (s.fact.value,),
            "supported",
            s.confidence,
        )
        for s in found
    ]
    if not candidates:
        return out
    out += amount_claims(
        focus, said, candidates, [s.fact.value_form for s in found], [(m.start, m.end) for m in mentions]
    )
    inside = [s.span for s in found]
    named = [m for m in mentions if not any(a <= said.span(m.start, m.end)[0] < b for a, b in inside)]
    out += _entity_claims(
        focus, named, said, candidates, {s.fact.value_entity for s in found} | {s.fact.subject for s in found}
    )
    taken = [(m.start, m.end) for m in mentions] + [form_span(said, s.span) for s in found]
    out += numbered_claims(focus, said, candidates, [(m.start, m.end) for m in mentions])
    return out + literal_claims(focus, said, candidates, taken, broad)


def numbered_claims(
    focus: FocusFacts, said: Surface, candidates: list[str], names: list[tuple[int, int]]
) -> list[Claim]:
    """The words of a numbered value of the graph said with numbers none of those values holds (第70届奥斯卡最佳男
    主角奖 where the graph holds 第64届 and 第55届 of it: :attr:`GroundingIndex.numbered_automaton`), outside the
    names said: ``contradicted``, against the first entity in focus holding one of those values (the words say
    which value is meant). None when no entity in focus holds one: a graph made of dialogues' attrs holds few of
    the awards a person won, and one said of someone out of focus is mostly one the graph lacks."""
    if not _NUMBERS.search(said.form):
        return []
    masked, origin = _numbers_masked(said.form)
    out = []
    for start, stop, values in focus.index.numbered_automaton.find(masked):
        first, end = origin[start], origin[stop]
        text = said.form[first:end]
        if any(form(value) == text for _, value in values) or any(first < b and a < end for a, b in names):
            continue
        held = set(values)
        subject = next(
            (iri for iri in candidates if any((f.relation, f.value) in held for f in focus.literals(iri)[0])), None
        )
        if subject is None:
            continue  # no one in focus holds those words: an award of someone the dialogue is not about
        span = said.span(first, end)
        out.append(
            Claim(
                subject,
                values[0][0],
                said.text[span[0] : span[1]],
                span,
                tuple(value for _, value in values),
                "contradicted",
                kind="numbered",
            )
        )
    return out


def _numbers_masked(text: str) -> tuple[str, list[int]]:
    """``text`` with each run of digits made one ``#``, and where each of its characters (and its end) was."""
    masked: list[str] = []
    origin: list[int] = []
    at = 0
    for match in _NUMBERS.finditer(text):
        masked += text[at : match.start()]
        origin += range(at, match.start())
        masked.append("#")
        origin.append(match.start())
        at = match.end()
    masked += text[at:]
    origin += range(at, len(text) + 1)
    return "".join(masked), origin


def amount_claims(
    focus: FocusFacts, said: Surface, candidates: list[str], stated: list[str], names: list[tuple[int, int]]
) -> list[Claim]:
    """Each number with a unit said (``amounts``) that no value stated holds (``stated``: their matching forms)
    and that is no part of a name said (``names``: spans of the matching form; 798 of 798艺术区):
    ``contradicted`` when the first entity in focus with values of that unit's family holds none of it, with
    those values; ``unsupported`` when no entity in focus has such values."""
    said_amounts = amounts(said.form)
    if not said_amounts:
        return []
    stated_amounts = {pair for value in stated for pair in _value_amounts(value)}
    out = []
    for start, end, number, unit in said_amounts:
        family = _UNIT_FAMILY.get(unit) if unit else counter_family(focus.index, said.form, end)
        if family is None or (number, unit) in stated_amounts or any(start < b and a < end for a, b in names):
            continue
        span = said.span(start, end)
        subject, held = _holder(focus, candidates, family)
        if subject is not None and any((number, unit) in _value_amounts(f.value_form) for f in held):
            continue
        out.append(
            Claim(
                subject or candidates[0],
                held[0].relation if held else None,
                said.text[span[0] : span[1]],
                span,
                tuple(f.value for f in held),
                "contradicted" if held else "unsupported",
                kind="amount",
            )
        )
    return out


def counter_family(index: GroundingIndex, form_text: str, end: int) -> str | None:
    """The family of a small bare number followed by one of the graph's counters (15首: ``counted_by``), else
    None (a bare number of two digits alone is no amount)."""
    after = form_text[end : end + 1]
    if after and any(after in units for units in index.counted_by.values()):
        return COUNTER + after
    return None


def literal_claims(
    focus: FocusFacts, said: Surface, candidates: list[str], taken: list[tuple[int, int]], broad: bool = False
) -> list[Claim]:
    """A short literal said as a word (法国, 科幻), outside the names and the facts stated, that is a value of
    a relation elsewhere in the graph: ``contradicted`` when the first entity in focus with values of that
    relation holds other ones and no entity in focus holds it (a value of someone else in focus is said of
    them, not against the subject; 1958 of 1958-4-29 agrees). ``broad``: also one jieba does not cut as a word
    (巴西 of 巴西人, 战争 of 战争片), marked ``refused``: the rules leave it, the claims stage weighs it."""
    index = focus.index
    out: list[Claim] = []
    is_cut: Callable[[int], bool] | None = None
    for start, stop, relations in index.literal_automaton.find(said.form):
        if any(start < b and a < stop for a, b in taken):
            continue
        word = said.form[start:stop]
        if any(_holds(value, word) for iri in candidates for value in focus.literals(iri)[1]):
            continue
        subject, held = _literal_holder(focus, candidates, relations)
        if subject is None:
            continue
        is_cut = message_cut_at(index, said) if is_cut is None else is_cut
        refused = not (is_cut(start) and is_cut(stop))
        if refused and not broad:
            continue  # 科幻 inside 科幻片 is no genre said, for the rules
        span = said.span(start, stop)
        out.append(
            Claim(
                subject,
                held[0].relation,
                said.text[span[0] : span[1]],
                span,
                tuple(f.value for f in held),
                "contradicted",
                kind="word",
                refused=refused,
            )
        )
    return out


def _holds(value_form: str, word: str) -> bool:
    """Whether a literal value (matching form) holds ``word``, or ``word`` it."""
    return word in value_form or value_form in word


def _literal_holder(
    focus: FocusFacts, candidates: list[str], relations: frozenset[str]
) -> tuple[str | None, list[Fact]]:
    """The first entity in focus with literal values of one of ``relations``, and those facts (one relation)."""
    for subject in candidates:
        held = [f for f in focus.literals(subject)[0] if f.relation in relations]
        if held:
            first = held[0].relation
            return subject, [f for f in held if f.relation == first]
    return None, []


def _holder(focus: FocusFacts, candidates: list[str], family: str) -> tuple[str | None, list[Fact]]:
    """The first entity in focus with values of a unit family (money, clock…), and those facts (free text
    left out: a number in a story is no value of the entity)."""
    for subject in candidates:
        held = focus.with_family(subject, family)
        if held:
            return subject, held
    return None, []


def _entity_claims(
    focus: FocusFacts, mentions: list[Mention], said: Surface, candidates: list[str], stated: set[str | None]
) -> list[Claim]:
    index = focus.index
    out = []
    for mention in mentions:
        if len(mention.entities) != 1:
            continue
        entity = mention.entities[0]
        if entity in candidates[:1] or entity in stated:
            continue
        subject, against = _entity_holder(focus, candidates, entity)
        # the tests that cost more after the cheap one: the facts of every entity in focus, then jieba, are
        # asked only of a name that would be claimed against the subject
        if (
            not against
            or any(entity in focus.values(iri).related for iri in candidates)
            or _doubtful(index, said.form, mention)
        ):
            continue
        span = said.span(mention.start, mention.end)
        out += [
            Claim(
                subject,
                relation,
                said.text[span[0] : span[1]],
                span,
                labels,
                "contradicted",
                kind="entity",
            )
            for relation, labels in against
        ]
    return out


def _entity_holder(
    focus: FocusFacts, candidates: list[str], entity: str
) -> tuple[str, list[tuple[str, tuple[str, ...]]]]:
    """The first entity in focus (``entity`` itself left out) with entity values of ``entity``'s kind — a class in
    common with them, or a relation ``entity`` is a value of somewhere in the graph — and those relations with
    their values' labels (none: the first in focus, nothing to check against). As amounts and words are checked
    against the first entity in focus with values of their kind, not the first in focus alone."""
    index = focus.index
    kinds, value_of = index.types_of.get(entity, _NO_CLASSES), index.value_relations(entity)
    for subject in candidates:
        if subject != entity:
            against = focus.values(subject).against(kinds, value_of)
            if against:
                return subject, against
    return candidates[0], []


def _in_relation_name(index: GroundingIndex, said: str) -> bool:
    """Whether what a claim says is part of the name of a relation of the domain (制片 of 制片人, 制片地区): said
    where the message names the relation, not as a value."""
    return any(said in name for name in index.relation_words)


def _doubtful(index: GroundingIndex, message: str, mention: Mention) -> bool:
    """A name that is also an ordinary word (动物园, 公园: jieba's own dictionary gives it ``COMMON_WORD_FREQ`` or
    more, as it does the best-known places, 故宫), or that is part of a longer word of the message (游乐场
    inside 儿童游乐场), does not name the place for certain."""
    name = message[mention.start : mention.end]
    if index.segmenter.dictionary_frequency(name) >= COMMON_WORD_FREQ:
        return True
    return len(name) <= 3 and not _is_word(index, message, mention)  # a longer name is rarely inside a word


def _is_word(index: GroundingIndex, message: str, mention: Mention) -> bool:
    cut_at = index.segmenter.cut_at
    return cut_at(message, mention.start) and cut_at(message, mention.end)


def word_cuts(said: Surface) -> set[int]:
    """Positions of the matching form where a word of the segmented text begins or ends (a space, or any
    dropped character, stood there)."""
    cuts = {0, len(said.form)}
    origin = said.origin
    for i in range(1, len(said.form)):
        if origin[i] != origin[i - 1] + 1:
            cuts.add(i)
    return cuts


_SEGMENTED = re.compile(r"[\u4e00-\u9fff] [\u4e00-\u9fff]")


def message_cuts(index: GroundingIndex, said: Surface) -> set[int]:
    """A message's word boundaries: its spaces when it is word-segmented (DuConv), else jieba's cuts."""
    return word_cuts(said) if _SEGMENTED.search(said.text) else jieba_cuts(index, said.form)


def message_cut_at(index: GroundingIndex, said: Surface) -> Callable[[int], bool]:
    """Whether a position is in :func:`message_cuts`, the message cut only around the positions asked."""
    if _SEGMENTED.search(said.text):
        return word_cuts(said).__contains__
    return partial(index.segmenter.cut_at, said.form)


def jieba_cuts(index: GroundingIndex, message: str) -> set[int]:
    """Where jieba (the graph's names in its dictionary) cuts the message's matching form."""
    return index.segmenter.cut_positions(message)


def as_claim(index: GroundingIndex, claim: Claim) -> JsonObject:
    """A claim as grounded files write it (``name``: the subject's label)."""
    return {
        "name": index.label(claim.subject),
        "attrname": claim.relation,
        "said": claim.said,
        "span": list(claim.span),
        "graph": list(claim.graph),
        "status": claim.status,
        "score": round(claim.score, 4),
    }
