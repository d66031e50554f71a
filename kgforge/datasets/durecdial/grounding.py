"""DuRecDial's grounder: the knowledge each utterance states, in DuRecDial 2.0's own shape — ``knowledge``
parallel to ``conversation``, each entry the utterance's triple ``[h, r, t]`` or ``[]`` — scored against that
annotation where the input has it.

The facts tried are the session's own triples (``kg`` in the ACL 2020 release, ``knowledge`` elsewhere; in a
2.0 dev/test file the union of the per-utterance lists), by the rule of :mod:`kgforge.grounding.sessions`: an
utterance states a triple when it says the object as whole words, or a list object's part; a long or free-text
object by the overlap rule of :mod:`~kgforge.grounding.matching`, with the goal topics' names and the session
triples' subjects masked (saying a song's name is not quoting its comment).
Whole words: the spaces of word-segmented text (LIC-2020 resource files), the spaces and punctuation of
English text (DuRecDial 2.0's ``en_*.txt``), jieba's cuts with the graph's names in its dictionary otherwise.
The ``[k]`` that opens a goal's first utterance is not part of what is said.

DuRecDial 2.0 gives an utterance one triple, so where an utterance states several the one written is one whose
subject the utterance also names (``…推荐您在『大清花饺子』订糖醋排骨`` states the restaurant's 特色菜, not the
weather's 适合吃 糖醋排骨), then the one whose object was said at the greatest length (the most specific), then
the first in the session's order;
all of them are kept in ``stated_knowledge`` (one list per utterance). A session without per-utterance
knowledge gets it as ``knowledge``; its own session list moves to ``session_knowledge`` (the ACL 2020
``kg`` stays where it is). A session with per-utterance knowledge keeps it untouched and gets the prediction
as ``predicted_knowledge``; the scores compare, per utterance, the predicted triple with the annotated ones
(each in matching form: width, script, case and spaces do not count): micro precision, recall and F1 over
all utterances of annotated sessions, and per relation. Each utterance's ``claims`` (a list per utterance, in
``claims``) are judged against the session's triples
(:class:`~kgforge.grounding.sessions.SessionClaims`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.datasets.durecdial.layouts import NOT_A_DURECDIAL_SESSION, durecdial_session_kind
from kgforge.grounding.facts import Fact
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions, as_claim, message_cuts, word_cuts
from kgforge.grounding.normalise import Surface, form, surface
from kgforge.grounding.registry import GroundCounts, Grounder, register
from kgforge.grounding.scoring import Tally, Triple
from kgforge.grounding.sessions import SessionClaims, session_fact, stated_facts
from kgforge.sources.dialogue_layouts import Checked, checked_records, is_triple, session_triples, utterance_knowledge

GOAL_OPENING = re.compile(r"^\s*\[\d+\]\s*")
TOPIC = re.compile(r"『\s*([^』]*?)\s*』")
_LATIN = re.compile(r"[A-Za-z]")
_CJK = re.compile(r"[\u4e00-\u9fff]")


@dataclass
class DurecdialGrounding:
    sessions: list[dict[str, Any]]
    utterances: int
    grounded_utterances: int
    triples_stated: int
    gold_utterances: int
    tally: Tally
    claims: Counter[str]


def read_sessions(path: Path, skip_invalid: bool = False) -> Checked:
    """The DuRecDial sessions of a JSON-lines file, in any session layout (LIC-2020 resource or competition,
    ACL 2020, DuRecDial 2.0); a record that is not one is an error naming its line, or with ``skip_invalid``
    set aside (:func:`kgforge.sources.dialogue_layouts.checked_records`)."""
    return checked_records(path, iter_json_lines(path), durecdial_session_kind, skip_invalid, NOT_A_DURECDIAL_SESSION)


def ground_durecdial(
    index: GroundingIndex, sessions: Iterable[dict[str, Any]], options: MatchOptions = DEFAULT_OPTIONS
) -> DurecdialGrounding:
    out, tally = [], Tally(Counter())
    utterances = grounded = stated_count = gold_utterances = 0
    said_claims = Counter[str]()
    for session in sessions:
        triples = [t for t in session_triples(session) if is_triple(t)]
        facts = [_fact(index, *triple) for triple in triples]
        # free-text objects are matched with these names masked: saying a song's name is not quoting its comment
        topics = list(dict.fromkeys([*_topics(session), *(h for h, _, _ in triples)]))
        judge = SessionClaims(index, facts, _topics(session))
        stated, session_claims = [], []
        for utterance in session["conversation"]:
            # the goal's [k] is not said: blanked (the matching form drops it), so spans stay the utterance's own
            said = surface(GOAL_OPENING.sub(lambda opening: " " * len(opening[0]), utterance))
            found = _stated(index, facts, said, topics, options)
            stated.append([list(triples[i]) for i, _ in found])
            claims = judge.utterance(said, [(facts[i], span) for i, span in found])
            said_claims.update(c.status for c in claims)
            session_claims.append([as_claim(index, c) for c in claims])
        chosen = [found[0] if found else [] for found in stated]
        gold = utterance_knowledge(session)
        grounding = {"stated_knowledge": stated, "claims": session_claims}
        if gold is not None:
            gold_utterances += len(gold)
            for predicted, annotated in zip(chosen, gold):
                tally.add({_key(predicted)} if predicted else set(), {_key(t) for t in annotated})
            out.append({**session, "predicted_knowledge": chosen, **grounding})
        elif "kg" in session and "knowledge" not in session:
            out.append({**session, "knowledge": chosen, **grounding})
        else:
            out.append({**session, "knowledge": chosen, "session_knowledge": session["knowledge"], **grounding})
        utterances += len(stated)
        grounded += sum(1 for found in stated if found)
        stated_count += sum(len(found) for found in stated)
    return DurecdialGrounding(out, utterances, grounded, stated_count, gold_utterances, tally, said_claims)


def _stated(
    index: GroundingIndex, facts: list[Fact], said: Surface, topics: list[str], options: MatchOptions
) -> list[tuple[int, tuple[int, int]]]:
    """The session triples ``said`` states (their positions among ``facts``, and the spans that state them),
    the most specific first."""
    found = stated_facts(facts, said, topics, index.relation_words, options, _cuts(index, said))
    found.sort(
        key=lambda pair: (form(facts[pair[0]].subject) not in said.form, -len(facts[pair[0]].value_form), pair[0])
    )
    return found


def _fact(index: GroundingIndex, head: str, relation: str, tail: str) -> Fact:
    """A session triple as grounding matches it. A part of the object that is the subject's own name (the
    song in ``《 路灯下的小姑娘 》 引起 现场 观众 的 共鸣``, its comment) is not tried: saying the name is not
    stating the fact."""
    fact = session_fact(index, head, relation, tail)
    own = form(head)
    return fact._replace(parts=tuple(p for p in fact.parts if p != own)) if own in fact.parts else fact


def _cuts(index: GroundingIndex, said: Surface) -> set[int]:
    """Word boundaries of the matching form: English words end at spaces and punctuation; Chinese text is cut
    at its own spaces when word-segmented, else by jieba."""
    if _LATIN.search(said.text) and not _CJK.search(said.text):
        cuts = word_cuts(said)
        for i, char in enumerate(said.form):
            if not char.isalnum() and char != ".":
                cuts |= {i, i + 1}
        # a full stop ends a word unless a digit follows it (4.8)
        cuts |= {i for i, char in enumerate(said.form) if char == "." and not said.form[i + 1 : i + 2].isdigit()}
        return cuts
    return message_cuts(index, said)


def _topics(session: dict[str, Any]) -> list[str]:
    goal = session.get("goal", session.get("goals"))
    topics = TOPIC.findall(goal) if isinstance(goal, str) else []
    return [t for t in dict.fromkeys(topics) if t]


def _key(triple: list[str]) -> Triple:
    return form(triple[0]), form(triple[1]), form(triple[2])


def _counts(result: DurecdialGrounding) -> GroundCounts:
    return GroundCounts(
        result.utterances,
        result.triples_stated,
        result.gold_utterances,
        result.tally,
        result.claims,
        grounded_utterances=result.grounded_utterances,
    )


register(
    "durecdial",
    Grounder(
        read_sessions,
        ground_durecdial,
        "sessions",
        array=False,
        counts=_counts,
        description="DuRecDial sessions (JSON lines): each utterance's facts, scored against its own knowledge",
    ),
)
