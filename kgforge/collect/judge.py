"""Each turn grounded on arrival: does the text state the facts clicked for it, and does it say anything the
goal's knowledge contradicts? The answer is a :class:`~kgforge.collect.records.Verdict`, shown to its author
as warnings, never a refusal (a worker may paraphrase where the grounder cannot follow).

The facts tried are the goal's knowledge (drawn from the domain's graph when the collection was made), as
``kgforge ground`` tries a DuConv or DuRecDial session's own triples: a triple is stated when the text says
its object as whole words (jieba's cuts, with the graph's names in its dictionary), a free text by overlap;
claims — a number with a unit, a word-valued literal (国家, 类型) — are judged against the subject in focus,
focus carried from turn to turn (:class:`kgforge.grounding.sessions.SessionClaims`). The domain's grounding
index gives the relation names and what counts as free text.

Warnings: ``not_stated:ID`` (a clicked fact the grounder does not find in the text),
``contradicts_clicked:ID`` (a claim about the clicked fact's subject and relation that its value
contradicts) and ``contradicts_knowledge`` (a claim the knowledge contradicts otherwise).
"""

from __future__ import annotations

from collections.abc import Sequence

from kgforge.collect.records import Claimed, Fact, Verdict
from kgforge.grounding.index import TEXT_CHARS, GroundingIndex, make_fact
from kgforge.grounding.matching import DEFAULT_OPTIONS, message_cuts
from kgforge.grounding.normalise import form, surface
from kgforge.grounding.sessions import SessionClaims, stated_facts


class TurnJudge:
    """Grounds one session's turns in order (the focus of claims carries over from turn to turn)."""

    def __init__(self, index: GroundingIndex, knowledge: Sequence[Fact], topics: Sequence[str]) -> None:
        self.index = index
        self.ids = [fact.id for fact in knowledge]
        self.facts = [
            make_fact(f.head, f.relation, f.tail, None, form(f.relation) in index.text_relation_names, TEXT_CHARS)
            for f in knowledge
        ]
        self.topics = list(topics)
        self.claims = SessionClaims(index, self.facts, self.topics)

    def turn(self, text: str, clicked: Sequence[str]) -> Verdict:
        said = surface(text)
        cuts = message_cuts(self.index, said)
        found = stated_facts(self.facts, said, self.topics, self.index.relation_words, DEFAULT_OPTIONS, cuts)
        claims = self.claims.utterance(said, [(self.facts[i], span) for i, span in found])
        stated = {self.ids[i] for i, _ in found}
        contradicted = [c for c in claims if c.status == "contradicted"]
        keys = {i: _key(f.subject, f.relation) for i, f in zip(self.ids, self.facts) if i in clicked}
        said_against = {_key(c.subject, c.relation or "") for c in contradicted}
        against = [i for i in clicked if keys.get(i) in said_against]
        warnings = [f"not_stated:{i}" for i in clicked if i not in stated]
        warnings += [f"contradicts_clicked:{i}" for i in against]
        if any(_key(c.subject, c.relation or "") not in keys.values() for c in contradicted):
            warnings.append("contradicts_knowledge")
        return Verdict(
            stated=tuple(i for i in clicked if i in stated),
            not_stated=tuple(i for i in clicked if i not in stated),
            also_stated=tuple(i for i in self.ids if i in stated and i not in clicked),
            contradicted=tuple(Claimed(c.subject, c.relation, c.said, tuple(c.graph)) for c in contradicted),
            warnings=tuple(warnings),
        )


def _key(subject: str, relation: str) -> tuple[str, str]:
    return form(subject), form(relation)
