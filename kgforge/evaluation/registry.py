"""The metrics by name, on the one :class:`kgforge.core.registry.Registry`: a name (and aliases), a function
from a batch of responses to one value per response, and (optionally) how the corpus value is made. Adding a
metric is a few lines::

    from kgforge.evaluation import register_metric

    @register_metric("length", "tokens in the prediction")
    def length(batch):
        return batch.lexical.lengths["pred_len"]

An installed package adds metrics through the entry-point group ``kgforge.metrics`` (the entry point names a
:class:`Metric`, or a function taking a batch). Without ``corpus`` the corpus value is the mean of the
per-response values (nulls left out). ``needs`` names what the metric cannot do without: ``gold`` (reference
responses), ``knowledge`` (a domain graph), ``vectors`` (a word-vector file) or ``model`` (a local model
path); a metric whose needs are not met by an evaluation is left out of it and the report says why.
``percent=True`` says the value is a share in [0, 1], which tables show in percent (:mod:`.figures`).

Distinct-n exists for every n: ``distinct5`` (or ``distinct-5``) is registered the first time it is asked for.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.plugins import PluginError
from kgforge.core.registry import Entry, Registry, UnknownName
from kgforge.evaluation.figures import figure_text

if TYPE_CHECKING:
    from kgforge.evaluation.batch import Batch

NEEDS = ("gold", "knowledge", "vectors", "model", "bleurt")
PerResponse = Callable[["Batch"], "pl.Series | Sequence[float | None]"]
Corpus = Callable[["Batch"], "float | None"]
Resample = Callable[["Batch", "np.ndarray"], "np.ndarray"]  # corpus value per row of a resample-weights matrix


@dataclass(frozen=True)
class Metric:
    name: str
    description: str
    per_response: PerResponse
    corpus: Corpus | None = None
    needs: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    default: bool = True  # computed when no --metrics are named (False: only on request or with "all")
    percent: bool = False  # a share of something in [0, 1] (F1, BLEU, Distinct): tables show it in percent
    resample: Resample | None = None  # the corpus value of resamples, for a metric with its own ``corpus``
    origin: str | None = None  # a plug-in's entry point: what it raises while computing is one line naming it

    def shown(self, value: float | None) -> str:
        """The value as tables show it: a share in percent (``45.12%``), any other on its own scale."""
        return figure_text(value, self.percent)

    def values(self, batch: Batch) -> pl.Series:
        """One Float64 value per response (null where the metric is undefined for it)."""
        values = self._run(self.per_response, batch)
        series = values if isinstance(values, pl.Series) else pl.Series(values=list(values), dtype=pl.Float64)
        series = series.cast(pl.Float64).alias(self.name)
        if series.len() != batch.size:
            raise ArgumentError(f"metric {self.name!r}", f"gave {series.len()} values for {batch.size} responses")
        return series

    def resampled(self, batch: Batch, values: pl.Series, weights: np.ndarray) -> np.ndarray | None:
        """The corpus value of each resample (``weights``: resamples × responses, how often each is drawn):
        the weighted mean of the per-response values, or the metric's own ``resample``; None for a metric with
        its own corpus value and no way to resample it (no interval rather than a wrong one)."""
        if self.resample is not None:
            return self.resample(batch, weights)
        if self.corpus is not None:
            return None
        known = values.is_not_null().to_numpy().astype(np.float64)
        drawn = weights @ known
        sums = weights @ values.fill_null(0.0).to_numpy().astype(np.float64)
        return np.divide(sums, drawn, out=np.full(len(weights), np.nan), where=drawn > 0)

    def corpus_value(self, batch: Batch, values: pl.Series) -> float | None:
        if self.corpus is not None:
            return self._run(self.corpus, batch)
        mean = values.drop_nulls().mean()
        if mean is None:
            return None
        if not isinstance(mean, (int, float)):  # values() casts to Float64: a number, whatever the metric gave
            raise TypeError(f"metric {self.name!r}: a {values.dtype} series has no numeric mean")
        return float(mean)

    def _run(self, function: Callable[[Batch], Any], batch: Batch) -> Any:
        """``function(batch)``; a plug-in's error is a PluginError naming it and its entry point (a built-in
        metric's error is a bug of kgforge's, and reads as one)."""
        if self.origin is None:
            return function(batch)
        try:
            return function(batch)
        except KgforgeError:
            raise
        except Exception as exc:
            raise PluginError(
                f"the metric plug-in {self.name!r} ({self.origin}) failed while computing: {type(exc).__name__}: {exc}"
            ) from exc


def _as_metric(name: str, obj: Any) -> Metric:
    """A plug-in's entry point: a :class:`Metric`, or a per-response function."""
    if isinstance(obj, Metric):
        return obj if obj.name == name else replace(obj, name=name)
    if callable(obj):
        return Metric(name, (obj.__doc__ or "plug-in metric").strip().splitlines()[0], obj)
    raise ArgumentError(f"metric plug-in {name!r}", f"is a {type(obj).__name__}, not a Metric or a function")


