"""`kgforge qa-eval`: turn-by-turn scoring of predictions against a generated gold file.

A prediction is correct when, after normalisation, it equals the answer or any of its labels and
aliases: Unicode width folded (NFKC), Traditional characters made Simplified (OpenCC t2s), case
folded, punctuation and spaces removed; numbers compare by value (``82`` = ``82.0`` = ``+82``) and
dates by value at the precision written (``1952-03-11`` = ``1952年3月11日`` = ``11 March 1952``). A list
prediction scores 1 when any element matches. ``NA`` (or nothing) is never correct and is counted.

Reported, overall and per configuration (the shape of ConvKGYarn's Table 3): ``turn_accuracy`` (mean
over turns), ``conversation_accuracy`` (mean over conversations of their turns' mean),
``conversations_all_correct`` and ``na_ratio`` (share of turns answered NA).
"""

from __future__ import annotations

import re
import unicodedata
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.output import output_file
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record, omitted_when_none
from kgforge.core.text import to_simplified
from kgforge.llm import LLMClient
from kgforge.qa.prompts import judge_check, judge_messages

NA_TEXTS = {"", "na"}
_NUMBER = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$")
_CURRENCY = "$¥€£￥"
_ISO_DATE = re.compile(r"^(-?\d{1,4})(?:-(\d{1,2})(?:-(\d{1,2}))?)?(?:T00:00:00(?:\.0+)?Z?)?$")
_ZH_DATE = re.compile(r"^(\d{1,4})年(?:(\d{1,2})月(?:(\d{1,2})[日号])?)?$")
_EN_FORMATS = ("%d %B %Y", "%B %d, %Y", "%B %d %Y", "%d %b %Y", "%b %d, %Y", "%b %d %Y", "%B %Y", "%b %Y")


@lru_cache(maxsize=1 << 16)
def normalise(text: str) -> str:
    """Width, script (Traditional → Simplified), case, punctuation and spaces folded away; repeated to a
    fixed point, since dropping a mark can let NFKC compose what stood around it."""
    for _ in range(4):
        folded = to_simplified(unicodedata.normalize("NFKC", text)).casefold()
        folded = unicodedata.normalize(
            "NFKC",
            "".join(c for c in folded if not unicodedata.category(c).startswith(("P", "Z", "C")) and not c.isspace()),
        )
        if folded == text:
            break
        text = folded
    return text


@lru_cache(maxsize=1 << 16)
def answer_keys(text: str) -> frozenset[tuple[str, Any]]:
    """What a text can be equal by: its normalised form, and its number or date value when it has one."""
    plain = unicodedata.normalize("NFKC", text).strip()
    number = _number(plain)
    if number is not None:  # by value only: as text, 1.96 would read 196
        keys: set[tuple[str, Any]] = {("number", number)}
    else:
        keys = {("text", normalise(text))}
    date = _date(plain)
    if date is not None:
        keys.add(("date", date))
    return frozenset(keys)


def _number(text: str) -> Decimal | None:
    cleaned = text.replace(",", "").replace("_", "").strip(_CURRENCY).strip()
    if not _NUMBER.match(cleaned):
        return None
    try:
        return Decimal(cleaned).normalize()
    except InvalidOperation:
        return None


def _date(text: str) -> tuple[int, ...] | None:
    for pattern in (_ISO_DATE, _ZH_DATE):
        match = pattern.match(text)
        if match and not (pattern is _ISO_DATE and match.group(2) is None and not re.match(r"^-?\d{4}$", text)):
            parts = [int(g) for g in match.groups() if g is not None]
            return tuple(parts) if _valid(parts) else None
    for fmt in _EN_FORMATS:
        try:
            parsed = datetime.strptime(text, fmt)
        except ValueError:
            continue
        return (parsed.year, parsed.month) if "%d" not in fmt else (parsed.year, parsed.month, parsed.day)
    return None


def _valid(parts: list[int]) -> bool:
    return (len(parts) < 2 or 1 <= parts[1] <= 12) and (len(parts) < 3 or 1 <= parts[2] <= 31)


def is_na(prediction: Any) -> bool:
    if prediction is None:
        return True
    if isinstance(prediction, list):
        return all(is_na(p) for p in prediction)
    return normalise(str(prediction)) in NA_TEXTS


def gold_keys(turn: dict[str, Any]) -> frozenset[tuple[str, Any]]:
    keys: set[tuple[str, Any]] = set()
    for answer in turn["answers"]:
        for text in [answer.get("value"), answer.get("text"), *(answer.get("names") or [])]:
            if isinstance(text, str) and text:
                keys |= answer_keys(text)
    return frozenset(keys)


def correct(prediction: Any, turn: dict[str, Any]) -> bool:
    """Whether the prediction (a string or a list of strings) matches any gold answer or alias."""
    if is_na(prediction):
        return False
    candidates = prediction if isinstance(prediction, list) else [prediction]
    gold = gold_keys(turn)
    return any(not answer_keys(str(c)).isdisjoint(gold) for c in candidates if c is not None and not is_na(c))


# ---------------------------------------------------------------- files


def read_gold(path: Path) -> dict[str, dict[str, Any]]:
    """Turn id → gold turn, in file order; a damaged gold file is refused with its line."""
    gold: dict[str, dict[str, Any]] = {}
    for record in iter_json_lines(path):
        value = record.value
        if (
            record.error
            or not isinstance(value, dict)
            or not {"id", "conversation_id", "config", "answers"} <= set(value)
        ):
            raise InputError(
                f"{path}:{record.line}: not a turn of `kgforge qa generate` "
                f"({record.error or 'needs id, conversation_id, config and answers'})"
            )
        gold[value["id"]] = value
    return gold


