"""Everything the qa package takes from the rest of kgforge, in one place.

The qa modules import kgforge only through this module, so when the package is regrouped by stage
only these lines change. (``kgforge.qa.related`` alone imports ``kgforge.embed.related``, which loads torch.)
"""

from __future__ import annotations

from kgforge.core.errors import ArgumentError, InputError, KgforgeError
from kgforge.core.files import (
    AtomicFile,
    atomic_path,
    package_versions,
    sha256_file,
    write_json_atomic,
)
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.quarantine import Quarantine
from kgforge.core.resources import query_text
from kgforge.core.schema import Schema, load_schema
from kgforge.core.text import normalise_label, to_simplified
from kgforge.core.vocab import (
    ENTITY,
    RDF_TYPE,
    WIKIDATA_DIRECT,
    WIKIDATA_ENTITY,
    WIKIDATA_PROP,
    XSD,
)
from kgforge.store.languages import language_labels, same_as_pairs
from kgforge.store.layout import DomainPaths, domain_paths, published_build, read_manifest
from kgforge.store.manifest import Manifest
from kgforge.store.query import QueryRunner
from kgforge.store.tables import GraphTables, read_tables

__all__ = [
    "ENTITY", "ArgumentError", "AtomicFile", "atomic_path", "DomainPaths", "GraphTables", "InputError", "KgforgeError", "Manifest", "Quarantine", "QueryRunner",
    "RDF_TYPE", "Schema", "WIKIDATA_DIRECT", "WIKIDATA_ENTITY", "WIKIDATA_PROP", "XSD", "domain_paths", "iter_json_lines",
    "load_schema", "normalise_label", "package_versions", "query_text", "read_manifest", "read_tables",
    "sha256_file", "to_simplified", "write_json_atomic", "language_labels", "same_as_pairs", "published_build",
]
