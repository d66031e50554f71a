"""What a model's reply must be before it is used: JSON of the shape asked for, of a sane size, in the dialogue's
language. A reply that is not is a :class:`BadReply` of one kind (``not JSON``, ``wrong shape``, ``empty``,
``huge``, ``wrong language``), which the loop counts and asks again about, within ``--max-tries``."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from kgforge.synth.client import json_reply
from kgforge.synth.model import GoalMaterial, Turn
from kgforge.synth.styles import SynthStyle

MAX_REPLY_CHARS = 64_000  # a dialogue is a few thousand characters; more is a runaway model
MAX_TURN_CHARS = 1_000
MAX_TURNS = 60
KINDS = ("not JSON", "wrong shape", "empty", "huge", "wrong language")
_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z]")
_SPACE_IN_CJK = re.compile(r"(?<=[\u3400-\u9fff]) +(?=[\u3400-\u9fff])")


class BadReply(ValueError):
    """A reply that cannot be used: ``kind`` (one of ``KINDS``) and what was wrong."""

    def __init__(self, kind: str, problem: str) -> None:
        super().__init__(f"{kind}: {problem}")
        self.kind, self.problem = kind, problem


def parsed(content: str) -> Any:
    if not content.strip():
        raise BadReply("empty", "the reply is empty")
    if len(content) > MAX_REPLY_CHARS:
        raise BadReply("huge", f"the reply has {len(content):,} characters (at most {MAX_REPLY_CHARS:,})")
    try:
        return json_reply(content)
    except ValueError as exc:
        raise BadReply("not JSON", str(exc)) from None


def draft_turns(content: str, style: SynthStyle, material: GoalMaterial, written: Callable[[str], str]) -> list[Turn]:
    """The turns of a drafted dialogue (``{"turns": [{"speaker", "text"[, "goal"]}]}``), each text as the
    layout writes it (``written``), the speakers taking turns from the style's opener."""
    value = parsed(content)
    turns = value.get("turns") if isinstance(value, dict) else None
    if not isinstance(turns, list) or not turns:
        raise BadReply("wrong shape", 'expected {"turns": [{"speaker": …, "text": …}, …]} with at least one turn')
    if len(turns) > MAX_TURNS:
        raise BadReply("huge", f"{len(turns)} turns (at most {MAX_TURNS})")
    roles = style.roles
    first = style.opener(material)
    out = []
    for i, turn in enumerate(turns):
        expected = first if i % 2 == 0 else next(r for r in roles if r != first)
        if not isinstance(turn, dict) or not isinstance(turn.get("text"), str) or not turn["text"].strip():
            raise BadReply("wrong shape", f"turn {i + 1} is not an object with a non-empty text")
        if turn.get("speaker") != expected:
            raise BadReply("wrong shape", f"turn {i + 1} is spoken by {turn.get('speaker')!r}, expected {expected!r}")
        out.append(Turn(expected, _text(turn["text"], i + 1, written), _goal(turn, i + 1, style, material)))
    language_problem(material, [t.text for t in out])
    return out


def rewritten_turn(content: str, material: GoalMaterial, turn: Turn, written: Callable[[str], str]) -> Turn:
    """The turn a repair reply (``{"text": …}``) gives instead of ``turn``."""
    value = parsed(content)
    text = value.get("text") if isinstance(value, dict) else None
    if not isinstance(text, str) or not text.strip():
        raise BadReply("wrong shape", 'expected {"text": "…"} with a non-empty text')
    new = Turn(turn.speaker, _text(text, 1, written), turn.goal)
    language_problem(material, [new.text])
    return new


def _text(text: str, at: int, written: Callable[[str], str]) -> str:
    if len(text) > MAX_TURN_CHARS:
        raise BadReply("huge", f"turn {at} has {len(text):,} characters (at most {MAX_TURN_CHARS:,})")
    return written(_SPACE_IN_CJK.sub("", " ".join(text.split())))


def _goal(turn: dict[str, Any], at: int, style: SynthStyle, material: GoalMaterial) -> int | None:
    if not style.marks_goals:
        return None
    goal = turn.get("goal")
    if isinstance(goal, bool) or not isinstance(goal, int) or not 1 <= goal <= len(material.steps):
        raise BadReply("wrong shape", f"turn {at} must name its goal as a number 1-{len(material.steps)}")
    return goal


def language_problem(material: GoalMaterial, texts: list[str]) -> None:
    """A BadReply when ``texts`` are not in the dialogue's language: what is left once the knowledge's own
    strings (names, values, which may be in another language) are taken out is mostly Chinese characters for
    ``zh``, mostly Latin letters for ``en``."""
    said = " ".join(texts)
    for value in sorted({part for triple in material.knowledge for part in triple}, key=len, reverse=True):
        if len(value) >= 2:
            said = said.replace(value, " ")
    cjk, latin = len(_CJK.findall(said)), len(_LATIN.findall(said))
    if cjk + latin < 8:
        return  # too little of its own to tell
    chinese = material.language.startswith("zh")
    share = (cjk if chinese else latin) / (cjk + latin)
    if share < 0.5:
        raise BadReply("wrong language", f"the turns are not in {material.language} ({share:.0%} of the letters are)")
