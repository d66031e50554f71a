"""G(t, preds): which predicates of a type are worth asking about, and which belong together.

The default selector is statistical and says why for every predicate. A predicate is left out when
it states a type, holds free text (a relation of kind ``text``), has no name in the question
language, is an identifier or external id, points at media or a URL, or names the entity (names,
first and last names, aliases, translated titles). Of the rest, each gets

    score = (coverage + specificity + diversity) / 3

(see :mod:`kgforge.qa.predicates`), and those with coverage >= ``min_coverage`` and score >=
``min_score`` are kept, best first, at most ``max_predicates`` per type. Predicates whose names
share a head (出生日期 / 出生地, "date of birth" / "place of birth") and that most entities have
together are grouped: a group is asked in one turn.

A selection is a JSON file (``kgforge qa select``) that a user can edit (flip ``selected``, change
``groups``) and pass back with ``--selection``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import InputError
from kgforge.core.output import OutputFile, output_file

SELECTION_FORMAT = 1
_IDENTIFIER = re.compile(r"\bID\b|\bidentifier\b|\bcode\b|编号|标识|代码|\bISNI\b|\bVIAF\b", re.IGNORECASE)
_MEDIA = re.compile(r"image|logo|signature|audio|video|photo|picture|图像|图片|照片|签名|音频|视频|标志", re.IGNORECASE)
_URL = re.compile(r"website|\burl\b|homepage|网址|网站|主页", re.IGNORECASE)
_NAME = re.compile(
    r"\bnames?\b|nickname|pseudonym|\balias\b|\btitle\b|名$|名称|译名|别名|姓名|名字|昵称|^姓", re.IGNORECASE
)
_MEDIA_IRI = re.compile(r"commons\.wikimedia\.org|\.(jpe?g|png|gif|svg|ogg|oga|mp3|mp4|webm|tiff?)$", re.IGNORECASE)
_GROUP_HEAD_EN = re.compile(r"^(?:date|place|time|year|location) of (.+)$", re.IGNORECASE)


@dataclass
class SelectorOptions:
    min_coverage: float = 0.05
    min_score: float = 0.3
    max_predicates: int = 20
    group_together: float = 0.5  # share of entities having either predicate that have both


@dataclass
class TypeSelection:
    type: str
    label: str
    entities: int
    predicates: list[dict[str, Any]] = field(default_factory=list)  # predicate, label, selected, score, reason, asks
    groups: list[list[str]] = field(default_factory=list)
    selector: str = "statistical"

    @property
    def selected(self) -> list[str]:
        return [p["predicate"] for p in self.predicates if p["selected"]]


def exclusion_reason(row: dict[str, Any], type_predicates: set[str], language: str) -> str | None:
    """Why a predicate of F(t) can never be a question, or None."""
    label = row.get("label")
    if row["predicate"] in type_predicates:
        return "states a type"
    if row.get("relation_kind") == "text":
        return "free text"
    if not label:
        return f"no name in {language}"
    if _IDENTIFIER.search(label):
        return "identifier"
    if _MEDIA.search(label) or _MEDIA_IRI.search(str(row.get("example") or "")):
        return "media"
    if _URL.search(label) or row.get("url_objects", 0.0) >= 0.5:
        return "URL"
    if _NAME.search(label):
        return "a name of the entity"
    return None


# [(type, predicate, predicate)] -> {pair: share of the type's entities having either that have both}
Together = Callable[[list[tuple[str, str, str]]], dict[tuple[str, str, str], float]]


def statistical_selection(
    table: pl.DataFrame,
    type_predicates: set[str],
    language: str,
    together: Together,
    options: SelectorOptions | None = None,
) -> dict[str, TypeSelection]:
    """The default G(t, preds) for every type of F(t) (``table`` from :func:`predicate_table`)."""
    options = options or SelectorOptions()
    selections: dict[str, TypeSelection] = {}
    for (type_id,), rows in table.group_by("type", maintain_order=True):
        first = rows.row(0, named=True)
        chosen = TypeSelection(type_id, first["type_label"], first["entities_of_type"])
        scored = []
        for row in rows.iter_rows(named=True):
            score = round((row["coverage"] + row["specificity"] + row["diversity"]) / 3, 4)
            reason = exclusion_reason(row, type_predicates, language)
            if reason is None and row["coverage"] < options.min_coverage:
                reason = f"coverage {row['coverage']:.3f} < {options.min_coverage}"
            elif reason is None and score < options.min_score:
                reason = f"score {score:.3f} < {options.min_score}"
            scored.append(
                {
                    "predicate": row["predicate"],
                    "label": row["label"],
                    "score": score,
                    "coverage": round(row["coverage"], 4),
                    "specificity": round(row["specificity"], 4),
                    "diversity": round(row["diversity"], 4),
                    "asks": row["asks"],
                    "selected": reason is None,
                    "reason": reason or "kept",
                }
            )
        scored.sort(key=lambda p: (not p["selected"], -p["score"], p["predicate"]))
        for extra in [p for p in scored if p["selected"]][options.max_predicates :]:
            extra["selected"], extra["reason"] = False, f"beyond the best {options.max_predicates}"
        chosen.predicates = scored
        selections[type_id] = chosen
    regroup(selections, together, options.group_together)
    return selections


def group_head(label: str) -> str | None:
    """What two predicates asked together share: 出生日期/出生地 → 出生; "date of birth" → birth."""
    english = _GROUP_HEAD_EN.match(label.strip())
    if english:
        return english.group(1).lower()
    if re.match(r"^[\u4e00-\u9fff]{2}(日期|时间|地点|地|年份)$", label):
        return label[:2]
    return None


def group_candidates(type_id: str, predicates: list[dict[str, Any]]) -> list[tuple[str, str, str]]:
    """(type, p1, p2) for selected predicates whose names share a head."""
    by_head: dict[str, list[str]] = {}
    for p in predicates:
        head = group_head(p["label"] or "") if p["selected"] else None
        if head:
            by_head.setdefault(head, []).append(p["predicate"])
    pairs = (sorted(members) for members in by_head.values() if len(members) >= 2)
    return [(type_id, first, second) for first, second, *_ in pairs]


def regroup(selections: dict[str, TypeSelection], together: Together, threshold: float) -> None:
    """Set each type's groups: candidate pairs that most of its entities have together."""
    candidates = [pair for s in selections.values() for pair in group_candidates(s.type, s.predicates)]
    shares = together(candidates)
    for chosen in selections.values():
        chosen.groups = [
            [first, second]
            for t, first, second in candidates
            if t == chosen.type and shares.get((t, first, second), 0.0) >= threshold
        ]


