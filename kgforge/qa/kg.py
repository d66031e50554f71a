"""Everything the qa package takes from the rest of kgforge, in one place.

The qa modules import kgforge only through this module, so when the package is regrouped by stage
only these lines change. (``kgforge.qa.related`` alone imports ``kgforge.related``, which loads torch.)
"""

from __future__ import annotations

from kgforge.build import package_versions, sha256_file
from kgforge.errors import ArgumentError, InputError, KgforgeError
from kgforge.jsonio import iter_json_lines
from kgforge.quarantine import Quarantine
from kgforge.query import QueryRunner
from kgforge.resources import query_text
from kgforge.schema import Schema, load_schema
from kgforge.store import DomainPaths, domain_paths, read_manifest, write_json_atomic
from kgforge.tables import GraphTables, read_tables
from kgforge.text import normalise_label, to_simplified
from kgforge.vocab import ENTITY, RDF_TYPE, WIKIDATA_DIRECT, WIKIDATA_PROP

__all__ = [
    "ENTITY", "ArgumentError", "DomainPaths", "GraphTables", "InputError", "KgforgeError", "Quarantine", "QueryRunner",
    "RDF_TYPE", "Schema", "WIKIDATA_DIRECT", "WIKIDATA_PROP", "domain_paths", "iter_json_lines",
    "load_schema", "normalise_label", "package_versions", "query_text", "read_manifest", "read_tables",
    "sha256_file", "to_simplified", "write_json_atomic",
]
