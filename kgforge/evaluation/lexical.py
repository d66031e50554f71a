"""Lexical metrics: the official DuConv F1, BLEU-1/2 and DISTINCT-1/2, their BLEU-3/4, and ROUGE-L.

What the official script (baidu/knowledge-driven-dialogue ``generative_pt/tools/eval.py``) computes, stated
here so that every number can be checked by hand; each corpus value matches the script's to rounding:

* **F1** is over *characters*: the tokens of a response are joined without spaces; hits are the characters
  the prediction and the gold share (each counted at most as often as in both). Corpus F1 sums hits,
  predicted and gold characters over all responses first: ``P = hits / predicted``, ``R = hits / gold``.
* **BLEU-n** is the geometric mean of the n-gram *cover rates* for orders 1..n times a brevity penalty.
  An n-gram is keyed by its tokens joined *without* a separator (so ``["a", "bc"]`` and ``["ab", "c"]`` are
  the same bigram); a cover rate is the clipped matches over the predicted n-grams, summed over the corpus.
  The penalty is ``exp(1 - r / c)`` when the corpus has fewer predicted tokens ``c`` than gold ``r``, else 1.
  No smoothing: BLEU-n is 0 when an order up to n has no match. BLEU-3/4 extend the script's own formula
  (it computes BLEU-3 the same way and leaves it unprinted).
* **DISTINCT-n** is the number of distinct predicted n-grams over the number of predicted n-grams, over the
  whole corpus (n-grams keyed as above).
* Tokens are what :func:`kgforge.evaluation.segmentation.tokenize` gives: an empty response is one empty
  token (0 characters, one unigram ``""``).

Where the script divides by zero (a corpus with no predicted characters, no gold characters, or not one
predicted n-gram of some order up to 3, since it always computes BLEU-3) it stops with ZeroDivisionError;
kgforge gives 0 for that value instead (0 hits of 0), and the same value the script gives everywhere else.

Per response, the same formulas on the one response (sentence level; the per-response file and the human
correlations use them). ROUGE-L is the LCS F-measure over tokens with ``beta = 1.2`` (as the COCO caption
evaluation computes it), averaged over responses.

The counting runs as polars expressions over all responses at once; only the LCS is a Python loop (a
bit-parallel LCS, one big-integer step per token).
"""

from __future__ import annotations

import math
from functools import cached_property

import numpy as np
import polars as pl

ROUGE_BETA = 1.2


