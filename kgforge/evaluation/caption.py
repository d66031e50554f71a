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
from collections import Counter
from collections.abc import Sequence
from functools import cache, lru_cache
from typing import Any

CIDER_N = 4
CIDER_SIGMA = 6.0

Tokens = Sequence[str]


# ---------------------------------------------------------------- CIDEr-D


def _ngrams(tokens: Tokens, n: int = CIDER_N) -> Counter[tuple[str, ...]]:
    words = [token for token in tokens if token.strip()]
    counts: Counter[tuple[str, ...]] = Counter()
    for k in range(1, n + 1):
        counts.update(tuple(words[i:i + k]) for i in range(len(words) - k + 1))
    return counts


def cider_d(predictions: Sequence[Tokens], references: Sequence[Sequence[Tokens]],
            n: int = CIDER_N, sigma: float = CIDER_SIGMA) -> list[float]:
    """CIDEr-D per response (``references``: the reference token lists of each response)."""
    hyps = [_ngrams(tokens, n) for tokens in predictions]
    refs = [[_ngrams(tokens, n) for tokens in group] for group in references]
    frequency: Counter[tuple[str, ...]] = Counter()
    for group in refs:
        frequency.update({gram for counts in group for gram in counts})
    log_size = math.log(float(len(refs))) if refs else 0.0

    def vector(counts: Counter[tuple[str, ...]]) -> tuple[list[dict[tuple[str, ...], float]], list[float], int]:
        vec: list[dict[tuple[str, ...], float]] = [{} for _ in range(n)]
        norm = [0.0] * n
        length = 0
        for gram, tf in counts.items():
            order = len(gram) - 1
            weight = float(tf) * (log_size - math.log(max(1.0, frequency[gram])))
            vec[order][gram] = weight
            norm[order] += weight * weight
            if order == 1:  # the library counts bigrams as the length
                length += tf
        return vec, [math.sqrt(x) for x in norm], length

    scores = []
    for hyp, group in zip(hyps, refs, strict=True):
        vec, norm, length = vector(hyp)
        total = [0.0] * n
        for ref in group:
            vec_ref, norm_ref, length_ref = vector(ref)
            penalty = math.e ** (-((length - length_ref) ** 2) / (2 * sigma ** 2))
            for order in range(n):
                value = sum(min(weight, vec_ref[order].get(gram, 0.0)) * vec_ref[order].get(gram, 0.0)
                            for gram, weight in vec[order].items())
                if norm[order] != 0 and norm_ref[order] != 0:
                    value /= norm[order] * norm_ref[order]
                total[order] += value * penalty
        scores.append(sum(total) / n / max(len(group), 1) * 10.0)
    return scores


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
    """One reference per response, as the multi-reference functions take them."""
    return [[tokens] for tokens in values]


__all__ = ["by_response", "cider_d", "meteor", "meteor_stages"]
