"""The graph tables (``kgforge.tables.GraphTables``) parsed column-wise from a build's N-Quads files.

``read_tables_from_store`` walks the store quad by quad in Python: about a minute for DuConv's 3.6M triples on
two cores. The store of a build is exactly the N-Quads files its manifest lists (bulk-loaded and
count-checked by ``kgforge build``, published with the store in one swap), and those files are written
by ``QuadWriter`` in one strict shape, so polars can split and unescape them in a few seconds. Every
file must be the build's own and hold the bytes its manifest's sha256 names (verified, or known verified
and unchanged since: ``kgforge.checksums``); otherwise ``read_tables`` walks the store instead.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from kgforge.store import DomainPaths, published_build, quads_verified, read_manifest
from kgforge.tables import FACT_SCHEMA, LABEL_SCHEMA, GraphTables
from kgforge.vocab import (
    CLASS, DERIVED_GRAPHS, KIND, META_PREDICATES, ONTO, RDF_TYPE, RDFS_LABEL, SCHEMA_GRAPH, SKOS_ALT_LABEL,
    STATEMENT_NODE, WIKIBASE, WIKIDATA_DIRECT, WIKIDATA_PROP,
)

XSD_STRING = "http://www.w3.org/2001/XMLSchema#string"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
_LITERAL = r'^"(.*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?$'
_ESCAPED = ["\\\\", '\\"', "\\n", "\\r"]
_UNESCAPED = ["\\", '"', "\n", "\r"]


class QuadFilesUnusable(Exception):
    """The manifest's quads files cannot stand in for the store (missing, changed, or not QuadWriter's shape)."""


def fact_filter() -> pl.Expr:
    """``kgforge.vocab.is_fact`` over the columns ``s`` and ``p``."""
    p, s = pl.col("p"), pl.col("s")
    return (~p.is_in(list(META_PREDICATES)) & ~s.str.starts_with(STATEMENT_NODE) & ~p.str.starts_with(WIKIBASE)
            & (~p.str.starts_with(WIKIDATA_PROP) | p.str.starts_with(WIKIDATA_DIRECT)))


def _read_quads(paths: DomainPaths, include_derived: bool, build: Path) -> pl.DataFrame:
    """Every quad of the build as (s, p, obj, graph): one file per named graph, each line
    ``<s> <p> obj <graph> .`` with single spaces, so it splits without a regular expression.
    Of a derived graph only the label lines are kept unless ``include_derived``."""
    manifest = read_manifest(paths, build)
    frames = []
    for graph, entry in manifest["graphs"].items():
        path = build / entry["quads_file"]
        if not quads_verified(build, entry):
            raise QuadFilesUnusable(f"{path} is missing or differs from the sha256 in the build's manifest "
                                    f"(`kgforge check {paths.domain}` reports it)")
        if not path.stat().st_size:
            continue
        try:
            lines = pl.read_csv(path, has_header=False, separator="\x01", quote_char=None,
                                schema={"line": pl.String}, comment_prefix=None)
        except pl.exceptions.PolarsError as exc:
            raise QuadFilesUnusable(f"{path}: {exc}") from None
        if graph.startswith(DERIVED_GRAPHS) and not include_derived:
            lines = lines.filter(pl.col("line").str.contains(f"> <{RDFS_LABEL}> ", literal=True)
                                 | pl.col("line").str.contains(f"> <{SKOS_ALT_LABEL}> ", literal=True))
        suffix = f" <{graph}> ."
        parts = lines.select(
            ok=pl.col("line").str.starts_with("<") & pl.col("line").str.ends_with(suffix),
            split=pl.col("line").str.splitn(" ", 3),
        ).unnest("split")
        if not parts["ok"].all():
            raise QuadFilesUnusable(f"{path}: a line is not in QuadWriter's <s> <p> o <{graph}> . shape")
        frames.append(parts.select(
            s=pl.col("field_0").str.slice(1, pl.col("field_0").str.len_chars() - 2),
            p=pl.col("field_1").str.slice(1, pl.col("field_1").str.len_chars() - 2),
            obj=pl.col("field_2").str.slice(0, pl.col("field_2").str.len_chars() - len(suffix)),
            graph=pl.lit(graph),
        ))
    if not frames:
        return pl.DataFrame(schema={k: pl.String for k in ("s", "p", "obj", "graph")})
    return pl.concat(frames)


def tables_from_quads(paths: DomainPaths, include_derived: bool = False, build: Path | None = None) -> GraphTables:
    # derived labels too, as read_tables keeps them
    quads = _read_quads(paths, include_derived, build or published_build(paths))
    is_iri = pl.col("obj").str.starts_with("<")
    literal = pl.col("obj").str.extract_groups(_LITERAL)
    quads = quads.with_columns(o_is_entity=is_iri, lit=pl.when(~is_iri).then(literal)).with_columns(
        o=pl.when(pl.col("o_is_entity")).then(pl.col("obj").str.slice(1, pl.col("obj").str.len_chars() - 2))
        .otherwise(pl.col("lit").struct.field("1").str.replace_many(_ESCAPED, _UNESCAPED)),
        o_lang=pl.col("lit").struct.field("2").str.to_lowercase(),
        o_datatype=pl.when(pl.col("o_is_entity")).then(None)
        .when(pl.col("lit").struct.field("2").is_not_null()).then(pl.lit(RDF_LANG_STRING))
        .otherwise(pl.col("lit").struct.field("3").fill_null(XSD_STRING)),
    ).drop("obj", "lit")
    in_schema = (pl.col("graph") == SCHEMA_GRAPH) & ~pl.col("s").str.starts_with(CLASS)
    is_label = pl.col("p").is_in([RDFS_LABEL, SKOS_ALT_LABEL]) & ~pl.col("o_is_entity")
    schema_rows = quads.filter(in_schema)
    rest = quads.filter(~in_schema)
    labels = rest.filter(is_label).select(iri="s", label="o", lang=pl.col("o_lang").fill_null(""),
                                          preferred=pl.col("p") == RDFS_LABEL)
    rest = rest.filter(~is_label)
    types = rest.filter(pl.col("p") == RDF_TYPE).select(iri="s", **{"class": "o"})
    facts = rest.filter(pl.col("p") != RDF_TYPE, fact_filter())
    if not include_derived:
        facts = facts.filter(~pl.col("graph").str.starts_with(DERIVED_GRAPHS))
    return GraphTables(
        facts=facts.select(list(FACT_SCHEMA)).cast(FACT_SCHEMA),
        labels=labels.cast(LABEL_SCHEMA),
        types=types.cast({"iri": pl.String, "class": pl.String}),
        relations=_relations(schema_rows),
    )


def _relations(rows: pl.DataFrame) -> pl.DataFrame:
    labels = rows.filter(pl.col("p") == RDFS_LABEL, ~pl.col("o_is_entity"))
    en = labels.filter(pl.col("o_lang").fill_null("").str.starts_with("en")).group_by("s").agg(en=pl.col("o").last())
    zh = labels.filter(~pl.col("o_lang").fill_null("").str.starts_with("en")).group_by("s").agg(zh=pl.col("o").last())
    kind = rows.filter(pl.col("p") == KIND).group_by("s").agg(
        kind=pl.col("o").last().str.strip_prefix(ONTO).str.strip_suffix("Valued").str.to_lowercase())
    iris = rows.select("s").unique(maintain_order=True)
    out = iris.join(zh, on="s", how="left").join(en, on="s", how="left").join(kind, on="s", how="left")
    return out.select(iri="s", zh=pl.col("zh").fill_null(""), en=pl.col("en").fill_null(""),
                      kind=pl.col("kind").fill_null(""))
