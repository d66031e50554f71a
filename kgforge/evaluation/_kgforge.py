"""Everything ``kgforge.evaluation`` takes from the rest of kgforge, in one place.

The evaluation reads its own input files and the graph through a ``Snapshot`` (one build resolved once), and
finds the facts a response states with the grounder (``kgforge.grounding``); it needs only the names below.
When the package is regrouped, re-pointing these imports is the whole change.
"""

from __future__ import annotations

from kgforge.core.errors import ArgumentError, InputError, KgforgeError
from kgforge.core.files import safe_output_path
from kgforge.core.jsonio import iter_json_container, iter_json_lines
from kgforge.core.schema import Schema, load_schema
from kgforge.core.text import is_segmented, normalise_label, segment, spreadsheet_cell, to_simplified
from kgforge.grounding.duconv import states
from kgforge.grounding.index import TEXT_CHARS, GroundingIndex, make_fact
from kgforge.grounding.kdconv import attr_key
from kgforge.grounding.matching import DialogueMatcher, MatchOptions, jieba_cuts, word_cuts
from kgforge.grounding.normalise import form, surface
from kgforge.store.layout import domain_paths
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

__all__ = [
    "TEXT_CHARS", "DialogueMatcher", "GroundingIndex", "MatchOptions", "attr_key", "form", "jieba_cuts",
    "make_fact", "states", "surface", "word_cuts",
    "ArgumentError", "GraphTables", "InputError", "KgforgeError", "Schema", "domain_paths", "iter_json_container",
    "is_segmented", "iter_json_lines", "load_schema", "normalise_label", "segment", "Snapshot",
    "safe_output_path", "spreadsheet_cell", "to_simplified",
]
