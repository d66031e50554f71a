"""What synthesis works with: a goal made ready to draft (its knowledge as the seed writes it), a drafted turn,
and what verification found in a turn."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgforge.core.jsonio import JsonObject

VERDICTS = ("supported", "contradicted", "unsupported", "chitchat")
FAILING = frozenset({"contradicted", "unsupported"})


@dataclass(frozen=True)
class Turn:
    """One turn of a drafted dialogue: its speaker (a role id of the style), its text as released (DuConv's
    and the DuRecDial resource files' word-segmented) and, for DuRecDial, the goal (1-based) it serves."""

    speaker: str
    text: str
    goal: int | None = None

    def as_reply(self) -> JsonObject:
        """The turn as the model wrote it in its reply (``{"speaker", "text"[, "goal"]}``)."""
        return {"speaker": self.speaker, "text": self.text} | ({} if self.goal is None else {"goal": self.goal})


@dataclass
class GoalMaterial:
    """One goal made ready to draft: ``knowledge`` as the seed's files write it (``[head, relation, tail]``,
    DuConv's segmented), ``rows`` the same triples with their IRIs (``s``, ``p``, ``o``, ``o_is_entity`` and the
    labels), ``fields`` the style's goal fields as its layout writes them (DuConv ``goal``; DuRecDial ``goal``,
    ``user_profile``, ``situation``), ``steps`` a DuRecDial goal sequence. ``context`` holds texts a turn may
    quote besides the knowledge (the situation's date and time, the profile)."""

    number: int  # the goal's place in the goals file (0-based): output is written in this order
    goal_id: str
    dialogue_id: str
    language: str
    topics: list[str]
    topic_labels: list[str]  # as the layout writes them (DuConv's segmented)
    topic_names: list[str]  # as the graph names them: what a turn says
    knowledge: list[list[str]]
    rows: list[dict[str, Any]]
    fields: dict[str, Any] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)
    context: str = ""
    seed: int = 0


@dataclass(frozen=True)
class StatedFact:
    """A fact of the graph a turn states: its id, the triple (IRIs; a literal value as text), the labels, and
    the SPARQL ASK that checks it with its values as substitutions (never pasted into the query)."""

    id: str
    subject: str
    relation: str
    value: str
    value_is_entity: bool
    labels: tuple[str, str, str]
    ask: str
    bindings: dict[str, str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "s": self.subject,
            "p": self.relation,
            "o": self.value,
            "o_is_entity": self.value_is_entity,
            "labels": list(self.labels),
            "ask": self.ask,
            "bindings": self.bindings,
        }


@dataclass(frozen=True)
class TurnCheck:
    """What verification found in one turn: the facts it states, its claims (as ``kgforge ground`` writes them:
    ``name``, ``attrname``, ``said``, ``span``, ``graph``, ``status``) and its verdict (one of ``VERDICTS``)."""

    verdict: str
    facts: tuple[StatedFact, ...] = ()
    claims: tuple[dict[str, Any], ...] = ()

    @property
    def failing(self) -> bool:
        return self.verdict in FAILING

    def reason(self) -> str:
        """The first failing claim in words, for a repair prompt and the rejected file."""
        for claim in self.claims:
            if claim["status"] in FAILING:
                graph = "、".join(str(v)[:40] for v in claim["graph"][:3]) or "-"
                return f"{claim['name']} {claim['attrname'] or ''}: said {claim['said']!r}, the graph has {graph}"
        return self.verdict
