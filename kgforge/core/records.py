"""The typed records stages return, and the one place they become JSON-shaped dicts.

Every stage returns a frozen dataclass whose fields are typed and documented (as PyKEEN's
``PipelineResult``); a caller reads ``report.triples``, never ``report["triples"]``. ``as_dict()`` is for
the JSON edge only (the CLI's ``--json``, the server): fields in declaration order, nested records and
tuples turned into dicts and lists, paths into strings, and a field declared with :func:`omitted_when_none`
left out while it is None, so the printed JSON is what the command has always printed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeVar, cast

_OMIT = "omit_when_none"
_KEY = "json_key"
_FLATTEN = "flatten"


def omitted_when_none(**kwargs: Any) -> Any:
    """A field (default None) that ``as_dict`` leaves out while it is None: a key the JSON has only sometimes."""
    return dataclasses.field(default=None, metadata={_OMIT: True}, **kwargs)


def json_key(name: str, **kwargs: Any) -> Any:
    """A field that ``as_dict`` names ``name`` (a JSON key that is not a Python name, such as ``format``)."""
    return dataclasses.field(metadata={_KEY: name}, **kwargs)


def flattened(**kwargs: Any) -> Any:
    """A mapping field whose keys ``as_dict`` writes at the record's own level, where it stands."""
    return dataclasses.field(default_factory=dict, metadata={_FLATTEN: True}, **kwargs)


def flattened_record(**kwargs: Any) -> Any:
    """A record field (default None) whose fields ``as_dict`` writes at the record's own level, where it
    stands; nothing while it is None (a part of the JSON only some runs have)."""
    return dataclasses.field(default=None, metadata={_FLATTEN: True}, **kwargs)


@dataclasses.dataclass(frozen=True)
class Record:
    """Base of the records stages return: typed fields, and ``as_dict()`` for the JSON edge."""

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            if f.name.startswith("_"):
                continue
            value = getattr(self, f.name)
            if value is None and f.metadata.get(_OMIT):
                continue
            if f.metadata.get(_FLATTEN):
                items = value.as_dict() if isinstance(value, Record) else value or {}
                out.update({k: jsonable(v) for k, v in items.items()})
            else:
                out[f.metadata.get(_KEY, f.name)] = jsonable(value)
        return out


def jsonable(value: Any) -> Any:
    """``value`` in the shapes JSON has: records and dataclasses as dicts, tuples as lists, paths as strings."""
    if dataclasses.is_dataclass(value) and hasattr(value, "as_dict"):
        return value.as_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: jsonable(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: jsonable(v) for k, v in value.items()}
    if isinstance(value, Path):
        return str(value)
    return value


_Options = TypeVar("_Options")


def options_record(kind: type[_Options], options: _Options | None, fields: Mapping[str, Any]) -> _Options:
    """The options a stage runs with: ``options`` (a frozen dataclass of ``kind``, as the command line makes it)
    with ``fields`` (the same record's fields given as keywords, as a Python caller may: ``layout="sample"``)
    over it, or ``kind(**fields)`` without one. A record either way, checked when made: a field the record lacks
    is a TypeError naming it, as the record's own constructor says."""
    if options is None:
        return kind(**fields)
    return cast(_Options, dataclasses.replace(cast(Any, options), **fields)) if fields else options
