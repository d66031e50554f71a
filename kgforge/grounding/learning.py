"""``kgforge ground train``: the grounding choice (:mod:`kgforge.grounding.choice`) learned from annotated dialogues.

Each training file is grounded against its domain's graph with the hand rules choosing (they decide what comes
into focus, as they do when the model's training data is made), and every candidate the matcher finds is kept
with its features; a candidate is positive when the message's gold ``attrs`` hold its fact (the
``(name, attrname, attrvalue)`` comparison of :mod:`kgforge.grounding.scoring`). Each stage (values, texts) is a
logistic regression fitted by Newton's method with an L2 penalty (:data:`L2`; the bias is not penalised), so the
same data give the same weights. The thresholds are chosen out of fold inside the training data: the dialogues
are dealt into :data:`FOLDS` folds by the seed, each fold's candidates scored by a model fitted on the others,
and the pair of thresholds that gives the best micro-F1 over every gold triple (those no candidate holds count
as missed) is kept; the model written is then fitted on all the data. The claims stage is fitted the same way on
the claims of the training dialogues as written and of their corrupted copy (:mod:`kgforge.grounding.corruption`,
seeded): a claim on a changed value is positive; its threshold flags the most changed messages while flagging at
most :data:`FALSE_ALARMS` of the messages as written, out of fold. Nothing here reads a test set.
"""

from __future__ import annotations

import dataclasses
import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from kgforge.core.errors import InputError
from kgforge.core.files import sha256_file
from kgforge.core.output import output_file
from kgforge.core.records import Record
from kgforge.grounding.choice import CLAIM_FEATURES, TEXT_FEATURES, VALUE_FEATURES
from kgforge.grounding.corruption import Corrupted, corrupted_copy
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kept import load_index
from kgforge.grounding.matching import Candidate, Claim, DialogueMatcher, MatchOptions
from kgforge.grounding.model_file import RULES, model_bytes, model_document
from kgforge.grounding.normalise import form
from kgforge.grounding.registry import GROUNDERS
from kgforge.grounding.scoring import Triple, attr_key
from kgforge.store.snapshot import Snapshot

L2 = 1.0  # the penalty on each weight (features lie in [0, 1]); the bias is free
FOLDS = 5  # folds of the training dialogues the thresholds are chosen on
FALSE_ALARMS = 0.01  # the claims' threshold flags at most this share of the messages as written (out of fold)
THRESHOLDS = tuple(round(0.1 + 0.025 * i, 3) for i in range(33))  # 0.1 … 0.9, the thresholds tried


@dataclass(frozen=True)
class TrainingData:
    """Annotated dialogues (KdConv's layout, gold ``attrs``) and the domain whose graph grounds them."""

    domain: str
    dialogues: Path


@dataclass(frozen=True)
class TrainedOn(Record):
    """One training file, as the model's ``trained`` section records it."""

    domain: str
    file: str  # the file's name (not its folder: the same data give the same model wherever they lie)
    sha256: str
    dialogues: int  # annotated dialogues
    messages: int
    gold: int  # gold (name, attrname, attrvalue) triples


@dataclass(frozen=True)
class TrainReport(Record):
    """What ``kgforge ground train`` learned from, and how well the choice does out of fold on its own data."""

    out: Path
    trained_on: tuple[TrainedOn, ...]
    candidates: dict[str, int]  # candidates per stage (values, texts)
    positives: dict[str, int]  # of them, those the gold holds
    thresholds: dict[str, float]  # per stage, chosen out of fold
    seed: int
    out_of_fold: dict[str, float]  # precision, recall, f1 of the choice over the training data, out of fold
    rules: dict[str, float]  # the same for the hand rules' verdicts on the same candidates
    claims: dict[str, dict[str, float]]  # the contradiction detector on corrupted copies, out of fold and the rules'


