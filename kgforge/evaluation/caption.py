"""CIDEr-D and METEOR, the caption-evaluation metrics MSDE's suite reports, on the batch's tokens.

**CIDEr-D** is computed as ``pycocoevalcap.cider.Cider`` computes it (the COCO caption evaluation, which names
it CIDEr): n-grams of orders 1..4 weighted by tf-idf, the idf taken over the references of the evaluated
corpus (``log(|corpus|) - log(max(1, df))``), clipped matches, a Gaussian length penalty with σ = 6, the mean
over orders times 10. Its quirks are kept so the numbers are the library's: the length in the penalty is the
number of *bigrams*, and a response's score is per response, the corpus value their mean. Tokens are the
batch's tokens (empty tokens dropped, as ``str.split()`` drops them in the library).

**METEOR** is NLTK's ``meteor_score`` (Banerjee & Lavie 2005 as NLTK implements it: unigram alignment in
stages, F-mean with α = 0.9, fragmentation penalty β = 3, γ = 0.5). The stages that run: *exact* and
*stem* (Porter) always; *synonym* (WordNet) only when NLTK's WordNet data is installed (``nltk.download
('wordnet')``, which needs the network; kgforge never downloads it) — :func:`meteor_stages` says which ran
and the report states it. For Chinese text the stem stage changes nothing, so METEOR is the exact-match one.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from typing import Any

import polars as pl

CIDER_N = 4
CIDER_SIGMA = 6.0

Tokens = Sequence[str]


# ---------------------------------------------------------------- CIDEr-D

_GRAM_SEPARATOR = "\x1f"  # n-gram keys keep their token boundaries (the library keys n-grams by tuples)


def _gram_counts(tokens: pl.Series, n: int) -> pl.DataFrame:
    """``row, order, key, tf``: each response's n-grams of orders 1..n (empty tokens dropped)."""
    words = (
        pl.DataFrame({"t": tokens}, schema={"t": pl.List(pl.String)})
        .with_row_index("row")
        .explode("t")
        .filter(pl.col("t").is_not_null() & (pl.col("t").str.strip_chars() != ""))
        .with_columns(pos=pl.int_range(pl.len()).over("row"), size=pl.len().over("row"))
    )
    orders = []
    for k in range(1, n + 1):
        key = pl.concat_str([pl.col("t").shift(-i) for i in range(k)], separator=_GRAM_SEPARATOR)
        orders.append(
            words.with_columns(key=key)
            .filter(pl.col("pos") + k <= pl.col("size"))
            .group_by("row", "key")
            .agg(tf=pl.len())
            .with_columns(order=pl.lit(k, pl.Int32))
        )
    return pl.concat(orders).select("row", "order", "key", "tf")


@dataclass(frozen=True)
class _GoldSide:
    """What CIDEr-D takes from the gold responses alone: the same for every system scored against them."""

    size: int
    frequency: pl.DataFrame  # order, key, df
    weights: pl.DataFrame  # row, order, key, w
    norms: pl.DataFrame  # row, order, norm_g
    lengths: pl.DataFrame  # row, len_g


def _weighted(grams: pl.DataFrame, frequency: pl.DataFrame, size: int) -> pl.DataFrame:
    log_size = math.log(float(size))
    return grams.join(frequency, on=["order", "key"], how="left").with_columns(
        w=pl.col("tf") * (log_size - pl.max_horizontal(pl.col("df").fill_null(0), 1).cast(pl.Float64).log())
    )


@lru_cache(maxsize=2)
def _gold_side(golds: tuple[tuple[str, ...], ...], n: int) -> _GoldSide:
    grams = _gram_counts(pl.Series([list(g) for g in golds], dtype=pl.List(pl.String)), n)
    frequency = grams.group_by("order", "key").agg(df=pl.col("row").n_unique())
    weights = _weighted(grams, frequency, len(golds)).select("row", "order", "key", "w")
    norms = weights.group_by("row", "order").agg(norm_g=pl.col("w").pow(2).sum().sqrt())
    lengths = grams.filter(pl.col("order") == 2).group_by("row").agg(len_g=pl.col("tf").sum())  # the library's length
    return _GoldSide(len(golds), frequency, weights, norms, lengths)


