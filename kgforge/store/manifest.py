"""The manifest of a build (``builds/<id>/manifest.json``) as typed records, with one reader and one writer.

A manifest names the build, the schema it was built with, and one :class:`GraphEntry` per named graph
(its kind, quads file, quad count and sha256, plus what the graph's producer recorded: a source's path,
input fingerprint and import counts, …). Every stage that reads or extends a build goes through
:meth:`Manifest.read`; :meth:`Manifest.write` is the only writer. Manifests written by earlier versions
load (keys they lack take defaults), and a manifest read and written again keeps its bytes: each graph
entry remembers the order of its keys, and keys this module does not know are carried through.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import BuildError
from kgforge.core.files import write_json_atomic

_ENTRY_FIELDS = ("kind", "quads_file", "quads", "sha256")
_MANIFEST_FIELDS = ("domain", "build_id", "created", "schema", "graphs", "total_quads", "timings", "versions", "stages")


class ManifestError(BuildError):
    """A manifest that is not JSON, or lacks what every build records."""


@dataclass(frozen=True)
class GraphEntry:
    """One named graph of a build. ``details`` holds what its producer recorded beyond the four fields
    every graph has (a source's ``path``, ``input``, ``counts``, ``quarantined``, …)."""

    quads_file: str
    quads: int
    kind: str | None = None  # absent from some early manifests
    sha256: str | None = None  # computed when the build publishes it
    details: Mapping[str, Any] = field(default_factory=dict)
    key_order: tuple[str, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "graph entry") -> GraphEntry:
        if not isinstance(data, Mapping):
            raise ManifestError(f"{where}: expected an object, found {type(data).__name__}")
        missing = [key for key in ("quads_file", "quads") if key not in data]
        if missing:
            raise ManifestError(f"{where}: missing {', '.join(missing)}")
        return cls(
            quads_file=data["quads_file"],
            quads=data["quads"],
            kind=data.get("kind"),
            sha256=data.get("sha256"),
            details={k: v for k, v in data.items() if k not in _ENTRY_FIELDS},
            key_order=tuple(data),
        )

    def to_dict(self) -> dict[str, Any]:
        values = {
            "kind": self.kind,
            "quads_file": self.quads_file,
            "quads": self.quads,
            "sha256": self.sha256,
            **self.details,
        }
        values = {k: v for k, v in values.items() if not (k in ("kind", "sha256") and v is None)}
        ordered = {k: values[k] for k in self.key_order if k in values}
        return ordered | {k: v for k, v in values.items() if k not in ordered}

    def with_sha256(self, sha256: str) -> GraphEntry:
        return dataclasses.replace(self, sha256=sha256)


@dataclass(frozen=True)
class SchemaEntry:
    """The schema a build used: ``path`` is where stages load it from (inside the build when inferred)."""

    path: str
    name: str | None = None
    version: int | None = None  # the schema file's integer version
    sha256: str | None = None
    inferred: bool | None = None  # absent before schema-less builds existed

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "schema") -> SchemaEntry:
        if not isinstance(data, Mapping) or "path" not in data:
            raise ManifestError(f"{where}: missing path")
        return cls(
            path=data["path"],
            name=data.get("name"),
            version=data.get("version"),
            sha256=data.get("sha256"),
            inferred=data.get("inferred"),
        )

    def to_dict(self) -> dict[str, Any]:
        values = {
            "name": self.name,
            "version": self.version,
            "path": self.path,
            "sha256": self.sha256,
            "inferred": self.inferred,
        }
        return {k: v for k, v in values.items() if v is not None or k in ("name", "version")}


@dataclass(frozen=True)
class Manifest:
    domain: str
    build_id: str
    schema: SchemaEntry
    graphs: Mapping[str, GraphEntry]
    created: str = ""
    total_quads: int | None = None  # the sum of the graphs' quads when absent
    timings: Mapping[str, Any] = field(default_factory=dict)
    versions: Mapping[str, Any] = field(default_factory=dict)
    stages: Mapping[str, Any] = field(default_factory=dict)  # what derive, link, … recorded, by stage
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys written by a later version, kept

    @classmethod
    def read(cls, path: Path | str) -> Manifest:
        """The manifest in ``path``; a ManifestError naming the file if it is not one."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise ManifestError(
                f"{path}: not a JSON manifest (line {exc.lineno}: {exc.msg}); rebuild the domain with `kgforge build`"
            ) from exc
        if not isinstance(data, dict):
            raise ManifestError(f"{path}: a manifest is a JSON object, found {type(data).__name__}")
        return cls.from_dict(data, str(path))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], where: str = "manifest") -> Manifest:
        missing = [key for key in ("domain", "build_id", "schema", "graphs") if key not in data]
        if missing:
            raise ManifestError(f"{where}: missing {', '.join(missing)}; rebuild the domain with `kgforge build`")
        if not isinstance(data["graphs"], Mapping):
            raise ManifestError(f"{where}: graphs: expected an object of graph IRI -> entry")
        graphs = {
            graph: GraphEntry.from_dict(entry, f"{where}: graph {graph}") for graph, entry in data["graphs"].items()
        }
        return cls(
            domain=data["domain"],
            build_id=data["build_id"],
            schema=SchemaEntry.from_dict(data["schema"], f"{where}: schema"),
            graphs=graphs,
            created=data.get("created", ""),
            total_quads=data.get("total_quads"),
            timings=data.get("timings", {}),
            versions=data.get("versions", {}),
            stages=data.get("stages", {}),
            extra={k: v for k, v in data.items() if k not in _MANIFEST_FIELDS},
        )

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain,
            "build_id": self.build_id,
            "created": self.created,
            "schema": self.schema.to_dict(),
            "graphs": {graph: entry.to_dict() for graph, entry in self.graphs.items()},
            "total_quads": self.quads,
            "timings": dict(self.timings),
            "versions": dict(self.versions),
            "stages": dict(self.stages),
            **self.extra,
        }

    def write(self, path: Path | str) -> None:
        write_json_atomic(path, self.to_dict())

    @property
    def quads(self) -> int:
        return self.total_quads if self.total_quads is not None else sum(e.quads for e in self.graphs.values())

    def graphs_of_kind(self, *kinds: str) -> list[str]:
        return [graph for graph, entry in self.graphs.items() if entry.kind in kinds]

    def checksums(self) -> dict[str, str | None]:
        """Graph IRI → the sha256 of its quads (what an export or a derive run records it was made from)."""
        return {graph: entry.sha256 for graph, entry in self.graphs.items()}
