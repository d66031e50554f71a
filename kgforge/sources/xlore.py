"""Source kind ``xlore``: XLORE's Turtle-like dump files (one file, or a folder of xlore.*.ttl)."""

from __future__ import annotations

from kgforge.sources import ImportContext, register
from kgforge.xlore import import_xlore_dump


@register("xlore", "XLORE dump file or folder of xlore.*.ttl files; seeds/seed_names/hops/fanout_cap select a subgraph")
def import_xlore(ctx: ImportContext) -> None:
    import_xlore_dump(ctx)
