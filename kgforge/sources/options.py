"""Importer options as typed records: a schema's ``[options.<section>]`` table under a source's own settings.

Each importer family declares one frozen dataclass (:class:`~kgforge.sources.records.RecordsOptions`,
``RdfOptions``, ``CrawlOptions``, ``WikidataOptions``, ``XloreOptions``) whose fields are exactly the keys a
user may write, with the defaults the importer uses and a docstring each. :func:`read_options` is the one
reader: it merges the two tables (the source's settings win), refuses a key no field names (with the closest
known key) and a value of the wrong type (with the type expected), and builds the record. A field marked
:data:`FLAT` holds a dataclass whose fields are read from the same table (the crawler's politeness settings
sit beside the crawl source's own).

The ``__post_init__`` of a record may check values further with :mod:`kgforge.core.checks`; the
:class:`~kgforge.core.errors.ArgumentError` it raises becomes a :class:`~kgforge.core.errors.SchemaError`
naming the schema file and where the key was written.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from kgforge.core.errors import ArgumentError, SchemaError
from kgforge.core.jsonio import JsonObject
from kgforge.core.registry import closest

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

T = TypeVar("T", bound="DataclassInstance")  # an options table is read into a dataclass
FLAT = {"flat": True}  # field metadata: this dataclass-typed field is read from the enclosing table


def read_options(
    cls: type[T],
    schema_path: Path | str,
    section: str,
    schema_table: Mapping[str, Any] | None,
    source_options: Mapping[str, Any] | None = None,
    source: str = "the source",
) -> T:
    """``cls`` built from ``[options.<section>]`` of the schema at ``schema_path`` with ``source_options`` on
    top; SchemaError naming the file, where the key was written and the key, for an unknown key or a bad value."""
    if schema_table is not None and not isinstance(schema_table, Mapping):
        raise SchemaError(
            f"{schema_path}: [options.{section}] must be a table of keys, not "
            f"{type(schema_table).__name__} {schema_table!r}"
        )
    schema_table, source_options = dict(schema_table or {}), dict(source_options or {})

    def where(key: str | None = None) -> str:
        origin = source if key is not None and key in source_options else f"[options.{section}]"
        return f"{schema_path}: {origin}"

    merged = {**schema_table, **source_options}
    known = option_names(cls)
    for key in merged:
        if key not in known:
            near = closest(key, known)
            hint = f" (did you mean {near!r}?)" if near else ""
            raise SchemaError(
                f"{where(key)}: unknown option {key!r}{hint}; the {section} options are {', '.join(sorted(known))}"
            )
    return _build(cls, merged, where)


def option_names(cls: type) -> list[str]:
    """The keys a table for ``cls`` may hold (the fields of :data:`FLAT` fields included)."""
    return list(option_types(cls))


def option_types(cls: type) -> dict[str, object]:
    """Each key a table for ``cls`` may hold → the type its value must have."""
    hints = _hints(cls)
    types_: dict[str, object] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("flat"):
            types_.update(option_types(hints[f.name]))
        elif f.init and not f.name.startswith("_"):
            types_[f.name] = hints[f.name]
    return types_


def options_dict(record: Any) -> JsonObject:
    """The table :func:`read_options` would read ``record`` back from (tuples as lists, as TOML writes them)."""
    table: dict[str, Any] = {}
    for f in dataclasses.fields(record):
        value = getattr(record, f.name)
        if f.metadata.get("flat"):
            table.update(options_dict(value))
        elif f.init and not f.name.startswith("_"):
            table[f.name] = _as_written(value)
    return table


def _as_written(value: Any) -> Any:
    if isinstance(value, tuple):
        return [_as_written(item) for item in value]
    if isinstance(value, dict):
        return {key: _as_written(item) for key, item in value.items()}
    return value


def _build(cls: type[T], table: dict[str, Any], where: Any) -> T:
    hints = _hints(cls)
    values: dict[str, Any] = {}
    for f in dataclasses.fields(cls):
        if f.metadata.get("flat"):
            nested = hints[f.name]
            values[f.name] = _build(nested, {k: v for k, v in table.items() if k in option_names(nested)}, where)
        elif f.name in table:
            values[f.name] = _coerce(table[f.name], hints[f.name], f.name, where)
    try:
        return cls(**values)
    except ArgumentError as exc:
        key = exc.what.rsplit(".", 1)[-1]
        raise SchemaError(f"{where(key)}: {key} {exc.problem}") from None


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _coerce(value: Any, hint: Any, key: str, where: Any) -> Any:
    converted = _convert(value, hint)
    if converted is _REFUSED:
        raise SchemaError(f"{where(key)}: {key} must be {_describe(hint)}, got {value!r}")
    return converted


_REFUSED = object()


def _convert(value: Any, hint: Any) -> Any:
    """``value`` as ``hint`` asks (a list becomes a tuple, an int a float, a string a one-item tuple), or
    _REFUSED."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is Any:
        return value
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in args:
            return None
        for member in args:
            if member is not type(None) and (converted := _convert(value, member)) is not _REFUSED:
                return converted
        return _REFUSED
    if hint is bool:
        return value if isinstance(value, bool) else _REFUSED
    if hint is int:
        return value if isinstance(value, int) and not isinstance(value, bool) else _REFUSED
    if hint is float:
        return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else _REFUSED
    if hint is str:
        return value if isinstance(value, str) else _REFUSED
    if origin is tuple:
        items = [value] if isinstance(value, str) else value
        if not isinstance(items, (list, tuple)):
            return _REFUSED
        converted = [_convert(item, args[0]) for item in items]
        return _REFUSED if _REFUSED in converted else tuple(converted)
    if origin is dict or hint is dict:
        if not isinstance(value, Mapping) or not all(isinstance(k, str) for k in value):
            return _REFUSED
        converted = {k: _convert(v, args[1] if args else Any) for k, v in value.items()}
        return _REFUSED if _REFUSED in converted.values() else converted
    raise TypeError(f"option type {hint!r} has no reader")  # a record declared with a type this module lacks


def _describe(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (typing.Union, types.UnionType):
        return " or ".join(_describe(a) for a in args if a is not type(None))
    if origin is tuple:
        return f"a list of {_describe(args[0]).removeprefix('a ').removeprefix('an ')}s (or one)"
    if origin is dict or hint is dict:
        return "a table" + (f" of {_describe(args[1])}" if args and args[1] is not Any else "")
    return {bool: "true or false", int: "a whole number", float: "a number", str: "a string"}.get(hint, str(hint))
