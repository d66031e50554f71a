"""Predicted facts scored against gold ones: true and false positives and false negatives, micro and per relation,
and the precision, recall and F1 they give.

A fact is compared as a ``(subject, relation, value)`` triple; a fact in the attrs shape (``{"name", "attrname",
"attrvalue"}``: a message's gold ``attrs``, what the grounder writes beside them) is compared by :func:`attr_key`,
its subject and value in matching form (:func:`~kgforge.grounding.normalise.form`: width, script, case and spaces
do not count). Every grounder that scores itself (KdConv's attrs, DuRecDial's per-utterance knowledge, a
plug-in's), ``kgforge ground train`` and the demo count with :class:`Tally`. Compiled with mypyc in a regular
install (``hatch_build.py``): a tally is added to once per message grounded.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from typing import Any

from kgforge.grounding.normalise import form

Triple = tuple[str, str, str]
_COUNTS = ("tp", "fp", "fn")


@dataclass(frozen=True)
class GroundScore:
    """Precision, recall and F1 of predicted against gold annotations (None where undefined)."""

    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class GroundScores:
    """The scores of a tally: over all facts (micro) and for each relation, relations in sorted order."""

    micro: GroundScore
    per_relation: dict[str, GroundScore]


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

    def scores(self) -> GroundScores:
        relations = sorted({r for r, _ in self.counts})
        total = [sum(self.counts[r, k] for r in relations) for k in _COUNTS]
        return GroundScores(
            prf(total[0], total[1], total[2]),
            {r: prf(self.counts[r, "tp"], self.counts[r, "fp"], self.counts[r, "fn"]) for r in relations},
        )


def prf(tp: int, fp: int, fn: int) -> GroundScore:
    """The score of ``tp``, ``fp`` and ``fn``: precision, recall and F1, each None where nothing decides it."""
    precision = tp / (tp + fp) if tp + fp else None
    recall = tp / (tp + fn) if tp + fn else None
    f1 = (2 * tp / (2 * tp + fp + fn)) if tp else (0.0 if fp + fn else None)
    return GroundScore(tp, fp, fn, precision, recall, f1)


def attr_key(attr: dict[str, Any]) -> Triple:
    """A fact in the attrs shape as the triple it is compared by (see the module docstring)."""
    return form(str(attr.get("name", ""))), str(attr.get("attrname", "")).strip(), form(str(attr.get("attrvalue", "")))
