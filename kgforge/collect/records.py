"""What a collection is made of and what its functions return: typed, frozen records (``as_dict()`` only at
the JSON edge: the API's answers, ``--json``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.records import Record, omitted_when_none


class CollectError(KgforgeError):
    """A collection folder or a collection command cannot be used as asked (the message says why)."""


class Refused(KgforgeError):
    """A worker's request the collection refuses: ``status`` is the HTTP status the API answers with, the
    message one line a worker (or their tool) can act on."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Fact(Record):
    """One fact of a goal's knowledge as a worker sees and clicks it: its id in the session (``f0``, ``f1``…,
    the position in the goal's knowledge) and its three labels."""

    id: str
    head: str
    relation: str
    tail: str

    @property
    def triple(self) -> tuple[str, str, str]:
        return (self.head, self.relation, self.tail)

    def as_dict(self) -> dict[str, Any]:  # the generic one, written out: a session's view lists every fact
        return {"id": self.id, "head": self.head, "relation": self.relation, "tail": self.tail}


@dataclass(frozen=True)
class GoalView(Record):
    """A goal as a collection shows and exports it, made once when the collection is created (so fact ids
    never change under a running collection, whatever later builds of the graph hold).

    ``goal`` holds the lines of the goal as the roles that see it read them (DuConv's goal triples, a KdConv
    path, a DuRecDial goal sequence); ``steps`` the DuRecDial sequence as (goal type, topic) pairs (empty for
    the other styles); ``record`` the record the style's goal export wrote for it, which the session's export
    starts from."""

    goal_id: str
    topics: tuple[str, ...]
    goal: tuple[tuple[str, ...], ...]
    knowledge: tuple[Fact, ...]
    record: Mapping[str, Any]
    profile: Mapping[str, Any] | None = None
    situation: str | None = None
    steps: tuple[tuple[str, str], ...] = ()

    def fact(self, fact_id: str) -> Fact | None:
        position = _position(fact_id)
        return self.knowledge[position] if position is not None and position < len(self.knowledge) else None


def _position(fact_id: str) -> int | None:
    digits = fact_id[1:] if fact_id.startswith("f") else ""
    return int(digits) if digits.isascii() and digits.isdigit() and len(digits) < 7 else None


@dataclass(frozen=True)
class Claimed(Record):
    """A claim of a turn that the grounder found contradicted (see docs/grounding.md, *Claims*)."""

    name: str
    attrname: str | None
    said: str
    graph: tuple[str, ...]


@dataclass(frozen=True)
class Verdict(Record):
    """What grounding a turn on arrival found: which clicked facts the text states, which it does not, the
    claims it makes that the knowledge contradicts, and the warnings the author is shown (never a refusal)."""

    stated: tuple[str, ...] = ()  # clicked fact ids the text states
    not_stated: tuple[str, ...] = ()  # clicked fact ids the grounder does not find in the text
    also_stated: tuple[str, ...] = ()  # fact ids the text states without their being clicked
    contradicted: tuple[Claimed, ...] = ()
    warnings: tuple[str, ...] = ()  # codes: not_stated:ID, contradicts_clicked:ID, contradicts_knowledge


@dataclass(frozen=True)
class Turn(Record):
    """One accepted turn, as the journal keeps it."""

    index: int
    role: str
    worker: str
    text: str
    facts: tuple[str, ...]
    time: float
    verdict: Verdict
    step: int | None = None  # DuRecDial: the goal step (1-based) the turn is in


@dataclass(frozen=True)
class Checks(Record):
    """The automatic checks of a finished session."""

    goal_reached: bool  # every goal topic named, in the goal's order (DuRecDial: and the last step reached)
    topics_named: tuple[str, ...]
    turns: int
    turns_ok: bool  # within the style's minimum and maximum
    facts_clicked: int
    facts_stated: int  # clicked facts the grounder finds in their turn's text
    turns_with_warnings: int
    passed: bool  # goal reached and turn count within bounds


@dataclass(frozen=True)
class Collected(Record):
    """A finished session, as the exports write it."""

    session: str
    goal_id: str
    style: str
    workers: Mapping[str, str]  # role -> pseudonymous worker id
    turns: tuple[Turn, ...]
    started: float
    finished: float
    checks: Checks


