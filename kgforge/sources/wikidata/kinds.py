"""Source kinds ``wikidata`` (JSON dumps), ``wikidata-nt`` (truthy N-Triples) and ``wikidata-ttl`` (full RDF)."""

from __future__ import annotations

from kgforge.sources.importer import ImportContext, register
from kgforge.sources.wikidata.dump import import_dump
from kgforge.sources.wikidata.nt import import_truthy_nt
from kgforge.sources.wikidata.ttl import import_wikidata_ttl

LICENCE = "CC0 1.0 (Wikidata's structured data; its dumps' terms: wikidata.org/wiki/Wikidata:Licensing)"


@register(
    "wikidata",
    "Wikidata JSON dump (latest-all.json, .gz or .bz2); seeds/hops/fanout_cap options select a subgraph",
    licence=LICENCE,
)
def import_wikidata_json(ctx: ImportContext) -> None:
    import_dump(ctx)


@register(
    "wikidata-nt",
    "Wikidata truthy N-Triples dump (latest-truthy.nt, .gz or .bz2): wdt: claims, labels, descriptions",
    licence=LICENCE,
)
def import_wikidata_truthy(ctx: ImportContext) -> None:
    import_truthy_nt(ctx)


@register(
    "wikidata-ttl",
    "Wikidata full RDF dump (latest-all.ttl, .gz or .bz2): wdt: claims, labels, descriptions, "
    "qualifiers of best-rank statements",
    licence=LICENCE,
)
def import_wikidata_full_rdf(ctx: ImportContext) -> None:
    import_wikidata_ttl(ctx)
