"""Name-keyed triples, as the dialogue corpora give them: ``(head name, relation label, tail)``.

KdConv and DuConv identify entities by name. These triples are collected first, then emitted:
a tail becomes an entity when its relation is entity-valued in the schema or when it is also a
head somewhere in the source; otherwise it stays a literal. Quads come out in the order the source
gives them (never a set's order), so the same input always writes the same file. A word-segmented
source (DuConv) keeps its own spelling of names and relation names (``玛姬 · 格蕾斯``, ``出生 日期``) as
``skos:altLabel`` beside the normalised label, so exports can write them back as the source did.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.core.schema import Relation
from kgforge.core.text import normalise_label, text_language
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, SKOS_ALT_LABEL, entity_iri
from kgforge.sources.importer import ImportContext, parsed_records


@dataclass(frozen=True)
class NameTriple:
    head: str
    relation: Relation
    tail: str
    location: str = ""  # of the record it came from, for a quad the writer refuses


class NameTriples:
    """Collects one source's name triples and entity types, then writes them as quads.

    Names of a word-segmented corpus (``segmented``: DuConv) are normalised and keep their surface forms
    as alternative labels; other names (KdConv) are kept exactly as written.
    """

    def __init__(self, ctx: ImportContext, segmented: bool = False) -> None:
        self.ctx = ctx
        self.segmented = segmented
        self.lang = ctx.schema.language
        self.triples: list[NameTriple] = []
        self.heads: dict[str, str] = {}  # name → location of its first triple, in source order
        self.surface_forms: dict[str, set[str]] = {}
        self.relation_forms: dict[str, dict[str, str]] = {}  # relation IRI → its source spellings → first location
        self.types: dict[str, set[str]] = {}

    def _name(self, raw: str) -> str:
        if not self.segmented:
            return raw  # KdConv names are kept exactly as written: tabs, spaces and all
        name = normalise_label(raw, self.segmented)
        if name != raw.strip():
            self.surface_forms.setdefault(name, set()).add(raw.strip())
        return name

    def add(self, head: str, relation_label: str, tail: str, location: str = "") -> None:
        relation = self.ctx.schema.relation_for(relation_label)
        if not relation.declared:
            self.ctx.counts[f"unmapped relation {relation.zh}"] += 1
        written = relation_label.strip()
        if self.segmented and written != relation.zh and normalise_label(written) == normalise_label(relation.zh):
            self.relation_forms.setdefault(relation.iri, {}).setdefault(written, location)
        head_name = self._name(head)
        tail_value = tail if relation.kind == "text" else self._name(tail)
        self.heads.setdefault(head_name, location)
        self.triples.append(NameTriple(head_name, relation, tail_value, location))

    def add_entity(self, name: str, location: str = "") -> None:
        """A name that is an entity even if no triple has it as a head (an entity list's line)."""
        self.heads.setdefault(self._name(name), location)

    def add_type(self, name: str, type_id: str | None) -> None:
        if type_id:
            self.types.setdefault(self._name(name), set()).add(type_id)

    def add_checked(
        self, records: list, location: str, what: str, as_triple: Callable[[Any], Any] = lambda record: record
    ) -> int:
        """Add each record that is (``as_triple`` makes) a well-formed ``[head, relation, tail]``;
        quarantine the others as they were written, with ``what`` naming where they came from.
        Returns how many were added."""
        added = 0
        for record in records:
            triple = as_triple(record)
            problem = check_triple(triple)
            if problem:
                self.ctx.reject(location, f"{what}: {problem}", record)
                continue
            head, relation, tail = triple  # three, as check_triple found
            self.add(head, relation, tail, location=location)
            added += 1
        return added

    def is_entity(self, triple: NameTriple) -> bool:
        kind = triple.relation.kind
        return kind == "entity" or (kind != "text" and triple.tail in self.heads)

    def emit(self) -> None:
        schema, writer, lang = self.ctx.schema, self.ctx.writer, self.lang
        type_values = {normalise_label(t.zh): t.id for t in schema.types.values()}
        type_values.update({t.en: t.id for t in schema.types.values()})
        entities = dict(self.heads)
        for triple in self.triples:
            self.ctx.location = triple.location
            relation = triple.relation
            self.ctx.relations_used.add(relation)
            head = entity_iri(triple.head)
            self.add_type(triple.head, relation.domain)
            if self.is_entity(triple):
                entities.setdefault(triple.tail, triple.location)
                writer.iri(head, relation.iri, entity_iri(triple.tail))
                self.add_type(triple.tail, relation.range)
            else:
                writer.literal(head, relation.iri, triple.tail, lang=text_language(triple.tail, lang))
            if relation.id == schema.type_relation and triple.tail in type_values:
                self.add_type(triple.head, type_values[triple.tail])
        for name, location in entities.items():
            self.ctx.location = location
            self._emit_names(name)
        for iri, forms in sorted(self.relation_forms.items()):
            for form, location in sorted(forms.items()):
                self.ctx.location = location
                writer.literal(iri, SKOS_ALT_LABEL, form, lang=text_language(form, lang))
        for name, type_ids in self.types.items():
            self.ctx.location = entities.get(name, "")
            for type_id in sorted(type_ids):
                writer.iri(entity_iri(name), RDF_TYPE, schema.types[type_id].iri)
        self.ctx.counts["entities"] = len(entities)
        self.ctx.counts["facts"] = len(self.triples)

    def _emit_names(self, name: str) -> None:
        iri = entity_iri(name)
        self.ctx.writer.literal(iri, RDFS_LABEL, name, lang=text_language(name, self.lang))
        for form in sorted(self.surface_forms.get(name, ())):
            self.ctx.writer.literal(iri, SKOS_ALT_LABEL, form, lang=text_language(form, self.lang))


def check_triple(value: object) -> str | None:
    """Why ``value`` is not a ``[head, relation, tail]`` list of non-empty strings, or None."""
    if not isinstance(value, list) or len(value) != 3:
        return "expected a [head, relation, tail] list of 3 strings"
    if not all(isinstance(x, str) and x.strip() for x in value):
        return "head, relation and tail must be non-empty strings"
    return None


def import_session_lines(
    ctx: ImportContext, problem: Callable[[object], str | None], triples: Callable[[dict[str, Any]], list[Any]]
) -> None:
    """A JSON-lines file of dialogue sessions (DuConv, DuRecDial): each session that ``problem`` accepts
    brings its ``triples``; the others, and bad triples, are quarantined with their line."""
    names = NameTriples(ctx, segmented=True)
    for location, record in parsed_records(ctx, iter_json_lines(ctx.path)):
        why = problem(record.value)
        if why:
            ctx.reject(location, why, record.value)
            continue
        names.add_checked(triples(record.value), location, "knowledge triple")
        ctx.accept()
    names.emit()
