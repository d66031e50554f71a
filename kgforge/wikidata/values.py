"""Wikidata datavalues → RDF terms: the one value-mapping table (documented in docs/wikidata.md).

``map_value`` returns the N-Quads object term of the *direct* (truthy) triple and the extra
facts that belong on the statement node (unit, precision, calendar, bounds, globe) so that
nothing in the value is lost. Terms are already serialised (``<iri>`` or a literal), ready for
``QuadWriter.term``. Every function here is pure, so it runs in worker processes.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from urllib.parse import quote

from kgforge.quads import XSD, check_iri, literal_term

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
P = "http://www.wikidata.org/prop/"
PS = "http://www.wikidata.org/prop/statement/"
PQ = "http://www.wikidata.org/prop/qualifier/"
WDNO = "http://www.wikidata.org/prop/novalue/"
WDS = "http://www.wikidata.org/entity/statement/"
WIKIBASE = "http://wikiba.se/ontology#"
GENID = "https://kgforge.org/.well-known/genid/"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
COMMONS_FILE = "http://commons.wikimedia.org/wiki/Special:FilePath/"
COMMONS_DATA = "http://commons.wikimedia.org/data/main/"
GREGORIAN = WD + "Q1985727"
EARTH = WD + "Q2"

ENTITY_ID = re.compile(r"^(?:[QPL][1-9][0-9]*(?:-[FS][1-9][0-9]*)?|M[1-9][0-9]*)$")
_ID_PREFIX = {"item": "Q", "property": "P", "lexeme": "L", "form": "L", "sense": "L", "mediainfo": "M"}
_TIME = re.compile(r"^([+-])(\d{1,16})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})Z$")
_DECIMAL = re.compile(r"^[+-]?(\d+(\.\d*)?|\.\d+)$")
_STRING_AS_IRI = {"commonsMedia": COMMONS_FILE, "geo-shape": COMMONS_DATA, "tabular-data": COMMONS_DATA}


class BadValue(ValueError):
    """A datavalue that cannot be mapped; the message says why."""


@dataclass(slots=True)
class Value:
    term: str  # N-Quads object term of the direct triple
    extras: list[tuple[str, str]] | tuple = ()  # (predicate IRI, term) for the statement node
    entity: str | None = None  # the id, for an item/property/lexeme reference


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
    if not isinstance(datavalue, dict) or "value" not in datavalue:
        raise BadValue("datavalue must be an object with 'type' and 'value'")
    kind, value = datavalue.get("type"), datavalue["value"]
    mapper = _MAPPERS.get(kind)
    if mapper is None:
        raise BadValue(f"unknown datavalue type {kind!r}")
    return mapper(value, datatype)


def _entity(value: object, datatype: str | None) -> Value:
    qid = entity_id(value)  # validated: safe inside an IRI as it is
    return Value(f"<{WD}{qid}>", entity=qid)


def _string(value: object, datatype: str | None) -> Value:
    if not isinstance(value, str):
        raise BadValue(f"string value must be a string, got {type(value).__name__}")
    base = _STRING_AS_IRI.get(datatype or "")
    if base is not None:
        return Value(iri_term(base + quote(value.replace(" ", "_") if datatype != "commonsMedia" else value,
                                           safe="")))
    if datatype == "url":
        try:
            return Value(iri_term(value))
        except ValueError:
            return Value(literal_term(value, datatype=XSD + "anyURI"))
    return Value(literal_term(value))


def _time(value: object, datatype: str | None) -> Value:
    if not isinstance(value, dict) or not isinstance(value.get("time"), str):
        raise BadValue("time value must be an object with a 'time' string")
    match = _TIME.match(value["time"])
    if not match:
        raise BadValue(f"malformed time {value['time']!r}")
    sign, year, month, day, hh, mm, ss = match.groups()
    precision = value.get("precision", 11)
    if not isinstance(precision, int) or not 0 <= precision <= 14:
        raise BadValue(f"time precision must be 0..14, got {precision!r}")
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
    extras: list[tuple[str, str]] | tuple = ()
    if precision not in (9, 10, 11):
        extras = [(WIKIBASE + "timePrecision", f'"{precision}"^^<{XSD}integer>')]
    calendar = value.get("calendarmodel") or GREGORIAN
    if calendar != GREGORIAN:
        extras = [*extras, (WIKIBASE + "timeCalendarModel", iri_term(calendar))]
    return Value(f'"{text}"^^<{XSD}{dtype}>', extras)  # digits, '-', ':', 'T', 'Z' only: nothing to escape


def _decimal(text: object, what: str) -> str:
    if not isinstance(text, str) or not _DECIMAL.match(text):
        raise BadValue(f"{what} must be a decimal string, got {text!r}")
    return text.lstrip("+")


def _quantity(value: object, datatype: str | None) -> Value:
    if not isinstance(value, dict):
        raise BadValue("quantity value must be an object")
    decimal = XSD + "decimal"
    result = Value(f'"{_decimal(value.get("amount"), "quantity amount")}"^^<{decimal}>', [])
    unit = value.get("unit", "1")
    if unit not in ("1", None):
        if not isinstance(unit, str):
            raise BadValue(f"quantity unit must be a string, got {unit!r}")
        result.extras.append((WIKIBASE + "quantityUnit", iri_term(unit)))
    for key, name in (("upperBound", "quantityUpperBound"), ("lowerBound", "quantityLowerBound")):
        if value.get(key) is not None:
            result.extras.append((WIKIBASE + name, f'"{_decimal(value[key], key)}"^^<{decimal}>'))
    return result


def _monolingual(value: object, datatype: str | None) -> Value:
    if not isinstance(value, dict) or not isinstance(value.get("text"), str):
        raise BadValue("monolingualtext value must be an object with 'text' and 'language'")
    try:
        return Value(literal_term(value["text"], lang=str(value.get("language"))))
    except ValueError as exc:
        raise BadValue(str(exc)) from None


def _coordinate(value: object, datatype: str | None) -> Value:
    if not isinstance(value, dict):
        raise BadValue("globecoordinate value must be an object")
    lat, lon = value.get("latitude"), value.get("longitude")
    if not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in (lat, lon)):
        raise BadValue(f"latitude and longitude must be numbers, got {lat!r}, {lon!r}")
    globe = value.get("globe") or EARTH
    point = f"Point({lon!r} {lat!r})" if globe == EARTH else f"<{check_iri(globe)}> Point({lon!r} {lat!r})"
    result = Value(literal_term(point, datatype=GEO_WKT), [])
    if isinstance(value.get("precision"), (int, float)):
        result.extras.append((WIKIBASE + "geoPrecision", literal_term(repr(float(value["precision"])),
                                                                       datatype=XSD + "double")))
    return result


_MAPPERS = {
    "wikibase-entityid": _entity,
    "string": _string,
    "time": _time,
    "quantity": _quantity,
    "monolingualtext": _monolingual,
    "globecoordinate": _coordinate,
}