class Samples:
    """Every candidate of the training data: stage (0 values, 1 texts), features, label, message, dialogue."""

    def __init__(self) -> None:
        self.stage: list[int] = []
        self.features: list[list[float]] = []
        self.label: list[bool] = []
        self.rule: list[bool] = []
        self.message: list[int] = []  # the message's number over all the data
        self.triple: list[Triple] = []
        self.gold: list[int] = []  # gold triples per message
        self.dialogue_of: list[int] = []  # per message: its dialogue's number over all the data
        self.dialogues = 0
        self.claims = ClaimSamples()

    def add(
        self,
        index: GroundingIndex,
        dialogue: dict[str, Any],
        options: MatchOptions,
        corrupted: tuple[dict[str, Any], list[Corrupted]] | None = None,
    ) -> None:
        """One annotated dialogue's candidates and claims, grounded with the rules choosing; and the claims of
        its ``corrupted`` copy's changed messages (:func:`~kgforge.grounding.corruption.corrupted_copy`)."""
        topics = [dialogue["name"]] if isinstance(dialogue.get("name"), str) else []
        found: list[Candidate] = []
        matcher = DialogueMatcher(index, topics, options, collect=found)
        matcher.collect_claims = []
        for message in dialogue["messages"]:
            start, claims_start = len(found), len(matcher.collect_claims)
            matcher.message(message["message"])
            if isinstance(message.get("attrs"), list):
                self.claims.add(matcher.collect_claims[claims_start:], None, self.dialogues)
            attrs = message.get("attrs") if isinstance(message.get("attrs"), list) else []
            gold = {attr_key(a) for a in attrs if isinstance(a, dict)}
            number = len(self.gold)
            self.gold.append(len(gold))
            self.dialogue_of.append(self.dialogues)
            for candidate in found[start:]:
                fact = candidate.stated.fact
                triple = (form(index.label(fact.subject)), fact.relation.strip(), form(fact.value))
                self.stage.append(1 if candidate.text else 0)
                self.features.append(candidate.features)
                self.label.append(triple in gold)
                self.rule.append(candidate.rule)
                self.message.append(number)
                self.triple.append(triple)
        if corrupted is not None:
            self.claims.add_corrupted(index, topics, *corrupted, options, self.dialogues)
        self.dialogues += 1

    @classmethod
    def merged(cls, parts: Sequence[Samples]) -> Samples:
        """The candidates of several collections as one (messages and dialogues numbered on)."""
        whole = cls()
        for part in parts:
            messages, dialogues = len(whole.gold), whole.dialogues
            whole.stage += part.stage
            whole.features += part.features
            whole.label += part.label
            whole.rule += part.rule
            whole.message += [m + messages for m in part.message]
            whole.triple += part.triple
            whole.gold += part.gold
            whole.dialogue_of += [d + dialogues for d in part.dialogue_of]
            whole.dialogues += part.dialogues
        whole.claims = ClaimSamples.merged([part.claims for part in parts], [p.dialogues for p in parts])
        return whole


class ClaimSamples:
    """The values said against the graph (contradicted and unsupported claims) in the training data: in each
    annotated message of the dialogues as written (none of them a wrong value) and in each changed message of
    their corrupted copies (a claim on the changed value is one)."""

    def __init__(self) -> None:
        self.features: list[list[float]] = []
        self.label: list[bool] = []  # on a value the corruption changed
        self.contradicted: list[bool] = []  # the rules call it contradicted (else unsupported)
        self.refused: list[bool] = []  # a word the rules leave unclaimed (matching.Claim.refused)
        self.message: list[int] = []  # its message among :attr:`corrupted`
        self.corrupted: list[bool] = []  # per message: a changed one, or one as written
        self.dialogue_of: list[int] = []  # per message

    def add(self, said: list[tuple[Claim, list[float]]], changed: tuple[int, int] | None, dialogue: int) -> None:
        """One message's claims; ``changed``: the span of the wrong value in a corrupted message."""
        number = len(self.corrupted)
        self.corrupted.append(changed is not None)
        self.dialogue_of.append(dialogue)
        for claim, features in said:
            self.features.append(features)
            self.label.append(changed is not None and claim.span[0] < changed[1] and changed[0] < claim.span[1])
            self.contradicted.append(claim.status == "contradicted")
            self.refused.append(claim.refused)
            self.message.append(number)

    def add_corrupted(
        self,
        index: GroundingIndex,
        topics: list[str],
        dialogue: dict[str, Any],
        changes: list[Corrupted],
        options: MatchOptions,
        number: int,
    ) -> None:
        """The claims of a corrupted dialogue's changed messages (``changes``: those of this dialogue)."""
        if not changes:
            return
        matcher = DialogueMatcher(index, topics, options)
        matcher.collect_claims = []
        at = {change.message: change for change in changes}
        for position, message in enumerate(dialogue["messages"]):
            start = len(matcher.collect_claims)
            matcher.message(message["message"])
            change = at.get(position)
            if change is not None:
                where = message["message"].find(change.after)
                self.add(matcher.collect_claims[start:], (where, where + len(change.after)), number)

    @classmethod
    def merged(cls, parts: Sequence[ClaimSamples], dialogues: Sequence[int]) -> ClaimSamples:
        whole, before = cls(), 0
        for part, count in zip(parts, dialogues):
            messages = len(whole.corrupted)
            whole.features += part.features
            whole.label += part.label
            whole.contradicted += part.contradicted
            whole.refused += part.refused
            whole.message += [m + messages for m in part.message]
            whole.corrupted += part.corrupted
            whole.dialogue_of += [d + before for d in part.dialogue_of]
            before += count
        return whole


