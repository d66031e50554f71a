"""DuConv sessions grounded: a ``grounding`` list parallel to ``conversation``, each entry the indices into the
session's ``knowledge`` of the triples the utterance states, and the goal topics it names.

DuConv's knowledge is the session's own, so the session's triples are the facts tried (silver
knowledge-selection labels, as DuConv's models train on them). An utterance states a triple when it says
the object as whole words (DuConv text is word-segmented: the object's matching form must begin and end
at a cut of the utterance), or one of a list object's parts; a free-text object (a relation of kind
``text`` in the domain, such as 评论 and 短评, or an object of ``text_chars`` characters or more) by the
overlap rule of :mod:`~kgforge.grounding.matching`, with the goal topics' names masked. Values that name a
relation of the domain (导演) and one-character values are not tried, as for KdConv.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_lines
from kgforge.grounding.index import TEXT_CHARS, Fact, make_fact
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions, overlap, word_cuts
from kgforge.grounding.normalise import Surface, form, surface


@dataclass
class DuconvGrounding:
    sessions: list[dict[str, Any]]
    utterances: int
    grounded_utterances: int
    triples_stated: int


def read_sessions(path: Path) -> list[dict[str, Any]]:
    sessions = []
    for record in iter_json_lines(path):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        value = record.value
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("conversation"), list)
            or not isinstance(value.get("knowledge"), list)
        ):
            raise InputError(
                f"{path}:{record.line}: not a DuConv session (an object with 'conversation' and 'knowledge' lists)"
            )
        sessions.append(value)
    return sessions


def ground_duconv(
    sessions: Iterable[dict[str, Any]],
    text_relations: set[str],
    relation_words: set[str],
    options: MatchOptions = DEFAULT_OPTIONS,
) -> DuconvGrounding:
    out, utterances, grounded, stated = [], 0, 0, 0
    for session in sessions:
        facts = [_fact(triple, text_relations) for triple in session["knowledge"]]
        topics = goal_topics(session)
        rows = []
        for utterance in session["conversation"]:
            said = surface(str(utterance))
            cuts = word_cuts(said)  # once an utterance, not once a triple
            indices = [
                i
                for i, fact in enumerate(facts)
                if fact is not None and states(fact, said, topics, relation_words, options, cuts)
            ]
            rows.append({"knowledge": indices, "topics": [t for t in topics if form(t) and form(t) in said.form]})
            utterances += 1
            grounded += bool(indices)
            stated += len(indices)
        out.append({**session, "grounding": rows})
    return DuconvGrounding(out, utterances, grounded, stated)


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


def states(
    fact: Fact,
    said: Surface,
    topics: list[str],
    relation_words: set[str],
    options: MatchOptions,
    cuts: set[int] | None = None,
) -> bool:
    """Whether ``said`` states a session triple (see the module docstring); ``cuts``: the word boundaries of
    the matching form when the text is not word-segmented."""
    if fact.text:
        masked = [False] * len(said.form)
        for name in filter(None, (form(t) for t in topics)):
            at = said.form.find(name)
            while at >= 0:
                masked[at : at + len(name)] = [True] * len(name)
                at = said.form.find(name, at + 1)
        return overlap(fact, said, masked, options) is not None
    cuts = word_cuts(said) if cuts is None else cuts
    for part in fact.parts:
        if len(part) < 2 and not part.isdigit() or part in relation_words:
            continue
        at = said.form.find(part)
        while at >= 0:
            if at in cuts and at + len(part) in cuts:
                return True
            at = said.form.find(part, at + 1)
    return False
