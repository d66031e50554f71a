"""The offline default of ``kgforge synth``: a deterministic templated realiser (zh and en) that writes each turn
from a phrase per role and goal step, and each knowledge turn from a sentence per relation. It keeps an exchange
only when verification finds that it states the fact it was written for and nothing the graph does not back, so
its dialogues pass verification by construction; a style's module plans the exchanges (``plan``), this module
writes and checks them."""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from kgforge.synth.model import GoalMaterial, Turn, TurnCheck

_DATE = re.compile(r"^\d{4}-\d{1,2}-\d{1,2}$")
LONG_VALUE = 40  # characters from which a value is quoted as a text about its head, its relation left unsaid


@dataclass(frozen=True)
class Say:
    """One planned turn: a fixed phrase (``text``), or the sentence stating a knowledge ``row``."""

    speaker: str
    text: str = ""
    row: dict[str, Any] | None = None
    goal: int | None = None


@dataclass(frozen=True)
class Exchange:
    """Turns planned together (a question and its answer): kept or left out as one, so the speakers still take
    turns. A ``needed`` exchange (a greeting, a topic brought up) is kept whatever it states."""

    says: tuple[Say, ...]
    needed: bool = False
    topic: str = ""  # exchanges about one topic: at most ``most`` of them are kept (0: no limit)
    most: int = 0


Check = Callable[[GoalMaterial, Sequence[str]], list[TurnCheck]]


def realise(material: GoalMaterial, plan: list[Exchange], check: Check, segment: Callable[[str], str]) -> list[Turn]:
    """The planned exchanges written, each knowledge turn by :func:`sentence`, those that do not verify left out."""
    kept: list[Turn] = []
    taken: dict[str, int] = {}
    stated: set[tuple[str, str, str]] = set()
    for exchange in plan:
        rows = [(say.row["s"], say.row["p"], say.row["o"]) for say in exchange.says if say.row is not None]
        if exchange.most and taken.get(exchange.topic, 0) >= exchange.most or stated.intersection(rows):
            continue
        turns = [
            Turn(say.speaker, segment(say.text if say.row is None else sentence(say.row, material.language)), say.goal)
            for say in exchange.says
        ]
        if not exchange.needed:
            checks = check(material, [t.text for t in kept + turns])[len(kept) :]
            if any(c.failing for c in checks) or not all(
                _states(c, say.row) for say, c in zip(exchange.says, checks) if say.row is not None
            ):
                continue
        kept += turns
        taken[exchange.topic] = taken.get(exchange.topic, 0) + 1
        stated.update(rows)
    return kept


def _states(check: TurnCheck, row: dict[str, Any]) -> bool:
    return any(fact.subject == row["s"] and fact.relation == row["p"] for fact in check.facts)


def sentence(row: dict[str, Any], language: str) -> str:
    """The sentence stating a knowledge row: ``{head}的{relation}是{tail}。`` / ``The {relation} of {head} is
    {tail}.``; a long text quoted as what is said of its head; a DuRecDial weather report (its relation a date)
    as the weather of that day."""
    head, relation, tail = row["s_label"], row["p_label"], row["o_label"]
    english = language.startswith("en")
    if _DATE.match(relation):
        return f"The weather in {head} on {relation}: {tail}." if english else f"{head}{relation}的天气：{tail}。"
    if len(tail) >= LONG_VALUE:
        return f"About {head}: {tail}" if english else f"说到{head}，{tail}"
    stop = "" if tail[-1:] in "。.!?！？" else "." if english else "。"
    return f"The {relation} of {head} is {tail}{stop}" if english else f"{head}的{relation}是{tail}{stop}"


_Variant = TypeVar("_Variant")


class Chooser:
    """Picks one of a phrase's variants (a string, or a pair of them), the same for the same goal and seed on
    every run."""

    def __init__(self, material: GoalMaterial) -> None:
        self.rng = random.Random(f"{material.seed}:{material.goal_id}")

    def __call__(self, variants: Sequence[_Variant]) -> _Variant:
        return variants[self.rng.randrange(len(variants))]


def facts_about(material: GoalMaterial, topic: str) -> list[dict[str, Any]]:
    """The knowledge rows with ``topic`` as head, one per relation, in the knowledge's order; goal-path rows and
    type facts left out (those are planned on their own)."""
    rows, relations = [], set()
    for row in material.rows:
        if row["s"] != topic or row.get("role") in ("path", "type") or row["p"] in relations:
            continue
        rows.append(row)
        relations.add(row["p"])
    return rows


def path_rows(material: GoalMaterial) -> list[dict[str, Any]]:
    return [row for row in material.rows if row.get("role") == "path"]


def not_in_order(names: Sequence[str], texts: Sequence[str]) -> str | None:
    """Why the topics ``names`` are not mentioned in their order in ``texts`` (None: they are): each topic must be
    said after a mention of the one before it (a name said earlier in passing, inside an address, does not
    count against the order). Spaces and case are ignored."""
    said = [_bare(text) for text in texts]
    at = (0, -1)  # (turn, character) of the previous topic's mention
    for previous, name in zip([None, *names], names):
        bare = _bare(name)
        found = [(i, t.find(bare, at[1] + 1 if i == at[0] else 0)) for i, t in enumerate(said) if i >= at[0]]
        found = [place for place in found if place[1] >= 0]
        if not found:
            if not any(bare and bare in t for t in said):
                return f"goal not reached: topic {name!r} is never mentioned"
            return f"goal not reached: topic {name!r} is not mentioned after {previous!r}"
        at = found[0]
    return None


def _bare(text: str) -> str:
    return re.sub(r"\s+", "", text).casefold()
