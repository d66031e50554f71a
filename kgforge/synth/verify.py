"""Every drafted turn checked against the graph: the one place synthesis uses the grounder (kgforge.grounding), so
that a change of the grounder's inside (a learned scorer) is a change of this module at most.

A dialogue's turns are grounded in order by one :class:`~kgforge.grounding.DialogueMatcher` (the focus carries
over from turn to turn), each turn giving the facts it states and its claims as ``kgforge ground`` judges them.
Two rules are added here, because a drafted turn, unlike a person's, must say nothing the graph does not back:

* **numbers**: every number a turn says must be a number of a value it states, of a name it says, or of the
  goal's situation or profile; any other is ``unsupported`` (a shifted digit of a date whose year is right
  still states the year's fact, and the day is caught here);
* **a relation spoken of without its value**: a turn that names a relation of the entity it is about (named in
  the turn, else first in focus; the relation's name as whole words, outside a question) but states none of
  that entity's values of it is ``unsupported`` (``X的地址是…`` with another place's address).

A turn's verdict: ``contradicted`` when a claim is, else ``unsupported`` when a claim is, else ``supported`` when it
states a fact, else ``chitchat``.
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from collections.abc import Callable, Iterable

from kgforge.grounding import DialogueMatcher, GroundingIndex
from kgforge.grounding.facts import Fact
from kgforge.grounding.kept import load_index
from kgforge.grounding.matching import Claim, as_claim, message_cut_at, questions
from kgforge.grounding.normalise import Surface, form, surface
from kgforge.store.snapshot import Snapshot
from kgforge.synth.model import GoalMaterial, StatedFact, TurnCheck

ASK_ENTITY = "ASK { $s $p $o }"
ASK_LITERAL = "ASK { $s $p ?o BIND(STR(?o) AS $value) }"  # a substitution joins the BIND
_NUMBER = re.compile(r"\d+")
MAX_SAID = 60  # characters of a turn quoted in a claim about a relation spoken of


class Verifier:
    """The graph's grounding index and the relations' IRIs; :meth:`check` grounds one dialogue. One dialogue is
    checked at a time (a lock): the index fills its caches as it goes, and the work holds the GIL anyway."""

    def __init__(self, index: GroundingIndex, relations: dict[str, str]) -> None:
        self.index = index
        self.relations = relations  # a relation's label as the grounder names it -> its IRI
        self._lock = threading.Lock()
        self.cpu_seconds = 0.0  # CPU time spent checking turns (every check, the repairs' included)
        self.turns_checked = 0

    @classmethod
    def open(cls, snapshot: Snapshot) -> Verifier:
        relations = snapshot.tables().relations.select("iri", "zh", "en").rows()
        return cls(load_index(snapshot), {zh or en or iri: iri for iri, zh, en in relations})

    def check(self, material: GoalMaterial, texts: Iterable[str]) -> list[TurnCheck]:
        """Each turn of ``texts`` (a whole dialogue, in order) checked in the dialogue's context."""
        allowed = _numbers(form(" ".join([material.context, *material.topic_names])))
        topics = {form(name) for name in material.topic_names}
        with self._lock:
            started = time.thread_time()
            # the dialogue opens on its first topic (as a KdConv dialogue's name): the others are brought up in turn
            matcher = DialogueMatcher(self.index, material.topic_names[:1])
            checked = [self._turn(matcher, text, topics, allowed) for text in texts]
            self.cpu_seconds += time.thread_time() - started
            self.turns_checked += len(checked)
            return checked

    def _turn(self, matcher: DialogueMatcher, text: str, topics: set[str], allowed: set[str]) -> TurnCheck:
        said = surface(text)
        mentions = matcher.mentions(said)
        named = list(dict.fromkeys(iri for m in mentions for iri in m.entities))
        about = list(dict.fromkeys(named + matcher.focus[: matcher.options.focus_size]))
        found, claims = matcher.message(text)
        # bringing up the goal's next topic is the goal, not a claim against the entity talked about before
        claims = [c for c in claims if not (c.status == "contradicted" and form(c.said) in topics)]
        facts = [(s.fact, s.span) for s in found]
        failing = {c.relation for c in claims if c.status != "supported"}
        by_name, spoken = self._relations_spoken(said, about, {(f.subject, f.relation) for f, _ in facts}, failing)
        facts += by_name
        # what the grounder could not place and a fact stated explains is backed: a number that a fact stated by
        # name or the situation gives, a name inside a value said whole (珍宝馆 in 故宫's 门票 旺季60元…参观珍宝馆…)
        backed = allowed | {n for f, _ in by_name for n in _numbers(f.value_form + form(f.relation))}
        whole = [
            (at, len(f.value_form)) for f, _ in facts if (at := said.form.find(f.value_form)) >= 0 and f.value_form
        ]
        inside = [span for _, span in by_name] + [said.span(at, at + size) for at, size in whole]
        claims = [c for c in claims if c.status == "supported" or not _backed(c, backed, inside)]
        out = [as_claim(self.index, claim) for claim in claims]
        out += [
            _claim(self.index.label(f.subject), f.relation, text[a:b], (a, b), (f.value,), "supported")
            for f, (a, b) in by_name
        ]
        out += spoken
        explained = {n for f, _ in facts for n in _numbers(f.value_form + form(f.relation))} | allowed
        explained |= {n for m in mentions for n in _numbers(said.form[m.start : m.end])}
        out += self._numbers_said(said, explained, [claim["span"] for claim in out], about)
        statuses = {claim["status"] for claim in out}
        verdict = next((v for v in ("contradicted", "unsupported") if v in statuses), None)
        verdict = verdict or ("supported" if facts else "chitchat")
        stated = tuple({fact.id: fact for fact in (self._fact(f) for f, _ in facts)}.values())
        return TurnCheck(verdict, stated, tuple(out))

    def _numbers_said(
        self, said: Surface, explained: set[str], judged: list[list[int]], about: list[str]
    ) -> list[dict[str, object]]:
        out = []
        for match in _NUMBER.finditer(said.form):
            start, end = said.span(match.start(), match.end())
            if _key(match[0]) in explained or any(a <= start < b for a, b in judged):
                continue
            name = self.index.label(about[0]) if about else ""
            out.append(_claim(name, None, said.text[start:end], (start, end), (), "unsupported"))
        return out

    def _relations_spoken(
        self, said: Surface, about: list[str], stated: set[tuple[str, str]], failing: set[str | None]
    ) -> tuple[list[tuple[Fact, tuple[int, int]]], list[dict[str, object]]]:
        """The relations the turn names (as whole words, outside a question) of the entity it is about (the first
        of ``about`` holding one): a fact whose value the turn says as written is stated by name (the grounder
        reads no link between two entities of one kind named together: 日坛公园的周边景点有中国国家博物馆); a
        relation whose values the turn neither states nor says is an ``unsupported`` claim."""
        asked = questions(said.form)
        cut_at = message_cut_at(self.index, said)
        by_name, out, seen = [], [], set()
        for subject in about:
            held: dict[str, list[Fact]] = {}
            for fact in self.index.facts_of.get(subject, ()):
                held.setdefault(fact.relation, []).append(fact)
            for relation, facts in held.items():
                cue = form(relation)
                at = said.form.find(cue) if len(cue) >= 2 and relation not in seen else -1
                if at < 0 or any(a <= at < b for a, b in asked) or not (cut_at(at) and cut_at(at + len(cue))):
                    continue
                seen.add(relation)  # the first entity about which the turn could say it
                if (subject, relation) in stated or relation in failing:
                    continue
                found = [(f, _word_at(said.form, f.value_form, cut_at)) for f in facts if f.value_form]
                named = [(f, said.span(where, where + len(f.value_form))) for f, where in found if where >= 0]
                if named:
                    by_name.append(named[0])
                    continue
                span = said.span(at, at + len(cue))
                clause = said.text[span[0] :][:MAX_SAID]
                out.append(
                    _claim(self.index.label(subject), relation, clause, span, [f.value for f in facts], "unsupported")
                )
        return by_name, out

    def _fact(self, fact: Fact) -> StatedFact:
        subject, relation_label, value, entity = fact.subject, fact.relation, fact.value, fact.value_entity
        relation = self.relations.get(relation_label, relation_label)
        obj = entity if entity is not None else value
        key = "\x1f".join((subject, relation, obj))
        bindings = {"s": f"<{subject}>", "p": f"<{relation}>"}
        bindings |= {"o": f"<{entity}>"} if entity is not None else {"value": value}
        return StatedFact(
            "f-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16],
            subject,
            relation,
            obj,
            entity is not None,
            (self.index.label(subject), relation_label, self.index.label(entity) if entity else value),
            ASK_ENTITY if entity is not None else ASK_LITERAL,
            bindings,
        )


def _claim(
    name: str, relation: str | None, said: str, span: tuple[int, int], graph: Iterable[str], status: str
) -> dict[str, object]:
    return {
        "name": name,
        "attrname": relation,
        "said": said,
        "span": list(span),
        "graph": list(graph),
        "status": status,
    }


def _backed(claim: Claim, numbers: set[str], spans: list[tuple[int, int]]) -> bool:
    said = _numbers(form(claim.said))
    return bool(said) and said <= numbers or any(a <= claim.span[0] and claim.span[1] <= b for a, b in spans)


def _word_at(text: str, word: str, cut_at: Callable[[int], bool]) -> int:
    """Where ``word`` is said as whole words in ``text`` (世界公园 is not said by 世界公园欧洲区); -1: nowhere."""
    at = text.find(word)
    while at >= 0 and not (cut_at(at) and cut_at(at + len(word))):
        at = text.find(word, at + 1)
    return at


def _key(number: str) -> str:
    return number.lstrip("0") or "0"


def _numbers(text: str) -> set[str]:
    return {_key(n) for n in _NUMBER.findall(text)}
