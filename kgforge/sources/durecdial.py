"""DuRecDial (Baidu, ACL 2020; DuRecDial 2.0, EMNLP 2021) session files: JSON lines whose ``knowledge``
(``kg`` in the original release) triples form the graph.

Reads every layout the sessions come in: the original release (``goals``, ``kg``), the LIC-2020
baseline's resource files (``goal`` a per-turn list, ``name``, ``label``; word-segmented), the LIC-2020
competition files and DuRecDial 2.0 (``goal`` a ``[1]…-->[2]…`` string, ``user_profile``), samples
(``history`` instead of ``conversation``), and DuRecDial 2.0's per-utterance knowledge (dev/test: ``knowledge``
parallel to ``conversation``, each entry the utterance's triple ``[h, r, t]``, a list of triples, or ``[]``).
The graph gets every triple of a session once; which utterance states which is the dialogue's own annotation,
read from the file by :func:`utterance_knowledge` wherever it is needed (``kgforge export --dialogues`` writes
it back as it was, ``kgforge ground --format durecdial`` scores against it), never rebuilt from the graph.
Names are normalised as DuConv's are (segmentation spaces out, the written form kept as an alternative label).
"""

from __future__ import annotations

from typing import Any


def session_problem(value: object) -> str | None:
    """Why ``value`` is not a DuRecDial session or sample, or None."""
    if not isinstance(value, dict):
        return f"expected a JSON object per line, got {type(value).__name__}"
    missing = [] if "goal" in value or "goals" in value else ["goal (or goals)"]
    if "knowledge" not in value and "kg" not in value:
        missing.append("knowledge (or kg)")
    if "conversation" not in value and "history" not in value:
        missing.append("conversation (or history)")
    if missing:
        return f"missing field(s): {', '.join(missing)}"
    if not isinstance(value.get("knowledge", value.get("kg")), list):
        return "'knowledge' must be a list of [head, relation, tail] triples"
    return None


def session_triples(value: dict[str, Any]) -> list[Any]:
    """The session's triples, each once and in order of first mention: the session list itself, or, where
    the knowledge is per utterance, every utterance's triples in turn (whether or not there is one entry per
    utterance: the graph needs the triples, the alignment is checked where it is used)."""
    knowledge = value.get("knowledge", value.get("kg"))
    per_entry = _per_entry(knowledge)
    if per_entry is None:
        if knowledge is None:  # the TypeError list(None) raised, saying what is missing
            raise TypeError("a DuRecDial session needs 'knowledge' (or 'kg'): see session_problem")
        return list(knowledge)
    seen: dict[tuple[str, ...], Any] = {}
    for triples in per_entry:
        for triple in triples:
            seen.setdefault(tuple(triple), triple)
    return list(seen.values())


def is_triple(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(x, str) for x in value)


def utterance_knowledge(record: dict[str, Any]) -> list[list[list[str]]] | None:
    """The triples each utterance states, one list per utterance, when the session's ``knowledge`` is
    annotated per utterance (DuRecDial 2.0 dev/test); None when it is the session's list (train, the
    LIC-2020 and ACL 2020 files).

    Per utterance means: one entry per utterance of the conversation (or of the history plus the response),
    each a triple, a list of triples or ``[]``, and at least one entry ``[]`` (an utterance stating nothing,
    which every real session has: greetings) or a list of triples. A session list never holds either, so
    no session list is read as per-utterance."""
    knowledge = record.get("knowledge")
    texts = record.get("conversation", record.get("history"))
    if not isinstance(texts, list):
        return None
    length = len(texts) + (1 if isinstance(record.get("response"), str) and "conversation" not in record else 0)
    per_entry = _per_entry(knowledge)
    return per_entry if per_entry is not None and len(per_entry) == length else None


def _per_entry(knowledge: Any) -> list[list[list[str]]] | None:
    """Each entry's triples when ``knowledge`` is a per-utterance list (see :func:`utterance_knowledge`)."""
    if not isinstance(knowledge, list) or not any(map(_is_nested, knowledge)):
        return None
    if not all(is_triple(item) or _is_nested(item) for item in knowledge):
        return None
    return [[item] if is_triple(item) else list(item) for item in knowledge]


def _is_nested(item: Any) -> bool:
    return isinstance(item, list) and all(is_triple(t) for t in item)
