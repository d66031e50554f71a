"""How `kgforge query` prints a result: the text forms of RDF terms (prefixed names, literal values, spreadsheet-safe
cells) and the label column beside each IRI column. Presentation only, so the command module reaches the store's
text helpers through here rather than importing the store itself."""

from __future__ import annotations

from kgforge.core.text import spreadsheet_cell
from kgforge.store.labels import labelled_rows
from kgforge.store.query import term_text
from kgforge.store.sparql_text import PREFIXES, declared_prefixes, shorten

__all__ = ["PREFIXES", "declared_prefixes", "labelled_rows", "shorten", "spreadsheet_cell", "term_text"]