def write_selection(path: Path | OutputFile, domain: str, language: str, selections: dict[str, TypeSelection]) -> None:
    output_file(path).write_json(
        {
            "format": SELECTION_FORMAT,
            "domain": domain,
            "language": language,
            "help": "Flip `selected`, edit `groups` (predicates asked together in one turn), then pass this "
            "file to `kgforge qa generate --selection`.",
            "types": {
                t: {
                    "label": s.label,
                    "entities": s.entities,
                    "selector": s.selector,
                    "groups": s.groups,
                    "predicates": s.predicates,
                }
                for t, s in selections.items()
            },
        },
    )


def read_selection(path: Path) -> dict[str, TypeSelection]:
    """A selection file as written by :func:`write_selection` (possibly edited by hand)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read the selection file: {exc}") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON: {exc.msg}") from None
    if not isinstance(data, dict) or data.get("format") != SELECTION_FORMAT or not isinstance(data.get("types"), dict):
        raise InputError(f"{path}: not a kgforge qa selection (format {SELECTION_FORMAT} with a `types` object)")
    selections = {}
    for type_id, entry in data["types"].items():
        predicates = entry.get("predicates") if isinstance(entry, dict) else None
        if not isinstance(predicates, list) or not all(
            isinstance(p, dict) and isinstance(p.get("predicate"), str) and isinstance(p.get("selected"), bool)
            for p in predicates
        ):
            raise InputError(
                f"{path}: types.{type_id}.predicates must be a list of objects with a `predicate` "
                "string and a `selected` true/false"
            )
        groups = entry.get("groups", [])
        known = {p["predicate"] for p in predicates}
        if not isinstance(groups, list) or not all(isinstance(g, list) and set(g) <= known for g in groups):
            raise InputError(f"{path}: types.{type_id}.groups must list groups of the type's own predicates")
        selections[type_id] = TypeSelection(
            type_id,
            entry.get("label", type_id),
            entry.get("entities", 0),
            predicates,
            groups,
            entry.get("selector", "file"),
        )
    return selections
