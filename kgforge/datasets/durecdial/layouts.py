"""DuRecDial's dialogue layouts, registered on :data:`kgforge.sources.dialogue_layouts.DIALOGUE_LAYOUTS` (the
room's ``source`` part imports this module): the LIC-2020 baseline's resource files and the LIC-2020
competition files (sessions and samples), the ACL 2020 release and DuRecDial 2.0 (sessions)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgforge.sources.dialogue_layouts import (
    DIALOGUE_LAYOUTS,
    DialogueLayout,
    is_strings,
    is_triples,
    string_field,
    strings_problem,
    triples_problem,
    utterance_knowledge,
)

DURECDIAL_RESOURCE = "durecdial-resource"
DURECDIAL_RESOURCE_SAMPLE = "durecdial-resource-sample"
DURECDIAL_LIC2020 = "durecdial-lic2020"
DURECDIAL_LIC2020_SAMPLE = "durecdial-lic2020-sample"
DURECDIAL_ACL2020 = "durecdial-acl2020"
DURECDIAL_V2 = "durecdial2"
DURECDIAL_SESSIONS = (DURECDIAL_RESOURCE, DURECDIAL_LIC2020, DURECDIAL_ACL2020, DURECDIAL_V2)
PROFILE_PROBLEM = "'user_profile' must be an object of strings or string lists"
SITUATION_PROBLEM = "'situation' must be a string"


def profile_problem(record: dict[str, Any]) -> str | None:
    """A DuRecDial ``user_profile``: an object of strings or string lists."""
    profile = record.get("user_profile")
    if not isinstance(profile, dict) or not all(isinstance(v, str) or is_strings(v) for v in profile.values()):
        return PROFILE_PROBLEM
    return None


def resource_problem(record: dict[str, Any], sample: bool) -> str | None:
    """DuRecDial's LIC-2020 baseline resource files: ``goal`` one ``[type, "", …]`` triple per turn,
    ``knowledge`` triples; a session has ``conversation`` and the ``name``, ``situation`` and ``label`` that
    ``convert_session_to_sample.py`` reads, a sample ``history`` and, where present, a ``response`` string."""
    problem = triples_problem(record, "knowledge") or strings_problem(record, "history" if sample else "conversation")
    if problem is None and not is_triples(record.get("goal")):
        problem = "'goal' must be a list of 3-string lists"
    if problem is None and not sample:
        problem = next(
            (f"'{key}' must be a string" for key in ("name", "situation", "label") if not string_field(record, key)),
            None,
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
    return problem or profile_problem(record) or (None if string_field(record, "situation") else SITUATION_PROBLEM)


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
    if not string_field(record, "situation"):
        problems.append(SITUATION_PROBLEM)
    if kind == DURECDIAL_V2 and not problems:
        turns = len(record["conversation"])
        for key in ("goal_type_list", "goal_topic_list"):
            if key in record and not (is_strings(record[key]) and len(record[key]) == turns):
                problems.append(f"'{key}' must hold one string per utterance ({turns})")
    return problems


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


NOT_A_DURECDIAL_SESSION = (
    "not a DuRecDial session (an object with a 'conversation' list of strings, a 'knowledge' or 'kg' list "
    "and the other fields of its layout: LIC-2020 resource or competition, ACL 2020 or DuRecDial 2.0)"
)


def _register(kind: str, problem: Callable[[Any], str | None], description: str) -> None:
    layout = DialogueLayout(problem, session=kind in DURECDIAL_SESSIONS, recognise=durecdial_kind)
    DIALOGUE_LAYOUTS.register(kind, layout, description=description)


def _release(kind: str) -> Callable[[Any], str | None]:
    return lambda record: "; ".join(release_problems(record, kind)) or None


_register(DURECDIAL_RESOURCE, lambda record: resource_problem(record, False), "DuRecDial LIC-2020 resource sessions")
_register(
    DURECDIAL_RESOURCE_SAMPLE, lambda record: resource_problem(record, True), "DuRecDial LIC-2020 resource samples"
)
_register(DURECDIAL_LIC2020, lambda record: lic2020_problem(record, False), "DuRecDial LIC-2020 competition sessions")
_register(DURECDIAL_LIC2020_SAMPLE, lambda record: lic2020_problem(record, True), "DuRecDial LIC-2020 test samples")
_register(DURECDIAL_ACL2020, _release(DURECDIAL_ACL2020), "DuRecDial ACL 2020 release sessions")
_register(DURECDIAL_V2, _release(DURECDIAL_V2), "DuRecDial 2.0 sessions")
