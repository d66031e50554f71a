"""Labels of entities and relations in one language (with a record of those that had none), and the
strings each layout writes for them."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import polars as pl

from kgforge.core.records import Record
from kgforge.core.schema import Schema
from kgforge.core.scripts import CJK_CLASS, is_cjk_language
from kgforge.core.text import Segmenter, normalise_label
from kgforge.core.vocab import ONTO, RDF_TYPE
from kgforge.store.languages import STEPS, fits_script, in_language, language_labels, literal_forms
from kgforge.store.tables import GraphTables

EXTRA_PREDICATES = {  # predicates an export may show that no schema declares
    RDF_TYPE: {"zh": "实体类型", "en": "type"},
    ONTO + "related": {"zh": "相关", "en": "related"},
}


@dataclass(frozen=True)
class LabelsReport(Record):
    """What an export's labels came from (the manifest's ``labels``); each listing holds the first 50, its
    ``_count`` all of them."""

    language: str
    chain: tuple[str, ...]  # the steps of kgforge.store.languages' chain, in order
    steps: dict[str, int]  # step -> labels it gave (and IRIs lacking one)
    mixed: dict[str, str]  # IRI -> the other language's label written for it (allow_mixed)
    mixed_count: int
    missing: dict[str, str]  # IRI lacking a label in the language -> the label it has
    missing_count: int
    values_mixed: dict[str, str]  # literal value written as it is -> its relation's IRI (allow_mixed)
    values_mixed_count: int
    values_missing: dict[str, str]  # literal value with no form in the language -> its relation's IRI
    values_missing_count: int
    text_mixed: dict[str, str]  # other text in another language -> where (allow_mixed)
    text_mixed_count: int


class Labels:
    """``label(iri)`` in ``language`` by the chain of :mod:`kgforge.store.languages`; ``missing`` collects IRIs
    that have no label on it. With ``allow_mixed`` such an IRI gets a label in another language instead,
    recorded in ``mixed`` (never silently: the export reports them)."""

    def __init__(
        self,
        tables: GraphTables,
        schema: Schema,
        language: str,
        links: Iterable[tuple[str, str]] = (),
        allow_mixed: bool = False,
    ) -> None:
        self.language = language
        self.tables = tables
        self.allow_mixed = allow_mixed
        self.chosen = language_labels(tables.labels, language, links)
        self.entities = dict(self.chosen.labels)
        self.fallback = tables.label_map(language)
        self.relations: dict[str, str] = {}
        for iri, zh, en in tables.relations.select("iri", "zh", "en").iter_rows():
            label, other = (en, zh) if language.startswith("en") else (zh, en)
            if label and fits_script(label, language):
                self.relations[iri] = label
            elif iri in self.entities:  # a label the graph gives the relation in this language (a translation)
                self.relations[iri] = self.entities[iri]
            elif other and fits_script(other, language):  # the chain's script step: a date (2018-11-5) is English
                self.relations[iri] = other
        for iri, names in EXTRA_PREDICATES.items():
            self.relations.setdefault(iri, names.get(language[:2], names["en"]))
        for rel in schema.relations.values():
            if fits_script(rel.label(language), language):
                self.relations.setdefault(rel.iri, rel.label(language))
        if schema.type_relation:  # rdf:type facts read as the schema's type relation (领域 电影 / 明星)
            type_relation = schema.relations[schema.type_relation]
            if fits_script(type_relation.label(language), language):
                self.relations[RDF_TYPE] = type_relation.label(language)
            else:
                self.relations.pop(RDF_TYPE, None)
            for entity_type in schema.types.values():
                name = entity_type.en if language.startswith("en") else entity_type.zh
                if fits_script(name, language):
                    self.entities[entity_type.iri] = name
                elif entity_type.iri not in self.entities or self.chosen.fell_back.get(entity_type.iri) == "script":
                    self.entities.pop(entity_type.iri, None)
        self.missing: set[str] = set()
        self.mixed: dict[str, str] = {}  # IRI → the other language's label written for it (allow_mixed)
        self.values_missing: dict[str, str] = {}  # literal value with no form in the language → its relation's IRI
        self.values_mixed: dict[str, str] = {}  # those written as they are (allow_mixed)
        self.text_mixed: dict[str, str] = {}  # other text a record holds in another language -> where (allow_mixed)
        self._forms: pl.DataFrame | None = None

    def _other(self, iri: str) -> str | None:
        """The label written for ``iri`` when it has none in the language: another language's with
        ``allow_mixed`` (recorded), else None (recorded as missing)."""
        if self.allow_mixed and iri in self.fallback:
            self.mixed[iri] = self.fallback[iri]
            return self.fallback[iri]
        self.missing.add(iri)
        return None

    def entity(self, iri: str) -> str:
        label = self.entities.get(iri)
        if label is None:
            return self._other(iri) or self.fallback.get(iri, iri)
        return label

    def relation(self, iri: str) -> str:
        label = self.relations.get(iri) or self.entities.get(iri)
        if label is None:
            return self._other(iri) or self.fallback.get(iri, iri)
        return label

    def report(self) -> LabelsReport:
        """What the labels written came from: counts per step of the chain, the IRIs written in another
        language (``allow_mixed``) or lacking a label in this one, each with the label it has, and the literal
        values with no form in the language (each with its relation), written as they are or lacking."""
        return LabelsReport(
            language=self.language,
            chain=STEPS,
            steps=self.chosen.counts(),
            mixed=dict(sorted(self.mixed.items())[:50]),
            mixed_count=len(self.mixed),
            missing={iri: self.fallback.get(iri, iri) for iri in sorted(self.missing)[:50]},
            missing_count=len(self.missing),
            values_mixed=dict(sorted(self.values_mixed.items())[:50]),
            values_mixed_count=len(self.values_mixed),
            values_missing=dict(sorted(self.values_missing.items())[:50]),
            values_missing_count=len(self.values_missing),
            text_mixed=dict(sorted(self.text_mixed.items())[:50]),
            text_mixed_count=len(self.text_mixed),
        )

    def mixed_rows(self) -> list[dict[str, str]]:
        """Everything written in another language than this one (``allow_mixed``), in full: each name with the
        label written for it, each value with its relation, each other text with where it is."""
        return (
            [{"what": "name", "iri": iri, "written": label} for iri, label in sorted(self.mixed.items())]
            + [{"what": "value", "value": v, "relation": p} for v, p in sorted(self.values_mixed.items())]
            + [{"what": "text", "text": text, "where": where} for text, where in sorted(self.text_mixed.items())]
        )

    def forms(self) -> pl.DataFrame:
        """``(s, p, o, form)``: the literal values of the graph in another script paired with their form in the
        language (:func:`kgforge.store.languages.literal_forms`), found once."""
        if self._forms is None:
            self._forms = literal_forms(self.tables.domain_facts(), self.language)
        return self._forms

    def lacking_values(self, frame: pl.DataFrame) -> pl.Expr:
        """Rows of labelled ``frame`` whose literal value is written as it is though the language cannot read
        it: no form in the language (``o_label`` is ``o``) and a script it does not read."""
        if is_cjk_language(self.language):
            return pl.lit(False)
        return ~pl.col("o_is_entity") & (pl.col("o_label") == pl.col("o")) & pl.col("o").str.contains(CJK_CLASS)

    def segmented_forms(self) -> dict[str, str]:
        """IRI → the source's word-segmented spelling of its label (an alternative label with spaces that
        normalises to the label itself), for entities and relations that have one."""
        preferred = {**self.entities, **self.relations}
        spaced = self.tables.labels.filter(
            ~pl.col("preferred"),
            pl.col("label").str.contains(" "),
            in_language(pl.col("lang"), self.language) | (pl.col("lang") == ""),
        )
        forms: dict[str, str] = {}
        for iri, label in spaced.select("iri", "label").sort("iri", "label").iter_rows():
            name = preferred.get(iri)
            if name is not None and iri not in forms and normalise_label(label) == normalise_label(name) != label:
                forms[iri] = label
        return forms

    def frame_columns(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Adds ``s_label``, ``p_label`` and ``o_label`` (a literal object is its own label)."""
        subjects = frame["s"].unique().to_list()
        objects = frame.filter(pl.col("o_is_entity"))["o"].unique().to_list()
        entity_map = {iri: self.entity(iri) for iri in set(subjects) | set(objects)}
        relation_map = {iri: self.relation(iri) for iri in frame["p"].unique().to_list()}
        forms = self.forms()
        value = pl.col("o")
        if not forms.is_empty():  # a value in another script takes its form in the language, where it has one
            frame = frame.join(forms, on=["s", "p", "o"], how="left", maintain_order="left")
            value = pl.coalesce("form", "o")
        labelled = frame.with_columns(
            s_label=pl.col("s").replace_strict(entity_map, return_dtype=pl.String),
            p_label=pl.col("p").replace_strict(relation_map, return_dtype=pl.String),
            o_label=pl.when(pl.col("o_is_entity"))
            .then(pl.col("o").replace_strict(entity_map, default=pl.col("o"), return_dtype=pl.String))
            .otherwise(value),
        ).drop("form", strict=False)
        lacking = labelled.filter(self.lacking_values(labelled)).select("o", "p").unique("o").sort("o", "p")
        found = self.values_mixed if self.allow_mixed else self.values_missing
        for literal, relation in lacking.iter_rows():
            found.setdefault(literal, relation)
        return labelled


