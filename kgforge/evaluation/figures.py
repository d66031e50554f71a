"""How evaluation figures are shown to a person, one convention for every table (``kgforge eval``, the
leaderboard's terminal and Markdown tables, ``kgforge rate import``):

* a **share** (a count over a count, in [0, 1]: F1, BLEU, Distinct, ROUGE-L, METEOR, knowledge P/R/F1, the
  goal metrics' success rates and distributions) in percent with two decimals and a ``%`` sign: ``45.12%``;
* any **other** figure on its own scale with four decimals: CIDEr-D (0-10, ×10 as pycocoevalcap),
  embedding cosines, BERTScore, BLEURT, goal completion (0-2), triples per dialogue, human means;
* a **p-value** with three decimals, or in scientific notation below 0.001 (``2.4e-07``), never ``0.000``.

JSON and the CSV/JSON files hold the values as computed (fractions), for programs. Which figures are shares:
``Metric.percent`` for a metric, :func:`kgforge.evaluation.registry.in_percent` for a leaderboard column.
"""

from __future__ import annotations

import math


def figure_text(value: float | None, percent: bool) -> str:
    """A figure as tables show it: ``45.12%`` for a share, ``9.3613`` for any other, ``-`` where undefined."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "-"
    return f"{value * 100:.2f}%" if percent else f"{value:.4f}"


def p_text(p: float | None) -> str:
    """A p-value: three decimals, or two significant digits in scientific notation below 0.001."""
    if p is None or math.isnan(p):
        return "-"
    return f"{p:.3f}" if p >= 0.001 else f"{p:.1e}"
