"""Small Wikidata-format dumps written by the project: the README demo and generated test dumps.

``write_demo_dump(path)`` writes a handful of real-looking film entities (zh/en labels, cast,
director, dates, durations, a qualifier, a deprecated statement) in the exact
``latest-all.json`` framing; ``.bz2`` / ``.gz`` suffixes compress it.
"""

from __future__ import annotations

import bz2
import gzip
import json
from collections.abc import Iterable
from pathlib import Path
from typing import IO, Any

from kgforge.core.jsonio import JsonObject

GREGORIAN = "http://www.wikidata.org/entity/Q1985727"


def snak(pid: str, value: Any) -> JsonObject:
    """A value snak; ``value`` is a QID string (item), a ``(kind, value)`` pair, or a plain string."""
    if isinstance(value, str) and value[:1] in "QP" and value[1:].isdigit():
        datavalue = {
            "type": "wikibase-entityid",
            "value": {
                "entity-type": "item" if value[0] == "Q" else "property",
                "numeric-id": int(value[1:]),
                "id": value,
            },
        }
        datatype = "wikibase-item"
    elif isinstance(value, tuple):
        kind, payload = value
        datavalue, datatype = _typed(kind, payload)
    else:
        datavalue, datatype = {"type": "string", "value": value}, "string"
    return {"snaktype": "value", "property": pid, "datavalue": datavalue, "datatype": datatype}


def _typed(kind: str, payload: Any) -> tuple[dict[str, Any], str]:
    if kind == "time":
        text, precision = payload
        return (
            {
                "type": "time",
                "value": {
                    "time": text,
                    "timezone": 0,
                    "before": 0,
                    "after": 0,
                    "precision": precision,
                    "calendarmodel": GREGORIAN,
                },
            },
            "time",
        )
    if kind == "quantity":
        amount, unit = payload
        return {"type": "quantity", "value": {"amount": amount, "unit": unit}}, "quantity"
    if kind == "text":
        text, lang = payload
        return {"type": "monolingualtext", "value": {"text": text, "language": lang}}, "monolingualtext"
    if kind == "coordinate":
        lat, lon = payload
        return (
            {
                "type": "globecoordinate",
                "value": {
                    "latitude": lat,
                    "longitude": lon,
                    "altitude": None,
                    "precision": 0.0001,
                    "globe": "http://www.wikidata.org/entity/Q2",
                },
            },
            "globe-coordinate",
        )
    if kind == "external-id":
        return {"type": "string", "value": payload}, "external-id"
    raise ValueError(f"unknown value kind {kind!r}")


def entity(
    qid: str,
    labels: dict[str, str] | None = None,
    claims: dict[str, list[Any]] | None = None,
    aliases: dict[str, list[str]] | None = None,
    descriptions: dict[str, str] | None = None,
) -> JsonObject:
    """An item in dump form. A claim value may be ``{"value": v, "rank": r, "qualifiers": {pid: [v]}}``."""
    statements: dict[str, list[dict[str, Any]]] = {}
    for pid, values in (claims or {}).items():
        for index, value in enumerate(values):
            spec = value if isinstance(value, dict) else {"value": value}
            statement = {
                "mainsnak": snak(pid, spec["value"]),
                "type": "statement",
                "id": f"{qid}${pid}-{index:04d}-0000-0000-000000000000",
                "rank": spec.get("rank", "normal"),
            }
            if spec.get("qualifiers"):
                statement["qualifiers"] = {q: [snak(q, v) for v in vs] for q, vs in spec["qualifiers"].items()}
            statements.setdefault(pid, []).append(statement)
    return {
        "type": "item",
        "id": qid,
        "labels": {lang: {"language": lang, "value": text} for lang, text in (labels or {}).items()},
        "descriptions": {lang: {"language": lang, "value": text} for lang, text in (descriptions or {}).items()},
        "aliases": {lang: [{"language": lang, "value": t} for t in texts] for lang, texts in (aliases or {}).items()},
        "claims": statements,
        "sitelinks": {},
    }


def open_for_writing(path: Path) -> IO[str]:
    if path.suffix == ".bz2":
        return bz2.open(path, "wt", encoding="utf-8")
    if path.suffix == ".gz":
        return gzip.open(path, "wt", encoding="utf-8", compresslevel=6)
    return open(path, "w", encoding="utf-8")


