"""The graph as question material: typed entities, labelled predicates, answer texts and qualifiers.

Read once per command from one snapshot of the published build (``Snapshot.tables``); qualifiers, which the
tables leave out with every statement node, come from one SPARQL query (``queries/qa_qualifiers.rq``) on the
same build's store.

Types follow ConvKGYarn: an entity's type is its schema type (``rdf:type`` or the schema's type
relation, DuConv's 领域), else its Wikidata class (``wdt:P31``), else ``entity``; people are refined
by occupation (``star/演员``, ``Q5/Q36180``), taking of an entity's occupations the one most common
in the graph (ties by name) so that each entity has one type.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cached_property

import polars as pl
import pyoxigraph as ox

from kgforge.core.resources import query_text
from kgforge.core.schema import Schema
from kgforge.core.text import LIST_SEPARATORS, LIST_WORD_CHARS, normalise_label
from kgforge.core.vocab import RDF_TYPE, WIKIDATA_DIRECT, WIKIDATA_ENTITY, WIKIDATA_PROP, XSD
from kgforge.store.languages import language_labels
from kgforge.store.layout import DomainPaths
from kgforge.store.manifest import Manifest
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

UNTYPED = "entity"  # the type of an entity with no type (kgforge.qa.templates falls back on it)
INSTANCE_OF = WIKIDATA_DIRECT + "P31"
OCCUPATION_PROPERTY = WIKIDATA_DIRECT + "P106"
QUALIFIER = WIKIDATA_PROP + "qualifier/"
CANONICALISED = (
    "decimal",
    "integer",
    "double",
    "float",
    "boolean",
    "int",
    "long",
    "short",
    "byte",
    "nonNegativeInteger",
    "positiveInteger",
    "negativeInteger",
    "nonPositiveInteger",
    "unsignedInt",
    "unsignedLong",
    "unsignedShort",
    "unsignedByte",
)


@dataclass
class QAGraph:
    """One domain's graph, prepared for predicate extraction and question generation."""

    paths: DomainPaths
    schema: Schema
    tables: GraphTables
    language: str
    manifest: Manifest
    qualifier_timeout: float = 120.0
    _qualifiers: pl.DataFrame | None = field(default=None, init=False, repr=False)
    snapshot: Snapshot | None = field(default=None, init=False, repr=False)  # the build the tables came from

    @classmethod
    def load(cls, snapshot: Snapshot, language: str | None = None) -> QAGraph:
        """The snapshot's build: its tables, schema and manifest, and its store for the qualifier queries."""
        graph = cls(
            snapshot.paths, snapshot.schema, snapshot.tables(), language or snapshot.language, snapshot.manifest
        )
        graph.snapshot = snapshot
        return graph

    # ------------------------------------------------------------ names

    @cached_property
    def labels(self) -> dict[str, str]:
        """One display label per IRI in the language (relations included), as every stage shows it: the chain of
        :mod:`kgforge.store.languages` first (a name in the language, an alias, a sameAs partner's, one in its
        script), any label where that gives none."""
        pairs = self.snapshot.same_as_pairs() if self.snapshot else ()
        chosen = language_labels(self.tables.labels, self.language, pairs)
        return self.tables.label_map(self.language) | {
            iri: label for iri, label in chosen.labels.items() if iri not in self._relation_iris
        }

    @cached_property
    def _relation_iris(self) -> set[str]:  # relations keep their schema names, which label_map gives
        return set(self.tables.relations["iri"].to_list())

    @cached_property
    def names(self) -> pl.DataFrame:
        """iri, label (display), names (every label and alias, in any language, display label first)."""
        display = pl.DataFrame(
            {"iri": list(self.labels), "label": list(self.labels.values())},
            schema={"iri": pl.String, "label": pl.String},
        )
        every = (
            self.tables.labels.select("iri", "label")
            .unique()
            .sort("iri", "label")
            .group_by("iri", maintain_order=True)
            .agg(others=pl.col("label"))
        )
        return (
            display.join(every, on="iri", how="left")
            .with_columns(
                names=pl.concat_list(pl.col("label"), pl.col("others").fill_null([])).list.unique(maintain_order=True)
            )
            .drop("others")
        )

    @cached_property
    def predicate_labels(self) -> dict[str, str]:
        """Predicates that have a name in the language: schema relations, and Wikidata properties
        (``wdt:P…``) whose property entity has a label. Others cannot be asked about."""
        labels = {iri: self.labels[iri] for iri in self.tables.relations["iri"].to_list() if self.labels[iri] != iri}
        for iri, label in self.labels.items():
            if iri.startswith(WIKIDATA_ENTITY + "P"):
                labels.setdefault(WIKIDATA_DIRECT + iri.removeprefix(WIKIDATA_ENTITY), label)
        return {iri: label for iri, label in labels.items() if label}

    @cached_property
    def relation_kinds(self) -> dict[str, str]:
        return dict(zip(self.tables.relations["iri"].to_list(), self.tables.relations["kind"].to_list()))

    @cached_property
    def type_predicates(self) -> set[str]:
        """Predicates that state a type (never asked about: they define F(t) itself)."""
        found = {RDF_TYPE, INSTANCE_OF}
        if self.schema.type_relation:
            found.add(self.schema.relations[self.schema.type_relation].iri)
        return found

    @cached_property
    def occupation_predicates(self) -> set[str]:
        found = {OCCUPATION_PROPERTY}
        if "occupation" in self.schema.relations:
            found.add(self.schema.relations["occupation"].iri)
        return found

    # ------------------------------------------------------------ types

    @cached_property
    def entity_types(self) -> pl.DataFrame:
        """iri, type (one per entity with facts), type_label."""
        subjects = self.tables.facts.select(iri="s").unique()
        base = (
            subjects.join(self._schema_types(), on="iri", how="left")
            .join(self._class_types(), on="iri", how="left", suffix="_class")
            .select("iri", type=pl.coalesce("type", "type_class", pl.lit(UNTYPED)))
        )
        refined = base.join(self._occupations(), on="iri", how="left").select(
            "iri",
            type=pl.when(pl.col("occupation").is_not_null())
            .then(pl.col("type") + "/" + pl.col("occupation"))
            .otherwise(pl.col("type")),
        )
        labels = {type_id: self.type_label(type_id) for type_id in refined["type"].unique().to_list()}
        return refined.with_columns(type_label=pl.col("type").replace_strict(labels, return_dtype=pl.String))

    def type_label(self, type_id: str) -> str:
        """``star/演员`` → 明星/演员; ``Q5`` → the class's label when the store has one."""
        return "/".join(self._type_part_label(part) for part in type_id.split("/", 1))

    def _type_part_label(self, part: str) -> str:
        if part in self.schema.types:
            entity_type = self.schema.types[part]
            return entity_type.en if self.language.startswith("en") else entity_type.zh
        return self.labels.get(WIKIDATA_ENTITY + part, part)

    def _schema_types(self) -> pl.DataFrame:
        by_class = {t.iri: t.id for t in self.schema.types.values()}
        typed = self.tables.types.filter(pl.col("class").is_in(list(by_class))).select(
            "iri", type=pl.col("class").replace_strict(by_class)
        )
        if self.schema.type_relation:
            by_value = {normalise_label(t.zh): t.id for t in self.schema.types.values()} | {
                t.en: t.id for t in self.schema.types.values()
            }
            stated = self.tables.facts.filter(
                pl.col("p") == self.schema.relations[self.schema.type_relation].iri, pl.col("o").is_in(list(by_value))
            ).select(iri="s", type=pl.col("o").replace_strict(by_value))
            typed = pl.concat([typed, stated])
        return typed.sort("iri", "type").unique("iri", keep="first")

    def _class_types(self) -> pl.DataFrame:
        classes = self.tables.facts.filter(pl.col("p") == INSTANCE_OF, pl.col("o_is_entity"))
        return (
            classes.select(iri="s", type=pl.col("o").str.strip_prefix(WIKIDATA_ENTITY))
            .sort("iri", "type")
            .unique("iri", keep="first")
        )

    def _occupations(self) -> pl.DataFrame:
        """iri, occupation: of each entity's occupations, the most common in the graph (ties by name); a literal
        listing several (演员,歌手) is each of them (:func:`word_lists_split`), never a type of its own."""
        facts = word_lists_split(self.tables.facts.filter(pl.col("p").is_in(list(self.occupation_predicates))))
        named = facts.with_columns(
            occupation=pl.when(pl.col("o_is_entity"))
            .then(pl.col("o").str.strip_prefix(WIKIDATA_ENTITY))
            .otherwise(pl.col("o"))
        )
        counts = named.group_by("occupation").agg(uses=pl.len())
        return (
            named.join(counts, on="occupation")
            .sort(["s", "uses", "occupation"], descending=[False, True, False])
            .unique("s", keep="first")
            .select(iri="s", occupation="occupation")
        )

    # ------------------------------------------------------------ facts

    @cached_property
    def typed_facts(self) -> pl.DataFrame:
        """Every fact except type statements, with the subject's type and the object's display text
        (null for an entity that has no label): the material of F(t)."""
        facts = canonical_literals(self.tables.facts.filter(~pl.col("p").is_in(list(self.type_predicates))))
        texts = self.names.select(o="iri", o_text="label")
        with_text = facts.join(texts, on="o", how="left").with_columns(
            o_text=pl.when(pl.col("o_is_entity")).then(pl.col("o_text")).otherwise(pl.col("o"))
        )
        typed = with_text.join(self.entity_types.select(s="iri", type="type"), on="s", how="inner")
        return typed.unique(["s", "p", "o", "o_is_entity", "o_lang", "o_datatype"], keep="first")

    @cached_property
    def facts(self) -> pl.DataFrame:
        """The facts that can become questions: a named predicate and an answer with a text."""
        return self.typed_facts.filter(pl.col("p").is_in(list(self.predicate_labels)), pl.col("o_text").is_not_null())

    @property
    def qualifiers(self) -> pl.DataFrame:
        """s, p (the direct predicate), o, q (qualifier predicate), q_value, q_is_entity, q_text: the
        qualifiers of best-rank statements whose qualifier predicate and value have names."""
        if self._qualifiers is None:
            self._qualifiers = self._read_qualifiers()
        return self._qualifiers

    @property
    def has_statement_nodes(self) -> bool:
        """Whether a source of the build can hold statement nodes (a Wikidata import): the qualifier
        query scans the whole store, so it is skipped for stores that cannot have any."""
        return any((entry.kind or "wikidata").startswith("wikidata") for entry in self.manifest.graphs.values())

    def _read_qualifiers(self) -> pl.DataFrame:
        schema = {
            "s": pl.String,
            "p": pl.String,
            "o": pl.String,
            "q": pl.String,
            "q_value": pl.String,
            "q_is_entity": pl.Boolean,
            "q_text": pl.String,
        }
        by_property = {WIKIDATA_DIRECT + pid: rel.iri for pid, rel in self.schema.relation_by_wikidata().items()}
        rows = []
        if self.has_statement_nodes and self.snapshot is not None:  # a graph made without its build has no store
            with QueryRunner(self.snapshot) as runner:
                rows = runner.query(query_text("qa_qualifiers"), timeout=self.qualifier_timeout).rows
        records = []
        for row in rows:
            direct = WIKIDATA_DIRECT + row["ps"].value.rsplit("/", 1)[-1]
            q_direct = WIKIDATA_DIRECT + row["pq"].value.removeprefix(QUALIFIER)
            value = row["q"]
            records.append(
                (
                    row["s"].value,
                    by_property.get(direct, direct),
                    row["v"].value,
                    by_property.get(q_direct, q_direct),
                    value.value,
                    isinstance(value, ox.NamedNode),
                )
            )
        frame = pl.DataFrame(records, schema={k: schema[k] for k in list(schema)[:6]}, orient="row")
        texts = self.names.select(q_value="iri", q_text="label")
        frame = frame.join(texts, on="q_value", how="left").with_columns(
            q_text=pl.when(pl.col("q_is_entity")).then(pl.col("q_text")).otherwise(pl.col("q_value"))
        )
        return (
            frame.filter(pl.col("q").is_in(list(self.predicate_labels)), pl.col("q_text").is_not_null())
            .unique(maintain_order=True)
            .cast(pl.Schema(schema))
        )


