"""A dialogue's messages grounded one after another against the graph, each written back with the facts it states in
the attrs shape and its claims, and the prediction scored against the gold attrs a message carries.

A message is ``{"message": text, "attrs": [...]}``, ``attrs`` (gold, optional) in the attrs shape: ``{"name":
subject, "attrname": relation, "attrvalue": value}`` (KdConv's annotation; the dialogue files kgforge writes and
reads carry the same). A message without ``attrs`` gets the prediction as ``attrs``; a message with ``attrs`` keeps
them untouched and gets the prediction as ``predicted_attrs``. The messages are annotated when any of them has
``attrs``: then every message is gold (one without ``attrs`` states nothing, as KdConv leaves the key out there)
and gets ``predicted_attrs``, so the input's annotation stays as it was. Scores compare the triples of
:func:`~kgforge.grounding.scoring.attr_key`, once per message (:class:`~kgforge.grounding.scoring.Tally`).

The loop here runs once per message of every dialogue grounded: compiled with mypyc in a regular install
(``hatch_build.py``). A dataset's room says how its dialogues hold their messages and topics
(``kgforge/datasets/kdconv/grounding.py``).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DialogueMatcher, Stated, as_claim
from kgforge.grounding.scoring import Tally, attr_key


@dataclass
class MessagesGrounding:
    """Dialogues whose messages were grounded (:func:`ground_messages`), with what the report counts: messages
    read, facts predicted, messages scored against gold and the tally scoring them, claim statuses, and the
    dialogues' topics the graph does not name (once a dialogue)."""

    dialogues: list[dict[str, Any]] = field(default_factory=list)
    messages: int = 0
    predicted: int = 0
    gold_messages: int = 0
    tally: Tally = field(default_factory=lambda: Tally(Counter()))
    claims: Counter[str] = field(default_factory=Counter)
    topics_not_in_graph: list[str] = field(default_factory=list)


def ground_messages(
    index: GroundingIndex, matcher: DialogueMatcher, messages: list[dict[str, Any]], into: MessagesGrounding
) -> list[dict[str, Any]]:
    """``messages`` grounded in order by ``matcher`` (its focus carried from one to the next), each a copy with
    its prediction and its ``claims`` (see the module docstring); the counts and scores are added to ``into``."""
    grounded = []
    annotated = any(isinstance(m.get("attrs"), list) for m in messages)
    for message in messages:
        found, said = matcher.message(message["message"])
        attrs = [as_attr(index, stated) for stated in found]
        into.messages += 1
        into.predicted += len(attrs)
        into.claims.update(c.status for c in said)
        row = dict(message)
        if annotated:
            into.gold_messages += 1
            given = message.get("attrs")
            gold = given if isinstance(given, list) else []
            into.tally.add({attr_key(a) for a in attrs}, {attr_key(a) for a in gold if isinstance(a, dict)})
            row["predicted_attrs"] = attrs
        else:
            row["attrs"] = attrs
        row["claims"] = [as_claim(index, c) for c in said]
        grounded.append(row)
    return grounded


def as_attr(index: GroundingIndex, stated: Stated) -> dict[str, str]:
    """A fact the matcher found stated, in the attrs shape: its subject by the graph's label."""
    return {"name": index.label(stated.fact.subject), "attrname": stated.fact.relation, "attrvalue": stated.fact.value}
