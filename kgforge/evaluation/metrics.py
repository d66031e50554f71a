"""The built-in metrics, registered by name (``kgforge metrics`` lists them).

Lexical ones are defined in :mod:`kgforge.evaluation.lexical` (the official DuConv script's F1, BLEU-1/2,
DISTINCT-1/2; BLEU-3/4 and ROUGE-L beside them), knowledge ones in :mod:`kgforge.evaluation.knowledge`.
``percent=True`` marks the shares (counts over counts, in [0, 1]) that tables show in percent; CIDEr-D (0-10),
the embedding cosines, BERTScore and BLEURT keep their own scale.
"""

from __future__ import annotations

import re

import numpy as np
import polars as pl

from kgforge.evaluation.batch import Batch
from kgforge.evaluation.registry import METRICS, register_metric

OFFICIAL = ("f1", "bleu1", "bleu2", "distinct1", "distinct2")  # what the official DuConv script prints

register_metric(
    "f1",
    "character F1 of prediction and gold (official DuConv)",
    needs=["gold"],
    corpus=lambda batch: batch.lexical.f1_corpus(),
    percent=True,
    resample=lambda batch, weights: batch.lexical.f1_resampled(weights),
)(lambda batch: batch.lexical.f1_per_response())


def _register_bleu(n: int) -> None:
    official = " (official DuConv)" if n <= 2 else ""
    register_metric(
        f"bleu{n}",
        f"BLEU-{n}: cover rates of 1..{n}-grams, official DuConv brevity penalty{official}",
        needs=["gold"],
        corpus=lambda batch: batch.lexical.bleu_corpus(n),
        percent=True,
        resample=lambda batch, weights: batch.lexical.bleu_resampled(n, weights),
    )(lambda batch: batch.lexical.bleu_per_response(n))


def register_distinct(n: int) -> None:
    """DISTINCT-n (any n >= 1; the registry calls this for a ``distinctN`` it does not know yet)."""
    official = " (official DuConv)" if n <= 2 else " (the official DuConv formula)"
    register_metric(
        f"distinct{n}",
        f"DISTINCT-{n}: distinct / all predicted {n}-grams over the corpus{official}",
        aliases=[f"distinct-{n}", f"dist{n}", f"dist-{n}"],
        corpus=lambda batch: batch.lexical.distinct_corpus(n),
        percent=True,
        # no resample: a resample drawn with replacement repeats responses, whose n-grams count again in the
        # total but not among the distinct ones, so every resample's value falls below the corpus' (on KdConv
        # travel dev the whole 95 % interval of Distinct-1 lay under it): no interval rather than a wrong one
    )(lambda batch: batch.lexical.distinct_per_response(n))


_DISTINCT = re.compile(r"^dist(?:inct)?[-_]?(\d+)$", re.IGNORECASE)


def _distinct_family(name: str) -> bool:
    found = _DISTINCT.match(name)
    if found and int(found.group(1)) >= 1:
        register_distinct(int(found.group(1)))
    return bool(found)


for _n in (1, 2, 3, 4):
    _register_bleu(_n)
    register_distinct(_n)
METRICS.families.append(_distinct_family)
register_metric(
    "rouge_l",
    "ROUGE-L: LCS F-measure over tokens, beta 1.2, mean over responses",
    aliases=["rouge"],
    needs=["gold"],
    percent=True,
)(lambda batch: batch.lexical.rouge_l_per_response())
register_metric(
    "cider",
    "CIDEr-D as pycocoevalcap computes it: tf-idf n-grams 1-4, clipped, length penalty sigma 6, x10",
    aliases=["cider_d", "cider-d"],
    needs=["gold"],
    default=False,
)(lambda batch: batch.cider)
register_metric(
    "meteor",
    "METEOR (NLTK): unigram alignment by exact and stem matches (synonyms when WordNet is installed)",
    needs=["gold"],
    default=False,
    percent=True,
)(lambda batch: batch.meteor)


def _register_embedding(name: str, description: str, aliases: list[str]) -> None:
    register_metric(name, description, aliases=aliases, needs=["gold", "vectors"])(lambda batch: batch.embedding[name])


_register_embedding(
    "embedding_average", "Embedding Average: cosine of the mean word vectors (--vectors)", ["average", "emb_avg"]
)
_register_embedding(
    "vector_extrema", "Vector Extrema: cosine of the per-dimension extreme word vectors (--vectors)", ["extrema"]
)
_register_embedding(
    "greedy_matching",
    "Greedy Matching: each word to its closest word on the other side, both ways (--vectors)",
    ["greedy"],
)