def word_lists_split(facts: pl.DataFrame, whole: Iterable[str] = ()) -> pl.DataFrame:
    """``facts`` with each literal that lists words in one value (演员,歌手: ``LIST_SEPARATORS``) as one fact per
    word, as an importer splitting the cell would have stated them; entity objects, the relations in ``whole``
    (free text) and literals that are not lists of words stay as they are."""
    parts = (
        pl.col("o")
        .str.replace_all(LIST_SEPARATORS, "\x1f")
        .str.split("\x1f")
        .list.eval(pl.element().str.strip_chars().filter(pl.element().str.strip_chars() != ""))  # 演员, is 演员
    )
    words = parts.list.eval(
        (pl.element().str.len_chars() <= LIST_WORD_CHARS) & ~pl.element().str.contains(r"\d")
    ).list.all()
    listed = (
        ~pl.col("o_is_entity")
        & ~pl.col("p").is_in(list(whole))
        & pl.col("o").str.contains(LIST_SEPARATORS)
        & (parts.list.len() > 0)
        & words
    )
    split = facts.with_columns(
        _listed=listed, o=pl.when(listed).then(parts).otherwise(pl.concat_list(pl.col("o")))
    ).explode("o")
    if "o_text" in facts.columns:  # a literal's text is itself
        split = split.with_columns(o_text=pl.when("_listed").then(pl.col("o")).otherwise(pl.col("o_text")))
    return split.drop("_listed").unique(maintain_order=True)  # 演员 and 演员,歌手 of one star: one 演员