def annotated(path: Path) -> list[dict[str, Any]]:
    """The dialogues of a training file (read as ``kgforge ground`` reads KdConv's) that carry gold ``attrs``; an
    error naming the file when none does."""
    read = GROUNDERS.get("kdconv").read(path, False)
    dialogues = [d for d in read.values if any(isinstance(m.get("attrs"), list) for m in d["messages"])]
    if not dialogues:
        raise InputError(f"{path}:1: no dialogue has gold attrs (KdConv's per-message annotation): nothing to train on")
    return dialogues


def fit(features: np.ndarray, labels: np.ndarray, l2: float = L2) -> tuple[list[float], float]:
    """Logistic regression by Newton's method (L2 on the weights, none on the bias): weights and bias."""
    rows, width = features.shape
    x = np.hstack([features, np.ones((rows, 1))])
    penalty = np.eye(width + 1) * l2
    penalty[width, width] = 0.0
    w = np.zeros(width + 1)
    y = labels.astype(float)
    for _ in range(100):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30.0, 30.0)))
        gradient = x.T @ (p - y) + penalty @ w
        hessian = (x * (p * (1.0 - p))[:, None]).T @ x + penalty + np.eye(width + 1) * 1e-9
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if float(np.abs(step).max()) < 1e-10:
            break
    return [float(v) for v in w[:width]], float(w[width])


def _probabilities(samples: Samples, weights: dict[int, tuple[list[float], float]], rows: np.ndarray) -> np.ndarray:
    features = np.array([samples.features[i] for i in rows], dtype=object)
    out = np.zeros(len(rows))
    for stage, (w, b) in weights.items():
        at = np.array([samples.stage[i] == stage for i in rows], dtype=bool)
        if at.any():
            x = np.array(list(features[at]), dtype=float)
            out[at] = 1.0 / (1.0 + np.exp(-np.clip(x @ np.array(w) + b, -30.0, 30.0)))
    return out


def fit_stages(samples: Samples, rows: np.ndarray, l2: float = L2) -> dict[int, tuple[list[float], float]]:
    """Each stage fitted on the candidates ``rows``."""
    fitted = {}
    for stage, names in ((0, VALUE_FEATURES), (1, TEXT_FEATURES)):
        at = [i for i in rows if samples.stage[i] == stage]
        if not at or len({samples.label[i] for i in at}) < 2:
            fitted[stage] = ([0.0] * len(names), 0.0 if not at else (6.0 if samples.label[at[0]] else -6.0))
            continue
        x = np.array([samples.features[i] for i in at], dtype=float)
        fitted[stage] = fit(x, np.array([samples.label[i] for i in at], dtype=bool), l2)
    return fitted


class Grouped:
    """The candidates ``rows`` by message and triple: each triple's best probability per stage (-1: no candidate
    of that stage) and whether the gold holds it, so that a pair of thresholds is scored in a few array
    operations."""

    def __init__(self, samples: Samples, rows: np.ndarray, probability: np.ndarray, messages: set[int]) -> None:
        at: dict[tuple[int, Triple], int] = {}
        best: list[list[float]] = []
        right: list[bool] = []
        for i, p in zip(rows, probability):
            key = (samples.message[i], samples.triple[i])
            group = at.get(key)
            if group is None:
                group = at[key] = len(right)
                best.append([-1.0, -1.0])
                right.append(samples.label[i])
            stage = samples.stage[i]
            best[group][stage] = max(best[group][stage], float(p))
        self.best = np.array(best, dtype=float).reshape(-1, 2)
        self.right = np.array(right, dtype=bool)
        self.gold = sum(samples.gold[m] for m in messages)

    def counts(self, thresholds: tuple[float, float]) -> tuple[int, int, int]:
        """tp, fp, fn: a triple is predicted when one of its candidates reaches its stage's threshold."""
        predicted = (self.best[:, 0] >= thresholds[0]) | (self.best[:, 1] >= thresholds[1])
        tp = int((predicted & self.right).sum())
        return tp, int(predicted.sum()) - tp, self.gold - tp

    def best_thresholds(self) -> tuple[float, float]:
        """The pair of thresholds (values, texts) with the best micro-F1, the first such in
        :data:`THRESHOLDS`' order."""
        best, chosen = -1.0, (0.5, 0.5)
        for value in THRESHOLDS:
            for text in THRESHOLDS:
                tp, fp, fn = self.counts((value, text))
                f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
                if f1 > best + 1e-12:
                    best, chosen = f1, (value, text)
        return chosen


