"""Source kinds ``wikidata`` (JSON dumps) and ``wikidata-nt`` (truthy N-Triples dumps)."""

from __future__ import annotations

from kgforge.sources import ImportContext, register
from kgforge.wikidata.dump import import_dump
from kgforge.wikidata.nt import import_truthy_nt


@register("wikidata", "Wikidata JSON dump (latest-all.json, .gz or .bz2); seeds/hops/fanout_cap options select a subgraph")
def import_wikidata_json(ctx: ImportContext) -> None:
    import_dump(ctx)


@register("wikidata-nt", "Wikidata truthy N-Triples dump (latest-truthy.nt, .gz or .bz2): wdt: claims, labels, descriptions")
def import_wikidata_truthy(ctx: ImportContext) -> None:
    import_truthy_nt(ctx)
