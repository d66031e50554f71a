"""A trained grounding choice as a file: plain JSON, read here (no pickle), stamped and checked.

The file holds each stage's feature names, weights, bias and threshold (:mod:`kgforge.grounding.choice`), how it
was trained (the data by file name and digest, the seed), this format's version and a digest of all of it. A
file is refused, in one line naming it, when it is no JSON (with the line), of another format or version, made
for other features (another kgforge's), or when its digest does not match what it holds (damaged). kgforge
ships one, trained by ``kgforge ground train`` on the KdConv dev sets (docs/grounding.md); ``--model FILE``
picks another, ``--model rules`` the hand rules alone.
"""

from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import JsonObject
from kgforge.core.limits import read_whole_text
from kgforge.grounding.choice import CLAIM_FEATURES, TEXT_FEATURES, VALUE_FEATURES, Choice, Stage

FORMAT = "kgforge-grounding-model"
VERSION = 1  # of the file's layout and of the features' meaning: a change to either is a new version
SHIPPED = "shipped"  # the model kgforge ships (SHIPPED_FILE, beside this module)
RULES = "rules"  # no model: the hand rules choose
SHIPPED_FILE = "grounding-model.json"
_STAGES = {"values": VALUE_FEATURES, "texts": TEXT_FEATURES, "claims": CLAIM_FEATURES}


def shipped_path() -> Path:
    """Where the shipped model lies (inside the installed package)."""
    return Path(str(resources.files("kgforge.grounding").joinpath(SHIPPED_FILE)))


@lru_cache(maxsize=8)
def chosen_model(name: str) -> Choice | None:
    """The choice ``MatchOptions.model`` names: None for ``rules``, the shipped model, or a model file's (read
    once a process)."""
    if name == RULES:
        return None
    return read_model(shipped_path() if name == SHIPPED else Path(name))


def read_model(path: Path) -> Choice:
    """The choice a model file holds; an :class:`InputError` naming the file (and the line) if it is no model
    of this kgforge's."""
    text = read_whole_text(path, "grounding model")
    try:
        document = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not a grounding model (damaged JSON: {exc.msg})") from None
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InputError(f'{path}:1: not a kgforge grounding model (no "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise InputError(
            f"{path}:1: a grounding model of format version {document.get('version')!r}, made by another kgforge; "
            f"this one reads version {VERSION} (train it again: kgforge ground train)"
        )
    if document.get("checksum") != checksum(document):
        raise InputError(f"{path}:1: a damaged grounding model (its checksum does not match what it holds)")
    return Choice(*(_stage(path, name, document.get(name)) for name in _STAGES))


def _stage(path: Path, name: str, data: Any) -> Stage:
    expected = _STAGES[name]
    if not isinstance(data, dict) or tuple(data.get("features", ())) != expected:
        raise InputError(f"{path}:1: the grounding model's {name!r} stage is for other features (another kgforge's)")
    weights, bias, threshold = data.get("weights"), data.get("bias"), data.get("threshold")
    numbers = [*(weights if isinstance(weights, list) else [None]), bias, threshold]
    if (
        len(numbers) != len(expected) + 2
        or not all(_is_number(x) for x in numbers)
        or not isinstance(weights, list)  # all three implied by the numbers' check: said for the type checker
        or bias is None
        or threshold is None
    ):
        raise InputError(
            f"{path}:1: the grounding model's {name!r} stage needs one number a feature, a bias, a threshold"
        )
    return Stage(expected, [float(w) for w in weights], float(bias), float(threshold))


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and value == value and abs(value) < 1e6


def checksum(document: dict[str, Any]) -> str:
    """The sha256 of everything the document holds but its checksum (keys sorted, compact)."""
    body = {k: v for k, v in document.items() if k != "checksum"}
    encoded = json.dumps(body, sort_keys=True, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return "sha256:" + hashlib.sha256(encoded).hexdigest()


def model_document(stages: dict[str, tuple[list[float], float, float]], trained: dict[str, Any]) -> JsonObject:
    """A model file's content: ``stages`` (``values``, ``texts``: weights, bias, threshold, rounded to six
    decimals so that the same training gives the same bytes) and how it was ``trained``."""
    document: dict[str, Any] = {"format": FORMAT, "version": VERSION}
    for name, (weights, bias, threshold) in stages.items():
        document[name] = {
            "features": list(_STAGES[name]),
            "weights": [round(float(w), 6) for w in weights],
            "bias": round(float(bias), 6),
            "threshold": round(float(threshold), 6),
        }
    document["trained"] = trained
    document["checksum"] = checksum(document)
    return document


def model_bytes(document: dict[str, Any]) -> bytes:
    """The document as a model file's bytes (indented, one number a line, UTF-8, a final newline)."""
    return (json.dumps(document, ensure_ascii=False, indent=1) + "\n").encode("utf-8")
