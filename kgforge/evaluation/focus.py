"""Goal-topic focus accuracy of a grounded DuConv file (``kgforge ground --format duconv``): how often the entity
the grounder holds first in focus after an utterance (its ``grounding`` entry's ``focus``) is the goal topic the
utterance is about. Definitions: docs/grounding.md, "A second gold".

DuConv annotates no topic per utterance, but its goal and knowledge say enough to tell one for many utterances:
each session has two goal topics (``goal[0] = ["START", A, B]``) and its ``knowledge`` lists each topic's own
triples. An utterance is **about** topic ``T`` when it names ``T`` (``T``'s name occurs in it, in matching form)
or says the object of one of ``T``'s triples — as whole words of the word-segmented text (a free-text object of
24 characters or more: 8 consecutive characters of it), leaving out the objects of ``领域`` (a topic's kind:
电影, 明星), objects of one character and objects that are themselves a goal topic (saying them names that
topic). An utterance about exactly one goal topic is **scored**; about both or neither, it is counted and left
out. The grounder is right when its focus is that topic (in matching form). Beside it, a baseline with no graph:
the goal topic named last so far in the session (the first goal topic before any is named).

This gold is read off the session's own knowledge, not off the graph the grounder searches, and it does not
look at the grounder's output; it is still a silver label (a rule, not an annotator), which is why the figures
are split by how the topic is told: named in the utterance, or only by a fact of it (the grounder then has to
carry its focus from earlier utterances).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.records import Record
from kgforge.evaluation.inputs import json_objects
from kgforge.grounding.normalise import form

TYPE_RELATION = "领域"  # a DuConv topic's kind (电影, 明星): said of every film, it tells no topic apart
FREE_TEXT_CHARS = 24  # an object this long is free text (a comment): told by a shared run of characters
RUN_CHARS = 8  # the run of consecutive characters a free-text object shares with the utterance


@dataclass(frozen=True)
class FocusReport(Record):
    """Goal-topic focus accuracy of a grounded DuConv file (see the module docstring)."""

    path: Path
    sessions: int
    utterances: int
    scored: int  # utterances about exactly one goal topic
    about_neither: int  # left out: no goal topic named, no fact of one said
    about_both: int  # left out: both goal topics named or told by a fact
    accuracy: float | None  # the grounder's focus is the topic, over the scored utterances
    named: int  # scored utterances that name their topic
    accuracy_named: float | None
    by_fact: int  # scored utterances that name neither topic: told by a fact of one only
    accuracy_by_fact: float | None
    baseline_accuracy: float | None  # the goal topic named last so far, over the scored utterances
    baseline_accuracy_by_fact: float | None


def focus_accuracy(path: Path | str) -> FocusReport:
    """The goal-topic focus accuracy of ``path``, a ``kgforge ground --format duconv`` output."""
    path = Path(path)
    sessions = utterances = neither = both = 0
    outcomes: list[tuple[bool, bool, bool]] = []  # (named, grounder right, baseline right) per scored utterance
    for line, session in json_objects(path):
        topics, rows = _checked(path, line, session)
        sessions += 1
        utterances += len(rows)
        last = topics[0] if topics else None
        for utterance, row in zip(session["conversation"], rows, strict=True):
            named = [t for t in topics if form(t) and form(t) in form(utterance)]
            about = [t for t in topics if t in named or _says_fact_of(session, t, topics, utterance)]
            if named:  # the baseline: the topic whose name the session said last
                last = max(named, key=lambda t: form(utterance).rfind(form(t)))
            if len(about) != 1:
                neither += not about
                both += len(about) > 1
                continue
            focus = row.get("focus")
            right = isinstance(focus, str) and form(focus) == form(about[0])
            outcomes.append((bool(named), right, last == about[0]))
    by_fact = [o for o in outcomes if not o[0]]
    return FocusReport(
        path,
        sessions,
        utterances,
        len(outcomes),
        neither,
        both,
        _share(o[1] for o in outcomes),
        len(outcomes) - len(by_fact),
        _share(o[1] for o in outcomes if o[0]),
        len(by_fact),
        _share(o[1] for o in by_fact),
        _share(o[2] for o in outcomes),
        _share(o[2] for o in by_fact),
    )


def _checked(path: Path, line: int, session: dict[str, Any]) -> tuple[list[str], list[dict[str, Any]]]:
    """The session's goal topics and its ``grounding`` entries, or an error naming the line."""
    rows, conversation = session.get("grounding"), session.get("conversation")
    if not isinstance(conversation, list) or not all(isinstance(u, str) for u in conversation):
        raise InputError(f"{path}:{line}: not a DuConv session (a 'conversation' list of strings)")
    if not isinstance(rows, list) or len(rows) != len(conversation) or not all(isinstance(r, dict) for r in rows):
        raise InputError(
            f"{path}:{line}: no 'grounding' entry per utterance: give a `kgforge ground --format duconv` output"
        )
    goal = session.get("goal")
    first = goal[0] if isinstance(goal, list) and goal and isinstance(goal[0], list) else []
    topics = [t for t in first[1:3] if isinstance(t, str)] if first[:1] == ["START"] else []
    return list(dict.fromkeys(topics)), rows


def _says_fact_of(session: dict[str, Any], topic: str, topics: list[str], utterance: str) -> bool:
    """Whether ``utterance`` says the object of one of ``topic``'s own triples (see the module docstring)."""
    words = [form(w) for w in utterance.split()]
    goal_forms = {form(t) for t in topics}
    for triple in session.get("knowledge") or []:
        if not (isinstance(triple, list) and len(triple) == 3 and all(isinstance(x, str) for x in triple)):
            continue
        head, relation, tail = triple
        value = form(tail)
        if head != topic or form(relation) == TYPE_RELATION or len(value) < 2 or value in goal_forms:
            continue
        if len(value) >= FREE_TEXT_CHARS:
            said = form(utterance)
            if any(value[i : i + RUN_CHARS] in said for i in range(len(value) - RUN_CHARS + 1)):
                return True
            continue
        parts = [form(w) for w in tail.split()]
        if any(words[i : i + len(parts)] == parts for i in range(len(words) - len(parts) + 1)):
            return True
    return False


def _share(flags: Any) -> float | None:
    values = list(flags)
    return sum(values) / len(values) if values else None
