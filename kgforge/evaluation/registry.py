"""One metric registry: a name, a function from a batch of responses to one value per response, and
(optionally) how the corpus value is made. Adding a metric is a few lines::

    from kgforge.evaluation import register_metric

    @register_metric("length", "tokens in the prediction")
    def length(batch):
        return batch.lexical.lengths["pred_len"]

Without ``corpus`` the corpus value is the mean of the per-response values (nulls left out). ``needs``
names what the metric cannot do without: ``gold`` (reference responses) or ``knowledge`` (a domain graph);
a metric whose needs are not met by an evaluation is left out of it and the report says why.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import polars as pl

from kgforge.evaluation._kgforge import ArgumentError

if TYPE_CHECKING:
    from kgforge.evaluation.batch import Batch

NEEDS = ("gold", "knowledge")
PerResponse = Callable[["Batch"], "pl.Series | Sequence[float | None]"]
Corpus = Callable[["Batch"], "float | None"]


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    per_response: PerResponse
    corpus: Corpus | None = None
    needs: tuple[str, ...] = ()

    def values(self, batch: Batch) -> pl.Series:
        """One Float64 value per response (null where the metric is undefined for it)."""
        values = self.per_response(batch)
        series = values if isinstance(values, pl.Series) else pl.Series(values=list(values), dtype=pl.Float64)
        series = series.cast(pl.Float64).alias(self.name)
        if series.len() != batch.size:
            raise ArgumentError(f"metric {self.name!r}", f"gave {series.len()} values for {batch.size} responses")
        return series

    def corpus_value(self, batch: Batch, values: pl.Series) -> float | None:
        if self.corpus is not None:
            return self.corpus(batch)
        mean = values.drop_nulls().mean()
        return None if mean is None else float(mean)


class MetricRegistry:
    """Metrics by name (case-insensitive); an unknown name is refused with the closest known ones."""

    def __init__(self) -> None:
        self._metrics: dict[str, Metric] = {}

    def register(self, name: str, description: str, *, needs: Iterable[str] = (),
                 corpus: Corpus | None = None) -> Callable[[PerResponse], PerResponse]:
        needs = tuple(needs)
        unknown = [need for need in needs if need not in NEEDS]
        if unknown:
            raise ArgumentError(f"metric {name!r} needs", f"{unknown} are not among {', '.join(NEEDS)}")

        def add(function: PerResponse) -> PerResponse:
            self._metrics[name.lower()] = Metric(name, description, function, corpus, needs)
            return function

        return add

    def get(self, name: str) -> Metric:
        found = self._metrics.get(name.lower())
        if found is None:
            close = difflib.get_close_matches(name.lower(), list(self._metrics), n=3)
            hint = f"; did you mean {', '.join(close)}?" if close else f"; known: {', '.join(self.names())}"
            raise ArgumentError("metric", f"{name!r} is not a known metric{hint}")
        return found

    def names(self) -> list[str]:
        return [metric.name for metric in self._metrics.values()]

    def describe(self) -> list[dict[str, Any]]:
        return [{"name": m.name, "description": m.description, "needs": list(m.needs)} for m in self._metrics.values()]


METRICS = MetricRegistry()
register_metric = METRICS.register
