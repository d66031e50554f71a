"""A domain's graph as polars tables, read once from the store: facts, labels, types, relations.

Stages that work on the whole graph (stats, derive, goals, embed, export) read these tables
instead of issuing one SPARQL query per entity.

Two readers: ``tables_from_quads`` parses them column-wise from a build's N-Quads files, and
``read_tables_from_store`` walks the store quad by quad in Python (about a minute for DuConv's 3.6M triples on
two cores). The store of a build is exactly the N-Quads files its manifest lists (bulk-loaded and
count-checked by ``kgforge build``, published with the store in one swap), and those files are written
by ``QuadWriter`` in one strict shape, so polars can split and unescape them in a few seconds. Every
file must be the build's own and hold the bytes its manifest's sha256 names (verified, or known verified
and unchanged since: ``kgforge.store.checksums``); otherwise ``read_tables`` walks the store instead.
"""

from __future__ import annotations

import logging
from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl
import pyoxigraph as ox
from polars.datatypes import DataTypeClass

from kgforge.core.vocab import (
    CLASS,
    DERIVED_GRAPHS,
    KIND,
    META_PREDICATES,
    ONTO,
    RDF_LANG_STRING,
    RDF_TYPE,
    RDFS_LABEL,
    SCHEMA_GRAPH,
    SKOS_ALT_LABEL,
    STATEMENT_NODE,
    WIKIBASE,
    WIKIDATA_DIRECT,
    WIKIDATA_PROP,
    XSD_STRING,
    is_fact,
)
from kgforge.store.layout import DomainPaths, quads_verified
from kgforge.store.manifest import Manifest
from kgforge.store.oxigraph import read_only_store

log = logging.getLogger(__name__)
FACT_SCHEMA: dict[str, DataTypeClass] = {
    "s": pl.String,
    "p": pl.String,
    "o": pl.String,
    "o_is_entity": pl.Boolean,
    "o_lang": pl.String,
    "o_datatype": pl.String,
    "graph": pl.String,
}
LABEL_SCHEMA: dict[str, DataTypeClass] = {
    "iri": pl.String,
    "label": pl.String,
    "lang": pl.String,
    "preferred": pl.Boolean,
}


@dataclass
class GraphTables:
    facts: pl.DataFrame  # s, p, o, o_is_entity, o_lang, o_datatype, graph
    labels: pl.DataFrame  # iri, label, lang, preferred (rdfs:label) or not (skos:altLabel)
    types: pl.DataFrame  # iri, class
    relations: pl.DataFrame  # iri, zh, en, kind
    _domain_facts: pl.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    def domain_facts(self) -> pl.DataFrame:
        """Facts that dialogue stages (derive, goals, export) work with: outside derived graphs, and
        under a relation of the domain's vocabulary (declared in the schema graph, so it has labels
        and a kind). A source's own unmapped properties, such as Wikidata's wdt:P31, stay out.
        Filtered once (the tables never change) however many stages ask."""
        if self._domain_facts is None:
            self._domain_facts = self.facts.filter(
                ~pl.col("graph").str.starts_with(DERIVED_GRAPHS), pl.col("p").is_in(self.relations["iri"].implode())
            )
        return self._domain_facts

    def label_map(self, language: str = "zh") -> dict[str, str]:
        """One display label per IRI: a preferred label in ``language`` first, any label otherwise."""
        ranked = (
            self.labels.with_columns(
                rank=pl.when(pl.col("preferred") & (pl.col("lang") == language))
                .then(0)
                .when(pl.col("preferred") & pl.col("lang").str.starts_with(language))
                .then(1)
                .when(pl.col("preferred"))
                .then(2)
                .otherwise(3)
            )
            .sort(["iri", "rank", "label"])
            .unique("iri", keep="first")
        )
        mapping = dict(zip(ranked["iri"].to_list(), ranked["label"].to_list()))
        for row in self.relations.iter_rows(named=True):
            mapping[row["iri"]] = row["en"] if language.startswith("en") and row["en"] else row["zh"] or row["iri"]
        return mapping


@dataclass(frozen=True)
class DomainFacts:
    """The part of a build's tables that derive works with (see :func:`read_domain_facts`)."""

    facts: pl.DataFrame  # as GraphTables.domain_facts()
    relations: pl.DataFrame  # as GraphTables.relations