def _plugin_metric(name: str, obj: Any) -> Entry[Metric]:
    """The entry of a metric of the entry-point group ``kgforge.metrics``, with its own aliases and description."""
    metric = _as_metric(name, obj)
    return Entry(name, metric, metric.description, metric.aliases)


class MetricRegistry(Registry[Metric]):
    """The core registry with the metric's own registration (``needs``, ``corpus``) and families: a family
    registers the metric a name asks for when the name is one of its members (Distinct-n for any n)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.families: list[Callable[[str], bool]] = []

    def register_metric(
        self,
        name: str,
        description: str,
        *,
        needs: Iterable[str] = (),
        corpus: Corpus | None = None,
        aliases: Iterable[str] = (),
        default: bool = True,
        percent: bool = False,
        resample: Resample | None = None,
    ) -> Callable[[PerResponse], PerResponse]:
        needs, aliases = tuple(needs), tuple(aliases)
        unknown = [need for need in needs if need not in NEEDS]
        if unknown:
            raise ArgumentError(f"metric {name!r} needs", f"{unknown} are not among {', '.join(NEEDS)}")

        def add(function: PerResponse) -> PerResponse:
            self.register(
                name,
                Metric(
                    name, description, function, corpus, needs, aliases, default, percent=percent, resample=resample
                ),
                aliases=aliases,
                description=description,
            )
            return function

        return add

    def register(self, name: str, obj: Any = None, **kwargs: Any) -> Any:
        if obj is not None and not isinstance(obj, Metric):
            obj = _as_metric(name, obj)
        if obj is not None and kwargs.get("origin"):  # a plug-in's: its errors while computing name it
            obj = replace(obj, origin=kwargs["origin"])
        return super().register(name, obj, **kwargs)

    def entry(self, name: str) -> Any:
        if str(name).lower() not in self:
            any(family(str(name).strip()) for family in self.families)
        return super().entry(name)

    def metric(self, name: str) -> Metric:
        """The metric called ``name`` (or an alias); an unknown name is an ArgumentError with "did you mean"."""
        try:
            return self.get(name)
        except UnknownName as exc:
            raise ArgumentError("metric", str(exc)) from None

    def describe_metrics(self) -> list[dict[str, Any]]:
        return [
            {
                "name": e.name,
                "aliases": list(e.aliases),
                "description": e.obj.description,
                "needs": list(e.obj.needs),
                "default": e.obj.default,
                "percent": e.obj.percent,
            }
            for e in self
        ]


METRICS = MetricRegistry(
    "metric", modules=("kgforge.evaluation.metrics",), entry_point_group="kgforge.metrics", plugin=_plugin_metric
)
register_metric = METRICS.register_metric


GOAL_SHARES = ("leading_success", "user_topic_consistency", "recommendation_success")
GOAL_SHARE_PREFIXES = ("info_", "completion_")  # the Info bands' and the completion grades' shares


def in_percent(column: str) -> bool:
    """Whether a leaderboard column is a share that tables show in percent (:mod:`.figures`): a metric marked
    ``percent``, or a goal success rate or distribution share; goal completion (0-2), triples and properties per
    dialogue, human means and every other metric keep their own scale."""
    if column in GOAL_SHARES or column.startswith(GOAL_SHARE_PREFIXES):
        return True
    try:
        return METRICS.metric(column).percent
    except ArgumentError:  # a human aspect, or a goal figure that is a mean
        return False