def cider_d(
    predictions: Sequence[Tokens], golds: Sequence[Tokens], n: int = CIDER_N, sigma: float = CIDER_SIGMA
) -> list[float]:
    """CIDEr-D per response against its one gold response, as ``pycocoevalcap``'s ``CiderScorer`` computes it,
    over all responses at once (polars): tf-idf weights ``tf * (log N - log max(1, df))`` with ``df`` the number
    of responses whose gold has the n-gram, clipped products over the norms per order, the Gaussian penalty on
    the difference of bigram counts, the mean over orders, times 10. The gold side is computed once for all the
    systems scored against the same gold responses."""
    size = len(predictions)
    if size == 0:
        return []
    gold = _gold_side(tuple(tuple(g) for g in golds), n)
    pred = _weighted(_gram_counts(pl.Series(list(predictions), dtype=pl.List(pl.String)), n), gold.frequency, size)
    rows = pl.DataFrame({"row": pl.arange(0, size, eager=True, dtype=pl.UInt32)})
    grid = rows.join(pl.DataFrame({"order": list(range(1, n + 1))}, schema={"order": pl.Int32}), how="cross")
    norm_p = pred.group_by("row", "order").agg(norm_p=pl.col("w").pow(2).sum().sqrt())
    dots = (
        pred.join(gold.weights, on=["row", "order", "key"], how="inner")
        .group_by("row", "order")
        .agg(dot=(pl.min_horizontal("w", "w_right") * pl.col("w_right")).sum())
    )
    values = (
        grid.join(norm_p, on=["row", "order"], how="left")
        .join(gold.norms, on=["row", "order"], how="left")
        .join(dots, on=["row", "order"], how="left")
        .with_columns(pl.col("norm_p", "norm_g", "dot").fill_null(0.0))
        .with_columns(
            val=pl.when((pl.col("norm_p") != 0) & (pl.col("norm_g") != 0))
            .then(pl.col("dot") / (pl.col("norm_p") * pl.col("norm_g")))
            .otherwise(pl.col("dot"))
        )
        .group_by("row")
        .agg(pl.col("val").sum())
    )
    len_p = pred.filter(pl.col("order") == 2).group_by("row").agg(len_p=pl.col("tf").sum())
    scored = (
        rows.join(values, on="row", how="left")
        .join(len_p, on="row", how="left")
        .join(gold.lengths, on="row", how="left")
        .with_columns(pl.col("val").fill_null(0.0), pl.col("len_p", "len_g").fill_null(0))
        .sort("row")
        .select(
            pl.col("val")
            * (-((pl.col("len_p").cast(pl.Float64) - pl.col("len_g").cast(pl.Float64)) ** 2) / (2 * sigma**2)).exp()
            / n
            * 10.0
        )
    )
    return scored.to_series().to_list()


# ---------------------------------------------------------------- METEOR


class _NoSynonyms:
    """A WordNet that knows no word: NLTK's synonym stage then matches nothing."""

    @staticmethod
    def synsets(word: str, *args: Any, **kwargs: Any) -> list[Any]:
        return []


class _CachedStemmer:
    """NLTK's Porter stemmer, each word stemmed once (the same stems; METEOR stems every word of every pair)."""

    def __init__(self) -> None:
        from nltk.stem.porter import PorterStemmer

        self.stem = lru_cache(maxsize=200_000)(PorterStemmer().stem)


@cache
def _wordnet() -> Any:
    """NLTK's WordNet when its data is installed, else a WordNet without synonyms."""
    try:
        from nltk.corpus import wordnet

        wordnet.ensure_loaded()
        return wordnet
    except (LookupError, OSError):
        return _NoSynonyms()


def meteor_stages() -> list[str]:
    """The METEOR matching stages that run here."""
    return ["exact", "stem"] + ([] if isinstance(_wordnet(), _NoSynonyms) else ["synonym"])


def meteor(predictions: Sequence[Tokens], references: Sequence[Sequence[Tokens]]) -> list[float]:
    """NLTK's METEOR per response, over the stages :func:`meteor_stages` names."""
    try:
        from nltk.translate.meteor_score import meteor_score
    except ImportError as exc:  # a dependency, but a trimmed install may lack it
        raise ImportError("METEOR needs nltk: pip install nltk") from exc
    stemmer, wordnet = _CachedStemmer(), _wordnet()
    scores = []
    for hyp, group in zip(predictions, references, strict=True):
        words = [token for token in hyp if token.strip()]
        refs = [[token for token in ref if token.strip()] for ref in group]
        scores.append(float(meteor_score(refs, words, stemmer=stemmer, wordnet=wordnet)))
    return scores


def by_response(values: Sequence[Tokens]) -> list[list[Tokens]]:
    """One reference per response, as METEOR takes references."""
    return [[tokens] for tokens in values]


__all__ = ["by_response", "cider_d", "meteor", "meteor_stages"]