def read_tables(paths: DomainPaths, manifest: Manifest, build: Path, include_derived: bool = False) -> GraphTables:
    """The tables of ``build`` (whose manifest is ``manifest``), parsed column-wise from its N-Quads files
    (seconds at DuConv scale) once their checksums are verified, or walked from its store when those
    files cannot stand in for it (see ``tables_from_quads``). Readers get them from
    :meth:`kgforge.store.snapshot.Snapshot.tables`, which names the build once."""
    try:
        return tables_from_quads(paths, manifest, build, include_derived)
    except QuadFilesUnusable as why:
        log.warning("reading the store quad by quad instead of the quads files (slower): %s", why)
        return read_tables_from_store(paths, build, include_derived)


def read_tables_from_store(paths: DomainPaths, build: Path, include_derived: bool = False) -> GraphTables:
    """The tables walked quad by quad from ``build``'s store (about a minute for 3.6M quads)."""
    store = read_only_store(build / "oxigraph", paths)
    facts: dict[str, list[str | bool | None]] = {k: [] for k in FACT_SCHEMA}
    labels: dict[str, list[object]] = {k: [] for k in LABEL_SCHEMA}
    types: dict[str, list[str]] = {"iri": [], "class": []}
    relations: dict[str, dict[str, str]] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        graph = quad.graph_name.value if not isinstance(quad.graph_name, ox.DefaultGraph) else ""
        subject, p, o = quad.subject, quad.predicate.value, quad.object
        assert not isinstance(subject, ox.Triple) and not isinstance(o, ox.Triple)  # kgforge writes no RDF-star
        s = subject.value
        if graph == SCHEMA_GRAPH and not s.startswith(CLASS):
            _collect_relation(relations, s, p, o)
        elif p in (RDFS_LABEL, SKOS_ALT_LABEL) and isinstance(o, ox.Literal):
            for key, value in zip(LABEL_SCHEMA, (s, o.value, o.language or "", p == RDFS_LABEL)):
                labels[key].append(value)
        elif p == RDF_TYPE:
            types["iri"].append(s)
            types["class"].append(o.value)
        elif is_fact(s, p) and (include_derived or not graph.startswith(DERIVED_GRAPHS)):
            is_literal = isinstance(o, ox.Literal)
            row = (
                s,
                p,
                o.value,
                not is_literal,
                o.language if isinstance(o, ox.Literal) else None,
                o.datatype.value if isinstance(o, ox.Literal) else None,
                graph,
            )
            for key, value in zip(FACT_SCHEMA, row):
                facts[key].append(value)
    relation_rows = [
        {"iri": iri, "zh": r.get("zh", ""), "en": r.get("en", ""), "kind": r.get("kind", "")}
        for iri, r in relations.items()
    ]
    return GraphTables(
        facts=pl.DataFrame(facts, schema=FACT_SCHEMA),
        labels=pl.DataFrame(labels, schema=LABEL_SCHEMA),
        types=pl.DataFrame(types, schema={"iri": pl.String, "class": pl.String}),
        relations=pl.DataFrame(
            relation_rows, schema={"iri": pl.String, "zh": pl.String, "en": pl.String, "kind": pl.String}
        ),
    )


def _collect_relation(
    relations: dict[str, dict[str, str]], s: str, p: str, o: ox.NamedNode | ox.BlankNode | ox.Literal
) -> None:
    if p == RDFS_LABEL and isinstance(o, ox.Literal):
        relations.setdefault(s, {})["en" if (o.language or "").startswith("en") else "zh"] = o.value
    elif p == KIND:
        relations.setdefault(s, {})["kind"] = o.value.removeprefix(ONTO).removesuffix("Valued").lower()


# --- reading the tables from a build's N-Quads files ---------------------------------------------

_LITERAL = r'^"(.*)"(?:@([A-Za-z0-9-]+)|\^\^<([^>]*)>)?$'
_ESCAPED = ["\\\\", '\\"', "\\n", "\\r"]
_UNESCAPED = ["\\", '"', "\n", "\r"]


class QuadFilesUnusable(Exception):
    """The manifest's quads files cannot stand in for the store (missing, changed, or not QuadWriter's shape)."""


def fact_filter() -> pl.Expr:
    """``kgforge.core.vocab.is_fact`` over the columns ``s`` and ``p``."""
    p, s = pl.col("p"), pl.col("s")
    return (
        ~p.is_in(list(META_PREDICATES))
        & ~s.str.starts_with(STATEMENT_NODE)
        & ~p.str.starts_with(WIKIBASE)
        & (~p.str.starts_with(WIKIDATA_PROP) | p.str.starts_with(WIKIDATA_DIRECT))
    )


