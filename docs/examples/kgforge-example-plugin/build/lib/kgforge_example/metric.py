"""Metric ``exclamations``: the share of responses that end with an exclamation mark."""

from __future__ import annotations

from kgforge.evaluation import Metric


def _ends_excited(batch):  # one value per response
    return [1.0 if text.rstrip().endswith(("!", "！")) else 0.0 for text in batch.responses["prediction"]]


EXCLAMATIONS = Metric(
    "exclamations",
    "share of responses ending with ! (example plug-in)",
    _ends_excited,
    aliases=("bangs",),
    default=False,
)
