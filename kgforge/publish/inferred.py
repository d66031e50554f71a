"""The schema of a domain that has none of its own, inferred at build time and kept for the next build.

A build without a schema infers one from its sources (:func:`kgforge.sources.schema_infer.infer_schema`), which
imports every source once more into a scratch folder. The build keeps what that showed of each source
(``schema-observations.json`` beside the inferred ``schema.toml``), keyed by the source's kind, path,
options, size and sha256 and the importer's version, so the next build observes only the sources whose key
changed and merges the rest from the file.

Each source graph also records its *schema footprint*: a digest of what the inferred schema says about the
relations that source uses, and of the parts of the schema every import reads (language, types, options).
When a changed source changes the inferred schema, a kept source whose footprint is the same would be
imported into the same quads, so the rebuild keeps it; one whose relations changed kind or datatype is
imported again (:func:`kgforge.publish.refresh.decide`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from kgforge.core.files import sha256_file, write_json_atomic
from kgforge.core.jsonio import JsonObject
from kgforge.core.schema import Relation, Schema, SourceSpec
from kgforge.core.version import __version__
from kgforge.publish.refresh import plain_options
from kgforge.sources.schema_infer import Observations, infer_schema

OBSERVATIONS = "schema-observations.json"  # in the build folder, beside the inferred schema.toml
_FORMAT = 1


@dataclasses.dataclass(frozen=True)
class InferredBuildSchema:
    """The schema a build infers, and each source's footprint in it (in the sources' order)."""

    schema: Schema
    footprints: list[str]
    observed_again: int  # sources imported into the scratch folder (the others came from the earlier build)


def source_key(spec: SourceSpec, path: Path) -> JsonObject:
    """What must be equal for an earlier observation of a source to stand for this one."""
    stat = path.stat() if path.is_file() else None
    return {
        "kind": spec.kind,
        "path": str(path),
        "options": plain_options(dict(spec.options)),
        "size": stat.st_size if stat else None,
        "sha256": sha256_file(path) if stat else None,  # a folder (a crawl) is observed again every time
        "importer_version": __version__,
    }


def infer_build_schema(
    domain: str, specs: list[tuple[SourceSpec, Path]], earlier_build: Path | None, staging: Path, schema_file: str
) -> InferredBuildSchema:
    """Infer ``domain``'s schema from ``specs`` into ``staging`` (``schema_file`` and the observations beside
    it), reusing what ``earlier_build`` (the published build folder, when its schema was inferred too)
    observed of every unchanged source."""
    keys = [source_key(spec, path) for spec, path in specs]
    earlier = _earlier_observations(earlier_build)
    known = [earlier.get(_key_text(key)) if key["sha256"] else None for key in keys]
    sources = [SourceSpec(spec.kind, str(path), spec.options) for spec, path in specs]
    inferred = infer_schema(domain, sources, known=known)
    schema = inferred.write(staging / schema_file)
    write_json_atomic(
        staging / OBSERVATIONS,
        {
            "format": _FORMAT,
            "sources": [{"key": key, "observations": seen.to_json()} for key, seen in zip(keys, inferred.observations)],
        },
        indent=None,
    )
    footprints = [schema_footprint(schema, seen) for seen in inferred.observations]
    return InferredBuildSchema(schema, footprints, sum(1 for seen in known if seen is None))


def schema_footprint(schema: Schema, seen: Observations) -> str:
    """A digest of what ``schema`` makes of the relations a source uses (each relation the source names, as
    the schema maps it: id, labels, kind, datatype, range…) and of the schema's parts every import reads."""
    common = {k: v for k, v in schema.document.items() if k not in ("relations", "sources")}
    relations = [
        [kind, name, _definition(schema.relation_for_iri(name) if kind == "iri" else schema.relation_for(name))]
        for kind, name in seen.relation_names()
    ]
    text = json.dumps({"common": common, "relations": relations}, ensure_ascii=False, sort_keys=True, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _definition(relation: Relation) -> list[Any]:
    return [relation.iri, *(getattr(relation, f.name) for f in dataclasses.fields(relation))]


def _earlier_observations(build: Path | None) -> dict[str, Observations]:
    """The observations an earlier build kept, by source key; none when it kept none or they cannot be read
    (the sources are then observed again: this file only ever saves time)."""
    if build is None:
        return {}
    try:
        data = json.loads((build / OBSERVATIONS).read_text(encoding="utf-8"))
        if data.get("format") != _FORMAT:
            return {}
        return {_key_text(entry["key"]): Observations.from_json(entry["observations"]) for entry in data["sources"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _key_text(key: dict[str, Any]) -> str:
    return json.dumps(key, sort_keys=True, ensure_ascii=False)
