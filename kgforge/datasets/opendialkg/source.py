"""Source kind ``opendialkg``: OpenDialKG's knowledge graph (Moon et al., ACL 2019), Freebase-Easy names.

``opendialkg_triples.txt`` holds ``subject <TAB> relation <TAB> object`` lines in both directions: a reverse
relation carries a ``~`` prefix (``Robert Downey Jr. ~starred_actors Iron Man`` is ``Iron Man starred_actors
Robert Downey Jr.``), so each fact is kept once, forward. Entities are known by name only (as KdConv's are),
and every object is an entity (the dialogues' KG walks go through them). PATH is the triples file, or the
folder of the release, whose ``opendialkg_triples.txt`` and ``opendialkg_entities*.txt`` (one name a line:
entities with or without facts) are read. A line that is not UTF-8 or not three non-empty fields is
quarantined with its line; the others land.
"""

from __future__ import annotations

from pathlib import Path

from kgforge.core.errors import InputError
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.names import NameTriples
from kgforge.sources.tables import read_rows

REVERSE = "~"
TRIPLES_FILE = "opendialkg_triples.txt"
ENTITIES_GLOB = "opendialkg_entities*.txt"


@register(
    "opendialkg",
    "OpenDialKG triples (subject<TAB>relation<TAB>object, ~reverse relations folded) or its "
    "release folder (opendialkg_triples.txt, opendialkg_entities*.txt)",
)
def import_opendialkg(ctx: ImportContext) -> None:
    names = NameTriples(ctx)
    triples, entity_lists = release_files(ctx.path)
    for path in triples:
        _read_triples(ctx, names, path)
    for path in entity_lists:
        _read_entities(ctx, names, path)
    names.emit()


def release_files(path: Path) -> tuple[list[Path], list[Path]]:
    """The triples files and entity lists a PATH names (a file is a triples file)."""
    if not path.is_dir():
        return [path], []
    triples = [path / TRIPLES_FILE] if (path / TRIPLES_FILE).is_file() else []
    entities = sorted(path.glob(ENTITIES_GLOB))
    if not triples and not entities:
        raise InputError(f"{path}: no {TRIPLES_FILE} and no {ENTITIES_GLOB} in this folder")
    return triples, entities


def _read_triples(ctx: ImportContext, names: NameTriples, path: Path) -> None:
    for row in read_rows(path, "\t"):
        location = ctx.location = f"{path.name} line {row.line}"
        if row.cells is None:
            ctx.reject(location, row.error or "unreadable line", row.raw)
            continue
        cells = [c.strip() for c in row.cells]
        if len(cells) != 3 or not all(cells) or cells[1] == REVERSE:
            ctx.reject(location, f"expected subject<TAB>relation<TAB>object, got {len(cells)} field(s)", row.raw)
            continue
        head, relation, tail = cells
        if relation.startswith(REVERSE):
            head, relation, tail = tail, relation[1:].strip(), head
        names.add_entity(tail, location)  # every object is a node of the graph the dialogues walk
        names.add(head, relation, tail, location)
        ctx.accept()


def _read_entities(ctx: ImportContext, names: NameTriples, path: Path) -> None:
    for row in read_rows(path, "\t"):
        location = ctx.location = f"{path.name} line {row.line}"
        if row.cells is None or len(row.cells) != 1 or not row.cells[0].strip():
            ctx.reject(location, row.error or "expected one entity name per line", row.raw)
            continue
        names.add_entity(row.cells[0].strip(), location)
        ctx.accept()
