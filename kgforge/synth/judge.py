"""``kgforge eval --llm-judge RUBRIC``: responses (or conversations) scored by an LLM on a shipped rubric's aspects
and scales, through the same client as synthesis (cache by request hash, 429, one deadline per request); given
the human ratings of a rating round (the folder `kgforge rate sheet` wrote and the annotators filled, which `rate
import` reads), the judge scores the very items they rated and its agreement with them is reported: Cohen's κ and
quadratically weighted κ against the annotators' median, Spearman's ρ against their mean.

It lives beside synthesis, whose client adapter (:mod:`kgforge.synth.client`) it shares; the client itself
(:mod:`kgforge.llm`) is a layer every stage may use, so the judge could move to kgforge.evaluation with it.
"""

from __future__ import annotations

import json
import math
from collections import Counter
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
from scipy import stats

from kgforge.core.errors import ArgumentError
from kgforge.core.jsonio import json_lines
from kgforge.core.output import OutputFile
from kgforge.core.records import Record, omitted_when_none
from kgforge.evaluation.rating import Rubric, read_filled, rubric, system_units
from kgforge.synth.client import DEFAULT_KEY_ENV, ChatClient
from kgforge.synth.replies import BadReply, parsed

SYSTEM = {
    "zh": "你是对话评测的标注员。只用 JSON 回答，不写别的。",
    "en": "You are an annotator of dialogue evaluations. You answer with JSON only.",
}


@dataclass(frozen=True)
class JudgeReport(Record):
    """What the judge gave: per aspect its mean score over the items it judged; the items it could not judge (its
    replies unusable within the tries); with human ratings, its agreement with them per aspect."""

    rubric: str
    model: str
    items: int
    judged: int
    unjudged: int
    bad_replies: dict[str, int]
    means: dict[str, float | None]  # aspect -> the judge's mean score
    requests: int  # sent + from the cache
    sent: int
    out: Path | None  # the judge's score per item (JSON lines)
    agreement: dict[str, dict[str, Any]] | None = omitted_when_none()  # aspect -> kappa, weighted kappa, spearman, n


@dataclass(frozen=True)
class JudgeSettings:
    url: str
    model: str
    cache: Path
    key_env: str = DEFAULT_KEY_ENV
    timeout: float = 120.0
    language: str = "zh"
    concurrency: int = 4
    max_tries: int = 3

    def client(self) -> ChatClient:
        return ChatClient(self.url, self.model, self.cache, self.key_env, self.timeout)


def judge_responses(
    predictions: Path, rubric_name: str | Path, settings: JudgeSettings, out: OutputFile | None = None
) -> JudgeReport:
    """Each response (a turn rubric) or conversation (a dialogue rubric) of ``predictions`` scored by the model."""
    chosen = _scorable(rubric(rubric_name))
    units = system_units(Path(predictions), "dialogue" if chosen.unit == "dialogue" else "turn")
    items = {unit.key: (unit.context, unit.text) for unit in units}
    scores, client, bad = _judge(chosen, items, settings)
    return _report(chosen, settings, items, scores, client, bad, out, None)


def judge_ratings(
    folder: Path, rubric_name: str | Path, settings: JudgeSettings, out: OutputFile | None = None
) -> JudgeReport:
    """The items of a filled rating round (rated on ``rubric_name``) scored by the model, and its agreement with
    the annotators."""
    filled = read_filled(Path(folder))
    chosen = _scorable(filled.rubric)
    if rubric(rubric_name).name != chosen.name:
        raise ArgumentError(
            "--llm-judge", f"the rating round in {folder} rated on {chosen.name!r}, not {rubric_name!r}"
        )
    items = {item: (shown[0], shown[-1]) for item, shown in sorted(filled.shown.items())}
    scores, client, bad = _judge(chosen, items, settings)
    agreement = {aspect.key: _agreement(aspect.key, scores, filled.ratings) for aspect in chosen.aspects}
    return _report(chosen, settings, items, scores, client, bad, out, agreement)


def _scorable(chosen: Rubric) -> Rubric:
    if chosen.unit == "pair":
        raise ArgumentError(
            "--llm-judge", f"rubric {chosen.name} compares two outputs side by side; give a turn or dialogue rubric"
        )
    return chosen


def _judge(
    chosen: Rubric, items: dict[str, tuple[str, str]], settings: JudgeSettings
) -> tuple[dict[str, dict[str, float]], ChatClient, Counter[str]]:
    client = settings.client()
    bad: Counter[str] = Counter()
    ask = _asker(chosen, client, settings, bad)
    with ThreadPoolExecutor(settings.concurrency, thread_name_prefix="judge") as pool:
        judged = dict(zip(items, pool.map(ask, items.values())))
    return {key: scores for key, scores in judged.items() if scores is not None}, client, bad


