"""`kgforge stats`: the columns of KdConv's and DuConv's Table 2 for a built domain."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import polars as pl

from kgforge.core import plots
from kgforge.core.output import OutputDir, output_dir
from kgforge.core.records import Record
from kgforge.core.schema import Schema
from kgforge.core.scripts import CJK_CLASS, is_cjk_language
from kgforge.core.text import jieba_module
from kgforge.store.languages import fits_script, in_language, language_labels
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables


def token_count(text: str) -> int:
    """Number of jieba tokens (as the KdConv paper counts them: whitespace tokens included)."""
    return len(jieba_module().lcut(text))


@dataclass(frozen=True)
class DomainStats(Record):
    """The columns of KdConv's and DuConv's Table 2 for one build, over its distinct facts."""

    domain: str
    entities: int  # distinct fact subjects
    entity_nodes: int  # distinct subjects and entity objects
    relations: int  # distinct predicates used by facts
    triples: int  # distinct facts
    avg_triples_per_entity: float
    avg_tokens_per_triple: float  # jieba tokens of head + relation + tail labels
    avg_chars_per_triple: float
    entities_by_type: dict[str, int]  # per value of the schema's type relation (DuConv's 领域), else per class
    relations_by_count: dict[str, int]  # relation label -> facts, most first
    degree_histogram: dict[int, int]  # degree (facts an entity node is in) -> entity nodes
    # DuRecDial 2.0's Table 2 for a parallel KG: entities, attributes and triples named in each language and both
    languages: dict[str, Any]
    build_id: str
    schema_inferred: bool  # True: the schema was inferred from the data, not written by a person


def domain_stats(snapshot: Snapshot) -> DomainStats:
    domain, manifest, schema, tables = snapshot.domain, snapshot.manifest, snapshot.schema, snapshot.tables()
    facts = tables.facts.unique(["s", "p", "o", "o_is_entity", "o_lang", "o_datatype"])
    labels = tables.label_map(schema.language)
    entities = facts["s"].n_unique()
    ends = pl.concat([facts["s"], facts.filter(pl.col("o_is_entity"))["o"]])
    entity_nodes = ends.n_unique()
    degrees = ends.value_counts(name="degree")["degree"].value_counts(name="entities").sort("degree")
    label = pl.col("o")
    texts = facts.select(
        head=pl.col("s").replace_strict(labels, default=pl.col("s")),
        rel=pl.col("p").replace_strict(labels, default=pl.col("p")),
        tail=pl.when(pl.col("o_is_entity")).then(label.replace_strict(labels, default=label)).otherwise(label),
    )
    chars = cast(int, texts.select(pl.sum_horizontal(pl.all().str.len_chars())).to_series().sum())  # of lengths
    tokens = _token_total(texts)
    triples = facts.height
    return DomainStats(
        domain=domain,
        entities=entities,
        entity_nodes=entity_nodes,
        relations=facts["p"].n_unique(),
        triples=triples,
        avg_triples_per_entity=round(triples / entities, 1) if entities else 0.0,
        avg_tokens_per_triple=round(tokens / triples, 1) if triples else 0.0,
        avg_chars_per_triple=round(chars / triples, 1) if triples else 0.0,
        entities_by_type=_entities_by_type(tables, facts, schema, labels),
        relations_by_count=dict(
            facts.group_by("p")
            .len()
            .sort("len", descending=True)
            .select(pl.col("p").replace_strict(labels, default=pl.col("p")), "len")
            .iter_rows()
        ),
        degree_histogram=dict(degrees.iter_rows()),
        languages=_parallel_figures(tables, facts, schema, snapshot.same_as_pairs()),
        build_id=manifest.build_id,
        schema_inferred=schema.inferred,
    )


def _parallel_figures(
    tables: GraphTables, facts: pl.DataFrame, schema: Schema, links: Iterable[tuple[str, str]]
) -> dict[str, Any]:
    """DuRecDial 2.0's Table 2 for a parallel KG: entities, attributes (relations) and triples that can be
    named in each of the domain's language and the other (zh ↔ en), and in both. Named means as an export in
    that language names it without mixing (:mod:`kgforge.store.languages`); a literal value is named in a
    language when it is tagged so, untagged, free of letters (a number, a date), in that language's script
    for a Latin-script language, or stated again in that language for the same subject and relation."""
    languages = (schema.language, "en" if is_cjk_language(schema.language) else "zh")
    ends = pl.concat([facts["s"], facts.filter(pl.col("o_is_entity"))["o"]]).unique()
    used_relations = facts["p"].unique().to_list()
    relation_names = dict(
        zip(tables.relations["iri"].to_list(), zip(tables.relations["zh"].to_list(), tables.relations["en"].to_list()))
    )
    named: dict[str, set[str]] = {}
    relations: dict[str, set[str]] = {}
    triple_ok: dict[str, pl.Expr] = {}
    for lang in languages:
        chain = language_labels(tables.labels, lang, links).labels
        named[lang] = set(chain) & set(ends.to_list())
        relations[lang] = {iri for iri in used_relations if iri in chain or _has_name(relation_names.get(iri), lang)}
        restated = facts.filter(~pl.col("o_is_entity"), in_language(pl.col("o_lang"), lang)).select("s", "p").unique()
        facts = facts.join(restated.with_columns(pl.lit(True).alias(f"_again_{lang}")), on=["s", "p"], how="left")
        literal = (
            in_language(pl.col("o_lang"), lang)
            | (pl.col("o_lang") == "")
            | ~pl.col("o").str.contains(r"\pL")
            | pl.col(f"_again_{lang}").fill_null(False)
        )
        if not is_cjk_language(lang):
            literal |= ~pl.col("o").str.contains(CJK_CLASS)
        triple_ok[lang] = (
            pl.col("s").is_in(list(named[lang]))
            & pl.col("p").is_in(list(relations[lang]))
            & pl.when(pl.col("o_is_entity")).then(pl.col("o").is_in(list(named[lang]))).otherwise(literal)
        )
    counts = facts.select(
        **{lang: ok.sum() for lang, ok in triple_ok.items()}, both=pl.all_horizontal(*triple_ok.values()).sum()
    ).row(0, named=True)
    first, second = languages
    return {
        "languages": list(languages),
        "entities": {
            first: len(named[first]),
            second: len(named[second]),
            "both": len(named[first] & named[second]),
            "all": ends.len(),
        },
        "attributes": {
            first: len(relations[first]),
            second: len(relations[second]),
            "both": len(relations[first] & relations[second]),
            "all": len(used_relations),
        },
        "triples": {**{k: int(v) for k, v in counts.items()}, "all": facts.height},
    }


def _has_name(names: tuple[str, str] | None, lang: str) -> bool:
    """Whether a relation's schema names (zh, en) give it one that ``lang`` can write."""
    name = (names[1] if lang.startswith("en") else names[0]) if names else ""
    return bool(name) and fits_script(name, lang)


