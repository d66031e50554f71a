"""A collection's sessions: pairing, turns, finishing, and what each role may see. No HTTP here: the API
(:mod:`kgforge.collect.app`) calls these methods, and so can any other tool.

Everything that happened is an event of the journal (:mod:`kgforge.collect.journal`), and the state here is
those events applied in order: a restarted server reads the journal and every open session is where it was.
A turn is applied (and answered) only once its event is on disk; a pairing is decided at once (so two
requests cannot take the same goal) and offered to the partner only once it is on disk.

Pairing: a worker who asks to join waits (in memory; they poll) until another worker asks; the one who waited
longer takes the style's first role. They get the first goal, in the goals file's order, collected fewer than
``per_goal`` times (sessions under way count) that neither of them has had. A waiting worker who has not
polled for ``WAIT_FRESH`` seconds is not paired (they closed the page).
"""

from __future__ import annotations

import asyncio
import time
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from kgforge.collect.journal import Journal
from kgforge.collect.records import (
    Checks,
    Claimed,
    Collected,
    Fact,
    GoalView,
    JoinResult,
    Progress,
    Refused,
    SessionSummary,
    SessionView,
    Turn,
    TurnAccepted,
    TurnView,
    Verdict,
    WorkerCount,
)
from kgforge.collect.styles import GOAL, KNOWLEDGE, PROFILE, SITUATION, Style
from kgforge.grounding.normalise import form

WAIT_FRESH = 20.0  # seconds a waiting worker stays available for pairing without polling again
MAX_TEXT = 1000  # characters of one turn (DuConv's and KdConv's utterances have a few dozen)


class Judge(Protocol):
    """What grounds a session's turns (:class:`kgforge.collect.judge.TurnJudge`)."""

    def turn(self, text: str, clicked: Sequence[str]) -> Verdict:  # pragma: no cover - a protocol
        raise NotImplementedError


@dataclass
class Session:
    id: str
    goal: GoalView
    workers: dict[str, str]  # role -> worker id
    started: float
    turns: list[Turn] = field(default_factory=list)
    finished: float | None = None
    checks: Checks | None = None
    durable: bool = True  # False while its pairing is being written
    writing: bool = False  # a turn or the finish is being written
    judge: Any = None  # made on the first turn after a start (the earlier turns replayed through it)
    changed: asyncio.Event | None = None

    def role_of(self, worker: str) -> str | None:
        return next((role for role, who in self.workers.items() if who == worker), None)

    @property
    def step(self) -> int:
        return self.turns[-1].step or 1 if self.turns else 1


@dataclass(frozen=True)
class Shown:
    facts: dict[str, Fact]
    topics: tuple[str, ...]
    goal: tuple[tuple[str, ...], ...]


