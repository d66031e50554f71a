"""Wikidata datavalues → RDF terms: the one value-mapping table (documented in docs/wikidata.md).

``map_value`` returns the N-Quads object term of the *direct* (truthy) triple and the extra
facts that belong on the statement node (unit, precision, calendar, bounds, globe) so that
nothing in the value is lost. Terms are already serialised (``<iri>`` or a literal), ready for
``QuadWriter.term``. Every function here is pure, so it runs in worker processes.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import quote

from kgforge.core import vocab
from kgforge.core.quads import XSD, check_iri, check_lang, literal_term
from kgforge.core.vocab import COMMONS_DATA, COMMONS_FILE, GENID, GEO_WKT
from kgforge.core.vocab import WIKIDATA_ENTITY as WD

P, WDT, WDS, WIKIBASE = vocab.WIKIDATA_PROP, vocab.WIKIDATA_DIRECT, vocab.STATEMENT_NODE, vocab.WIKIBASE
PS = P + "statement/"
PQ = P + "qualifier/"
WDNO = P + "novalue/"
GREGORIAN = WD + "Q1985727"
EARTH = WD + "Q2"

ENTITY_ID = re.compile(r"^(?:[QPL][1-9][0-9]*(?:-[FS][1-9][0-9]*)?|M[1-9][0-9]*)$")
_ID_PREFIX = {"item": "Q", "property": "P", "lexeme": "L", "form": "L", "sense": "L", "mediainfo": "M"}
_TIME = re.compile(r"^([+-])(\d{1,16})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$")
_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_STRING_AS_IRI = {"commonsMedia": COMMONS_FILE, "geo-shape": COMMONS_DATA, "tabular-data": COMMONS_DATA}


class BadValue(ValueError):
    """A datavalue that cannot be mapped; the message says why."""


class Value(NamedTuple):
    """A mapped value. Shared between statements (cached), so never mutated."""

    term: str  # N-Quads object term of the direct triple
    extras: tuple[tuple[str, str], ...] = ()  # (predicate IRI, term) for the statement node
    entity: str | None = None  # the id, for an item/property/lexeme reference


@lru_cache(maxsize=1 << 14)
def iri_term(iri: str) -> str:
    return f"<{check_iri(iri)}>"


def entity_id(value: object) -> str:
    """The id of a ``wikibase-entityid`` value; 2015-era values have only ``numeric-id``."""
    if not isinstance(value, dict):
        raise BadValue(f"entity value must be an object, got {type(value).__name__}")
    found = value.get("id")
    if type(found) is str and found[:1] in ("Q", "P", "L") and found[1:].isdigit() and found[1:2] != "0":
        return found  # the common case, checked without the pattern
    if found is None and "numeric-id" in value:
        prefix = _ID_PREFIX.get(value.get("entity-type", "item"))
        if prefix is None:
            raise BadValue(f"unknown entity-type {value.get('entity-type')!r}")
        found = f"{prefix}{value['numeric-id']}"
    if not isinstance(found, str) or not ENTITY_ID.match(found.upper()):
        raise BadValue(f"not a Wikidata entity id: {found!r}")
    return found.upper()


def entity_iri(qid: str) -> str:
    return WD + qid


def skolem_iri(key: str) -> str:
    """Stable IRI standing for an unknown value ("somevalue"), one per statement."""
    return GENID + hashlib.sha1(key.encode("utf-8")).hexdigest()[:24]


def map_value(datavalue: object, datatype: str | None) -> Value:
    """Map one ``datavalue`` (``{"type": …, "value": …}``) of a snak with property type ``datatype``."""
    if type(datavalue) is not dict or "value" not in datavalue:
        raise BadValue("datavalue must be an object with 'type' and 'value'")
    kind, value = datavalue.get("type"), datavalue["value"]
    try:
        if kind == "wikibase-entityid" and type(value) is dict:  # the commonest value; its id is usually cached
            known = _ENTITY_VALUES.get(value.get("id"))  # type: ignore[arg-type]
            if known is not None:
                return known
        mapper = _MAPPERS.get(kind) if type(kind) is str else None
        if mapper is None:
            raise BadValue(f"unknown datavalue type {kind!r}")
        return mapper(value, datatype)
    except BadValue:
        raise
    except (ValueError, TypeError) as exc:  # a bad IRI inside the value, a lone surrogate, an unhashable field
        raise BadValue(str(exc)) from None


_ENTITY_VALUES: dict[str, Value] = {}  # id → its Value; the same few ids (human, countries) recur everywhere


def _entity(value: object, datatype: str | None) -> Value:
    qid = entity_id(value)  # validated: safe inside an IRI as it is
    if len(_ENTITY_VALUES) >= 1 << 16:
        _ENTITY_VALUES.clear()
    mapped = _ENTITY_VALUES[qid] = Value(f"<{WD}{qid}>", (), qid)
    return mapped


def _string(value: object, datatype: str | None) -> Value:
    if type(value) is not str:
        raise BadValue(f"string value must be a string, got {type(value).__name__}")
    if datatype in _SPECIAL_STRINGS:
        return _special_string(value, datatype)
    return Value(literal_term(value))


def _special_string(value: str, datatype: str | None) -> Value:
    base = _STRING_AS_IRI.get(datatype or "")
    if base is not None:
        return Value(iri_term(base + quote(value.replace(" ", "_") if datatype != "commonsMedia" else value, safe="")))
    try:  # url
        return Value(iri_term(value))
    except ValueError:
        return Value(literal_term(value, datatype=XSD + "anyURI"))


def _time(value: object, datatype: str | None) -> Value:
    if type(value) is not dict or type(value.get("time")) is not str:
        raise BadValue("time value must be an object with a 'time' string")
    precision = value.get("precision", 11)
    if type(precision) is not int or not 0 <= precision <= 14:
        raise BadValue(f"time precision must be 0..14, got {precision!r}")
    calendar = value.get("calendarmodel") or GREGORIAN
    if type(calendar) is not str:
        raise BadValue(f"time calendarmodel must be an IRI, got {calendar!r}")
    return _time_value(value["time"], precision, calendar)


@lru_cache(maxsize=1 << 14)
def _time_value(time: str, precision: int, calendar: str) -> Value:
    match = _TIME.match(time)
    if not match:
        raise BadValue(f"malformed time {time!r}")
    sign, year, month, day, hh, mm, ss = match.groups()
    year_text = ("-" if sign == "-" else "") + year.lstrip("0").rjust(4, "0")
    # unknown month/day are written 00: fall back to the precision that is actually known
    if month == "00":
        precision = min(precision, 9)
    elif day == "00":
        precision = min(precision, 10)
    if precision >= 12:
        text, dtype = f"{year_text}-{month}-{day}T{hh}:{mm}:{ss}Z", "dateTime"
    elif precision == 11:
        text, dtype = f"{year_text}-{month}-{day}", "date"
    elif precision == 10:
        text, dtype = f"{year_text}-{month}", "gYearMonth"
    else:
        text, dtype = year_text, "gYear"
    extras: tuple[tuple[str, str], ...] = ()
    if precision not in (9, 10, 11):
        extras = ((WIKIBASE + "timePrecision", f'"{precision}"^^<{XSD}integer>'),)
    if calendar != GREGORIAN:
        extras = (*extras, (WIKIBASE + "timeCalendarModel", iri_term(calendar)))
    return Value(f'"{text}"^^<{XSD}{dtype}>', extras)  # digits, '-', ':', 'T', 'Z' only: nothing to escape


def _decimal(text: object, what: str) -> str:
    if type(text) is not str or not _DECIMAL.match(text):
        raise BadValue(f"{what} must be a decimal string, got {text!r}")
    return text.lstrip("+")


def _quantity(value: object, datatype: str | None) -> Value:
    if type(value) is not dict:
        raise BadValue("quantity value must be an object")
    term = f'"{_decimal(value.get("amount"), "quantity amount")}"{_DECIMAL_SUFFIX}'
    extras: list[tuple[str, str]] = []
    unit = value.get("unit", "1")
    if unit not in ("1", None):
        if type(unit) is not str:
            raise BadValue(f"quantity unit must be a string, got {unit!r}")
        extras.append((WIKIBASE + "quantityUnit", iri_term(unit)))
    for key, predicate in _BOUNDS:
        if value.get(key) is not None:
            extras.append((predicate, f'"{_decimal(value[key], key)}"{_DECIMAL_SUFFIX}'))
    return Value(term, tuple(extras))


def _monolingual(value: object, datatype: str | None) -> Value:
    if type(value) is not dict or type(value.get("text")) is not str:
        raise BadValue("monolingualtext value must be an object with 'text' and 'language'")
    language = value.get("language")
    try:
        return Value(f"{literal_term(value['text'])}@{_checked_lang(str(language))}")
    except ValueError as exc:
        raise BadValue(str(exc)) from None


_checked_lang = lru_cache(maxsize=1 << 10)(check_lang)


def _coordinate(value: object, datatype: str | None) -> Value:
    if type(value) is not dict:
        raise BadValue("globecoordinate value must be an object")
    lat, lon = value.get("latitude"), value.get("longitude")
    if type(lat) not in (int, float) or type(lon) not in (int, float):
        raise BadValue(f"latitude and longitude must be numbers, got {lat!r}, {lon!r}")
    globe = value.get("globe") or EARTH
    if type(globe) is not str:
        raise BadValue(f"globe must be an IRI, got {globe!r}")
    where = "" if globe == EARTH else iri_term(globe) + " "  # no quote or backslash: nothing to escape
    extras: tuple[tuple[str, str], ...] = ()
    precision = value.get("precision")
    if isinstance(precision, (int, float)) and type(precision) in (
        int,
        float,
    ):  # isinstance narrows; type() keeps bools out
        extras = ((WIKIBASE + "geoPrecision", f'"{float(precision)!r}"^^<{XSD}double>'),)
    return Value(f'"{where}Point({lon!r} {lat!r})"^^<{GEO_WKT}>', extras)


_DECIMAL_SUFFIX = f"^^<{XSD}decimal>"
_BOUNDS = (("upperBound", WIKIBASE + "quantityUpperBound"), ("lowerBound", WIKIBASE + "quantityLowerBound"))
_SPECIAL_STRINGS = frozenset({*_STRING_AS_IRI, "url"})
_MAPPERS = {
    "wikibase-entityid": _entity,
    "string": _string,
    "time": _time,
    "quantity": _quantity,
    "monolingualtext": _monolingual,
    "globecoordinate": _coordinate,
}
