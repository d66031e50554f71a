"""Source kind ``jsonl``: JSON Lines entity records, one object per line.

``{"id": "http://example.org/b1", "name": "The Fog City", "aliases": ["Fog City"], "author": ["Lin Qiu"],
"year": 1999}``: the id, name and aliases keys are found as an entity table's columns are (see
:mod:`kgforge.sources.tables`); every other key is a relation, its value a string, number or boolean or a list
of them. Numbers and booleans keep their JSON type (``xsd:integer``, ``xsd:decimal``, ``xsd:boolean``);
strings are typed as table cells are. A line that is not UTF-8, not JSON, not an object, or holds a value of
another shape is quarantined with its line; the other lines land.
"""

from __future__ import annotations

import math
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.core.quads import XSD
from kgforge.sources.importer import ImportContext, parsed_records, register
from kgforge.sources.records import Cell, GenericFacts, RecordsOptions, iri_in, record_settings


@register(
    "jsonl",
    'JSON Lines entity records: {"id", "name", "aliases", relation: value or [values], ...}',
    suffixes=(".jsonl", ".ndjson"),
)
def import_jsonl(ctx: ImportContext) -> None:
    facts = GenericFacts(ctx)
    settings: RecordsOptions | None = None
    schema = ctx.schema
    for location, record in parsed_records(ctx, iter_json_lines(ctx.path)):
        if not isinstance(record.value, dict):
            ctx.reject(location, f"expected a JSON object per line, got {type(record.value).__name__}", record.raw)
            continue
        keys = list(record.value)
        settings = settings or record_settings(ctx, keys)
        id_key, label_key, alias_key = settings.id, settings.label, settings.aliases
        labels = settings.labels
        try:
            cells = [
                (schema.relation_for_iri(iri) if (iri := iri_in(key)) else schema.relation_for(key), cell)
                for key, value in record.value.items()
                if key not in (id_key, label_key, alias_key) and key not in labels
                for cell in json_cells(facts, value, key)
            ]
            aliases = _strings(record.value.get(alias_key), alias_key) if alias_key else []
            names = [(name, lang) for key, lang in labels.items() for name in _strings(record.value.get(key), key)]
            subject = facts.subject(
                _scalar_text(record.value.get(id_key), id_key) if id_key else None,
                _scalar_text(record.value.get(label_key), label_key) if label_key else None,
                location,
                record=True,
            )
        except ValueError as exc:
            ctx.reject(location, str(exc), record.value)
            continue
        for alias in aliases:
            facts.alias(subject, alias, location)
        for name, lang in names:
            facts.label(subject, name, lang, location)
        for relation, cell in cells:
            facts.add(subject, relation, cell, location)
        ctx.accept()
    facts.emit()


def json_cells(facts: GenericFacts, value: Any, key: str) -> list[Cell]:
    """The cells of one key's value (a scalar or a list of scalars); ValueError naming the key otherwise."""
    values = value if isinstance(value, list) else [value]
    cells = []
    for item in values:
        if item is None or item == "":
            continue
        if isinstance(item, bool):
            cells.append(facts.cell("true" if item else "false", datatype=XSD + "boolean"))
        elif isinstance(item, int):
            cells.append(facts.cell(str(item), datatype=XSD + "integer"))
        elif isinstance(item, float):
            if not math.isfinite(item):
                raise ValueError(f"key {key!r}: {item} is not a finite number")
            cells.append(facts.cell(repr(item), datatype=XSD + ("decimal" if "e" not in repr(item) else "double")))
        elif isinstance(item, str):
            cells.append(facts.cell(item.strip()))
        else:
            raise ValueError(
                f"key {key!r}: a value must be a string, number or boolean (or a list of them), "
                f"got {type(item).__name__}"
            )
    return cells


def _scalar_text(value: Any, key: str) -> str | None:
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise ValueError(f"key {key!r}: expected a string, got {type(value).__name__}")


def _strings(value: Any, key: str) -> list[str]:
    values = value if isinstance(value, list) else [] if value is None else [value]
    if not all(isinstance(v, str) for v in values):
        raise ValueError(f"key {key!r}: expected a string or a list of strings")
    return values