def write_dump(path: Path | str, entities: Iterable[dict[str, Any]]) -> Path:
    """Entities in the ``latest-all.json`` framing: ``[``, one compact entity per line joined by ``,``, ``]``."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    with open_for_writing(path) as out:
        out.write("[\n")
        first = True
        for item in entities:
            out.write(("" if first else ",\n") + json.dumps(item, ensure_ascii=False, separators=(",", ":")))
            first = False
        out.write("\n]\n")
    return path


MINUTE = "http://www.wikidata.org/entity/Q7727"


def demo_entities() -> list[dict[str, Any]]:
    """Two films, their people and classes; small, but with every feature the importer handles."""
    return [
        entity(
            "Q1000001",
            {"zh-hans": "城南旧事", "en": "My Memories of Old Beijing"},
            {
                "P31": ["Q11424"],
                "P57": ["Q1000011"],
                "P161": [{"value": "Q1000012", "qualifiers": {"P453": [("text", ("林英子", "zh"))]}}, "Q1000013"],
                "P136": ["Q130232"],
                "P495": ["Q148"],
                "P577": [("time", ("+1983-01-01T00:00:00Z", 9))],
                "P2047": [("quantity", ("+96", MINUTE))],
                "P1476": [("text", ("城南旧事", "zh"))],
                "P345": [("external-id", "tt0085313")],
            },
            aliases={"en": ["Memories of Old Beijing"]},
            descriptions={"zh-hans": "1983年吴贻弓执导的电影"},
        ),
        entity(
            "Q1000002",
            {"zh-hans": "霸王别姬", "en": "Farewell My Concubine"},
            {
                "P31": ["Q11424"],
                "P57": ["Q1000014"],
                "P161": ["Q1000015", "Q1000016"],
                "P577": [
                    {"value": ("time", ("+1993-01-01T00:00:00Z", 9)), "rank": "preferred"},
                    ("time", ("+1992-01-01T00:00:00Z", 9)),
                ],
                "P2047": [("quantity", ("+171", MINUTE))],
                "P136": ["Q130232"],
                "P495": ["Q148"],
            },
        ),
        entity(
            "Q1000011",
            {"zh-hans": "吴贻弓", "en": "Wu Yigong"},
            {"P31": ["Q5"], "P106": ["Q2526255"], "P569": [("time", ("+1938-12-01T00:00:00Z", 11))]},
        ),
        entity("Q1000012", {"zh-hans": "沈洁", "en": "Shen Jie"}, {"P31": ["Q5"], "P106": ["Q33999"]}),
        entity("Q1000013", {"zh-hans": "郑振瑶", "en": "Zheng Zhenyao"}, {"P31": ["Q5"], "P106": ["Q33999"]}),
        entity(
            "Q1000014",
            {"zh-hans": "陈凯歌", "en": "Chen Kaige"},
            {
                "P31": ["Q5"],
                "P106": ["Q2526255"],
                "P569": [("time", ("+1952-08-12T00:00:00Z", 11))],
                "P19": [{"value": "Q956"}, {"value": "Q148", "rank": "deprecated"}],
            },
        ),
        entity(
            "Q1000015",
            {"zh-hans": "张国荣", "en": "Leslie Cheung"},
            {"P31": ["Q5"], "P106": ["Q33999", "Q177220"]},
            aliases={"zh-hans": ["哥哥"]},
        ),
        entity("Q1000016", {"zh-hans": "巩俐", "en": "Gong Li"}, {"P31": ["Q5"], "P106": ["Q33999"]}),
        entity("Q11424", {"zh-hans": "电影", "en": "film"}, {"P279": ["Q2431196"]}),
        entity("Q5", {"zh-hans": "人类", "en": "human"}),
        entity("Q956", {"zh-hans": "北京市", "en": "Beijing"}, {"P625": [("coordinate", (39.906, 116.391))]}),
    ]


def write_demo_dump(path: Path | str) -> Path:
    """Write the demo dump (film entities with zh/en labels) to ``path`` (``.bz2``/``.gz`` compress)."""
    return write_dump(path, demo_entities())