def read_predictions(
    path: Path, gold: dict[str, dict[str, Any]], quarantine: Quarantine
) -> dict[str, str | list[str] | None]:
    """Turn id → prediction. Lines that are not ``{"id": ..., "prediction": ...}`` or name no gold turn
    go to the quarantine file with their line; the good ones are scored."""
    predictions: dict[str, Any] = {}
    for record in iter_json_lines(path):
        value = record.value
        where = f"line {record.line}"
        if record.error:
            quarantine.reject(str(path), where, record.error, record.raw)
            continue
        if (
            not isinstance(value, dict)
            or not isinstance(value.get("id"), str)
            or not ("prediction" in value or "answer" in value)
        ):
            quarantine.reject(str(path), where, 'not {"id": ..., "prediction": ...}', value)
            continue
        prediction = value.get("prediction", value.get("answer"))
        if not (
            prediction is None
            or isinstance(prediction, str)
            or (isinstance(prediction, list) and all(isinstance(p, str) for p in prediction))
        ):
            quarantine.reject(str(path), where, "prediction must be a string, a list of strings or null", value)
            continue
        if value["id"] not in gold:
            quarantine.reject(str(path), where, f"no gold turn {value['id']!r}", value)
            continue
        predictions[value["id"]] = prediction
    return predictions


# ---------------------------------------------------------------- scores


def _table(scores: dict[str, list[tuple[str, bool, bool]]]) -> dict[str, Any]:
    """Per configuration, from (conversation id, correct, NA) per turn."""
    rows = {}
    for config, turns in sorted(scores.items()):
        by_conversation: dict[str, list[bool]] = defaultdict(list)
        for conversation, right, _ in turns:
            by_conversation[conversation].append(right)
        means = [sum(v) / len(v) for v in by_conversation.values()]
        rows[config] = {
            "turns": len(turns),
            "conversations": len(by_conversation),
            "turn_accuracy": round(sum(r for _, r, _ in turns) / len(turns), 6),
            "conversation_accuracy": round(sum(means) / len(means), 6),
            "conversations_all_correct": round(sum(all(v) for v in by_conversation.values()) / len(means), 6),
            "na_ratio": round(sum(na for _, _, na in turns) / len(turns), 6),
        }
    return rows


@dataclass(frozen=True)
class QAScoreReport(Record):
    """Predictions scored turn by turn against ``kgforge qa generate``'s turns (``kgforge qa-eval``): per
    configuration turns, conversations, turn and conversation accuracy, the NA ratio."""

    predictions: str
    gold: str
    gold_turns: int
    predicted_turns: int
    missing_predictions: int
    rejected_prediction_lines: int
    rejected_file: str | None  # where the rejected lines went (None: none rejected)
    alias: dict[str, dict[str, Any]]  # configuration (and "all") -> scores, answers matched by alias
    llm_judge: dict[str, Any] | None = omitted_when_none()  # the same by an LLM judge, with unjudged turns


def evaluate(predictions_path: Path, gold_path: Path, llm: LLMClient | None = None) -> QAScoreReport:
    """Score a predictions file against the gold turns; with ``llm``, an LLM judge's score beside it."""
    gold = read_gold(gold_path)
    if not gold:
        raise InputError(f"{gold_path}: no gold turns")
    quarantine = Quarantine(output_file(Path(str(predictions_path) + ".rejected.jsonl"), what="PREDICTIONS"))
    try:
        predictions = read_predictions(predictions_path, gold, quarantine)
    finally:
        quarantine.close()
    alias: dict[str, list[tuple[str, bool, bool]]] = defaultdict(list)
    judged: dict[str, list[tuple[str, bool, bool]]] = defaultdict(list)
    unjudged = 0
    for turn_id, turn in gold.items():
        prediction = predictions.get(turn_id)
        na = is_na(prediction)
        row = (turn["conversation_id"], correct(prediction, turn), na)
        alias[turn["config"]].append(row)
        alias["all"].append(row)
        if llm is not None:
            verdict = False if na else _judge(llm, turn, prediction)
            if verdict is None:
                unjudged += 1
                continue
            judged[turn["config"]].append((row[0], verdict, na))
            judged["all"].append((row[0], verdict, na))
    llm_judge = None
    if llm is not None:
        llm.close()
        llm_judge = {**_table(judged), "unjudged_turns": unjudged, "llm": llm.stats().as_dict()}
    return QAScoreReport(
        predictions=str(predictions_path),
        gold=str(gold_path),
        gold_turns=len(gold),
        predicted_turns=len(predictions),
        missing_predictions=len(gold) - len(predictions),
        rejected_prediction_lines=quarantine.count,
        rejected_file=str(quarantine.path) if quarantine.count else None,
        alias=_table(alias),
        llm_judge=llm_judge,
    )


def _judge(llm: LLMClient, turn: dict[str, Any], prediction: Any) -> bool | None:
    gold = sorted({n for a in turn["answers"] for n in (a.get("names") or [a.get("text")]) if n})
    shown = prediction if isinstance(prediction, str) else "; ".join(prediction)
    return llm.ask(judge_messages(turn.get("question", ""), gold, shown), judge_check, f"judge {turn['id']}")
