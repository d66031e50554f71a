"""A batch of responses as metrics see it: texts, tokens, and the counts and judgements metrics share."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import polars as pl

from kgforge.evaluation.caption import by_response, cider_d, meteor
from kgforge.evaluation.embedding import WordVectors, embedding_scores
from kgforge.evaluation.lexical import LexicalStats
from kgforge.evaluation.model_metrics import BertScores, BleurtScores, bert_score, bleurt
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
    vectors: WordVectors | None = field(default=None, repr=False)  # --vectors: the embedding metrics
    model_path: Path | None = None  # --model-path: BERTScore
    bleurt_path: Path | None = None  # --bleurt-path: BLEURT (a regression checkpoint, not BERTScore's encoder)

    @property
    def has_vectors(self) -> bool:
        return self.vectors is not None

    @property
    def has_model(self) -> bool:
        return self.model_path is not None

    @property
    def has_bleurt(self) -> bool:
        return self.bleurt_path is not None

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

    @cached_property
    def token_lists(self) -> tuple[list[list[str]], list[list[str]]]:
        """Prediction and gold tokens as Python lists (for the metrics computed response by response)."""
        gold = self.gold_tokens
        return self.prediction_tokens.to_list(), gold.to_list() if gold is not None else []

    @cached_property
    def cider(self) -> list[float]:
        predictions, golds = self.token_lists
        return cider_d(predictions, golds)

    @cached_property
    def meteor(self) -> list[float]:
        predictions, golds = self.token_lists
        return meteor(predictions, by_response(golds))

    @cached_property
    def embedding(self) -> dict[str, list[float | None]]:
        if self.vectors is None:
            raise RuntimeError("no word vectors for embedding metrics")  # metrics that need them are filtered out
        predictions, golds = self.token_lists
        return embedding_scores(self.vectors, predictions, golds)

    @cached_property
    def bertscore(self) -> BertScores:
        if self.model_path is None:
            raise RuntimeError("no model for BERTScore")
        return bert_score(
            self.model_path, self.responses["prediction"].to_list(), self.responses["gold"].fill_null("").to_list()
        )

    @cached_property
    def bleurt(self) -> BleurtScores:
        if self.bleurt_path is None:
            raise RuntimeError("no checkpoint for BLEURT")  # metrics that need it are filtered out
        return bleurt(
            self.bleurt_path, self.responses["prediction"].to_list(), self.responses["gold"].fill_null("").to_list()
        )