def _share(numerator: str, denominator: str) -> pl.Expr:
    return pl.when(pl.col(denominator) > 0).then(pl.col(numerator) / pl.col(denominator))


def _micro(batch: Batch, numerator: str, denominator: str) -> float | None:
    total = int(batch.knowledge[denominator].sum())
    return int(batch.knowledge[numerator].sum()) / total if total else None


def _micro_resampled(batch: Batch, numerator: str, denominator: str, weights: np.ndarray) -> np.ndarray:
    """``_micro`` of each resample: undefined (NaN) where a resample draws no denominator."""
    top, bottom = (weights @ batch.knowledge[name].to_numpy().astype(np.float64) for name in (numerator, denominator))
    return np.divide(top, bottom, out=np.full(len(weights), np.nan), where=bottom > 0)


def _harmonic_resampled(p: np.ndarray, r: np.ndarray) -> np.ndarray:
    total = p + r
    return np.divide(2 * p * r, total, out=np.where(np.isnan(total), np.nan, 0.0), where=total > 0)


def _harmonic(p: float | None, r: float | None) -> float | None:
    if p is None or r is None:
        return None
    return 2 * p * r / (p + r) if p + r else 0.0


@register_metric(
    "k_precision",
    "knowledge precision: fact mentions true in the graph / fact mentions",
    needs=["knowledge"],
    corpus=lambda batch: _micro(batch, "k_true", "k_mentions"),
    percent=True,
    resample=lambda batch, weights: _micro_resampled(batch, "k_true", "k_mentions", weights),
)
def knowledge_precision(batch: Batch) -> pl.Series:
    return batch.knowledge.select(_share("k_true", "k_mentions")).to_series()


@register_metric(
    "k_recall",
    "knowledge recall: gold knowledge the response expresses / gold knowledge",
    needs=["knowledge"],
    corpus=lambda batch: _micro(batch, "k_expressed", "k_gold"),
    percent=True,
    resample=lambda batch, weights: _micro_resampled(batch, "k_expressed", "k_gold", weights),
)
def knowledge_recall(batch: Batch) -> pl.Series:
    return batch.knowledge.select(_share("k_expressed", "k_gold")).to_series()


@register_metric(
    "k_f1",
    "knowledge F1: harmonic mean of knowledge precision and recall",
    needs=["knowledge"],
    corpus=lambda batch: _harmonic(_micro(batch, "k_true", "k_mentions"), _micro(batch, "k_expressed", "k_gold")),
    percent=True,
    resample=lambda batch, weights: _harmonic_resampled(
        _micro_resampled(batch, "k_true", "k_mentions", weights),
        _micro_resampled(batch, "k_expressed", "k_gold", weights),
    ),
)
def knowledge_f1(batch: Batch) -> pl.Series:
    p, r = _share("k_true", "k_mentions"), _share("k_expressed", "k_gold")
    return batch.knowledge.select(pl.when(p + r > 0).then(2 * p * r / (p + r)).otherwise(p * 0)).to_series()


def _register_bertscore(part: str, what: str) -> None:
    register_metric(
        f"bertscore_{part}",
        f"BERTScore {what} over a local model (--model-path; extra 'bertscore')",
        aliases=[f"bert_{part}"],
        needs=["gold", "model"],
    )(lambda batch: getattr(batch.bertscore, part))


for _part, _what in (("p", "precision"), ("r", "recall"), ("f1", "F1")):
    _register_bertscore(_part, _what)
register_metric(
    "bleurt",
    "BLEURT: a BLEURT checkpoint's regression score for (gold, prediction) (--bleurt-path; extra 'bleurt')",
    needs=["gold", "bleurt"],
)(lambda batch: batch.bleurt.score)


def official_lines(corpus: dict[str, float | None]) -> str | None:
    """The official script's output for these values, byte for byte (F1 in percent; the script prints BLEU
    and DISTINCT as fractions followed by a % sign), or None when one of its metrics was not computed."""
    f1 = corpus.get("f1")
    if f1 is None or any(corpus.get(name) is None for name in OFFICIAL):
        return None
    return (
        f"F1: {f1 * 100:.2f}%\nBLEU1: {corpus['bleu1']:.3f}%\nBLEU2: {corpus['bleu2']:.3f}%\n"
        f"DISTINCT1: {corpus['distinct1']:.3f}%\nDISTINCT2: {corpus['distinct2']:.3f}%\n"
    )
