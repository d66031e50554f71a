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

**Claims.** Every fact stated is a ``supported`` claim. Each number with a unit (``40元``, ``9:00``,
``3小时``, a bare number of 3+ digits) is checked against the first entity in focus that has values of that
unit's family (free text left out): ``contradicted`` (with those values) when none holds that number with
that unit, ``unsupported`` when no entity in focus has such values. An entity named outside the facts
stated, related to nothing in focus but of the kind of the subject's values for an entity relation, is
``contradicted`` for it, unless its name is an ordinary word (jieba) or, short, inside a longer word. A
short literal of a word-valued relation (``GroundingIndex.literal_automaton``: 国家, 类型) said as a word,
outside the names and facts stated, is ``contradicted`` when the first entity in focus with values of that
relation holds others and no entity in focus holds it.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Any, NamedTuple

from kgforge.grounding.facts import EntityValues, Fact, MessageGrams
from kgforge.grounding.index import FactTable, GroundingIndex, strip_qualifier
from kgforge.grounding.normalise import Surface, form, surface

_PUNCTUATION = re.compile(r"[\W_]", re.UNICODE)
_NUMBERS = re.compile(r"\d+")
_NO_CLASSES: frozenset[str] = frozenset()
COMMON_WORD_FREQ = 100  # jieba frequency from which a name is an ordinary word first


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


class Claim(NamedTuple):  # a tuple: made for every fact stated and every value said
    """What a message says of an entity (``relation`` None: no fact of that kind to check) and its status."""

    subject: str
    relation: str | None
    said: str
    span: tuple[int, int]
    graph: tuple[str, ...]
    status: str  # supported | contradicted | unsupported


class DialogueMatcher:
    """Grounds one dialogue's messages in order (focus carries over from message to message)."""

    def __init__(self, index: GroundingIndex, topics: list[str], options: MatchOptions = DEFAULT_OPTIONS) -> None:
        self.index, self.options = index, options
        self.focus: list[str] = []
        for topic in topics:
            for iri in index.resolve(topic):
                self._bring(iri)
        self.topics = list(self.focus)
        self.stated: set[tuple[str, str]] = set()
        self.focus_facts = FocusFacts(index)

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
        found = self._facts(said, mentions, named)
        earlier = [iri for iri in candidates if iri not in named]
        candidates = earlier + [iri for iri in candidates if iri in named]  # the subject: in focus before
        return found, claims(self.index, found, mentions, said, candidates, self.focus_facts)

    def _facts(self, said: Surface, mentions: list[Mention], named: list[str]) -> list[Stated]:
        """The facts ``said`` states (see the module docstring); moves the focus on."""
        earlier = [iri for iri in self.focus if iri not in named][: self.options.focus_size]
        candidates = named + earlier
        rank = {iri: r for r, iri in enumerate(candidates)}
        mentioned = {iri: m for m in mentions for iri in m.entities}
        at_span: defaultdict[tuple[int, int], list[tuple[tuple[int, int, int], Stated, bool]]] = defaultdict(list)
        texts: list[Fact] = []
        grams = MessageGrams(said.form, self.options.ngram)
        for subject in candidates:
            arranged = self.index.subject_facts(subject, self.options.said_most_chars, self.options.ngram)
            for fact in arranged.tried(said.form, mentioned, grams):
                if fact.value_entity is not None and self._not_restated(fact, mentioned):
                    continue
                stated = self._stated(fact, said, mentioned, rank[subject] == 0 or subject in mentioned)
                if stated is not None and fact.value_entity is not None and self._part_restated(stated, said):
                    continue
                if stated is None:
                    if fact.text:
                        texts.append(fact)
                    continue
                key = stated.span  # one stretch of the message states one fact
                cue = _cue(fact.relation, said.form)
                order = (-min(cue, 2), -cue, rank[subject])
                at_span[key].append((order, stated, cue == len(form(fact.relation))))
        found = _outermost([s for facts in at_span.values() for s in _at_one_span(facts)])
        found = _outermost(
            found
            + self._texts(
                [f for f in texts if f.relation not in {s.fact.relation for s in found}], said, mentions, found, rank
            )
        )
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

    def _said_most(self, fact: Fact, said: Surface) -> Stated | None:
        """A literal of some length (an award with its year, an address) is stated when ``said_most`` of its
        characters are in runs of ``ngram`` - 1 characters that the message says too."""
        n = self.options.ngram - 1
        value, message = fact.value_form, said.form
        if not _numbers_in(value) <= _numbers_in(message):
            return None  # 第24届 is not 第12届: most of a value said, and all of its numbers
        grams = _grams(message, n)
        hits = [i for i in range(len(value) - n + 1) if value[i : i + n] in grams]
        if len(hits) * n < self.options.said_most * len(value):
            return None  # too few runs in common even if none overlapped: the usual case, decided cheaply
        covered = [False] * len(value)
        for i in hits:
            covered[i : i + n] = [True] * n
        if sum(covered) < self.options.said_most * len(value):
            return None
        found = [at for at in (message.find(value[i : i + n]) for i in hits) if at >= 0]
        return Stated(fact, said.span(min(found), max(found) + n), sum(covered), whole=False)

    def _texts(
        self, facts: list[Fact], said: Surface, mentions: list[Mention], found: list[Stated], rank: dict[str, int]
    ) -> list[Stated]:
        """The free-text facts the message states by overlap, one per relation (the best overlap), with the
        names it says and the values it states otherwise masked: a name shared with a text is no overlap."""
        if not facts:
            return []  # the usual message: no free text shares a run with it
        masked = [False] * len(said.form)
        for start, end in [(m.start, m.end) for m in mentions] + [form_span(said, s.span) for s in found]:
            for i in range(start, end):
                masked[i] = True
        asking = [False] * len(said.form)
        for start, end in questions(said.form):
            asking[start:end] = [True] * (end - start)
        best: dict[str, tuple[tuple[float, int], Stated]] = {}
        leading = len({iri for m in mentions for iri in m.entities})  # the names said, and the first in focus
        for fact in facts:
            stated = self._overlap(fact, said, masked, asking)
            if stated is None and rank[fact.subject] <= leading:
                stated = self._short_span(fact, said, found)
            if stated is not None:
                order = (-stated.score, rank[fact.subject])
                if fact.relation not in best or order < best[fact.relation][0]:
                    best[fact.relation] = (order, stated)
        return [stated for _, stated in best.values()]

    def _short_span(self, fact: Fact, said: Surface, found: list[Stated]) -> Stated | None:
        """The free text ``fact`` stated by a 《title》 or a year of it that the message says (see
        :func:`title_in_text`); what explains them is gathered only when the message could say one."""
        if "《" not in fact.value and not _YEAR.search(said.form):
            return None
        explained = [f(s) for s in found for f in (lambda s: s.fact.value_form, self._subject_form)] + [
            other.value_form for other in self.index.facts_of.get(fact.subject, ()) if not other.text
        ]
        stated = title_in_text(fact, said, explained, self._subject_form(fact), self.options.ngram)
        return stated or year_in_text(fact, said, explained)

    def _subject_form(self, stated: Stated | Fact) -> str:
        fact = stated.fact if isinstance(stated, Stated) else stated
        return form(strip_qualifier(self.index.label(fact.subject)))

    def _overlap(
        self, fact: Fact, said: Surface, masked: list[bool], asking: list[bool] | None = None
    ) -> Stated | None:
        return overlap(fact, said, masked, self.options, asking)