class LexicalStats:
    """The counts every lexical metric is made of, for a batch of (prediction, gold) token lists; each count
    is computed once, when a metric first asks for it."""

    def __init__(self, predictions: pl.Series, golds: pl.Series | None) -> None:
        self.size = predictions.len()
        self.frame = pl.DataFrame(
            {"pred": predictions, "gold": golds if golds is not None else None},
            schema={"pred": pl.List(pl.String), "gold": pl.List(pl.String)},
        )
        self.has_gold = golds is not None
        self._tokens: dict[str, pl.DataFrame] = {}
        self._ngrams: dict[tuple[str, int], pl.DataFrame] = {}
        self._overlaps: dict[int, pl.DataFrame] = {}

    # ---------------------------------------------------------------- counts

    def _rows(self, frame: pl.DataFrame, **fill: int) -> pl.DataFrame:
        """``frame`` (keyed by ``row``) with a row for every response, missing counts as 0."""
        rows = pl.DataFrame({"row": pl.int_range(self.size, eager=True, dtype=pl.UInt32)})
        return (
            rows.join(frame, on="row", how="left")
            .with_columns([pl.col(name).fill_null(value) for name, value in fill.items()])
            .sort("row")
        )

    def tokens(self, side: str) -> pl.DataFrame:
        """``row, tok, pos, size``: one row per token of every response, in order."""
        if side not in self._tokens:
            self._tokens[side] = (
                self.frame.select(tok=pl.col(side))
                .with_row_index("row")
                .explode("tok")
                .drop_nulls("tok")
                .with_columns(pos=pl.int_range(pl.len()).over("row"), size=pl.len().over("row"))
            )
        return self._tokens[side]

    def ngram_counts(self, side: str, n: int) -> pl.DataFrame:
        """``row, key, count``: how often each n-gram (tokens joined without a separator) occurs per response.
        Rows are contiguous, so the n-gram starting at a token is its row's next ``n`` tokens when
        ``pos + n <= size``."""
        if (side, n) not in self._ngrams:
            tokens = self.tokens(side)
            keys = pl.concat_str([pl.col("tok").shift(-k) for k in range(n)]) if n > 1 else pl.col("tok")
            self._ngrams[side, n] = (
                tokens.with_columns(key=keys)
                .filter(pl.col("pos") + n <= pl.col("size"))
                .group_by("row", "key")
                .agg(count=pl.len())
            )
        return self._ngrams[side, n]

    @cached_property
    def lengths(self) -> pl.DataFrame:
        """``pred_len, gold_len``: tokens per response (an empty response has one)."""
        return self.frame.select(pred_len=pl.col("pred").list.len(), gold_len=pl.col("gold").list.len())

    def overlap(self, n: int) -> pl.DataFrame:
        """``hits, total`` per response: clipped n-gram matches and predicted n-grams of order ``n``."""
        if n not in self._overlaps:
            pred, gold = self.ngram_counts("pred", n), self.ngram_counts("gold", n)
            hits = (
                pred.join(gold, on=["row", "key"], how="inner")
                .group_by("row")
                .agg(hits=pl.min_horizontal("count", "count_right").sum())
            )
            totals = pred.group_by("row").agg(total=pl.col("count").sum())
            self._overlaps[n] = self._rows(hits.join(totals, on="row", how="full", coalesce=True), hits=0, total=0)
        return self._overlaps[n]

    def distinct(self, n: int) -> pl.DataFrame:
        """``unique, total`` per response: distinct and all predicted n-grams of order ``n``."""
        per_row = self.ngram_counts("pred", n).group_by("row").agg(unique=pl.len(), total=pl.col("count").sum())
        return self._rows(per_row, unique=0, total=0)

    def corpus_distinct(self, n: int) -> tuple[int, int]:
        counts = self.ngram_counts("pred", n)
        return counts["key"].n_unique(), int(counts["count"].sum())

    @cached_property
    def characters(self) -> pl.DataFrame:
        """``hits, pred_chars, gold_chars`` per response, over the tokens joined without spaces."""

        def chars(side: str) -> pl.DataFrame:
            return (
                self.frame.select(ch=pl.col(side).list.join("").str.split(""))
                .with_row_index("row")
                .explode("ch")
                .drop_nulls("ch")
                .group_by("row", "ch")
                .agg(count=pl.len())
            )

        pred, gold = chars("pred"), chars("gold")
        hits = (
            pred.join(gold, on=["row", "ch"], how="inner")
            .group_by("row")
            .agg(hits=pl.min_horizontal("count", "count_right").sum())
        )
        sizes = self.frame.select(
            pred_chars=pl.col("pred").list.join("").str.len_chars(),
            gold_chars=pl.col("gold").list.join("").str.len_chars(),
        ).with_row_index("row")
        return self._rows(hits, hits=0).join(sizes, on="row").sort("row")

    # ---------------------------------------------------------------- F1

    def f1_per_response(self) -> pl.Series:
        c = self.characters
        return c.select(_f1(pl.col("hits"), pl.col("pred_chars"), pl.col("gold_chars"))).to_series().alias("f1")

    def f1_corpus(self) -> float:
        c = self.characters
        hits, pred, gold = (int(c[name].sum()) for name in ("hits", "pred_chars", "gold_chars"))
        p = hits / pred if pred else 0.0
        r = hits / gold if gold else 0.0
        return 2 * p * r / (p + r) if p + r else 0.0

    # ---------------------------------------------------------------- BLEU

    def bleu_per_response(self, n: int) -> pl.Series:
        rates = [
            self.overlap(k).select(rate=_ratio(pl.col("hits"), pl.col("total"))).to_series() for k in range(1, n + 1)
        ]
        frame = self.lengths.with_columns([rate.alias(f"r{k}") for k, rate in enumerate(rates, start=1)])
        c, r = pl.col("pred_len").cast(pl.Float64), pl.col("gold_len").cast(pl.Float64)
        penalty = pl.when(c >= r).then(1.0).when(c > 0).then((1.0 - r / c).exp()).otherwise(0.0)
        all_positive = pl.all_horizontal([pl.col(f"r{k}") > 0 for k in range(1, n + 1)])
        logs = pl.sum_horizontal([pl.col(f"r{k}").log() for k in range(1, n + 1)])
        return frame.select(pl.when(all_positive).then(penalty * (logs / n).exp()).otherwise(0.0)).to_series()

    def bleu_corpus(self, n: int) -> float:
        c, r = (int(self.lengths[name].sum()) for name in ("pred_len", "gold_len"))
        penalty = 1.0
        if c < r:
            penalty = math.exp(1 - r / c) if c else 0.0
        rates = []
        for k in range(1, n + 1):
            counts = self.overlap(k)
            total = int(counts["total"].sum())
            rates.append(int(counts["hits"].sum()) / total if total else 0.0)
        if not all(rate > 0 for rate in rates):
            return 0.0
        log_sum = math.log(rates[0])
        for rate in rates[1:]:
            log_sum += math.log(rate)
        return penalty * math.exp(log_sum / n)

    # ---------------------------------------------------------------- DISTINCT

    def distinct_per_response(self, n: int) -> pl.Series:
        return self.distinct(n).select(_ratio(pl.col("unique"), pl.col("total"))).to_series()

    def distinct_corpus(self, n: int) -> float:
        unique, total = self.corpus_distinct(n)
        return unique / total if total else 0.0

    # ---------------------------------------------------------------- ROUGE-L

    def rouge_l_per_response(self, beta: float = ROUGE_BETA) -> pl.Series:
        scores = []
        for pred, gold in self.frame.select("pred", "gold").iter_rows():
            lcs = lcs_length(pred, gold)
            if not lcs:
                scores.append(0.0)
                continue
            precision, recall = lcs / len(pred), lcs / len(gold)
            scores.append((1 + beta**2) * precision * recall / (recall + beta**2 * precision))
        return pl.Series("rouge_l", scores, dtype=pl.Float64)

    # ---------------------------------------------------------------- resampled corpus values

    # Each takes ``weights``, a (resamples × responses) matrix of how often a resample draws each response, and
    # gives the corpus value of every resample from the per-response counts (no recount): one weights row of
    # ones gives the corpus value itself. What the leaderboard's bootstrap intervals are made of.

    def _summed(self, frame: pl.DataFrame, name: str, weights: np.ndarray) -> np.ndarray:
        return weights @ frame[name].to_numpy().astype(np.float64)

    def f1_resampled(self, weights: np.ndarray) -> np.ndarray:
        c = self.characters
        hits, pred, gold = (self._summed(c, name, weights) for name in ("hits", "pred_chars", "gold_chars"))
        p, r = _divide(hits, pred), _divide(hits, gold)
        return _divide(2 * p * r, p + r)

    def bleu_resampled(self, n: int, weights: np.ndarray) -> np.ndarray:
        c, r = (self._summed(self.lengths, name, weights) for name in ("pred_len", "gold_len"))
        penalty = np.where(c >= r, 1.0, np.where(c > 0, np.exp(1 - _divide(r, c)), 0.0))
        logs, positive = np.zeros(len(weights)), np.ones(len(weights), dtype=bool)
        for k in range(1, n + 1):
            counts = self.overlap(k)
            rate = _divide(self._summed(counts, "hits", weights), self._summed(counts, "total", weights))
            positive &= rate > 0
            logs += np.log(np.where(rate > 0, rate, 1.0))
        return np.where(positive, penalty * np.exp(logs / n), 0.0)


