"""Generic facts, as tables and JSON lines give them: subjects named or identified, cells typed by the schema.

The CSV/TSV and JSON Lines readers reduce every row to facts ``(subject, relation, cell)`` and hand them to
:class:`GenericFacts`, which decides what each cell is once the whole file is read:

* a cell written ``<IRI>``, or starting ``http://``, ``https://`` or ``urn:``, is that IRI (a malformed one
  costs its row, quarantined with its line);
* a name that is also a subject's name in the same file is that subject (``Lin Qiu`` in a book's ``author``
  column is the row whose name is ``Lin Qiu``);
* under an entity-valued relation, any other name is an entity of its own (``name`` IRIs, as KdConv and DuConv
  entities have, so the same name from two sources is one entity), labelled with the name;
* anything else is a literal: typed by the relation's ``datatype`` when the text is of that type, else tagged
  with the schema's language.

A subject is an IRI, or an identifier hashed into the domain's own IRIs, or, with neither, its name. A value of
the schema's ``type_relation`` that names a declared type becomes ``rdf:type``. Quads come out in the order
the file gives its rows, so the same input writes the same bytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgforge.core.errors import SchemaError
from kgforge.core.quads import XSD, check_iri, check_lang
from kgforge.core.schema import Relation
from kgforge.core.text import text_language
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, SKOS_ALT_LABEL, entity_iri
from kgforge.sources.importer import ImportContext

IRI_STARTS = ("http://", "https://", "urn:")
DEFAULT_SEPARATOR = "|"
ID_KEYS = ("id", "iri", "@id", "uri")
LABEL_KEYS = ("name", "label", "title", "名称", "名字", "标题", "实体")
ALIAS_KEYS = ("alias", "aliases", "altlabel", "别名")
# A column holding the name in one language: name_en, label-en, title_zh_hans, nameEN (the stem as LABEL_KEYS)
_LABEL_IN_LANGUAGE = re.compile(r"(?:name|label|title)[_\-. ]?([a-z]{2,3}(?:[_-][a-z]{2,4})?)", re.IGNORECASE)
LANGUAGE_LABEL_KEYS = {"英文名": "en", "英文名称": "en", "中文名": "zh", "中文名称": "zh"}
_LEXICAL_FORMS = {
    XSD + "integer": re.compile(r"[+-]?\d+"),
    XSD + "decimal": re.compile(r"[+-]?(\d+\.\d*|\.\d+|\d+)"),
    XSD + "double": re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN"),
    XSD + "boolean": re.compile(r"true|false|1|0"),
    XSD + "date": re.compile(r"-?\d{4,}-\d{2}-\d{2}(Z|[+-]\d{2}:\d{2})?"),
    XSD + "gYear": re.compile(r"-?\d{4,}"),
}


def iri_in(cell: str) -> str | None:
    """The IRI ``cell`` is written as (``<…>`` or ``http://…``), None when it is a name or a value;
    ValueError naming the problem when it is meant as an IRI and is not a valid one."""
    if cell.startswith("<") and cell.endswith(">") and len(cell) > 2:
        return check_iri(cell[1:-1])
    if cell.startswith(IRI_STARTS):
        return check_iri(cell)
    return None


def fits_datatype(value: str, datatype: str) -> bool:
    """Whether ``value`` is a lexical form of ``datatype`` (unknown datatypes take any text)."""
    form = _LEXICAL_FORMS.get(datatype)
    return form is None or form.fullmatch(value) is not None


def pick_key(keys: list[str], wanted: tuple[str, ...], configured: Any) -> str | None:
    """The key (column, JSON key) ``configured`` names, else the first of ``wanted`` present (case-insensitive)."""
    if isinstance(configured, str) and configured:
        return configured if configured in keys else None
    folded = {key.casefold(): key for key in reversed(keys)}
    return next((folded[w] for w in wanted if w in folded), None)


@dataclass(frozen=True)
class RecordsOptions:
    """``[options.records]`` of a schema, or a table/JSON lines source's own settings."""

    id: str | None = None
    """The column (key) holding each row's identifier or IRI; default: the first of id, iri, @id, uri."""
    label: str | None = None
    """The column holding each row's name; default: the first of name, label, title, 名称, 名字, 标题, 实体,
    else the first column that is not the id."""
    aliases: str | None = None
    """The column holding other names; default: the first of alias, aliases, altlabel, 别名."""
    separator: str = DEFAULT_SEPARATOR
    """What separates several values written in one cell."""
    labels: dict[str, str] = field(default_factory=dict)
    """Columns (keys) holding the name in a given language, each to its language tag (``{name_en = "en"}``):
    their values are ``rdfs:label`` in that language of the row's entity. Default: the columns named as a
    label column with a language suffix (``name_en``, ``label-zh``, ``title_ja``) and 英文名/中文名."""


def record_settings(ctx: ImportContext, keys: list[str]) -> dict[str, Any]:
    """The id, label and alias keys and the separator of multi-valued cells, from the source's options, the
    schema's ``[options.records]``, or (for what neither says) the usual names; written back into
    ``ctx.options`` so that `kgforge init` can show what was used."""
    configured = ctx.settings("records", RecordsOptions)
    id_key = pick_key(keys, ID_KEYS, configured.id)
    label_key = pick_key(keys, LABEL_KEYS, configured.label)
    if label_key is None and not configured.label:
        label_key = next((k for k in keys if k != id_key), None)
    settings: dict[str, Any] = {
        "id": id_key,
        "label": label_key,
        "aliases": pick_key(keys, ALIAS_KEYS, configured.aliases),
        "separator": configured.separator,
    }
    labels = dict(configured.labels) or language_label_keys(keys, (id_key, label_key, settings["aliases"]))
    try:
        settings["labels"] = {key: check_lang(lang) for key, lang in labels.items()}
    except ValueError as exc:
        raise SchemaError(f"{ctx.schema.path}: [options.records] labels: {exc}") from None
    ctx.options.update({k: v for k, v in settings.items() if v})
    return settings


def language_label_keys(keys: list[str], taken: tuple[str | None, ...]) -> dict[str, str]:
    """The keys that name a label in a language by their name (``name_en`` → en), each with its tag."""
    found = {}
    for key in keys:
        if key in taken:
            continue
        match = _LABEL_IN_LANGUAGE.fullmatch(key.strip())
        if match:
            found[key] = match.group(1).lower().replace("_", "-")
        elif key.strip() in LANGUAGE_LABEL_KEYS:
            found[key] = LANGUAGE_LABEL_KEYS[key.strip()]
    return found


@dataclass(frozen=True)
class Cell:
    """One value of a fact as written, with its explicit language or datatype if the source gives one."""

    text: str
    lang: str | None = None
    datatype: str | None = None
    iri: str | None = None  # when the cell is written as an IRI


@dataclass(frozen=True)
class Fact:
    subject: str  # IRI
    relation: Relation
    cell: Cell
    location: str


class GenericFacts:
    """Collects the facts of one generic source, then writes them (see the module's rules)."""

    def __init__(self, ctx: ImportContext) -> None:
        self.ctx = ctx
        self.lang = ctx.schema.language
        self.namespace = ctx.schema.name
        self.by_name: dict[str, str] = {}  # a subject's name → its IRI, the first one named so
        self.facts: list[Fact] = []
        # (IRI, predicate, name, language or None for the name's own script, location) of subjects
        self.names: list[tuple[str, str, str, str | None, str]] = []
        self.types: list[tuple[str, str, str]] = []  # (IRI, class IRI, location)
        self.record_ids: dict[str, str] = {}  # the IRI of each identified record → its location

    def subject(self, ref: str | None, name: str | None, location: str, *, record: bool = False) -> str:
        """The IRI of a subject given by ``ref`` (an IRI, or an identifier) and/or its ``name``; ValueError for a
        malformed IRI or when it has neither. ``record``: the subject is a whole record (a row of an entity
        table, a JSON line), so a second record with the same identifier is a ValueError naming the first:
        merging two records silently would give one entity two names, or one record's facts to another."""
        ref = (ref or "").strip()
        name = (name or "").strip() or None
        if ref:
            iri = iri_in(ref) or entity_iri(ref, self.namespace)
            if record:
                first = self.record_ids.setdefault(iri, location)
                if first != location:
                    raise ValueError(f"duplicate id {ref!r}: {first} has the same id (the first one is kept)")
        elif name:
            iri = entity_iri(name)
        else:
            raise ValueError("the subject has neither an identifier nor a name")
        if name:
            self.by_name.setdefault(name, iri)
            self.names.append((iri, RDFS_LABEL, name, None, location))
        return iri

    def alias(self, subject: str, name: str, location: str) -> None:
        if name.strip():
            self.names.append((subject, SKOS_ALT_LABEL, name.strip(), None, location))

    def label(self, subject: str, name: str, lang: str, location: str) -> None:
        """A name of ``subject`` in ``lang`` (a column declared as a label in a language: ``name_en``); a value
        naming this subject elsewhere in the file then finds it by this name too."""
        if name.strip():
            self.by_name.setdefault(name.strip(), subject)
            self.names.append((subject, RDFS_LABEL, name.strip(), check_lang(lang), location))

    def cell(self, text: str, lang: str | None = None, datatype: str | None = None) -> Cell:
        """A value as written; ValueError when it is a malformed IRI, language tag or datatype."""
        return Cell(text, check_lang(lang) if lang else None, check_iri(datatype) if datatype else None, iri_in(text))

    def add(self, subject: str, relation: Relation, cell: Cell, location: str) -> None:
        type_ = self.ctx.schema.type_for_value(cell.text) if relation.id == self.ctx.schema.type_relation else None
        if type_ is not None and relation.declared:
            self.types.append((subject, type_.iri, location))
            return
        self.facts.append(Fact(subject, relation, cell, location))

    def emit(self) -> None:
        ctx, writer = self.ctx, self.ctx.writer
        named_entities: dict[str, str] = {}  # names that became entities of their own → location
        for fact in self.facts:
            ctx.location = fact.location
            ctx.relations_used.add(fact.relation)
            target = self._entity_of(fact)
            if target is not None:
                writer.iri(fact.subject, fact.relation.iri, target)
                if fact.cell.iri is None and fact.cell.text not in self.by_name:
                    named_entities.setdefault(fact.cell.text, fact.location)
            else:
                self._literal(fact)
        for iri, predicate, name, lang, location in self.names:
            ctx.location = location
            writer.literal(iri, predicate, name, lang=lang or text_language(name, self.lang))
        for name, location in named_entities.items():
            ctx.location = location
            writer.literal(entity_iri(name), RDFS_LABEL, name, lang=text_language(name, self.lang))
        for iri, class_iri, location in self.types:
            ctx.location = location
            writer.iri(iri, RDF_TYPE, class_iri)
        ctx.counts["facts"] = len(self.facts)
        ctx.counts["entities"] = len({iri for iri, *_ in self.names} | {entity_iri(n) for n in named_entities})

    def _entity_of(self, fact: Fact) -> str | None:
        cell = fact.cell
        if cell.iri is not None:
            return cell.iri
        if cell.lang or cell.datatype or fact.relation.kind == "text":
            return None
        if cell.text in self.by_name:
            return self.by_name[cell.text]
        return entity_iri(cell.text) if fact.relation.kind == "entity" else None

    def _literal(self, fact: Fact) -> None:
        cell, declared = fact.cell, fact.relation.datatype
        if cell.datatype or cell.lang:
            self.ctx.writer.literal(fact.subject, fact.relation.iri, cell.text, lang=cell.lang, datatype=cell.datatype)
        elif declared and fits_datatype(cell.text.strip(), declared):
            self.ctx.writer.literal(fact.subject, fact.relation.iri, cell.text.strip(), datatype=declared)
        else:
            if declared:
                self.ctx.counts[f"values not {declared.removeprefix(XSD)} (kept as text)"] += 1
            self.ctx.writer.literal(
                fact.subject, fact.relation.iri, cell.text, lang=text_language(cell.text, self.lang)
            )
