"""Which sources a rebuild must import again, and which graphs of the published build it can keep.

A build records, beside each source graph, what the graph was made from (``refresh`` in its manifest entry):
the input's size, sha256 and modification stamp, the importer's version and options, and the relations the
import used (the schema graph declares them). A rebuild compares each of its sources with that record and
keeps the graph of every source whose record matches, so its quads are neither imported nor loaded again:
the new store is a checkpoint of the published one with only the changed graphs dropped and loaded.

Kept means equal to what an import would write: the graph IRI is named exactly as a full build names it, the
schema file and the importer are the same, and the input's bytes are the same (a new stamp with the same
sha256 keeps the graph; a new size or sha256 never does). Anything the record cannot vouch for (a folder
source, a build from before these records, a quads file that differs from its checksum) is imported again,
and the reason is reported.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.files import sha256_file
from kgforge.core.jsonio import JsonObject
from kgforge.core.schema import Relation
from kgforge.core.version import __version__
from kgforge.store.layout import quads_verified
from kgforge.store.manifest import GraphEntry, Manifest

KEPT, IMPORTED = "kept", "imported"


@dataclass(frozen=True)
class SourceDecision:
    """What a rebuild did with one source: ``action`` is ``kept`` or ``imported``, ``reason`` says why."""

    source: str  # KIND:PATH
    graph: str
    action: str
    reason: str

    @property
    def kept(self) -> bool:
        return self.action == KEPT

    @property
    def message(self) -> str:
        return f"{self.action} {self.source}: {self.reason}"


def refresh_record(
    options: dict[str, Any], path: Path, relations: set[Relation], schema_footprint: str | None = None
) -> JsonObject:
    """What a source graph's manifest entry records so a later build can tell whether it changed; with an
    inferred schema, also the digest of what that schema says of the relations the source uses
    (:func:`kgforge.publish.inferred.schema_footprint`)."""
    record = {
        "importer_version": __version__,
        "options": plain_options(options),
        "stamp_ns": path.stat().st_mtime_ns if path.is_file() else None,
        "relations": schema_relations(relations),
    }
    if schema_footprint is not None:
        record["schema_footprint"] = schema_footprint
    return record


def schema_relations(relations: set[Relation]) -> list[tuple[str, str, str, str]]:
    """The relations an import used, as the schema graph declares them (IRI, zh and en labels, kind), sorted:
    the one form both a fresh import and a kept graph's record give :func:`relations_from_records`."""
    return sorted({(r.iri, r.zh, r.en or "", r.kind) for r in relations})


def relations_from_records(records: Iterable[Sequence[str]]) -> set[Relation]:
    """Relations the schema graph writer takes, from :func:`schema_relations`' records."""
    return {Relation(id=iri, zh=zh, en=en, kind=kind, own_iri=iri) for iri, zh, en, kind in records}


def decide(
    previous: Manifest | None,
    published: Path | None,
    schema_sha256: str,
    kind: str,
    path: Path,
    options: dict[str, Any],
    graph: str,
    full: bool,
    schema_footprint: str | None = None,
) -> SourceDecision:
    """Keep the published graph of source ``kind:path`` (named ``graph`` by this build), or import it again.
    A schema that changed keeps the graph only when it is inferred and says the same of every relation the
    source uses as when the graph was made (``schema_footprint``)."""
    source = f"{kind}:{path}"
    why = _why_import(previous, published, schema_sha256, kind, path, options, graph, full, schema_footprint)
    if why is not None:
        return SourceDecision(source, graph, IMPORTED, why)
    entry = previous.graphs[graph]  # type: ignore[union-attr]
    touched = entry.details["refresh"].get("stamp_ns") != path.stat().st_mtime_ns
    same = "same size and sha256" + (" (modified time differs, content does not)" if touched else "")
    return SourceDecision(source, graph, KEPT, f"unchanged since build {previous.build_id}: {same}")  # type: ignore[union-attr]


def _why_import(
    previous: Manifest | None,
    published: Path | None,
    schema_sha256: str,
    kind: str,
    path: Path,
    options: dict[str, Any],
    graph: str,
    full: bool,
    schema_footprint: str | None = None,
) -> str | None:
    """Why the source cannot keep its published graph, or None when it can."""
    if full:
        return "--full imports every source"
    if previous is None or published is None:
        return "no published build to compare with"
    schema_changed = previous.schema.sha256 != schema_sha256
    if schema_changed and schema_footprint is None:
        return "the schema changed since the published build"
    entry = previous.graphs.get(graph)
    if entry is None:
        return "new source (not in the published build)"
    if entry.kind != kind or entry.details.get("path") != str(path):
        return f"the published graph of that name was made from {entry.kind}:{entry.details.get('path')}"
    if not path.is_file():
        return "a folder source has no checksum to compare, so it is always imported"
    record = entry.details.get("refresh")
    if not isinstance(record, dict):
        return "the published build does not record what this graph was made from (made by an earlier version)"
    if record.get("importer_version") != __version__:
        return f"the importer changed (kgforge {record.get('importer_version')} → {__version__})"
    if record.get("options") != plain_options(options):
        return "the importer's options changed"
    return (
        _input_change(entry, path)
        or (_schema_change(entry, schema_footprint) if schema_changed else None)
        or _quads_problem(entry, published)
    )


def _schema_change(entry: GraphEntry, footprint: str | None) -> str | None:
    """With an inferred schema that changed: why what it says of this source's relations differs, if it does."""
    if entry.details["refresh"].get("schema_footprint") == footprint:
        return None
    return "the inferred schema changed for the relations this source uses (kind, datatype or name)"


def _input_change(entry: GraphEntry, path: Path) -> str | None:
    recorded = entry.details.get("input") or {}
    size = path.stat().st_size
    if recorded.get("size") != size:
        return f"input changed (size {recorded.get('size'):,} → {size:,} bytes)"
    if recorded.get("sha256") != sha256_file(path):
        return "input changed (same size, different sha256)"
    return None


def _quads_problem(entry: GraphEntry, published: Path) -> str | None:
    if quads_verified(published, entry):
        return None
    return f"its published quads file {entry.quads_file} is missing or differs from its checksum"


def plain_options(options: dict[str, Any]) -> Any:
    """Options as the manifest's JSON holds them, so a recorded value and a fresh one compare equal."""
    return json.loads(json.dumps(options, sort_keys=True, default=str))
