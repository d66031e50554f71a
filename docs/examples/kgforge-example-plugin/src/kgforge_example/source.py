"""Source kind ``arrows``: one fact a line, ``subject -> relation -> object``; ``#`` starts a comment."""

from __future__ import annotations

from kgforge.sources.importer import ImportContext
from kgforge.sources.names import NameTriples
from kgforge.sources.tables import read_rows


def import_arrows(ctx: ImportContext) -> None:
    """Facts written as subject -> relation -> object, one a line."""
    names = NameTriples(ctx)
    for row in read_rows(ctx.path, "\t"):
        location = ctx.location = f"line {row.line}"
        text = "" if row.cells is None else "\t".join(row.cells).split("#", 1)[0].strip()
        if row.cells is not None and not text:
            continue  # a blank or comment line
        parts = [part.strip() for part in text.split("->")]
        if len(parts) != 3 or not all(parts):
            ctx.reject(location, "expected subject -> relation -> object", row.raw)
            continue
        names.add(*parts, location)
        ctx.accept()
    names.emit()


# What kgforge's own register() would say: `kgforge init --from facts.arrows` knows the kind by its extension.
import_arrows.suffixes = (".arrows",)