def _asker(
    chosen: Rubric, client: ChatClient, settings: JudgeSettings, bad: Counter[str]
) -> Callable[[tuple[str, str]], dict[str, float] | None]:
    language = "en" if settings.language.startswith("en") else "zh"

    def ask(shown: tuple[str, str]) -> dict[str, float] | None:
        context, text = shown
        messages = [
            {"role": "system", "content": SYSTEM[language]},
            {"role": "user", "content": _prompt(chosen, language, context, text)},
        ]
        for _ in range(settings.max_tries):
            reply = client.send(client.body(messages, temperature=0))
            try:
                return _scores(chosen, reply.content)
            except BadReply as exc:
                bad[exc.kind] += 1
                messages = [
                    *messages,
                    {"role": "assistant", "content": reply.content[:2000]},
                    {"role": "user", "content": f"{exc}. JSON only, every aspect, each score one of its scale."},
                ]
        return None

    return ask


def _prompt(chosen: Rubric, language: str, context: str, text: str) -> str:
    shape = json.dumps({aspect.key: aspect.scale[0] for aspect in chosen.aspects})
    parts = [chosen.instructions_text(language), "", f"Context:\n{context or '-'}", "", f"To rate:\n{text}", ""]
    return "\n".join([*parts, f"Reply with JSON only, one score per aspect from its scale: {shape}"])


def _scores(chosen: Rubric, content: str) -> dict[str, float]:
    value = parsed(content)
    if not isinstance(value, dict):
        raise BadReply("wrong shape", "expected an object of aspect: score")
    scores = {}
    for aspect in chosen.aspects:
        score = value.get(aspect.key)
        if score is None and aspect.optional:
            continue
        if isinstance(score, bool) or not isinstance(score, (int, float)) or float(score) not in aspect.scale:
            raise BadReply("wrong shape", f"{aspect.key} must be one of {list(aspect.scale)}, got {score!r}")
        scores[aspect.key] = float(score)
    return scores


def _agreement(aspect: str, scores: dict[str, dict[str, float]], ratings: pl.DataFrame) -> dict[str, Any]:
    humans = (
        ratings.filter(pl.col("aspect") == aspect)
        .group_by("item")
        .agg(median=pl.col("score").median(), mean=pl.col("score").mean())
    )
    rows = [
        (scores[item][aspect], median, mean)
        for item, median, mean in humans.iter_rows()
        if aspect in scores.get(item, {})
    ]
    if len(rows) < 2:
        return {"n": len(rows), "cohen_kappa": None, "weighted_kappa": None, "spearman": None}
    judge, median, mean = (np.array(column, dtype=float) for column in zip(*rows))
    median = np.floor(median)  # an even count of annotators: the lower of the middle two, a score of the scale
    constant = np.ptp(judge) == 0 or np.ptp(mean) == 0  # no ranking to correlate
    rho = None if constant else stats.spearmanr(judge, mean).statistic
    return {
        "n": len(rows),
        "cohen_kappa": kappa(judge, median),
        "weighted_kappa": kappa(judge, median, weighted=True),
        "spearman": None if rho is None or math.isnan(rho) else float(rho),
    }


def kappa(a: np.ndarray, b: np.ndarray, weighted: bool = False) -> float | None:
    """Cohen's κ of two raters over the same items (quadratically weighted with ``weighted``); None when chance
    agreement is total (both gave one score throughout)."""
    values = sorted(set(a.tolist()) | set(b.tolist()))
    index = {v: i for i, v in enumerate(values)}
    k = len(values)
    observed = np.zeros((k, k))
    for x, y in zip(a.tolist(), b.tolist()):
        observed[index[x], index[y]] += 1
    observed /= observed.sum()
    expected = np.outer(observed.sum(axis=1), observed.sum(axis=0))
    spread = max(k - 1, 1)
    weights = np.array([[((i - j) / spread) ** 2 if weighted else float(i != j) for j in range(k)] for i in range(k)])
    chance = float((weights * expected).sum())
    return None if chance == 0 else 1 - float((weights * observed).sum()) / chance


def _report(
    chosen: Rubric,
    settings: JudgeSettings,
    items: dict[str, tuple[str, str]],
    scores: dict[str, dict[str, float]],
    client: ChatClient,
    bad: Counter[str],
    out: OutputFile | None,
    agreement: dict[str, dict[str, Any]] | None,
) -> JudgeReport:
    if out is not None:
        out.write_bytes(json_lines([{"item": key, "scores": scores.get(key)} for key in items]))
    means = {}
    for aspect in chosen.aspects:
        given = [s[aspect.key] for s in scores.values() if aspect.key in s]
        means[aspect.key] = sum(given) / len(given) if given else None
    return JudgeReport(
        chosen.name,
        settings.model,
        len(items),
        len(scores),
        len(items) - len(scores),
        dict(sorted(bad.items())),
        means,
        client.sent + client.cache_hits,
        client.sent,
        out.path if out is not None else None,
        agreement,
    )
