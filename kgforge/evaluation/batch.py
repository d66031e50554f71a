"""A batch of responses as metrics see it: texts, tokens, and the counts and judgements metrics share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl

from kgforge.evaluation.lexical import LexicalStats
from kgforge.evaluation.segmentation import tokenize


@dataclass
class Batch:
    """``responses`` has one row per response with ``prediction`` and ``gold`` (null without a reference).
    ``judge_knowledge``, when a domain graph is at hand, gives the per-response knowledge counts
    (``k_mentions, k_true, k_gold, k_expressed``, ``mentions``, ``hallucinations``); it runs once, when a
    metric first asks."""

    responses: pl.DataFrame
    segmentation: str
    has_gold: bool
    judge_knowledge: Callable[[], pl.DataFrame] | None = field(default=None, repr=False)

    @property
    def size(self) -> int:
        return self.responses.height

    @property
    def has_knowledge(self) -> bool:
        return self.judge_knowledge is not None

    @cached_property
    def prediction_tokens(self) -> pl.Series:
        return tokenize(self.responses["prediction"], self.segmentation)

    @cached_property
    def gold_tokens(self) -> pl.Series | None:
        return tokenize(self.responses["gold"].fill_null(""), self.segmentation) if self.has_gold else None

    @cached_property
    def lexical(self) -> LexicalStats:
        return LexicalStats(self.prediction_tokens, self.gold_tokens)

    @cached_property
    def knowledge(self) -> pl.DataFrame:
        if self.judge_knowledge is None:
            raise RuntimeError("no domain graph for knowledge metrics")  # metrics that need it are filtered out
        return self.judge_knowledge()
