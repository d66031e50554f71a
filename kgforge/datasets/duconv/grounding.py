"""DuConv's grounder: each session gets a ``grounding`` list parallel to ``conversation``, each entry the indices
into the session's ``knowledge`` of the triples the utterance states, and the goal topics it names.

DuConv's knowledge is the session's own, so the session's triples are the facts tried (silver
knowledge-selection labels, as DuConv's models train on them), by the rule of :mod:`kgforge.grounding.sessions`:
DuConv text is word-segmented, so an object is said as whole words when its matching form begins and ends at a
cut of the utterance; a free-text object is matched with the goal topics' names masked. Each entry also holds
the utterance's ``claims``, judged against the session's knowledge
(:class:`~kgforge.grounding.sessions.SessionClaims`).

The domain's graph is used too, as for a dialogue without knowledge of its own: the goal's topics are resolved to the graph's
entities and put in focus, each utterance is grounded by :class:`~kgforge.grounding.matching.DialogueMatcher` (its
focus carried from utterance to utterance), and the entry records the graph's facts it states
(``graph_knowledge``: ``[head, relation, tail]`` with the graph's labels) and the entity first in focus after it
(``focus``: its label, None while nothing is). A goal topic the graph lacks is reported (``topics_not_in_graph``,
once a session). The fields the DuConv readers read (``goal``, ``knowledge``, ``conversation``) are the
session's own, untouched. Sessions carry no per-utterance gold to score.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.datasets.duconv.layouts import DUCONV_SESSION
from kgforge.grounding.facts import Fact
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DEFAULT_OPTIONS, DialogueMatcher, MatchOptions, as_claim, word_cuts
from kgforge.grounding.normalise import form, surface
from kgforge.grounding.registry import GroundCounts, Grounder, register
from kgforge.grounding.sessions import SessionClaims, session_fact, stated_facts
from kgforge.sources.dialogue_layouts import Checked, checked_records


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
        facts = [_fact(index, triple) for triple in session["knowledge"]]
        topics = _goal_topics(session)
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
    """The graph's side of an utterance's entry: the graph's facts it states (as the matcher finds them, the focus
    carried from the session's earlier utterances) and the entity first in focus after it. The matcher's claims
    are not kept: a DuConv utterance's claims are judged against the session's own knowledge (SessionClaims)."""
    found, _ = graph.message(utterance)
    return {
        "graph_knowledge": [[index.label(s.fact.subject), s.fact.relation, s.fact.value] for s in found],
        "focus": index.label(graph.focus[0]) if graph.focus else None,
    }


def _goal_topics(session: dict[str, Any]) -> list[str]:
    """The topics a DuConv goal declares: ``["START", A, B]``."""
    goal = session.get("goal") or []
    first = goal[0] if goal and isinstance(goal[0], list) else []
    return [str(t) for t in first[1:3]] if first[:1] == ["START"] else []


def _fact(index: GroundingIndex, triple: Any) -> Fact | None:
    """A triple of the session's knowledge as grounding tries it; None where it is no ``[head, relation, tail]``."""
    if not (isinstance(triple, list) and len(triple) == 3):
        return None
    head, relation, tail = (str(x) for x in triple)
    return session_fact(index, head, relation, tail)


def _counts(result: DuconvGrounding) -> GroundCounts:
    return GroundCounts(
        result.utterances,
        result.triples_stated,
        0,
        None,
        result.claims,
        tuple(result.topics_not_in_graph),
        grounded_utterances=result.grounded_utterances,
    )


register(
    "duconv",
    Grounder(
        read_sessions,
        ground_duconv,
        "sessions",
        array=False,
        counts=_counts,
        description="DuConv sessions (JSON lines): each utterance's facts, the goal's topics in the graph",
    ),
)
