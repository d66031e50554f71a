"""Entity search by label or alias, in any language: exact matches first, then prefix matches, each
ranked by degree (how many facts the entity takes part in).

One index per store version, built from the version's graph tables: every ``rdfs:label`` and
``skos:altLabel`` with a case-folded key (so ``Farewell`` finds ``farewell my concubine``), and each
entity's degree over its facts in both directions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import polars as pl

from kgforge.core.vocab import DERIVED_GRAPHS
from kgforge.store.tables import GraphTables

MAX_RESULTS = 20


@dataclass(frozen=True)
class LabelIndex:
    labels: pl.DataFrame  # iri, label, lang, preferred, key
    degrees: pl.DataFrame  # iri, degree

    @classmethod
    def from_tables(cls, tables: GraphTables) -> LabelIndex:
        facts = tables.facts.filter(~pl.col("graph").str.starts_with(DERIVED_GRAPHS))
        ends = pl.concat([facts.select(iri="s"), facts.filter(pl.col("o_is_entity")).select(iri="o")])
        degrees = ends.group_by("iri").agg(degree=pl.len())
        labels = tables.labels.with_columns(key=normalise(pl.col("label")))
        return cls(labels, degrees)

    def search(self, text: str, limit: int = MAX_RESULTS) -> list[dict[str, Any]]:
        """Entities with a label or alias equal to ``text`` or starting with it (case-folded), exact
        matches first, then by degree, then by label."""
        key = normalise_text(text)
        if not key:
            return []
        hits = self.labels.filter(pl.col("key").str.starts_with(key))
        ranked = (
            hits.group_by("iri")
            .agg(
                exact=(pl.col("key") == key).any(),
                matched=pl.col("label")
                .sort_by([pl.col("key") != key, pl.col("preferred").not_(), pl.col("label").str.len_chars()])
                .first(),
                alias=pl.col("preferred").not_().sort_by(pl.col("key") != key).first(),
            )
            .join(self.degrees, on="iri", how="left")
            .with_columns(pl.col("degree").fill_null(0))
            .sort(["exact", "degree", "matched", "iri"], descending=[True, True, False, False])
            .head(limit)
        )
        return ranked.to_dicts()

    def names(self, iris: list[str]) -> dict[str, list[dict[str, Any]]]:
        """Every label of each IRI, preferred ones first."""
        rows = self.labels.filter(pl.col("iri").is_in(iris)).sort("iri", pl.col("preferred").not_(), "lang", "label")
        out: dict[str, list[dict[str, Any]]] = {}
        for row in rows.select("iri", "label", "lang", "preferred").iter_rows(named=True):
            out.setdefault(row["iri"], []).append(row)
        return out


def normalise(column: pl.Expr) -> pl.Expr:
    return column.str.strip_chars().str.to_lowercase()


def normalise_text(text: str) -> str:
    return text.strip().lower()
