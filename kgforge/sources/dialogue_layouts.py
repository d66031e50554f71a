"""The record layouts of the dialogue datasets, checked in one place for every reader of dialogue files.

Each dataset's room registers one check per layout kind it reads (:data:`DIALOGUE_LAYOUTS`, named as
``shared/readers/run-readers`` names them: ``kdconv``, ``duconv-session``, ``durecdial-lic2020``, …) from its
``source`` part; the registry imports every room's ``source`` part the first time it is read, so a layout is
known before any stage asks for it. :func:`layout_problem` says why a record is not a dialogue of a layout, or
None: ``kgforge export --dialogues`` and the ``corpus`` commands (through the export formats' readers),
``kgforge ground``, ``kgforge eval`` and ``kgforge rate sheet`` all ask it, so what one of them refuses the
others refuse too, for the same reason. A check covers what the dataset's own readers unpack; what makes a good
record for a layout's readers beyond its shape is the export's concern (``Format.check``), not a reader's.
This module holds what the checks share: the shape helpers (strings, triples, per-utterance knowledge) and
the reading of a file against its layouts (:func:`checked_records`).

Every check also bounds the dialogue's length (:func:`kgforge.core.limits.utterances_problem`): cutting a
session into samples is quadratic, and a dialogue over the limit is refused before anything is made of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.errors import InputError
from kgforge.core.jsonio import Record
from kgforge.core.limits import utterances_problem
from kgforge.core.progress import by_line
from kgforge.core.registry import Registry

# ---------------------------------------------------------------- the layouts' registry


@dataclass(frozen=True)
class DialogueLayout:
    """A dialogue layout's check. ``problem``: why a record is not a dialogue of it, or None. ``objects``: each
    record must be a JSON object, and its utterances (``conversation``, else ``history``; ``conversation``
    always for a ``session`` layout) are bounded before ``problem`` is asked (False: ``problem`` does both
    itself). ``recognise``: which of its dataset's layouts a JSON-lines record is shaped as, or None
    (:func:`dataset_kind` asks each dataset's once)."""

    problem: Callable[[Any], str | None]
    objects: bool = True
    session: bool = False
    recognise: Callable[[Any], str | None] | None = None


DIALOGUE_LAYOUTS: Registry[DialogueLayout] = Registry(
    "dialogue layout",
    modules=lambda: room_parts("source"),  # each room's source part registers its layouts
)


def layout_problem(kind: str, record: Any) -> str | None:
    """Why ``record`` is not a dialogue of the layout ``kind`` (a name in :data:`DIALOGUE_LAYOUTS`), or None."""
    layout = DIALOGUE_LAYOUTS.get(kind)
    if not layout.objects:
        return layout.problem(record)
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    texts = record.get("conversation" if "conversation" in record or layout.session else "history")
    too_long = utterances_problem(len(texts)) if isinstance(texts, list) else None
    return too_long or layout.problem(record)


def dataset_kind(record: Any) -> str | None:
    """The layout a JSON-lines record is shaped as, by the registered layouts' ``recognise`` (in name order),
    or None (a layout whose files are JSON arrays registers no ``recognise``)."""
    asked: list[Callable[[Any], str | None]] = []
    for entry in DIALOGUE_LAYOUTS:
        recognise = entry.obj.recognise
        if recognise is None or recognise in asked:
            continue
        asked.append(recognise)
        kind = recognise(record)
        if kind is not None:
            return kind
    return None


# ---------------------------------------------------------------- shapes


def is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(map(isinstance, value, repeat(str)))


def is_triple(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 3 and all(isinstance(x, str) for x in value)


def is_triples(value: Any) -> bool:
    """A list of ``[head, relation, tail]`` string lists (the readers unpack ``for s, p, o in knowledge``)."""
    return isinstance(value, list) and all(map(is_triple, value))


def triples_problem(record: dict[str, Any], key: str, required: bool = True) -> str | None:
    if key not in record:
        return f"no '{key}'" if required else None
    if not is_triples(record[key]):
        return f"'{key}' must be a list of [head, relation, tail] string triples"
    return None


def strings_problem(record: dict[str, Any], key: str, non_empty: bool = False) -> str | None:
    value = record.get(key)
    if not is_strings(value):
        return f"'{key}' must be a list of strings"
    if non_empty and not value:
        return f"'{key}' is empty: its readers make no sample from it"
    return None


def string_field(record: dict[str, Any], key: str) -> bool:
    return isinstance(record.get(key), str)


# ---------------------------------------------------------------- a session's knowledge
# A session's knowledge list, or one entry per utterance (some releases' dev/test files): shapes, read by the
# grounders, the exports and the evaluation alike, so they stay here beside the other shape helpers.


def session_triples(value: dict[str, Any]) -> list[Any]:
    """A session's triples (its ``knowledge``, or ``kg`` as one release names it), each once and in order
    of first mention: the session list itself, or, where the knowledge is per utterance, every utterance's
    triples in turn (whether or not there is one entry per utterance: the graph needs the triples, the
    alignment is checked where it is used)."""
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


# ---------------------------------------------------------------- reading a file in a layout


@dataclass
class Checked:
    """The records of a file that are dialogues of their layout (line, record), and the others (``rejected``:
    file, line, reason and the record where it could be read)."""

    records: list[tuple[int, Any]] = field(default_factory=list)
    rejected: list[dict[str, Any]] = field(default_factory=list)

    @property
    def values(self) -> list[Any]:
        return [value for _, value in self.records]


def checked_records(
    path: Path,
    records: Iterable[Record],
    kind: str | Callable[[Any], str | None],
    skip_invalid: bool = False,
    unknown: str = "not a dialogue in a layout kgforge reads",
    problem: Callable[[str, Any], str | None] | None = None,
) -> Checked:
    """``records`` read from ``path``, each checked against its layout (``kind``, or a function giving a
    record's kind: None for none, refused as ``unknown``) by ``problem`` (a dataset's own check; by default
    :func:`layout_problem`, which asks the registered layouts). A record that cannot be read or is not of its
    layout is an InputError naming the file and line, unless ``skip_invalid``: then it is set aside in
    ``rejected``."""
    check = problem or layout_problem
    found = Checked()
    for record in by_line(records, path):
        reason = record.error
        if reason is None:
            layout = kind(record.value) if callable(kind) else kind
            found_problem = None if layout is None else check(layout, record.value)
            reason = (
                unknown
                if layout is None
                else None
                if found_problem is None
                else f"not a {layout} dialogue: {found_problem}"
            )
        if reason is None:
            found.records.append((record.line, record.value))
        elif skip_invalid:
            entry = {"file": str(path), "line": record.line, "reason": reason}
            found.rejected.append(entry if record.error else {**entry, "record": record.value})
        else:
            raise InputError(f"{path}:{record.line}: {reason}")
    return found