class Collection:
    def __init__(
        self,
        style: Style,
        goals: Iterable[GoalView],
        per_goal: int,
        journal: Journal | None,
        judge: Callable[[GoalView], Judge],
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.style, self.per_goal, self.journal = style, per_goal, journal
        self.goals = {goal.goal_id: goal for goal in goals}
        self.make_judge, self.clock = judge, clock
        self.sessions: dict[str, Session] = {}
        self.active: dict[str, str] = {}  # worker -> their open session
        self.waiting: dict[str, float] = {}  # worker -> when they last asked (insertion order: who waited longest)
        self.taken: Counter[str] = Counter()  # goal -> sessions open or finished
        self.had: dict[str, set[str]] = {}  # worker -> goals they had
        self.shown: dict[str, Shown] = {}  # goal -> its labels as shown

    # ---------------------------------------------------------------- events

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one journal event (replay at start; the live path applies the same events)."""
        kind = event["event"]
        session = self.sessions.get(event.get("session", ""))
        if kind == "session":
            self._open(event)
        elif kind == "turn" and session is not None:
            session.turns.append(turn_from(event))
        elif kind == "finish" and session is not None:
            self._close(session, checks_from(event["checks"]), event["time"])
        else:
            where = f"line {event['_line']}: " if "_line" in event else ""
            raise ValueError(f"{where}a {kind!r} event the collection cannot apply")

    def _open(self, event: dict[str, Any]) -> Session:
        goal = self.goals.get(event["goal_id"])
        if goal is None:
            raise ValueError(f"session {event['session']}: goal {event['goal_id']} is not one of this collection's")
        session = Session(event["session"], goal, dict(event["workers"]), event["time"])
        self.sessions[session.id] = session
        self.taken[goal.goal_id] += 1
        for worker in session.workers.values():
            self.active[worker] = session.id
            self.had.setdefault(worker, set()).add(goal.goal_id)
            self.waiting.pop(worker, None)
        return session

    def _close(self, session: Session, checks: Checks, when: float) -> None:
        session.finished, session.checks = when, checks
        for worker in session.workers.values():
            if self.active.get(worker) == session.id:
                del self.active[worker]
        self._changed(session)

    def _changed(self, session: Session) -> None:
        if session.changed is not None:
            session.changed.set()
            session.changed = None

    async def _write(self, event: dict[str, Any]) -> None:
        if self.journal is not None:
            await self.journal.append(event)

    # ---------------------------------------------------------------- pairing

    async def join(self, worker: str) -> JoinResult:
        """Pair ``worker`` with the worker who has waited longest (see the module docstring)."""
        sid = self.active.get(worker)
        if sid is not None:
            session = self.sessions[sid]
            role = session.role_of(worker)
            return JoinResult(sid, role, True) if session.durable else JoinResult(None, None, False)
        now = self.clock()
        self.waiting = {w: seen for w, seen in self.waiting.items() if now - seen <= WAIT_FRESH}
        self.waiting[worker] = now
        partner = next((w for w in self.waiting if w != worker), None)
        goal = self._next_goal(partner, worker) if partner is not None else None
        if goal is None:
            done = self._all_taken()
            if done:
                self.waiting.pop(worker, None)
            return JoinResult(None, None, False, done)
        first, second = (role.name for role in self.style.roles)
        event = {
            "event": "session",
            "session": f"s{len(self.sessions) + 1:05d}",
            "goal_id": goal.goal_id,
            "workers": {first: partner, second: worker},
            "time": now,
        }
        session = self._open(event)  # decided now: no other request can take this goal meanwhile
        session.durable = False
        try:
            await self._write(event)
        except BaseException:
            self._unopen(session)
            raise
        session.durable = True
        return JoinResult(session.id, second, True)

    def _unopen(self, session: Session) -> None:
        del self.sessions[session.id]
        self.taken[session.goal.goal_id] -= 1
        for worker in session.workers.values():
            self.active.pop(worker, None)
            self.had.get(worker, set()).discard(session.goal.goal_id)

    def _next_goal(self, first: str, second: str) -> GoalView | None:
        had = self.had.get(first, set()) | self.had.get(second, set())
        return next(
            (g for g in self.goals.values() if self.taken[g.goal_id] < self.per_goal and g.goal_id not in had), None
        )

    def _all_taken(self) -> bool:
        return all(self.taken[goal] >= self.per_goal for goal in self.goals)

    # ---------------------------------------------------------------- what a worker sees

    def member(self, worker: str, sid: str) -> tuple[Session, str]:
        session = self.sessions.get(sid)
        role = session.role_of(worker) if session is not None and session.durable else None
        if session is None or role is None:
            raise Refused(403, "this session is not yours")
        return session, role

    def view(self, worker: str, sid: str) -> SessionView:
        """The session as ``worker``'s role may see it (nothing its role does not see is in it)."""
        session, role = self.member(worker, sid)
        sees = self.style.role(role).sees
        goal, style, count = session.goal, self.style, len(session.turns)
        is_open = session.finished is None
        next_role = style.speaker(count) if is_open and count < style.max_turns else None
        shown_goal = self._shown(goal)
        facts = shown_goal.facts if KNOWLEDGE in sees else None
        turns = tuple(
            TurnView(
                t.index,
                t.role,
                t.text,
                t.time,
                tuple(facts[i] for i in t.facts if i in facts) if facts is not None else None,
                t.verdict.warnings if facts is not None and t.worker == worker else None,
                t.step if GOAL in sees and style.steps else None,
            )
            for t in session.turns
        )
        shown = GOAL in sees
        return SessionView(
            session.id,
            style.name,
            role,
            next(r.name for r in style.roles if r.name != role),
            "open" if is_open else "finished",
            turns,
            next_role,
            next_role == role and not session.writing,
            style.min_turns,
            style.max_turns,
            is_open and role == style.roles[0].name and count >= style.min_turns,
            topics=shown_goal.topics if shown else None,
            goal=shown_goal.goal if shown else None,
            knowledge=tuple(facts.values()) if facts is not None else None,
            profile=goal.profile if PROFILE in sees else None,
            situation=goal.situation if SITUATION in sees else None,
            step=session.step if shown and style.steps else None,
            checks=session.checks if shown else None,
        )

    def _shown(self, goal: GoalView) -> Shown:
        """The goal's labels as workers read them (made once a goal: every view of its sessions shows them)."""
        made = self.shown.get(goal.goal_id)
        if made is None:
            show = self.style.shown
            made = self.shown[goal.goal_id] = Shown(
                {f.id: Fact(f.id, show(f.head), show(f.relation), show(f.tail)) for f in goal.knowledge},
                tuple(map(show, goal.topics)),
                tuple(tuple(map(show, line)) for line in goal.goal),
            )
        return made

    async def wait(self, worker: str, sid: str, since: int, timeout: float) -> SessionView:
        """The view once the session has more than ``since`` turns or is finished, or after ``timeout`` s."""
        session, _ = self.member(worker, sid)
        if len(session.turns) <= since and session.finished is None:
            if session.changed is None:
                session.changed = asyncio.Event()
            try:
                await asyncio.wait_for(session.changed.wait(), timeout)
            except TimeoutError:
                pass
        return self.view(worker, sid)

    # ---------------------------------------------------------------- turns and finishing

    async def turn(self, worker: str, sid: str, text: Any, facts: Any = (), step: Any = None) -> TurnAccepted:
        """Accept a turn: refused (:class:`Refused`) when it is not this worker's (403, 409) or is malformed
        (400); answered once it is on disk."""
        session, role = self.member(worker, sid)
        self._may_speak(session, role)
        text, facts = clean_text(text), self._clicked(session, role, facts)
        step = self._step(session, role, step)
        session.writing = True
        try:
            if session.judge is None:
                session.judge = self._judge(session)
            verdict = session.judge.turn(text, facts)
            turn = Turn(len(session.turns), role, worker, text, facts, self.clock(), verdict, step)
            await self._write({"event": "turn", "session": sid, **turn.as_dict()})
        except BaseException:
            session.judge = None  # its focus moved on for a turn that was not written: made again next time
            raise
        finally:
            session.writing = False
        session.turns.append(turn)
        self._changed(session)
        sees = self.style.role(role).sees
        return TurnAccepted(sid, turn.index, verdict.warnings if KNOWLEDGE in sees else None)

    def _judge(self, session: Session) -> Judge:
        judge = self.make_judge(session.goal)
        for earlier in session.turns:  # the focus of claims as it was after them
            judge.turn(earlier.text, earlier.facts)
        return judge

    def _may_speak(self, session: Session, role: str) -> None:
        count = len(session.turns)
        if session.finished is not None:
            raise Refused(409, "this session is finished")
        if session.writing:
            raise Refused(409, "the previous turn is still being written; try again")
        if count >= self.style.max_turns:
            raise Refused(409, f"this session has its {self.style.max_turns} turns, the most it may have; end it")
        if self.style.speaker(count) != role:
            raise Refused(409, f"it is not your turn: the {self.style.speaker(count)} speaks next")

    def _clicked(self, session: Session, role: str, facts: Any) -> tuple[str, ...]:
        if not isinstance(facts, list | tuple) or not all(isinstance(f, str) for f in facts):
            raise Refused(400, "'facts' must be a list of fact ids")
        visible = KNOWLEDGE in self.style.role(role).sees
        for fact in facts:
            if not visible or session.goal.fact(fact) is None:
                raise Refused(400, f"unknown fact id {fact[:40]!r}")
        return tuple(dict.fromkeys(facts))

    def _step(self, session: Session, role: str, step: Any) -> int | None:
        if not self.style.steps:
            if step is not None:
                raise Refused(400, f"a {self.style.name} session has no goal steps")
            return None
        if step is None:
            return session.step
        steps = len(session.goal.steps)
        if GOAL not in self.style.role(role).sees:
            raise Refused(400, "only the role that sees the goal moves it on")
        if isinstance(step, bool) or not isinstance(step, int) or not session.step <= step <= max(steps, 1):
            raise Refused(400, f"'step' must be a goal step from {session.step} to {max(steps, 1)}")
        return step

    async def finish(self, worker: str, sid: str) -> Checks:
        """End the session (its first role only, once it has the style's minimum of turns) with its checks."""
        session, role = self.member(worker, sid)
        if role != self.style.roles[0].name:
            raise Refused(403, f"only the {self.style.roles[0].name} ends the session")
        if session.checks is not None:
            return session.checks  # finished already: the same answer again
        if session.writing:
            raise Refused(409, "a turn is still being written; try again")
        if len(session.turns) < self.style.min_turns:
            raise Refused(409, f"a session takes at least {self.style.min_turns} turns ({len(session.turns)} so far)")
        checks = session_checks(self.style, session.goal, session.turns)
        now = self.clock()
        session.writing = True
        try:
            await self._write({"event": "finish", "session": sid, "checks": checks.as_dict(), "time": now})
        finally:
            session.writing = False
        self._close(session, checks, now)
        return checks

    # ---------------------------------------------------------------- the requester's view

    def progress(self) -> Progress:
        counts: dict[str, list[int]] = {}
        summaries = []
        for s in self.sessions.values():
            if not s.durable:
                continue
            for worker in s.workers.values():
                count = counts.setdefault(worker, [0, 0, 0])
                count[0] += 1
                count[1] += s.finished is not None
                count[2] += sum(1 for t in s.turns if t.worker == worker)
            warned = sum(1 for t in s.turns if t.verdict.warnings)
            last = s.finished or (s.turns[-1].time if s.turns else s.started)
            state = "finished" if s.finished is not None else "open"
            passed = s.checks.passed if s.checks else None
            summaries.append(
                SessionSummary(
                    s.id, s.goal.goal_id, dict(s.workers), state, len(s.turns), warned, s.started, last, passed
                )
            )
        finished = sum(1 for s in summaries if s.state == "finished")
        return Progress(
            self.style.name,
            len(self.goals),
            self.per_goal,
            len(self.goals) * self.per_goal,
            finished,
            len(summaries) - finished,
            len(self.waiting),
            tuple(summaries),
            tuple(WorkerCount(w, *c) for w, c in sorted(counts.items())),
        )

    def collected(self) -> list[tuple[GoalView, Collected]]:
        """The finished sessions, in the order they were paired."""
        return [
            (
                s.goal,
                Collected(
                    s.id,
                    s.goal.goal_id,
                    self.style.name,
                    dict(s.workers),
                    tuple(s.turns),
                    s.started,
                    s.finished,
                    s.checks,
                ),
            )
            for s in self.sessions.values()
            if s.finished is not None and s.checks is not None
        ]


def clean_text(text: Any) -> str:
    """A turn's text as kept: whitespace runs (line breaks too) as one space, control characters dropped;
    empty or longer than :data:`MAX_TEXT` characters is refused (400)."""
    if not isinstance(text, str):
        raise Refused(400, "'text' must be a string")
    text = " ".join("".join(c for c in text if unicodedata.category(c) != "Cc" or c.isspace()).split())
    if not text:
        raise Refused(400, "the text is empty")
    if len(text) > MAX_TEXT:
        raise Refused(400, f"the text has {len(text)} characters; a turn may have at most {MAX_TEXT}")
    return text


def session_checks(style: Style, goal: GoalView, turns: Sequence[Turn]) -> Checks:
    """A session's automatic checks: every goal topic named in the conversation, in the goal's order (and, with
    goal steps, the last step reached); the turn count within the style's bounds; facts clicked and stated."""
    said = [form(turn.text) for turn in turns]
    first = [next((i for i, text in enumerate(said) if key and key in text), None) for key in map(form, goal.topics)]
    named = tuple(topic for topic, at in zip(goal.topics, first) if at is not None)
    in_order = None not in first and first == sorted(first)  # type: ignore[type-var]
    last_step = max((t.step or 1 for t in turns), default=1)
    reached = in_order and (not style.steps or not goal.steps or last_step >= len(goal.steps))
    turns_ok = style.min_turns <= len(turns) <= style.max_turns
    return Checks(
        goal_reached=reached,
        topics_named=named,
        turns=len(turns),
        turns_ok=turns_ok,
        facts_clicked=sum(len(t.facts) for t in turns),
        facts_stated=sum(len(t.verdict.stated) for t in turns),
        turns_with_warnings=sum(1 for t in turns if t.verdict.warnings),
        passed=reached and turns_ok,
    )


def turn_from(event: dict[str, Any]) -> Turn:
    verdict = event["verdict"]
    return Turn(
        event["index"],
        event["role"],
        event["worker"],
        event["text"],
        tuple(event["facts"]),
        event["time"],
        Verdict(
            tuple(verdict["stated"]),
            tuple(verdict["not_stated"]),
            tuple(verdict["also_stated"]),
            tuple(Claimed(c["name"], c["attrname"], c["said"], tuple(c["graph"])) for c in verdict["contradicted"]),
            tuple(verdict["warnings"]),
        ),
        event.get("step"),
    )


def checks_from(data: dict[str, Any]) -> Checks:
    return Checks(**{**data, "topics_named": tuple(data["topics_named"])})
