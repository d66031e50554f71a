"""Labels of entities and relations in one language, with a record of those that had none."""

from __future__ import annotations

import polars as pl

from kgforge.core.schema import Schema
from kgforge.core.vocab import ONTO, RDF_TYPE
from kgforge.store.tables import GraphTables

EXTRA_PREDICATES = {  # predicates an export may show that no schema declares
    RDF_TYPE: {"zh": "实体类型", "en": "type"},
    ONTO + "related": {"zh": "相关", "en": "related"},
}


class Labels:
    """``label(iri)`` in ``language``; ``missing`` collects IRIs that have no label in it."""

    def __init__(self, tables: GraphTables, schema: Schema, language: str) -> None:
        self.language = language
        in_language = tables.labels.filter(pl.col("lang").str.starts_with(language) | (pl.col("lang") == ""))
        ranked = in_language.sort("iri", pl.col("preferred").not_(), "label").unique("iri", keep="first")
        self.entities = dict(zip(ranked["iri"].to_list(), ranked["label"].to_list()))
        self.fallback = tables.label_map(language)
        self.relations: dict[str, str] = {}
        for iri, zh, en in tables.relations.select("iri", "zh", "en").iter_rows():
            label = en if language.startswith("en") else zh
            if label:
                self.relations[iri] = label
        for iri, names in EXTRA_PREDICATES.items():
            self.relations.setdefault(iri, names.get(language[:2], names["en"]))
        for rel in schema.relations.values():
            self.relations.setdefault(rel.iri, rel.label(language))
        if schema.type_relation:  # rdf:type facts read as the schema's type relation (领域 电影 / 明星)
            self.relations[RDF_TYPE] = schema.relations[schema.type_relation].label(language)
            for entity_type in schema.types.values():
                self.entities[entity_type.iri] = entity_type.en if language.startswith("en") else entity_type.zh
        self.missing: set[str] = set()

    def entity(self, iri: str) -> str:
        label = self.entities.get(iri)
        if label is None:
            self.missing.add(iri)
            return self.fallback.get(iri, iri)
        return label

    def relation(self, iri: str) -> str:
        label = self.relations.get(iri) or self.entities.get(iri)
        if label is None:
            self.missing.add(iri)
            return self.fallback.get(iri, iri)
        return label

    def frame_columns(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Adds ``s_label``, ``p_label`` and ``o_label`` (a literal object is its own label)."""
        subjects = frame["s"].unique().to_list()
        objects = frame.filter(pl.col("o_is_entity"))["o"].unique().to_list()
        entity_map = {iri: self.entity(iri) for iri in set(subjects) | set(objects)}
        relation_map = {iri: self.relation(iri) for iri in frame["p"].unique().to_list()}
        return frame.with_columns(
            s_label=pl.col("s").replace_strict(entity_map, return_dtype=pl.String),
            p_label=pl.col("p").replace_strict(relation_map, return_dtype=pl.String),
            o_label=pl.when(pl.col("o_is_entity"))
            .then(pl.col("o").replace_strict(entity_map, default=pl.col("o"), return_dtype=pl.String))
            .otherwise(pl.col("o")),
        )
