"""KdConv dialogues grounded: each message's ``attrs`` in KdConv's own shape, its ``claims``, and the scores
against gold ``attrs`` where a message has them.

A file is a JSON array of dialogues (``{"name": topic, "messages": [{"message": …, "attrs": […]}]}``). A
message without ``attrs`` gets the prediction as ``attrs``; a message with ``attrs`` keeps them untouched and
gets the prediction as ``predicted_attrs``. A dialogue is annotated when any of its messages has ``attrs``: then
every message of it is gold (one without ``attrs`` states nothing, as KdConv leaves the key out there) and
gets ``predicted_attrs``, so the input's annotation stays as it was. Scores compare ``(name, attrname, attrvalue)`` triples, each in
matching form (:func:`~kgforge.grounding.normalise.form`: width, script, case and spaces do not count),
once per message: micro precision, recall and F1 over all messages of annotated dialogues, and the same per
relation.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_container
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import (
    DEFAULT_OPTIONS,
    DialogueMatcher,
    MatchOptions,
    Stated,
    as_claim,
)
from kgforge.grounding.normalise import form
from kgforge.sources.dialogue_layouts import KDCONV, Checked, checked_records

Triple = tuple[str, str, str]


@dataclass
class Tally:
    """True positives, false positives and false negatives, micro and per relation."""

    counts: Counter[tuple[str, str]]

    def add(self, predicted: set[Triple], gold: set[Triple]) -> None:
        for triple in predicted & gold:
            self.counts[triple[1], "tp"] += 1
        for triple in predicted - gold:
            self.counts[triple[1], "fp"] += 1
        for triple in gold - predicted:
            self.counts[triple[1], "fn"] += 1

    def scores(self) -> dict[str, Any]:
        relations = sorted({r for r, _ in self.counts})
        total = {k: sum(self.counts[r, k] for r in relations) for k in ("tp", "fp", "fn")}
        return {
            "micro": prf(**total),
            "per_relation": {r: prf(*(self.counts[r, k] for k in ("tp", "fp", "fn"))) for r in relations},
        }


def prf(tp: int, fp: int, fn: int) -> dict[str, Any]:
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * tp / (2 * tp + fp + fn)) if tp else (0.0 if fp + fn else None)
    return {"tp": tp, "fp": fp, "fn": fn, "precision": precision, "recall": recall, "f1": f1}


def attr_key(attr: dict[str, Any]) -> Triple:
    return form(str(attr.get("name", ""))), str(attr.get("attrname", "")).strip(), form(str(attr.get("attrvalue", "")))


def read_dialogues(path: Path, skip_invalid: bool = False) -> Checked:
    """The dialogues of a KdConv file; a record that is not one is an error naming its line, or with
    ``skip_invalid`` set aside (:func:`kgforge.sources.dialogue_layouts.checked_records`)."""
    return checked_records(path, iter_json_container(path, list), KDCONV, skip_invalid)


@dataclass
class KdconvGrounding:
    dialogues: list[dict[str, Any]]
    messages: int
    predicted: int
    gold_messages: int
    tally: Tally
    claims: Counter[str]
    topics_not_in_graph: list[str]


def ground_kdconv(
    index: GroundingIndex, dialogues: Iterable[dict[str, Any]], options: MatchOptions = DEFAULT_OPTIONS
) -> KdconvGrounding:
    out, tally, claims = [], Tally(Counter()), Counter[str]()
    messages = predicted = gold_messages = 0
    missing = []
    for dialogue in dialogues:
        topics = [dialogue["name"]] if isinstance(dialogue.get("name"), str) else []
        matcher = DialogueMatcher(index, topics, options)
        if topics and not matcher.topics:
            missing.append(topics[0])
        grounded = []
        annotated = any(isinstance(m.get("attrs"), list) for m in dialogue["messages"])
        for message in dialogue["messages"]:
            found, said = matcher.message(message["message"])
            attrs = [as_attr(index, stated) for stated in found]
            messages += 1
            predicted += len(attrs)
            claims.update(c.status for c in said)
            row = dict(message)
            if annotated:
                gold_messages += 1
                gold = message.get("attrs") if isinstance(message.get("attrs"), list) else []
                tally.add({attr_key(a) for a in attrs}, {attr_key(a) for a in gold if isinstance(a, dict)})
                row["predicted_attrs"] = attrs
            else:
                row["attrs"] = attrs
            row["claims"] = [as_claim(index, c) for c in said]
            grounded.append(row)
        out.append({**dialogue, "messages": grounded})
    return KdconvGrounding(out, messages, predicted, gold_messages, tally, claims, missing)


def as_attr(index: GroundingIndex, stated: Stated) -> dict[str, str]:
    return {"name": index.label(stated.fact.subject), "attrname": stated.fact.relation, "attrvalue": stated.fact.value}
