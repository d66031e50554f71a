"""A session grounded against its own knowledge: the triples a dialogue brings with it (a session's
``knowledge``, a collected goal's), each utterance's stated ones found and its claims judged against them.

An utterance states a triple when it says the object as whole words (the object's matching form must begin and
end at a cut of the utterance: its spaces where the text is word-segmented, jieba's cuts or the punctuation of
English text otherwise, as the caller gives them), or one of a list object's parts; a free-text object (a
relation of kind ``text`` in the domain, such as 评论 and 短评, or an object of ``text_chars`` characters or more)
by the overlap rule of :mod:`~kgforge.grounding.matching`, with the names of the topics given masked (saying a
song's name is not quoting its comment). Values that name a relation of the domain (导演) and one-character
values are not tried, as for the graph's facts. The claims of each utterance are judged against the session's
knowledge (:class:`SessionClaims`). The session datasets' grounders (their rooms' ``grounding`` part), the collection's
judge (``kgforge.collect.judge``) and the knowledge metrics of ``kgforge eval`` use these.
"""

from __future__ import annotations

from collections.abc import Iterable

from kgforge.grounding.facts import Fact
from kgforge.grounding.index import TEXT_CHARS, GroundingIndex, make_fact
from kgforge.grounding.matching import (
    Claim,
    FocusFacts,
    MatchOptions,
    amount_claims,
    form_span,
    literal_claims,
    overlap,
    word_cuts,
)
from kgforge.grounding.normalise import Surface, form


def session_fact(index: GroundingIndex, head: str, relation: str, tail: str) -> Fact:
    """A triple of a session's knowledge as grounding tries it: free text where the domain's relation is of kind
    ``text`` or the object is long (:data:`~kgforge.grounding.index.TEXT_CHARS`)."""
    return make_fact(head, relation, tail, None, form(relation) in index.text_relation_names, TEXT_CHARS)


def stated_facts(
    facts: list[Fact] | list[Fact | None],
    said: Surface,
    topics: list[str],
    relation_words: set[str],
    options: MatchOptions,
    cuts: set[int],
) -> list[tuple[int, tuple[int, int]]]:
    """The positions in ``facts`` of the session triples ``said`` states (None: no triple), each with the span
    that states it (:func:`stated_span`), in order."""
    found = []
    for i, fact in enumerate(facts):
        span = None if fact is None else stated_span(fact, said, topics, relation_words, options, cuts)
        if span is not None:
            found.append((i, span))
    return found


def stated_span(
    fact: Fact,
    said: Surface,
    topics: list[str],
    relation_words: set[str],
    options: MatchOptions,
    cuts: set[int] | None = None,
) -> tuple[int, int] | None:
    """The span of ``said.text`` that states a session triple (see the module docstring), None when the
    utterance does not state it; ``cuts``: the word boundaries of the matching form when the text is not
    word-segmented."""
    if fact.text:
        masked = [False] * len(said.form)
        for name in filter(None, (form(t) for t in topics)):
            at = said.form.find(name)
            while at >= 0:
                masked[at : at + len(name)] = [True] * len(name)
                at = said.form.find(name, at + 1)
        found = overlap(fact, said, masked, options)
        return None if found is None else found.span
    cuts = word_cuts(said) if cuts is None else cuts
    for part in fact.parts:
        if len(part) < 2 and not part.isdigit() or part in relation_words:
            continue
        at = said.form.find(part)
        while at >= 0:
            if at in cuts and at + len(part) in cuts:
                return said.span(at, at + len(part))
            at = said.form.find(part, at + 1)
    return None


class SessionClaims:
    """The claims of a session's utterances, checked against the session's own knowledge (triples
    drawn from the graph): each triple stated is ``supported``; a number with a unit, and a short literal of a
    word-valued relation said as a word, are judged against the first subject in focus as for the graph's facts (:func:`~kgforge.grounding.matching.amount_claims`,
    :func:`~kgforge.grounding.matching.literal_claims`). In focus: the subjects the utterance names, in the
    order it names them, then the earlier ones, most recently named or stated first, starting from the goal's
    topics in the goal's order. Names said are not judged here: a session's values are names, not entities
    with classes."""

    def __init__(self, index: GroundingIndex, facts: Iterable[Fact | None], topics: list[str]) -> None:
        by_subject: dict[str, list[Fact]] = {}
        for fact in facts:
            if fact is not None:
                by_subject.setdefault(fact.subject, []).append(fact)
        # subject -> its name in matching form; a name of one character is found inside every other word, so no
        # subject is named by it (as for the graph's names)
        self.names = {subject: name for subject in by_subject if len(name := form(subject)) >= 2}
        self.focus = list(dict.fromkeys(t for t in topics if t in by_subject))
        self.facts = FocusFacts(index, by_subject)

    def utterance(self, said: Surface, stated: list[tuple[Fact, tuple[int, int]]]) -> list[Claim]:
        """The claims of one utterance that states ``stated`` (each fact with its span); moves the focus on."""
        at = {subject: said.form.find(name) for subject, name in self.names.items()}
        named = sorted((subject for subject, where in at.items() if where >= 0), key=at.__getitem__)
        candidates = list(dict.fromkeys(named + self.focus))
        out = [Claim(f.subject, f.relation, said.text[a:b], (a, b), (f.value,), "supported") for f, (a, b) in stated]
        if candidates:
            names = [(at[s], at[s] + len(self.names[s])) for s in named]
            out += amount_claims(self.facts, said, candidates, [f.value_form for f, _ in stated], names)
            out += literal_claims(self.facts, said, candidates, names + [form_span(said, span) for _, span in stated])
        self.focus = list(dict.fromkeys(named + [f.subject for f, _ in stated] + self.focus))
        return out
