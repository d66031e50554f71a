"""The API's scoring functions that take a domain's name (``evaluate``, ``score_selection``, ``evaluate_systems``),
and the LLM judge (``llm_judge``): each opens the domain's published build once, when a domain is given, and
hands that snapshot to the stage. :mod:`kgforge.api` hands them on under the same names."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.core.errors import ArgumentError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import output_dir
from kgforge.domain.base import open_snapshot

if TYPE_CHECKING:
    from kgforge.evaluation import EvalOptions, EvalReport, Leaderboard, SelectionReport
    from kgforge.synth.judge import JudgeReport


def _path(value: Path | str | None) -> Path | None:
    return None if value is None else Path(value)


def evaluate(
    predictions: Path | str,
    *,
    gold: Path | str | None = None,
    dialogues: Path | str | None = None,
    domain: str | None = None,
    workdir: Path | str | None = None,
    human: Path | str | None = None,
    out: Path | str | None = None,
    options: EvalOptions | None = None,
    policy: ReadPolicy | None = None,
    plot: Path | str | None = None,
) -> EvalReport:
    """``kgforge eval``: score the responses in ``predictions`` (any layout of docs/evaluation.md) against
    ``gold``; with ``domain``, knowledge precision/recall against its graph; with ``human``, correlations with
    human scores (``plot``: a folder for their heatmap); ``out``: the per-response file; ``policy``: the
    reading's limits and text policy."""
    from kgforge.evaluation import EvalOptions  # lazy: start-up
    from kgforge.evaluation import evaluate as score  # lazy: start-up

    with reading(policy):
        return score(
            Path(predictions),
            gold=_path(gold),
            dialogues=_path(dialogues),
            snapshot=open_snapshot(domain, workdir),
            human=_path(human),
            out=_path(out),
            options=options or EvalOptions(),
            plot=_path(plot),
        )


def evaluate_systems(
    systems: Mapping[tuple[str, str], Path],
    *,
    gold: Path | str | None = None,
    golds: Mapping[str, Path] | None = None,
    dialogues: Path | str | None = None,
    domain: str | None = None,
    workdir: Path | str | None = None,
    options: EvalOptions | None = None,
    human: Path | str | None = None,
    out: Path | str | None = None,
    bootstrap: int = 1000,
    seed: int = 0,
    plot: Path | str | None = None,
) -> Leaderboard:
    """``kgforge eval --system``/``--systems``: every system scored as :func:`evaluate` scores one; with
    ``domain``, the knowledge metrics against its graph (one build for every system); ``out`` (a folder): the
    leaderboard files; ``plot`` (a folder): its figures (:func:`kgforge.evaluation.evaluate_systems`)."""
    from kgforge.evaluation import EvalOptions  # lazy: start-up
    from kgforge.evaluation import evaluate_systems as score  # lazy: start-up

    return score(
        systems,
        gold=_path(gold),
        golds=golds,
        dialogues=_path(dialogues),
        snapshot=open_snapshot(domain, workdir),
        options=options or EvalOptions(),
        human=_path(human),
        out=_path(out),
        bootstrap=bootstrap,
        seed=seed,
        plot=_path(plot),
    )


def score_selection(
    selected: Path | str,
    gold: Path | str,
    *,
    ks: tuple[int, ...] | None = None,
    domain: str | None = None,
    workdir: Path | str | None = None,
    out: Path | str | None = None,
) -> SelectionReport:
    """``kgforge eval --selected``: the facts ``selected`` names for each turn scored against ``gold``, KILT-style
    (at each k of ``ks``, default 1 and 5); sessions without per-turn knowledge are grounded against ``domain``."""
    from kgforge.evaluation import score_selection as score  # lazy: start-up

    chosen = {} if ks is None else {"ks": ks}
    return score(selected, gold, snapshot=open_snapshot(domain, workdir), out=out, **chosen)


def llm_judge(
    rubric: str | Path,
    *,
    url: str,
    model: str,
    predictions: Path | str | None = None,
    ratings: Path | str | None = None,
    out: Path | str | None = None,
    key_env: str | None = None,
    language: str = "zh",
    cache: Path | str | None = None,
    timeout: float = 120.0,
) -> JudgeReport:
    """``kgforge eval --llm-judge``: the responses of ``predictions``, or the items of a filled rating round
    (``ratings``: the folder `kgforge rate sheet` wrote), scored by the model at ``url`` on ``rubric``'s aspects;
    with ``ratings``, the judge's agreement with the annotators. Replies are cached in ``cache`` (default:
    ``llm-cache`` beside the input); ``out``: the judge's scores per item (none written without it)."""
    from kgforge.core.output import output_file  # lazy: start-up
    from kgforge.llm import DEFAULT_KEY_ENV  # lazy: start-up
    from kgforge.synth.judge import JudgeSettings, judge_ratings, judge_responses  # lazy: start-up

    if (predictions is None) == (ratings is None):
        raise ArgumentError("--llm-judge", "give the responses to judge (PREDICTIONS) or a rating round (--ratings)")
    source = Path(ratings if ratings is not None else predictions or "")
    folder = source if source.is_dir() else source.parent
    target = output_file(out) if out is not None else None  # the scores per item only where asked
    settings = JudgeSettings(
        url,
        model,
        output_dir(cache or folder / "llm-cache", what="--cache").make(),  # a cache names its own files
        key_env or DEFAULT_KEY_ENV,
        timeout,
        language,
    )
    if ratings is not None:
        return judge_ratings(source, rubric, settings, target)
    return judge_responses(source, rubric, settings, target)