def _read_quads(
    paths: DomainPaths,
    manifest: Manifest,
    build: Path,
    include_derived: bool,
    graphs: Collection[str] | None = None,
    predicates: pl.Series | None = None,
) -> pl.DataFrame:
    """Every quad of the build (of ``graphs`` only, and under one of ``predicates`` only, where given) as
    (s, p, obj, graph): one file per named graph, each line ``<s> <p> obj <graph> .`` with single spaces, so it
    splits without a regular expression. Of a derived graph only the label lines are kept unless
    ``include_derived``. Each file is read, split and filtered in one streaming pass; every line's shape is
    checked, kept or not."""
    frames = []
    for graph, entry in manifest.graphs.items():
        if graphs is not None and graph not in graphs:
            continue
        path = build / entry.quads_file
        if not quads_verified(build, entry):
            raise QuadFilesUnusable(
                f"{path} is missing or differs from the sha256 in the build's manifest "
                f"(`kgforge check {paths.domain}` reports it)"
            )
        if not path.stat().st_size:
            continue
        lines = pl.scan_csv(
            path, has_header=False, separator="\x01", quote_char=None, schema={"line": pl.String}, comment_prefix=None
        )
        if graph.startswith(DERIVED_GRAPHS) and not include_derived:
            lines = lines.filter(
                pl.col("line").str.contains(f"> <{RDFS_LABEL}> ", literal=True)
                | pl.col("line").str.contains(f"> <{SKOS_ALT_LABEL}> ", literal=True)
            )
        suffix = f" <{graph}> ."
        # strip, not slice by length: counting the characters of every UTF-8 value took longer than the split
        parts = (
            lines.select(
                ok=pl.col("line").str.starts_with("<") & pl.col("line").str.ends_with(suffix),
                split=pl.col("line").str.splitn(" ", 3),
            )
            .unnest("split")
            .select(
                "ok",
                s=pl.col("field_0").str.strip_prefix("<").str.strip_suffix(">"),
                p=pl.col("field_1").str.strip_prefix("<").str.strip_suffix(">"),
                obj=pl.col("field_2").str.strip_suffix(suffix),
                graph=pl.lit(graph),
            )
        )
        if predicates is not None:  # a line of the wrong shape stays, to be reported below
            parts = parts.filter(pl.col("p").is_in(predicates.implode()) | ~pl.col("ok"))
        try:
            frame = parts.collect()
        except pl.exceptions.PolarsError as exc:
            raise QuadFilesUnusable(f"{path}: {exc}") from None
        if not frame["ok"].all():
            raise QuadFilesUnusable(f"{path}: a line is not in QuadWriter's <s> <p> o <{graph}> . shape")
        frames.append(frame.drop("ok"))
    if not frames:
        return pl.DataFrame(schema={k: pl.String for k in ("s", "p", "obj", "graph")})
    return pl.concat(frames)


def tables_from_quads(
    paths: DomainPaths, manifest: Manifest, build: Path, include_derived: bool = False
) -> GraphTables:
    # derived labels too, as read_tables keeps them
    quads = _parsed_objects(_read_quads(paths, manifest, build, include_derived)).drop("obj")
    in_schema = (pl.col("graph") == SCHEMA_GRAPH) & ~pl.col("s").str.starts_with(CLASS)
    is_label = pl.col("p").is_in([RDFS_LABEL, SKOS_ALT_LABEL]) & ~pl.col("o_is_entity")
    schema_rows = quads.filter(in_schema)
    rest = quads.filter(~in_schema)
    labels = rest.filter(is_label).select(
        iri="s", label="o", lang=pl.col("o_lang").fill_null(""), preferred=pl.col("p") == RDFS_LABEL
    )
    rest = rest.filter(~is_label)
    types = rest.filter(pl.col("p") == RDF_TYPE).select(iri="s", **{"class": "o"})
    facts = rest.filter(pl.col("p") != RDF_TYPE, fact_filter())
    if not include_derived:
        facts = facts.filter(~pl.col("graph").str.starts_with(DERIVED_GRAPHS))
    return GraphTables(
        facts=facts.select(list(FACT_SCHEMA)).cast(pl.Schema(FACT_SCHEMA)),
        labels=labels.cast(pl.Schema(LABEL_SCHEMA)),
        types=types.cast({"iri": pl.String, "class": pl.String}),
        relations=_relations(schema_rows),
    )