class Render:
    """The strings a layout writes for a subgraph row: its labels, or, for a word-segmented layout
    (DuConv), their segmented surface forms. A name or relation name keeps the source's own segmented
    spelling where the graph has one (``出生 日期``, ``玛姬 · 格蕾斯``: a ``skos:altLabel`` that normalises
    to the label); anything else is cut by jieba with the dialogues' entity names kept whole.
    ``type_relation`` names every type fact (DuConv's readers look for ``领域`` exactly); ``build_id``
    is the store build the rows come from (the generic layout records it)."""

    def __init__(
        self, labels: Labels, segmenter: Segmenter | None = None, type_relation: str | None = None, build_id: str = ""
    ) -> None:
        self.labels = labels
        self.segmenter = segmenter
        self.type_relation = type_relation
        self.build_id = build_id
        self._forms = labels.segmented_forms() if segmenter else {}

    @classmethod
    def for_frame(
        cls,
        labels: Labels,
        frame: pl.DataFrame | None,
        segmented: bool,
        type_relation: str | None = None,
        build_id: str = "",
    ) -> Render:
        """A render for the rows of ``frame`` (labelled subgraph rows): their entity names are the ones
        kept whole. A layout is segmented in a CJK language only: English text is written in words already,
        and a segmenter would cut it (``(2019 )``) or, once its spaces are taken out, run it together."""
        if not segmented or not is_cjk_language(labels.language):
            return cls(labels, None, type_relation, build_id)
        names: set[str] = set()
        if frame is not None and not frame.is_empty():
            names = set(frame["s_label"].unique().to_list())
            names |= set(frame.filter(pl.col("o_is_entity"))["o_label"].unique().to_list())
        return cls(labels, Segmenter(names), type_relation, build_id)

    @property
    def language(self) -> str:
        return self.labels.language

    def text(self, text: str) -> str:
        return self.segmenter(text) if self.segmenter else text

    def name(self, iri: str, label: str) -> str:
        if self.segmenter is None:
            return label
        return self._forms.get(iri) or self.segmenter(label)

    def columns(self, frame: pl.DataFrame) -> pl.DataFrame:
        """Adds ``s_text``, ``p_text`` and ``o_text``: each row's strings as ``triple`` writes them, every
        distinct name or value rendered once."""
        is_type = (pl.col("role") == "type") & pl.lit(self.type_relation is not None)
        if self.segmenter is None:  # the labels themselves, but for type facts under the readers' relation
            return frame.with_columns(
                s_text=pl.col("s_label"),
                o_text=pl.col("o_label"),
                p_text=pl.when(is_type).then(pl.lit(self.type_relation or "", pl.String)).otherwise(pl.col("p_label")),
            )
        entities = {
            iri: self.name(iri, label)
            for iri, label in pl.concat(
                [
                    frame.select(iri="s", label="s_label"),
                    frame.filter(pl.col("o_is_entity")).select(iri="o", label="o_label"),
                ]
            )
            .unique()
            .iter_rows()
        }
        relations = {iri: self.name(iri, label) for iri, label in frame.select("p", "p_label").unique().iter_rows()}
        values = {
            value: self.text(value) for value in frame.filter(~pl.col("o_is_entity"))["o_label"].unique().to_list()
        }
        return frame.with_columns(
            s_text=pl.col("s").replace_strict(entities, return_dtype=pl.String),
            p_text=pl.when(is_type)
            .then(pl.lit(self.text(self.type_relation or ""), pl.String))
            .otherwise(pl.col("p").replace_strict(relations, return_dtype=pl.String)),
            o_text=pl.when(pl.col("o_is_entity"))
            .then(pl.col("o").replace_strict(entities, default=None, return_dtype=pl.String))
            .otherwise(pl.col("o_label").replace_strict(values, default=None, return_dtype=pl.String)),
        )

    def triple(self, row: dict[str, Any]) -> list[str]:
        if "s_text" in row:
            return [row["s_text"], row["p_text"], row["o_text"]]
        if row.get("role") == "type" and self.type_relation:
            relation = self.text(self.type_relation)
        else:
            relation = self.name(row["p"], row["p_label"])
        tail = self.name(row["o"], row["o_label"]) if row["o_is_entity"] else self.text(row["o_label"])
        return [self.name(row["s"], row["s_label"]), relation, tail]

    def triples(self, rows: list[dict[str, Any]]) -> list[list[str]]:
        return [self.triple(row) for row in rows]