def overlap(
    fact: Fact, said: Surface, masked: list[bool], options: MatchOptions, asking: list[bool] | None = None
) -> Stated | None:
    """Whether ``said`` states the free text ``fact`` (see the module docstring), ``masked`` characters left out;
    ``asking`` characters (a question's, see :func:`questions`) count in the message's size but cover nothing."""
    n = options.ngram
    message = said.form
    whole = message.find(fact.value_form) if len(fact.value_form) >= n else -1
    if whole >= 0:  # a short text said whole (永远的最爱) is stated however short
        return Stated(fact, said.span(whole, whole + len(fact.value_form)), len(fact.value_form))
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
    size = sum(1 for i, ch in enumerate(message) if not masked[i] and not _PUNCTUATION.match(ch))
    if count >= options.overlap_chars or count >= options.overlap_share * size:
        first = covered.index(True)
        last = len(covered) - covered[::-1].index(True)
        return Stated(fact, said.span(first, last), count)
    return None


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
    found = []
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
            families = self._families[iri] = [
                (f, frozenset(_UNIT_FAMILY.get(u) for _, _, _, u in amounts(f.value_form)))
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
) -> list[Claim]:
    """Every fact stated is a supported claim; a number with a unit is contradicted when the first entity in
    focus with values of that unit's family holds none of it (unsupported when none has such values); an
    entity named beside a relation of the subject's whose values it could be, but is not, is contradicted.
    ``focus``: the dialogue's :class:`FocusFacts` (a message alone makes its own)."""
    focus = FocusFacts(index) if focus is None else focus
    out = [
        Claim(s.fact.subject, s.fact.relation, said.text[s.span[0] : s.span[1]], s.span, (s.fact.value,), "supported")
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
    return out + literal_claims(focus, said, candidates, taken)


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
        family = _UNIT_FAMILY.get(unit)
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
            )
        )
    return out


def literal_claims(
    focus: FocusFacts, said: Surface, candidates: list[str], taken: list[tuple[int, int]]
) -> list[Claim]:
    """A short literal said as a word (法国, 科幻), outside the names and the facts stated, that is a value of
    a relation elsewhere in the graph: ``contradicted`` when the first entity in focus with values of that
    relation holds other ones and no entity in focus holds it (a value of someone else in focus is said of
    them, not against the subject; 1958 of 1958-4-29 agrees)."""
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
        if not (is_cut(start) and is_cut(stop)):
            continue  # 科幻 inside 科幻片 is no genre said
        span = said.span(start, stop)
        out.append(
            Claim(
                subject,
                held[0].relation,
                said.text[span[0] : span[1]],
                span,
                tuple(f.value for f in held),
                "contradicted",
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
    subject = candidates[0]
    held = focus.values(subject)
    out = []
    for mention in mentions:
        if len(mention.entities) != 1:
            continue
        entity = mention.entities[0]
        if entity in candidates[:1] or entity in stated:
            continue
        # of the kind of a value (a class in common with it), or a value of that relation somewhere in the graph
        against = held.against(index.types_of.get(entity, _NO_CLASSES), index.value_relations(entity))
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
            )
            for relation, labels in against
        ]
    return out


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


def as_claim(index: GroundingIndex, claim: Claim) -> dict[str, Any]:
    """A claim as grounded files write it (``name``: the subject's label)."""
    return {
        "name": index.label(claim.subject),
        "attrname": claim.relation,
        "said": claim.said,
        "span": list(claim.span),
        "graph": list(claim.graph),
        "status": claim.status,
    }