def _parsed_objects(quads: pl.DataFrame) -> pl.DataFrame:
    """``quads`` with its N-Quads object ``obj`` parsed into ``o``, ``o_is_entity``, ``o_lang`` and ``o_datatype``."""
    is_iri = pl.col("obj").str.starts_with("<")
    literal = pl.col("obj").str.extract_groups(_LITERAL)
    return (
        quads.with_columns(o_is_entity=is_iri, lit=pl.when(~is_iri).then(literal))
        .with_columns(
            o=pl.when(pl.col("o_is_entity"))
            .then(pl.col("obj").str.slice(1, pl.col("obj").str.len_chars() - 2))
            .otherwise(pl.col("lit").struct.field("1").str.replace_many(_ESCAPED, _UNESCAPED)),
            o_lang=pl.col("lit").struct.field("2").str.to_lowercase(),
            o_datatype=pl.when(pl.col("o_is_entity"))
            .then(None)
            .when(pl.col("lit").struct.field("2").is_not_null())
            .then(pl.lit(RDF_LANG_STRING))
            .otherwise(pl.col("lit").struct.field("3").fill_null(XSD_STRING)),
        )
        .drop("lit")
    )


def read_domain_facts(paths: DomainPaths, manifest: Manifest, build: Path) -> DomainFacts:
    """What derive reads of ``build``: :meth:`GraphTables.domain_facts` and the relations, and nothing else.

    From the quads files: the schema graph for the relations, then the source graphs (derived graphs are
    never read), keeping only lines under a relation before any object is parsed, and parsing each distinct
    object once (a few hundred thousand at DuConv scale for 3.6M facts); no labels or types. The same frames
    as ``read_tables(...).domain_facts()`` and ``.relations``, which is the fallback when the quads files
    cannot stand in for the store."""
    try:
        schema = _parsed_objects(_read_quads(paths, manifest, build, False, graphs={SCHEMA_GRAPH}))
        in_schema = ~pl.col("s").str.starts_with(CLASS)
        relations = _relations(schema.filter(in_schema))
        sources = [g for g in manifest.graphs if g != SCHEMA_GRAPH and not g.startswith(DERIVED_GRAPHS)]
        quads = pl.concat(
            [
                _read_quads(paths, manifest, build, False, graphs=sources, predicates=relations["iri"]),
                schema.filter(~in_schema).select("s", "p", "obj", "graph"),
            ]
        ).filter(pl.col("p").is_in(relations["iri"].implode()), pl.col("p") != RDF_TYPE, fact_filter())
    except QuadFilesUnusable as why:
        log.warning("reading the store quad by quad instead of the quads files (slower): %s", why)
        tables = read_tables_from_store(paths, build)
        return DomainFacts(tables.domain_facts(), tables.relations)
    objects = _parsed_objects(quads.select("obj").unique())
    facts = quads.join(objects, on="obj", how="left").filter(
        ~(pl.col("p").is_in([RDFS_LABEL, SKOS_ALT_LABEL]) & ~pl.col("o_is_entity"))
    )
    return DomainFacts(facts.select(list(FACT_SCHEMA)).cast(pl.Schema(FACT_SCHEMA)), relations)


def _relations(rows: pl.DataFrame) -> pl.DataFrame:
    labels = rows.filter(pl.col("p") == RDFS_LABEL, ~pl.col("o_is_entity"))
    en = labels.filter(pl.col("o_lang").fill_null("").str.starts_with("en")).group_by("s").agg(en=pl.col("o").last())
    zh = labels.filter(~pl.col("o_lang").fill_null("").str.starts_with("en")).group_by("s").agg(zh=pl.col("o").last())
    kind = (
        rows.filter(pl.col("p") == KIND)
        .group_by("s")
        .agg(kind=pl.col("o").last().str.strip_prefix(ONTO).str.strip_suffix("Valued").str.to_lowercase())
    )
    iris = rows.select("s").unique(maintain_order=True)
    out = iris.join(zh, on="s", how="left").join(en, on="s", how="left").join(kind, on="s", how="left")
    return out.select(
        iri="s", zh=pl.col("zh").fill_null(""), en=pl.col("en").fill_null(""), kind=pl.col("kind").fill_null("")
    )
