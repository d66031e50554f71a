"""The record layouts of the dialogue datasets, checked in one place for every reader of dialogue files.

One check per layout kind (the names of ``shared/readers/run-readers``: ``kdconv``, ``duconv-session``,
``durecdial-lic2020``, …) says why a record is not a dialogue of it, or None: ``kgforge export --dialogues``
and the ``corpus`` commands (through the export formats' readers), ``kgforge ground``, ``kgforge eval`` and
``kgforge rate sheet`` all ask it, so what one of them refuses the others refuse too, for the same reason.
A check covers what the dataset's own readers unpack: KdConv ``attrs`` a list of ``{name, attrname,
attrvalue}`` objects, a DuConv ``goal`` a list of triples opening ``["START", A, B]``, each DuRecDial layout
its own fields. What makes a good record for a layout's readers beyond its shape (a goal topic with a type,
a ``[k]`` per goal) is the export's concern (``Format.check``), not a reader's.

Every check also bounds the dialogue's length (:func:`kgforge.core.limits.utterances_problem`): cutting a
session into samples is quadratic, and a dialogue over the limit is refused before anything is made of it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import Record
from kgforge.core.limits import utterances_problem
from kgforge.core.progress import by_line
from kgforge.sources.durecdial import is_triple, utterance_knowledge

KDCONV = "kdconv"
DUCONV_SESSION = "duconv-session"
DUCONV_SAMPLE = "duconv-sample"
DURECDIAL_RESOURCE = "durecdial-resource"
DURECDIAL_RESOURCE_SAMPLE = "durecdial-resource-sample"
DURECDIAL_LIC2020 = "durecdial-lic2020"
DURECDIAL_LIC2020_SAMPLE = "durecdial-lic2020-sample"
DURECDIAL_ACL2020 = "durecdial-acl2020"
DURECDIAL_V2 = "durecdial2"
DURECDIAL_SESSIONS = (DURECDIAL_RESOURCE, DURECDIAL_LIC2020, DURECDIAL_ACL2020, DURECDIAL_V2)
ATTR_KEYS = ("name", "attrname", "attrvalue")
PROFILE_PROBLEM = "'user_profile' must be an object of strings or string lists"
SITUATION_PROBLEM = "'situation' must be a string"


# ---------------------------------------------------------------- shapes


def is_strings(value: Any) -> bool:
    return isinstance(value, list) and all(map(isinstance, value, repeat(str)))


def is_triples(value: Any) -> bool:
    """A list of ``[head, relation, tail]`` string lists (the readers unpack ``for s, p, o in knowledge``)."""
    return isinstance(value, list) and all(map(is_triple, value))


def is_attr(attr: Any) -> bool:
    """A KdConv ``attrs`` entry: an object with ``name``, ``attrname`` and ``attrvalue`` strings."""
    return isinstance(attr, dict) and all(isinstance(attr.get(key), str) for key in ATTR_KEYS)


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


def profile_problem(record: dict[str, Any]) -> str | None:
    """A DuRecDial ``user_profile``: an object of strings or string lists."""
    profile = record.get("user_profile")
    if not isinstance(profile, dict) or not all(isinstance(v, str) or is_strings(v) for v in profile.values()):
        return PROFILE_PROBLEM
    return None


# ---------------------------------------------------------------- one check per layout


def layout_problem(kind: str, record: Any) -> str | None:
    """Why ``record`` is not a dialogue of the layout ``kind``, or None."""
    if kind == KDCONV:
        return kdconv_problem(record)
    if not isinstance(record, dict):
        return f"expected a JSON object, got {type(record).__name__}"
    texts = record.get("conversation" if "conversation" in record or kind in DURECDIAL_SESSIONS else "history")
    too_long = utterances_problem(len(texts)) if isinstance(texts, list) else None
    if too_long:
        return too_long
    if kind in (DUCONV_SESSION, DUCONV_SAMPLE):
        return duconv_problem(record, kind == DUCONV_SAMPLE)
    if kind in (DURECDIAL_ACL2020, DURECDIAL_V2):
        return "; ".join(release_problems(record, kind)) or None
    if kind in (DURECDIAL_RESOURCE, DURECDIAL_RESOURCE_SAMPLE):
        return resource_problem(record, kind == DURECDIAL_RESOURCE_SAMPLE)
    if kind in (DURECDIAL_LIC2020, DURECDIAL_LIC2020_SAMPLE):
        return lic2020_problem(record, kind == DURECDIAL_LIC2020_SAMPLE)
    raise ValueError(f"no dialogue layout {kind!r}")


def kdconv_problem(record: Any) -> str | None:
    """KdConv: ``{"name", "messages": [{"message", "attrs"?}]}``, ``attrs`` where present a list of
    ``{name, attrname, attrvalue}`` string objects."""
    if not (isinstance(record, dict) and isinstance(record.get("messages"), list)):
        return "not a KdConv dialogue: needs a 'messages' list"
    messages = record["messages"]
    too_long = utterances_problem(len(messages))
    if too_long:
        return too_long
    for m, message in enumerate(messages):
        if not (isinstance(message, dict) and isinstance(message.get("message"), str)):
            return "each message must be an object with a 'message' string"
        if "attrs" in message and not (isinstance(message["attrs"], list) and all(map(is_attr, message["attrs"]))):
            return f"messages[{m}].attrs must be a list of {{name, attrname, attrvalue}} string objects"
    if "name" in record and not isinstance(record["name"], str):
        return "'name' must be a string (the dialogue's topic)"
    return None


def duconv_problem(record: dict[str, Any], sample: bool) -> str | None:
    """DuConv: ``goal`` (``[["START", A, B], path triples…]``), ``knowledge`` triples and ``conversation``
    (a session) or ``history`` and, where present, a ``response`` string (a sample)."""
    goal = record.get("goal")
    if not (is_triples(goal) and goal and goal[0][0] == "START"):
        return "'goal' must be [[\"START\", A, B], [head, relation, tail], …]"
    problem = triples_problem(record, "knowledge") or strings_problem(record, "history" if sample else "conversation")
    if problem is None and sample and "response" in record and not isinstance(record["response"], str):
        problem = "'response' must be a string"
    return problem


def resource_problem(record: dict[str, Any], sample: bool) -> str | None:
    """DuRecDial's LIC-2020 baseline resource files: ``goal`` one ``[type, "", …]`` triple per turn,
    ``knowledge`` triples; a session has ``conversation`` and the ``name``, ``situation`` and ``label`` that
    ``convert_session_to_sample.py`` reads, a sample ``history`` and, where present, a ``response`` string."""
    problem = triples_problem(record, "knowledge") or strings_problem(record, "history" if sample else "conversation")
    if problem is None and not is_triples(record.get("goal")):
        problem = "'goal' must be a list of 3-string lists"
    if problem is None and not sample:
        problem = next(
            (f"'{key}' must be a string" for key in ("name", "situation", "label") if not _string(record, key)), None
        )
    if problem is None and sample and "response" in record and not isinstance(record["response"], str):
        problem = "'response' must be a string"
    return problem


def lic2020_problem(record: dict[str, Any], sample: bool) -> str | None:
    """The LIC-2020 competition files: a ``goal`` string, ``knowledge`` triples, ``user_profile``,
    ``situation`` and ``conversation`` (a session) or ``history`` (a test sample)."""
    problem = triples_problem(record, "knowledge") or strings_problem(record, "history" if sample else "conversation")
    if problem is None and not isinstance(record.get("goal"), str):
        problem = "'goal' must be a '[1]…-->[2]…' string"
    return problem or profile_problem(record) or (None if _string(record, "situation") else SITUATION_PROBLEM)


def release_problems(record: dict[str, Any], kind: str, reading: bool = True) -> list[str]:
    """What keeps ``record`` from being a session of the ACL 2020 release (``kg``, ``goals``) or of DuRecDial
    2.0 (``knowledge`` the session's triples or one entry per utterance, ``goal_type_list`` and
    ``goal_topic_list`` one per utterance); ``reading=False``: a session kgforge writes (from a new goal, its
    conversation may be empty)."""
    acl2020 = kind == DURECDIAL_ACL2020
    goal_key, knowledge_key = ("goals", "kg") if acl2020 else ("goal", "knowledge")
    problems = []
    if not isinstance(record.get(goal_key), str):
        problems.append(f"'{goal_key}' must be a '[1]…-->[2]…' string")
    if utterance_knowledge(record) is None:
        problems += [p for p in [triples_problem(record, knowledge_key)] if p]
    problems += [p for p in [strings_problem(record, "conversation", non_empty=reading and acl2020)] if p]
    problems += [p for p in [profile_problem(record)] if p]
    if not _string(record, "situation"):
        problems.append(SITUATION_PROBLEM)
    if kind == DURECDIAL_V2 and not problems:
        turns = len(record["conversation"])
        for key in ("goal_type_list", "goal_topic_list"):
            if key in record and not (is_strings(record[key]) and len(record[key]) == turns):
                problems.append(f"'{key}' must hold one string per utterance ({turns})")
    return problems


def _string(record: dict[str, Any], key: str) -> bool:
    return isinstance(record.get(key), str)


# ---------------------------------------------------------------- which layout a record is in


def duconv_kind(record: Any) -> str | None:
    """``duconv-session`` or ``duconv-sample`` for a record shaped as one (a goal opening ``["START", …]``)."""
    if not isinstance(record, dict) or not isinstance(record.get("goal"), list) or "knowledge" not in record:
        return None
    first = record["goal"][0] if record["goal"] else None
    if not (isinstance(first, list) and first[:1] == ["START"]):
        return None
    return DUCONV_SESSION if "conversation" in record else DUCONV_SAMPLE if "history" in record else None


def durecdial_kind(record: Any) -> str | None:
    """The DuRecDial layout a record is shaped as, by its keys and its goal's type, or None."""
    if isinstance(record, dict) and {"kg", "goals", "conversation"} <= record.keys():
        return DURECDIAL_ACL2020
    if not isinstance(record, dict) or "knowledge" not in record:
        return None
    goal = record.get("goal")
    if (
        isinstance(goal, str)
        and "conversation" in record
        and ("goal_type_list" in record or utterance_knowledge(record) is not None)
    ):
        return DURECDIAL_V2
    if isinstance(goal, str):
        return (
            DURECDIAL_LIC2020 if "conversation" in record else DURECDIAL_LIC2020_SAMPLE if "history" in record else None
        )
    if isinstance(goal, list) and goal and isinstance(goal[0], list) and goal[0][:1] != ["START"]:
        return (
            DURECDIAL_RESOURCE
            if "conversation" in record
            else DURECDIAL_RESOURCE_SAMPLE
            if "history" in record
            else None
        )
    return None


def durecdial_session_kind(record: Any) -> str | None:
    """The DuRecDial session layout a record is shaped as (resource, competition, ACL 2020, 2.0), or None
    (a sample, or no DuRecDial record at all)."""
    kind = durecdial_kind(record)
    return kind if kind in DURECDIAL_SESSIONS else None


def dataset_kind(record: Any) -> str | None:
    """The DuConv or DuRecDial layout a JSON-lines record is shaped as, or None (KdConv files are JSON arrays)."""
    return duconv_kind(record) or durecdial_kind(record)


NOT_A_DURECDIAL_SESSION = (
    "not a DuRecDial session (an object with a 'conversation' list of strings, a 'knowledge' or 'kg' list "
    "and the other fields of its layout: LIC-2020 resource or competition, ACL 2020 or DuRecDial 2.0)"
)


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
    :func:`layout_problem`, which knows the built-in layouts). A record that cannot be read or is not of its
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