def _token_total(texts: pl.DataFrame) -> int:
    """Tokens of head + relation + tail over all triples, each distinct label segmented once."""
    long = texts.unpivot().group_by("value").len()
    counts = long["value"].map_elements(token_count, return_dtype=pl.Int64)
    return int((counts * long["len"]).sum())


def _entities_by_type(
    tables: GraphTables, facts: pl.DataFrame, schema: Schema, labels: dict[str, str]
) -> dict[str, int]:
    """Entities per value of the schema's type relation (DuConv's 领域), else per rdf:type class."""
    if schema.type_relation:
        type_iri = schema.relations[schema.type_relation].iri
        typed = facts.filter(pl.col("p") == type_iri).unique(["s", "o"])
        if typed.height:
            return dict(typed.group_by("o").len().sort("len", descending=True).iter_rows())
    typed = tables.types.unique()
    return dict(
        typed.group_by("class")
        .len()
        .sort("len", descending=True)
        .select(pl.col("class").replace_strict(labels, default=pl.col("class")), "len")
        .iter_rows()
    )


def plot_stats(stats: DomainStats, folder: Path | str | OutputDir) -> list[Path]:
    """The relation histogram and the degree distribution of a :func:`domain_stats` result, as PNG files
    ``<domain>-relations.png`` and ``<domain>-degrees.png`` in ``folder``."""
    folder, domain = output_dir(folder, what="--plot"), stats.domain
    relations, degrees = folder.file(f"{domain}-relations.png"), folder.file(f"{domain}-degrees.png")
    return [
        plots.relation_histogram(stats.relations_by_count, relations, title=f"{domain}: facts per relation"),
        plots.degree_distribution(
            {int(d): n for d, n in stats.degree_histogram.items()},
            degrees,
            title=f"{domain}: degree distribution",
        ),
    ]
