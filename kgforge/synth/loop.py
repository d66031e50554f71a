"""One goal from draft to a released or a dropped dialogue: the draft asked for (or written by the templated
realiser), every turn verified, a failing turn sent back with its verdict for a rewrite, a goal not reached sent
back for a new draft, a reply that cannot be used asked again — each within ``--max-tries`` — and what still fails
dropped with its reason. Every request is a function of the goal and the replies before it, so a rerun asks the
cache the same questions in the same order and writes the same dialogue."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgforge.llm import ChatRequest
from kgforge.synth.client import ChatClient, LLMError, Reply
from kgforge.synth.model import GoalMaterial, Turn, TurnCheck
from kgforge.synth.prompts import Prompts
from kgforge.synth.realise import realise
from kgforge.synth.replies import BadReply, draft_turns, rewritten_turn
from kgforge.synth.styles import SynthStyle
from kgforge.synth.verify import Verifier

MAX_QUOTED = 2_000  # characters of a bad reply sent back with the request to answer again


@dataclass
class Outcome:
    """What became of one goal: its record (released) or its rejection, and what it cost."""

    number: int
    record: dict[str, Any] | None = None
    rejected: dict[str, Any] | None = None
    drafts: int = 0  # drafts asked for (or realised), redrafts for a goal not reached included
    repairs: int = 0  # rewrites of a failing turn asked for
    repaired: int = 0  # turns that failed and then passed
    retries: int = 0  # requests asked again after a reply that could not be used
    bad_replies: Counter[str] = field(default_factory=Counter)
    sent: int = 0
    cached: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    verdicts: Counter[str] = field(default_factory=Counter)  # of the released turns

    @property
    def drop_kind(self) -> str | None:
        return None if self.rejected is None else self.rejected["kind"]


class Dropped(Exception):
    """A dialogue that cannot be released: the kind of reason, the reason, and the dialogue as it stood."""

    def __init__(self, kind: str, reason: str, turns: list[Turn], checks: list[TurnCheck]) -> None:
        super().__init__(reason)
        self.kind, self.reason, self.turns, self.checks = kind, reason, turns, checks


class GaveUp(BadReply):
    """No usable reply within ``--max-tries`` requests: the last one's kind and problem."""

    def __init__(self, kind: str, problem: str, tries: int) -> None:
        super().__init__(kind, problem)
        self.tries = tries


@dataclass(frozen=True)
class Settings:
    max_tries: int = 3
    seed: int = 0
    temperature: float = 0.7
    layout: str = ""