@dataclass(frozen=True)
class JoinResult(Record):
    """The answer to a worker asking for a partner: the session and role once paired (``partner`` true),
    else nothing yet (poll again); ``done`` when every goal has been collected as often as asked."""

    session: str | None
    role: str | None
    partner: bool
    done: bool = False


@dataclass(frozen=True)
class TurnView(Record):
    """A turn as one worker sees it: the facts clicked for it only for roles that see the knowledge, the
    warnings only for their author, and only when the author sees the knowledge."""

    index: int
    role: str
    text: str
    time: float
    facts: tuple[Fact, ...] | None = omitted_when_none()
    warnings: tuple[str, ...] | None = omitted_when_none()
    step: int | None = omitted_when_none()

    def as_dict(self) -> dict[str, Any]:  # the generic one, written out: every view lists every turn
        out: dict[str, Any] = {"index": self.index, "role": self.role, "text": self.text, "time": self.time}
        if self.facts is not None:
            out["facts"] = [fact.as_dict() for fact in self.facts]
        if self.warnings is not None:
            out["warnings"] = list(self.warnings)
        if self.step is not None:
            out["step"] = self.step
        return out


@dataclass(frozen=True)
class SessionView(Record):
    """A session as one role may see it: the goal, knowledge, profile and situation only where the style's
    table lets the role see them (absent, not empty, otherwise)."""

    session: str
    style: str
    role: str
    partner_role: str
    state: str  # open | finished
    turns: tuple[TurnView, ...]
    next_role: str | None  # whose turn it is (None once finished or at the maximum)
    your_turn: bool
    min_turns: int
    max_turns: int
    can_finish: bool
    topics: tuple[str, ...] | None = omitted_when_none()
    goal: tuple[tuple[str, ...], ...] | None = omitted_when_none()
    knowledge: tuple[Fact, ...] | None = omitted_when_none()
    profile: Mapping[str, Any] | None = omitted_when_none()
    situation: str | None = omitted_when_none()
    step: int | None = omitted_when_none()
    checks: Checks | None = omitted_when_none()


@dataclass(frozen=True)
class TurnAccepted(Record):
    """A turn written to the journal: its index and what its author may see of its verdict."""

    session: str
    index: int
    warnings: tuple[str, ...] | None = omitted_when_none()


@dataclass(frozen=True)
class WorkerCount(Record):
    worker: str
    sessions: int
    finished: int
    turns: int


@dataclass(frozen=True)
class SessionSummary(Record):
    session: str
    goal_id: str
    workers: Mapping[str, str]  # role -> worker id
    state: str
    turns: int
    warnings: int
    started: float
    last: float
    passed: bool | None = None


@dataclass(frozen=True)
class Progress(Record):
    """Where a collection stands (the admin view)."""

    style: str
    goals: int
    per_goal: int
    wanted: int  # goals x per-goal
    finished: int
    open: int
    waiting: int
    sessions: tuple[SessionSummary, ...]
    workers: tuple[WorkerCount, ...]


@dataclass(frozen=True)
class CollectionReport(Record):
    """A collection folder made ready (or found ready) to serve."""

    folder: Path
    domain: str
    style: str
    goals: int
    goals_refused: int  # goals the style's goal export refused (its checks), listed in refused.jsonl
    per_goal: int
    workers: int
    workers_added: int
    workers_file: Path
    admin_file: Path
    created: bool  # False: the folder held this collection already (a restart)
    sessions: int = 0  # sessions in the journal (a restart resumes them)


@dataclass(frozen=True)
class TokensReport(Record):
    """Worker tokens added to a collection folder."""

    folder: Path
    added: int
    workers: int
    workers_file: Path
    added_ids: tuple[str, ...] = field(default=())


@dataclass(frozen=True)
class CollectExportReport(Record):
    """A collection's finished sessions written in a dataset's layout."""

    out: Path
    format: str
    layout_kind: str  # the reader kind of shared/readers/run-readers
    sessions: int
    turns: int
    facts_clicked: int
    passed: int  # sessions whose automatic checks passed
    open_left_out: int  # sessions not finished (not written)