def canonical_literals(facts: pl.DataFrame) -> pl.DataFrame:
    """Typed literals written as the store holds them: Oxigraph keeps numbers and booleans in canonical
    form (``+1.96`` → ``1.96``, ``007`` → ``7``) while the build's N-Quads keep them as the source wrote
    them, so an answer must be the canonical value to be the store's. Each distinct value is put through
    an in-memory Oxigraph store once."""
    typed = (
        facts.filter(
            pl.col("o_datatype").str.starts_with(XSD).fill_null(False),
            pl.col("o_datatype").is_in([XSD + t for t in CANONICALISED]),
        )
        .select("o", "o_datatype")
        .unique()
    )
    if typed.is_empty():
        return facts
    store = ox.Store()
    subject = ox.NamedNode("urn:kgforge:qa:canonical")
    pairs = typed.rows()
    for number, (value, datatype) in enumerate(pairs):
        store.add(
            ox.Quad(
                subject, ox.NamedNode(f"urn:kgforge:qa:{number}"), ox.Literal(value, datatype=ox.NamedNode(datatype))
            )
        )
    canonical = {(pairs[int(q.predicate.value.rsplit(":", 1)[1])]): q.object.value for q in store}
    lookup = pl.DataFrame(
        [(v, d, canonical.get((v, d), v)) for v, d in pairs],
        schema={"o": pl.String, "o_datatype": pl.String, "canonical": pl.String},
        orient="row",
    )
    return (
        facts.join(lookup, on=["o", "o_datatype"], how="left")
        .with_columns(o=pl.coalesce("canonical", "o"))
        .drop("canonical")
    )
