"""DuConv sessions grounded: a ``grounding`` list parallel to ``conversation``, each entry the indices into the
session's ``knowledge`` of the triples the utterance states, and the goal topics it names.

DuConv's knowledge is the session's own, so the session's triples are the facts tried (silver
knowledge-selection labels, as DuConv's models train on them). An utterance states a triple when it says
the object as whole words (DuConv text is word-segmented: the object's matching form must begin and end
at a cut of the utterance), or one of a list object's parts; a free-text object (a relation of kind
``text`` in the domain, such as 评论 and 短评, or an object of ``text_chars`` characters or more) by the
overlap rule of :mod:`~kgforge.grounding.matching`, with the goal topics' names masked. Values that name a
relation of the domain (导演) and one-character values are not tried, as for KdConv. Each entry also holds the
utterance's ``claims``, judged against the session's knowledge (:class:`SessionClaims`).

The domain's graph is used too, as for KdConv: the goal's topics are resolved to the graph's entities and put in
focus, each utterance is grounded by :class:`~kgforge.grounding.matching.DialogueMatcher` (its focus carried
from utterance to utterance), and the entry records the graph's facts it states (``graph_knowledge``: ``[head,
relation, tail]`` with the graph's labels) and the entity first in focus after it (``focus``: its label, None
while nothing is). A goal topic the graph lacks is reported (``topics_not_in_graph``, once a session). The
fields the DuConv readers read (``goal``, ``knowledge``, ``conversation``) are the session's own, untouched.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.grounding.facts import Fact
from kgforge.grounding.index import TEXT_CHARS, GroundingIndex, make_fact
from kgforge.grounding.matching import (
    DEFAULT_OPTIONS,
    Claim,
    DialogueMatcher,
    FocusFacts,
    MatchOptions,
    amount_claims,
    as_claim,
    form_span,
    literal_claims,
    overlap,
    word_cuts,
)
from kgforge.grounding.normalise import Surface, form, surface
from kgforge.sources.dialogue_layouts import DUCONV_SESSION, Checked, checked_records


@dataclass
class DuconvGrounding:
    sessions: list[dict[str, Any]]
    utterances: int
    grounded_utterances: int
    triples_stated: int
    claims: Counter[str]
    topics_not_in_graph: list[str]  # goal topics no entity of the graph is named by, once a session


def read_sessions(path: Path, skip_invalid: bool = False) -> Checked:
    """The DuConv sessions of a JSON-lines file; a record that is not one is an error naming its line, or
    with ``skip_invalid`` set aside (:func:`kgforge.sources.dialogue_layouts.checked_records`)."""
    return checked_records(path, iter_json_lines(path), DUCONV_SESSION, skip_invalid)


def ground_duconv(
    index: GroundingIndex, sessions: Iterable[dict[str, Any]], options: MatchOptions = DEFAULT_OPTIONS
) -> DuconvGrounding:
    out, utterances, grounded, stated, said_claims, missing = [], 0, 0, 0, Counter[str](), []
    for session in sessions:
        facts = [_fact(triple, index.text_relation_names) for triple in session["knowledge"]]
        topics = goal_topics(session)
        judge = SessionClaims(index, facts, topics)
        graph = DialogueMatcher(index, topics, options)
        missing += [t for t in dict.fromkeys(topics) if not index.resolve(t)]
        rows = [
            {**_grounded_utterance(index, facts, topics, judge, str(u), options), **_in_graph(index, graph, str(u))}
            for u in session["conversation"]
        ]
        for row in rows:
            utterances += 1
            grounded += bool(row["knowledge"])
            stated += len(row["knowledge"])
            said_claims.update(claim["status"] for claim in row["claims"])
        out.append({**session, "grounding": rows})
    return DuconvGrounding(out, utterances, grounded, stated, said_claims, missing)


def _grounded_utterance(
    index: GroundingIndex,
    facts: list[Fact | None],
    topics: list[str],
    judge: SessionClaims,
    utterance: str,
    options: MatchOptions,
) -> dict[str, Any]:
    """One utterance's entry of ``grounding``: the knowledge it states, the goal topics it names, its claims."""
    said = surface(utterance)
    found = stated_facts(facts, said, topics, index.relation_words, options, word_cuts(said))
    claims = judge.utterance(said, [(fact, span) for i, span in found if (fact := facts[i]) is not None])
    return {
        "knowledge": [i for i, _ in found],
        "topics": [t for t in topics if form(t) and form(t) in said.form],
        "claims": [as_claim(index, c) for c in claims],
    }


def _in_graph(index: GroundingIndex, graph: DialogueMatcher, utterance: str) -> dict[str, Any]:
    """The graph's side of an utterance's entry: the graph's facts it states (the KdConv grounder's, the focus
    carried from the session's earlier utterances) and the entity first in focus after it. The matcher's claims
    are not kept: a DuConv utterance's claims are judged against the session's own knowledge (SessionClaims)."""
    found, _ = graph.message(utterance)
    return {
        "graph_knowledge": [[index.label(s.fact.subject), s.fact.relation, s.fact.value] for s in found],
        "focus": index.label(graph.focus[0]) if graph.focus else None,
    }


def goal_topics(session: dict[str, Any]) -> list[str]:
    """The topics a DuConv goal declares: ``["START", A, B]``."""
    goal = session.get("goal") or []
    first = goal[0] if goal and isinstance(goal[0], list) else []
    return [str(t) for t in first[1:3]] if first[:1] == ["START"] else []


def _fact(triple: Any, text_relations: set[str]) -> Fact | None:
    if not (isinstance(triple, list) and len(triple) == 3):
        return None
    head, relation, tail = (str(x) for x in triple)
    return make_fact(head, relation, tail, None, form(relation) in text_relations, TEXT_CHARS)


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
    """The claims of a session's utterances, checked against the session's own knowledge (DuConv's and
    DuRecDial's triples, drawn from the graph): each triple stated is ``supported``; a number with a unit,
    and a short literal of a word-valued relation said as a word, are judged against the first subject in
    focus as for KdConv (:func:`~kgforge.grounding.matching.amount_claims`,
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
        # subject is named by it (as for KdConv)
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
