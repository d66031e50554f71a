"""Source kind ``xlore``: XLORE's Turtle-like dump files (one file, or a folder of xlore.*.ttl)."""

from __future__ import annotations

from kgforge.sources.importer import ImportContext, register
from kgforge.sources.xlore.dump import import_xlore_api, import_xlore_dump


@register("xlore", "XLORE dump file or folder of xlore.*.ttl files; seeds/seed_names/hops/fanout_cap select a subgraph")
def import_xlore(ctx: ImportContext) -> None:
    import_xlore_dump(ctx)


@register(
    "xlore-api",
    "XLORE web API: xlore-api:NAMES (a file of names, or names joined by commas); hops/fanout_cap, "
    "base_url, min_interval options; replies cached, daily quota detected",
    reads_file=False,
)
def import_xlore_api_source(ctx: ImportContext) -> None:
    import_xlore_api(ctx)
