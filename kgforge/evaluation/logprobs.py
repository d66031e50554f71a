"""Perplexity from the token log-probabilities a user's model wrote (``kgforge eval --logprobs FILE``), the figure
KdConv and DuConv report for their generation models.

The file is JSON lines, one response a line, in either shape:

* kgforge's: ``{"id": "d1-3", "logprobs": [-1.2, -0.3, …]}`` — the natural-log probability the model gave each
  token of the gold response (``tokens``, a list of the same length, may come beside it and is checked);
* an OpenAI chat completion (or its ``choices[0]``) asked with ``logprobs: true``: the ``logprob`` of each entry
  of ``choices[0].logprobs.content``.

Perplexity is ``exp(-Σ logprob / N)`` over every token of every response (the corpus figure the seeds report);
the mean of the responses' own perplexities is given beside it. A line that is not one of these shapes, or holds
a log-probability that is not a finite number ≤ 0, is an error naming the file and the line: nothing is
skipped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.records import Record


@dataclass(frozen=True)
class PerplexityReport(Record):
    """Perplexity over the responses of a log-probability file."""

    file: Path
    responses: int
    tokens: int
    perplexity: float  # exp of the mean negative log-probability over all tokens
    mean_response_perplexity: float  # the mean of each response's own perplexity
    lowest: float
    highest: float


def perplexity(path: Path) -> PerplexityReport:
    totals, counts = [], []
    for record in iter_json_lines(Path(path)):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        values = _logprobs(record.value, f"{path}:{record.line}")
        totals.append(sum(values))
        counts.append(len(values))
    if not counts:
        raise InputError(f"{path}: no response with log-probabilities")
    own = [math.exp(-total / count) for total, count in zip(totals, counts)]
    return PerplexityReport(
        Path(path),
        len(counts),
        sum(counts),
        math.exp(-sum(totals) / sum(counts)),
        sum(own) / len(own),
        min(own),
        max(own),
    )


def _logprobs(value: Any, where: str) -> list[float]:
    if isinstance(value, dict) and "choices" in value:
        choices = value["choices"]
        value = choices[0] if isinstance(choices, list) and choices else None
    if isinstance(value, dict) and isinstance(value.get("logprobs"), dict):  # OpenAI: logprobs.content[].logprob
        content = value["logprobs"].get("content")
        if not isinstance(content, list):
            raise InputError(f"{where}: logprobs.content must be a list of {{token, logprob}}")
        found: list[object] = [entry.get("logprob") if isinstance(entry, dict) else None for entry in content]
    elif isinstance(value, dict) and isinstance(value.get("logprobs"), list):
        found = value["logprobs"]
        tokens = value.get("tokens")
        if tokens is not None and (not isinstance(tokens, list) or len(tokens) != len(found)):
            raise InputError(f"{where}: 'tokens' must be a list as long as 'logprobs' ({len(found)})")
    else:
        raise InputError(
            f'{where}: expected {{"logprobs": [numbers]}} or an OpenAI chat completion with logprobs.content'
        )
    if not found:
        raise InputError(f"{where}: no token log-probabilities")
    numbers: list[float] = []
    for number in found:
        if isinstance(number, bool) or not isinstance(number, (int, float)) or not math.isfinite(number) or number > 0:
            raise InputError(f"{where}: {number!r} is no log-probability (a finite number <= 0, natural log)")
        numbers.append(float(number))
    return numbers
