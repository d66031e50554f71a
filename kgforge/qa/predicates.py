"""F(t): the predicates used by the entities of each type, with the numbers a selector judges them by.

Per (type, predicate), computed column-wise over the whole graph:

* ``coverage`` — share of the type's entities that have the predicate;
* ``specificity`` — share of the predicate's subjects that are of this type (1.0: only this type uses it);
* ``diversity`` — how varied its objects are: log(distinct objects) / log(facts), 1.0 when every fact
  has its own object, 0.0 when all share one (a question whose answer never changes);
* ``multi_valued`` — share of subjects with more than one object (their questions have list answers);
* ``entity_objects`` — share of objects that are entities; ``qualified`` — facts with qualifiers;
* ``asks`` — what a question about it asks for: ``who``, ``when``, ``where`` or ``what``.
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

import polars as pl

from kgforge.core.vocab import ENTITY
from kgforge.qa.graph import WIKIDATA_ENTITY, QAGraph, word_lists_split

DATE_TYPES = ("date", "gYear", "gYearMonth", "dateTime")
ENTITY_PREFIXES = (ENTITY, WIKIDATA_ENTITY)
_PLACE = re.compile(r"地址|地点|出生地|逝世地|所在地|place|location|address|residence", re.IGNORECASE)
_DATE_TEXT = r"^-?\d{3,4}(-\d\d(-\d\d)?)?(T[\d:.]+Z?)?$|^\d{4}年(\d{1,2}月(\d{1,2}日)?)?$"


def predicate_table(graph: QAGraph) -> pl.DataFrame:
    """F(t) for every type: one row per (type, predicate), sorted by type then coverage."""
    facts = word_lists_split(graph.typed_facts, [p for p, kind in graph.relation_kinds.items() if kind == "text"])
    types = graph.entity_types
    per_type = types.group_by("type").agg(entities_of_type=pl.len(), type_label=pl.col("type_label").first())
    per_subject = facts.group_by("type", "p", "s").agg(objects=pl.len())
    dates = _date_counts(facts)
    stats = (
        facts.group_by("type", "p")
        .agg(
            facts=pl.len(),
            distinct_objects=pl.col("o").hash().n_unique(),
            entity_objects=pl.col("o_is_entity").mean(),
            example=pl.col("o_text").drop_nulls().min(),
            url_objects=(
                (
                    pl.col("o_is_entity")
                    & pl.col("o_text").is_null()
                    & ~pl.col("o").str.starts_with(ENTITY_PREFIXES[0])
                    & ~pl.col("o").str.starts_with(ENTITY_PREFIXES[1])
                )
                | pl.col("o_datatype").str.ends_with("#anyURI").fill_null(False)
            ).mean(),
        )
        .join(
            per_subject.group_by("type", "p").agg(entities_with=pl.len(), multi_valued=(pl.col("objects") > 1).mean()),
            on=["type", "p"],
        )
    )
    subjects_of_p = per_subject.group_by("p").agg(subjects_any_type=pl.len())
    table = (
        stats.join(dates, on=["type", "p"], how="left")
        .with_columns(dates=pl.col("dates").fill_null(0) / pl.col("facts"))
        .join(per_type, on="type")
        .join(subjects_of_p, on="p")
        .with_columns(
            coverage=pl.col("entities_with") / pl.col("entities_of_type"),
            specificity=pl.col("entities_with") / pl.col("subjects_any_type"),
            diversity=pl.when(pl.col("facts") <= 1)
            .then(1.0)
            .otherwise(pl.col("distinct_objects").log() / pl.col("facts").log()),
        )
    )
    table = table.join(_qualified_counts(graph), on=["type", "p"], how="left").with_columns(
        pl.col("qualified").fill_null(0)
    )
    labels = graph.predicate_labels
    kinds = graph.relation_kinds
    table = table.with_columns(
        label=pl.col("p").replace_strict(labels, default=None, return_dtype=pl.String),
        relation_kind=pl.col("p").replace_strict(kinds, default=None, return_dtype=pl.String),
    )
    table = table.with_columns(asks=_asks(graph, table))
    return table.select(
        "type",
        "type_label",
        "entities_of_type",
        predicate="p",
        label="label",
        relation_kind="relation_kind",
        entities_with="entities_with",
        coverage="coverage",
        specificity="specificity",
        diversity="diversity",
        facts="facts",
        distinct_objects="distinct_objects",
        multi_valued="multi_valued",
        entity_objects="entity_objects",
        url_objects="url_objects",
        qualified="qualified",
        asks="asks",
        example="example",
    ).sort(["type", "coverage", "predicate"], descending=[False, True, False])


def _date_counts(facts: pl.DataFrame) -> pl.DataFrame:
    """Per (type, predicate), how many of its literal objects are dates: typed as one, or written as one."""
    short = pl.col("o").str.len_bytes() <= 40  # a date is short; long texts need no regular expression
    return (
        facts.filter(~pl.col("o_is_entity"), short)
        .group_by("type", "p")
        .agg(
            dates=(
                pl.col("o_datatype").str.contains("#(" + "|".join(DATE_TYPES) + ")$").fill_null(False)
                | pl.col("o").str.contains(_DATE_TEXT)
            ).sum()
        )
    )


def _qualified_counts(graph: QAGraph) -> pl.DataFrame:
    qualified = graph.qualifiers.select("s", "p", "o").unique()
    typed = qualified.join(graph.entity_types.select(s="iri", type="type"), on="s")
    return typed.group_by("type", "p").agg(qualified=pl.len().cast(pl.Int64))


def _asks(graph: QAGraph, table: pl.DataFrame) -> pl.Series:
    """who (objects are people: entities whose type is refined by occupation), when (dates), where
    (a place by the predicate's name), what (anything else)."""
    people = graph.entity_types.filter(pl.col("type").str.contains("/", literal=True))["iri"]
    person_share = graph.typed_facts.group_by("p").agg(people=pl.col("o").is_in(people.implode()).mean())
    shares = dict(zip(person_share["p"].to_list(), person_share["people"].to_list()))
    asks = []
    for row in table.select("p", "label", "entity_objects", "dates").iter_rows(named=True):
        if shares.get(row["p"], 0.0) >= 0.5:
            asks.append("who")
        elif row["dates"] >= 0.5:
            asks.append("when")
        elif row["label"] and _PLACE.search(row["label"]):
            asks.append("where")
        else:
            asks.append("what")
    return pl.Series("asks", asks, dtype=pl.String)


class TypePredicates(TypedDict):
    """F(t) of one type: its label, entity count and predicates, each with its numbers (a row of
    :func:`predicate_table`: predicate, label, coverage, specificity, diversity, asks, ...)."""

    label: str
    entities: int
    predicates: list[dict[str, Any]]


def predicates_report(table: pl.DataFrame) -> dict[str, TypePredicates]:
    """F(t): per type id its label, entity count and predicates with their numbers."""
    report: dict[str, TypePredicates] = {}
    for (type_id,), rows in table.group_by("type", maintain_order=True):
        first = rows.row(0, named=True)
        report[type_id] = {
            "label": first["type_label"],
            "entities": first["entities_of_type"],
            "predicates": [
                {
                    k: (round(v, 4) if isinstance(v, float) else v)
                    for k, v in row.items()
                    if k not in ("type", "type_label", "entities_of_type")
                }
                for row in rows.iter_rows(named=True)
            ],
        }
    return report


def together(graph: QAGraph, pairs: list[tuple[str, str, str]]) -> dict[tuple[str, str, str], float]:
    """For each (type, p1, p2): the share of the type's entities having p1 or p2 that have both."""
    if not pairs:
        return {}
    wanted = pl.DataFrame(
        [(t, p) for t, *ps in pairs for p in ps], schema={"type": pl.String, "p": pl.String}, orient="row"
    ).unique()
    having = graph.typed_facts.join(wanted, on=["type", "p"], how="semi").select("type", "p", "s").unique()
    subjects = {(t, p): set(group["s"].to_list()) for (t, p), group in having.group_by("type", "p")}
    shares = {}
    for t, first, second in pairs:
        a, b = subjects.get((t, first), set()), subjects.get((t, second), set())
        shares[(t, first, second)] = len(a & b) / len(a | b) if a | b else 0.0
    return shares
