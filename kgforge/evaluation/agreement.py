"""Agreement between annotators and significance between systems, as the seeds' human evaluations report
them: Fleiss' κ (statsmodels), Krippendorff's α (the ``krippendorff`` package), percent agreement (all raters
agree; at least two agree, as KdConv reports "2 of 3"), and paired tests between two systems on the same items
(paired t-test, Wilcoxon signed-rank, sign test; scipy).

Ratings are a matrix of items × raters (``nan`` where a rater left an item). Fleiss' κ needs every rater on
every item: items with a missing rating are left out of it and ``n_items`` says how many it used; α takes the
missing ratings as they are.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

MIN_ITEMS = 2
Level = Literal["nominal", "ordinal", "interval", "ratio"]  # Krippendorff's levels of measurement
LEVELS: tuple[Level, ...] = ("nominal", "ordinal", "interval", "ratio")


@dataclass(frozen=True)
class Agreement:
    raters: int
    items: int
    fleiss_kappa: float | None
    kappa_items: int  # items every rater rated (the ones κ uses)
    krippendorff_alpha: float | None
    alpha_level: str
    all_agree: float | None  # share of fully rated items on which every rater gave the same score
    at_least_two_agree: float | None  # share on which some score was given by two raters or more

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def agreement(ratings: np.ndarray, level: str = "ordinal") -> Agreement:
    """Agreement of the raters (columns) over the items (rows)."""
    ratings = np.asarray(ratings, dtype=float)
    items, raters = ratings.shape
    complete = ratings[~np.isnan(ratings).any(axis=1)]
    kappa = all_agree = two_agree = None
    if raters >= 2 and len(complete) >= MIN_ITEMS:
        from statsmodels.stats.inter_rater import aggregate_raters, fleiss_kappa

        table, _ = aggregate_raters(complete)
        with np.errstate(invalid="ignore", divide="ignore"):  # one category only: kappa is undefined (None)
            value = float(fleiss_kappa(table, method="fleiss"))
        kappa = value if math.isfinite(value) else None
        all_agree = float(np.mean([len(set(row)) == 1 for row in complete]))
        two_agree = float(np.mean([len(set(row)) < len(row) for row in complete]))
    alpha = None
    rated = ratings[(~np.isnan(ratings)).sum(axis=1) >= 2]
    if raters >= 2 and len(rated) >= MIN_ITEMS and len(np.unique(rated[~np.isnan(rated)])) >= 2:
        import krippendorff

        alpha = float(krippendorff.alpha(reliability_data=rated.T, level_of_measurement=_level(level)))
    elif raters >= 2 and len(rated) >= MIN_ITEMS:
        alpha = 1.0  # every rating the same value: perfect agreement (the package divides 0 by 0)
    return Agreement(raters, items, kappa, len(complete), alpha, level, all_agree, two_agree)


def _level(level: str) -> Level:
    """``level`` as one of :data:`LEVELS` (callers check a rubric's level when they read it)."""
    for known in LEVELS:
        if level == known:
            return known
    raise ValueError(f"{level!r} is no level of measurement ({', '.join(LEVELS)})")


@dataclass(frozen=True)
class PairedTest:
    a: str
    b: str
    n: int
    mean_a: float
    mean_b: float
    wins: int  # items where a scored higher
    losses: int
    ties: int
    t: float | None
    t_p: float | None
    wilcoxon: float | None
    wilcoxon_p: float | None
    sign_p: float | None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_test(a: str, b: str, x: np.ndarray, y: np.ndarray) -> PairedTest:
    """``x`` (system a) against ``y`` (system b) on the same items, in the same order."""
    from scipy import stats

    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    diff = x - y
    wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
    t = t_p = w = w_p = sign_p = None
    if len(diff) >= MIN_ITEMS and np.any(diff != diff[0]):
        result = stats.ttest_rel(x, y)
        t, t_p = float(result.statistic), float(result.pvalue)
    if np.any(diff != 0):
        result = stats.wilcoxon(x, y)
        w, w_p = float(result.statistic), float(result.pvalue)
        sign_p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue)
    return PairedTest(
        a,
        b,
        len(diff),
        float(x.mean()) if len(x) else math.nan,
        float(y.mean()) if len(y) else math.nan,
        wins,
        losses,
        len(diff) - wins - losses,
        t,
        t_p,
        w,
        w_p,
        sign_p,
    )