def folds_of(samples: Samples, seed: int, folds: int = FOLDS) -> list[int]:
    """Each dialogue's fold (dealt in turn after a seeded shuffle)."""
    order = list(range(samples.dialogues))
    random.Random(seed).shuffle(order)
    fold = [0] * samples.dialogues
    for position, dialogue in enumerate(order):
        fold[dialogue] = position % folds
    return fold


def out_of_fold(samples: Samples, seed: int, l2: float = L2) -> np.ndarray:
    """Each candidate's probability from a model fitted on the other folds' dialogues."""
    fold = folds_of(samples, seed)
    of_candidate = np.array([fold[samples.dialogue_of[m]] for m in samples.message], dtype=int)
    probability = np.zeros(len(samples.stage))
    for f in range(FOLDS):
        held = np.flatnonzero(of_candidate == f)
        if len(held):
            probability[held] = _probabilities(
                samples, fit_stages(samples, np.flatnonzero(of_candidate != f), l2), held
            )
    return probability


def claim_detection(claims: ClaimSamples, probability: np.ndarray, threshold: float) -> tuple[int, int, int, int]:
    """Messages flagged (a claim the rules call contradicted, scored ``threshold`` or more): changed ones flagged,
    changed ones, messages as written flagged, messages as written."""
    flagged = [False] * len(claims.corrupted)
    for message, contradicted, p in zip(claims.message, claims.contradicted, probability):
        if contradicted and p >= threshold:
            flagged[message] = True
    changed = sum(claims.corrupted)
    caught = sum(1 for f, c in zip(flagged, claims.corrupted) if f and c)
    alarms = sum(1 for f, c in zip(flagged, claims.corrupted) if f and not c)
    return caught, changed, alarms, len(claims.corrupted) - changed


def detection_figures(counts: tuple[int, int, int, int]) -> dict[str, float]:
    """Recall (changed messages flagged), false alarms (messages as written flagged) and precision over both."""
    caught, changed, alarms, clean = counts
    return {
        "precision": round(caught / (caught + alarms), 4) if caught + alarms else 0.0,
        "recall": round(caught / changed, 4) if changed else 0.0,
        "false_alarms": round(alarms / clean, 4) if clean else 0.0,
    }


def train_claims(
    claims: ClaimSamples, fold: list[int], l2: float = L2
) -> tuple[tuple[list[float], float, float], dict[str, dict[str, float]]]:
    """The claims stage (weights, bias, threshold) and its out-of-fold figures beside the rules': the threshold
    flags the most changed messages while flagging at most :data:`FALSE_ALARMS` of the messages as written (out of
    fold, ``fold``: each dialogue's)."""
    if not claims.features or len(set(claims.label)) < 2:
        return ([0.0] * len(CLAIM_FEATURES), 0.0, 0.0), {}
    of_claim = np.array([fold[claims.dialogue_of[m]] for m in claims.message], dtype=int)
    features = np.array(claims.features, dtype=float)
    labels = np.array(claims.label, dtype=bool)
    probability = np.zeros(len(labels))
    for f in range(FOLDS):
        held, kept = of_claim == f, of_claim != f
        if held.any() and len(set(labels[kept])) == 2:
            w, b = fit(features[kept], labels[kept], l2)
            probability[held] = 1.0 / (1.0 + np.exp(-np.clip(features[held] @ np.array(w) + b, -30.0, 30.0)))
    best, threshold = (-1.0, -1.0), 0.0
    for t in (0.0, *THRESHOLDS):
        caught, changed, alarms, clean = claim_detection(claims, probability, t)
        within = alarms <= FALSE_ALARMS * clean  # within the budget: the most caught; else the fewest alarms
        key = (caught / max(1, changed), -alarms) if within else (-1.0, -alarms / max(1, clean))
        if key > best:
            best, threshold = key, t
    weights, bias = fit(features, labels, l2)
    figures = {
        "out_of_fold": detection_figures(claim_detection(claims, probability, threshold)),
        "rules": detection_figures(claim_detection(claims, 1.0 - np.array(claims.refused, dtype=float), 0.5)),
    }
    return (weights, bias, threshold), figures