def _divide(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """``numerator / denominator`` elementwise, 0 where the denominator is 0 (as the corpus values give 0 of 0)."""
    return np.divide(numerator, denominator, out=np.zeros(len(numerator)), where=denominator > 0)


def _ratio(numerator: pl.Expr, denominator: pl.Expr) -> pl.Expr:
    return pl.when(denominator > 0).then(numerator / denominator).otherwise(0.0)


def _f1(hits: pl.Expr, pred: pl.Expr, gold: pl.Expr) -> pl.Expr:
    p, r = _ratio(hits, pred), _ratio(hits, gold)
    return pl.when(p + r > 0).then(2 * p * r / (p + r)).otherwise(0.0)


def lcs_length(a: list[str], b: list[str]) -> int:
    """Length of the longest common subsequence of two token lists (bit-parallel, Hyyrö 2004): one row of
    the LCS table is one integer, each token of ``a`` one add, and, or and subtract on it."""
    if not a or not b:
        return 0
    positions: dict[str, int] = {}
    for i, token in enumerate(b):
        positions[token] = positions.get(token, 0) | (1 << i)
    mask = (1 << len(b)) - 1
    row = mask
    for token in a:
        matches = row & positions.get(token, 0)
        row = ((row + matches) | (row - matches)) & mask
    return len(b) - row.bit_count()