class Drafter:
    """Drafts, verifies and repairs the dialogue of one goal at a time (threads share one Drafter)."""

    def __init__(
        self,
        style: SynthStyle,
        prompts: Prompts | None,
        client: ChatClient | None,
        verifier: Verifier,
        written: Callable[[str], str],
        settings: Settings,
    ) -> None:
        self.style, self.prompts, self.client, self.verifier = style, prompts, client, verifier
        self.written, self.settings = written, settings

    def draft_messages(self, material: GoalMaterial) -> list[dict[str, str]]:
        assert self.prompts is not None
        first, second = self.style.roles
        values = {
            "first": first,
            "second": second,
            "knowledge": json.dumps(material.knowledge, ensure_ascii=False),
            "topics": "、".join(material.topic_names),
        }
        values |= self.style.prompt_values(material)
        return [
            {"role": "system", "content": self.prompts.render("system")},
            {"role": "user", "content": self.prompts.render("draft", **values)},
        ]

    def body(self, messages: list[dict[str, str]]) -> ChatRequest:
        assert self.client is not None
        return self.client.body(messages, temperature=self.settings.temperature, seed=self.settings.seed)

    def run(self, material: GoalMaterial) -> Outcome:
        outcome = Outcome(material.number)
        try:
            self._run(material, outcome)
        except Dropped as exc:
            _drop(outcome, material, exc.kind, exc.reason, exc.turns, exc.checks)
        except GaveUp as exc:
            _drop(outcome, material, f"bad reply: {exc.kind}", f"{exc.tries} replies could not be used: {exc}", [], [])
        except LLMError as exc:
            _drop(outcome, material, "endpoint error", str(exc), [], [])
        return outcome

    def _run(self, material: GoalMaterial, outcome: Outcome) -> None:
        outcome.drafts += 1
        if self.client is None:
            turns = realise(material, self.style.plan(material), self.verifier.check, self.written)
            return self._finish(material, outcome, turns, self.verifier.check(material, [t.text for t in turns]))
        thread = self.draft_messages(material)
        draft = self._ask(outcome, thread, lambda reply: draft_turns(reply, self.style, material, self.written))
        for redraft in range(1, self.settings.max_tries + 1):
            turns, checks = self._repaired(material, outcome, thread, draft)
            problem = self.style.reached(material, turns)
            if problem is None:
                return self._finish(material, outcome, turns, checks)
            if redraft == self.settings.max_tries:
                raise Dropped("goal not reached", problem, turns, checks)
            # the conversation goes on from the dialogue as it stands: each new draft is asked by a new request
            thread = [*thread, _said(turns), {"role": "user", "content": self._render("retry", problem=problem)}]
            draft = self._ask(outcome, thread, lambda reply: draft_turns(reply, self.style, material, self.written))
            outcome.drafts += 1
        return None

    def _repaired(
        self, material: GoalMaterial, outcome: Outcome, thread: list[dict[str, str]], turns: list[Turn]
    ) -> tuple[list[Turn], list[TurnCheck]]:
        """``turns`` verified, the first failing turn sent back for a rewrite until none fails (each turn at most
        ``max_tries`` times; then Dropped). A turn asked about again is asked in the same conversation, after its
        last rewrite, so that no request repeats an earlier one."""
        turns = list(turns)
        tries: Counter[int] = Counter()
        threads: dict[int, list[dict[str, str]]] = {}
        pending: set[int] = set()  # turns sent back whose rewrite has not passed yet
        while True:
            checks = self.verifier.check(material, [t.text for t in turns])
            failing = [i for i, check in enumerate(checks) if check.failing]
            passed = pending.difference(failing)
            outcome.repaired += len(passed)
            pending -= passed
            if not failing:
                return turns, checks
            at, check = failing[0], checks[failing[0]]
            if tries[at] >= self.settings.max_tries:
                raise Dropped(check.verdict, _turn_reason(at, check), turns, checks)
            tries[at] += 1
            pending.add(at)
            turn = turns[at]
            ask = self._render(
                "repair",
                index=at + 1,
                speaker=turn.speaker,
                text=turn.text,
                verdict=check.verdict,
                reason=check.reason(),
            )
            asked = [*threads.get(at, [*thread, _said(turns)]), {"role": "user", "content": ask}]
            outcome.repairs += 1
            new = self._ask(outcome, asked, lambda reply: rewritten_turn(reply, material, turn, self.written))
            threads[at] = [*asked, {"role": "assistant", "content": json.dumps({"text": new.text}, ensure_ascii=False)}]
            turns[at] = new

    def _ask(self, outcome: Outcome, messages: list[dict[str, str]], use: Callable[[str], Any]) -> Any:
        """``use`` of the reply to ``messages``; a reply it refuses (BadReply) is counted and asked about again,
        quoted with what was wrong, up to ``max_tries`` requests in all (then GaveUp, naming the last one)."""
        asked = messages
        for attempt in range(1, self.settings.max_tries + 1):
            reply = self._send(outcome, asked)
            try:
                return use(reply.content)
            except BadReply as exc:
                outcome.bad_replies[exc.kind] += 1
                if attempt == self.settings.max_tries:
                    raise GaveUp(exc.kind, exc.problem, attempt) from None
                outcome.retries += 1
                quoted = {"role": "assistant", "content": reply.content[:MAX_QUOTED]}
                asked = [*asked, quoted, {"role": "user", "content": self._render("retry", problem=exc.problem)}]
        raise AssertionError("max_tries is at least 1")

    def _send(self, outcome: Outcome, messages: list[dict[str, str]]) -> Reply:
        assert self.client is not None
        reply = self.client.send(self.body(messages))
        if reply.cached:
            outcome.cached += 1
        else:
            outcome.sent += 1
        outcome.prompt_tokens += reply.prompt_tokens
        outcome.completion_tokens += reply.completion_tokens
        return reply

    def _render(self, key: str, **values: Any) -> str:
        assert self.prompts is not None
        return self.prompts.render(key, **values)

    def _finish(self, material: GoalMaterial, outcome: Outcome, turns: list[Turn], checks: list[TurnCheck]) -> None:
        failing = next((i for i, check in enumerate(checks) if check.failing), None)
        problem = self.style.reached(material, turns)
        if failing is not None or problem is not None or not turns:  # the realiser's: none by construction
            why = _turn_reason(failing, checks[failing]) if failing is not None else problem or "no turn"
            kind = checks[failing].verdict if failing is not None else "goal not reached"
            return _drop(outcome, material, kind, why, turns, checks)
        outcome.verdicts.update(check.verdict for check in checks)
        outcome.record = self.style.record(material, turns, checks, self.settings.layout)
        return None


def _said(turns: list[Turn]) -> dict[str, str]:
    reply = json.dumps({"turns": [t.as_reply() for t in turns]}, ensure_ascii=False)
    return {"role": "assistant", "content": reply}


def _turn_reason(at: int, check: TurnCheck) -> str:
    return f"turn {at + 1}: {check.verdict}: {check.reason()}"


def _drop(
    outcome: Outcome, material: GoalMaterial, kind: str, reason: str, turns: list[Turn], checks: list[TurnCheck]
) -> None:
    outcome.record = None
    outcome.rejected = {
        "goal_id": material.goal_id,
        "dialogue_id": material.dialogue_id,
        "goal_line": material.number + 1,
        "kind": kind,
        "reason": reason,
        "turns": [
            {"speaker": t.speaker, "text": t.text} | ({"verdict": c.verdict} if c is not None else {})
            for t, c in zip(turns, [*checks, *[None] * (len(turns) - len(checks))])
        ],
    }