def prf(counts: tuple[int, int, int]) -> dict[str, float]:
    tp, fp, fn = counts
    return {
        "precision": round(tp / (tp + fp), 4) if tp + fp else 0.0,
        "recall": round(tp / (tp + fn), 4) if tp + fn else 0.0,
        "f1": round(2 * tp / (2 * tp + fp + fn), 4) if tp else 0.0,
    }


def train_choice(
    samples: Samples, seed: int, l2: float = L2
) -> tuple[dict[str, tuple[list[float], float, float]], dict[str, Any]]:
    """The stages (weights, bias, threshold) fitted on every candidate, the thresholds chosen out of fold, and
    the out-of-fold figures of the choice and of the rules over the same candidates."""
    rows = np.arange(len(samples.stage))
    messages = set(range(len(samples.gold)))
    probability = out_of_fold(samples, seed, l2)
    grouped = Grouped(samples, rows, probability, messages)
    thresholds = grouped.best_thresholds()
    ruled = Grouped(samples, rows, np.array(samples.rule, dtype=float), messages)
    fitted = fit_stages(samples, rows, l2)
    stages = {name: (*fitted[stage], thresholds[stage]) for stage, name in ((0, "values"), (1, "texts"))}
    stages["claims"], claim_figures = train_claims(samples.claims, folds_of(samples, seed), l2)
    figures = {
        "out_of_fold": prf(grouped.counts(thresholds)),
        "rules": prf(ruled.counts((0.5, 0.5))),
        "claims": claim_figures,
    }
    return stages, figures


def collect(
    data: Sequence[TrainingData], snapshots: Mapping[str, Snapshot], seed: int, options: MatchOptions
) -> tuple[Samples, tuple[TrainedOn, ...]]:
    """Every candidate of every training file, grounded against its domain's build (``snapshots``: domain ->
    its snapshot) with the rules choosing; every file is read (and refused when it has no annotation) before any
    is grounded."""
    read = [(item, annotated(Path(item.dialogues))) for item in data]
    parts, trained = [], []
    for item, dialogues in read:
        part = collected(load_index(snapshots[item.domain]), dialogues, seed, options)
        parts.append(part)
        trained.append(
            TrainedOn(
                item.domain,
                Path(item.dialogues).name,
                sha256_file(item.dialogues),
                len(dialogues),
                len(part.gold),
                sum(part.gold),
            )
        )
    return Samples.merged(parts), tuple(trained)


def collected(
    index: GroundingIndex, dialogues: list[dict[str, Any]], seed: int, options: MatchOptions = MatchOptions(model=RULES)
) -> Samples:
    """The candidates and claims of annotated dialogues grounded against ``index`` (the rules choosing), with
    the claims of their corrupted copy (``seed``)."""
    corrupted, changes = corrupted_copy(index, dialogues, seed)
    samples = Samples()
    for number, (dialogue, copy) in enumerate(zip(dialogues, corrupted)):
        samples.add(index, dialogue, options, (copy, [c for c in changes if c.dialogue == number]))
    return samples


def train_grounding(
    data: Sequence[TrainingData],
    out: Path,
    snapshots: Mapping[str, Snapshot],
    seed: int = 0,
    options: MatchOptions = MatchOptions(model=RULES),
) -> TrainReport:
    """A grounding model trained on ``data`` (see the module docstring), each file grounded against its domain's
    build in ``snapshots`` (domain -> snapshot), written to ``out`` (whole or not at all)."""
    if not data:
        raise InputError("kgforge ground train: no training data (give --data DOMAIN:FILE)")
    target = output_file(out)  # refused before the training, not after it
    samples, trained = collect(data, snapshots, seed, dataclasses.replace(options, model=RULES))
    stages, figures = train_choice(samples, seed)
    document = model_document(
        stages,
        {
            "seed": seed,
            "l2": L2,
            "folds": FOLDS,
            "data": [t.as_dict() for t in trained],
            "out_of_fold": figures["out_of_fold"],
            "rules": figures["rules"],
            "claims": figures["claims"],
        },
    )
    target.write_bytes(model_bytes(document))
    return TrainReport(
        target.path,
        trained,
        {"values": samples.stage.count(0), "texts": samples.stage.count(1)},
        {
            name: sum(1 for s, right in zip(samples.stage, samples.label) if s == stage and right)
            for stage, name in ((0, "values"), (1, "texts"))
        },
        {name: stages[name][2] for name in ("values", "texts", "claims")},
        seed,
        figures["out_of_fold"],
        figures["rules"],
        figures["claims"],
    )
