"""Domain schemas (``schemas/<domain>.toml``): a domain's sources and its relation vocabulary.

A schema is validated when loaded; every problem is reported with the file and the key at fault.
"""

from __future__ import annotations

import sys
import tomllib
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core import resources
from kgforge.core.errors import SchemaError
from kgforge.core.quads import check_iri
from kgforge.core.text import normalise_label
from kgforge.core.vocab import XSD, class_iri, relation_iri, unmapped_relation_iri

RELATION_KINDS = ("entity", "literal", "text")


@dataclass(frozen=True)
class Relation:
    id: str
    zh: str
    en: str
    kind: str  # entity | literal | text
    aliases: tuple[str, ...] = ()
    range: str | None = None  # type id of entity values
    domain: str | None = None  # type id of the heads (主演's heads are stars): what types a star on import
    wikidata: tuple[str, ...] = ()  # Wikidata properties mapped onto this relation
    declared: bool = True
    datatype: str | None = None  # XSD datatype IRI of literal values (tables and JSON lines type their cells by it)
    iris: tuple[str, ...] = ()  # predicate IRIs of RDF sources mapped onto this relation
    own_iri: str | None = None  # an undeclared predicate of an RDF source, kept under its own IRI

    @property
    def iri(self) -> str:
        if self.own_iri:
            return self.own_iri
        return relation_iri(self.id) if self.declared else unmapped_relation_iri(self.zh)

    def label(self, lang: str) -> str:
        return self.en if lang.startswith("en") else self.zh


@dataclass(frozen=True)
class EntityType:
    id: str
    zh: str
    en: str
    iris: tuple[str, ...] = ()  # classes of RDF sources (rdf:type objects) mapped onto this type

    @property
    def iri(self) -> str:
        return class_iri(self.id)


@dataclass(frozen=True)
class SourceSpec:
    kind: str
    path: str
    options: dict[str, Any] = field(default_factory=dict)
    licence: str | None = None  # the terms of this source's data, as the schema states them (else its kind's)


@dataclass
class Schema:
    name: str
    version: int
    path: Path
    language: str = "zh"
    relations: dict[str, Relation] = field(default_factory=dict)
    types: dict[str, EntityType] = field(default_factory=dict)
    sources: list[SourceSpec] = field(default_factory=list)
    type_relation: str | None = None
    head_type: str | None = None
    stop_relations: tuple[str, ...] = ()
    options: dict[str, Any] = field(default_factory=dict)
    inferred: bool = False  # written by `kgforge init` or a build without a schema, not by a person
    # the merged table it was parsed from: what a build keeps, so the build reads the same when the file changes
    document: dict[str, Any] = field(default_factory=dict, repr=False, compare=False)
    _by_label: dict[str, Relation] = field(default_factory=dict, repr=False)
    _by_iri: dict[str, Relation] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        for rel in self.relations.values():
            for name in (rel.zh, rel.en, *rel.aliases):
                self._by_label.setdefault(relation_key(name), rel)
            for iri in (rel.iri, *rel.iris):
                self._by_iri.setdefault(iri, rel)

    def relation_for(self, label: str) -> Relation:
        """The relation a source calls ``label``; undeclared labels get an unmapped relation."""
        key = normalise_label(label)
        found = self._by_label.get(relation_key(label))
        if found is not None:
            return found
        return Relation(id=key, zh=key, en="", kind="literal", declared=False)

    def relation_for_iri(self, iri: str) -> Relation:
        """The relation an RDF source's predicate ``iri`` stands for: the one listing it in ``iris`` (or whose own
        IRI it is), else the declared one its local name names (``http://example.org/author`` → ``author``);
        otherwise an undeclared relation kept under ``iri`` itself."""
        found = self._by_iri.get(iri) or self._by_label.get(relation_key(local_name(iri)))
        if found is not None:
            return found
        name = local_name(iri) or iri
        return Relation(id=name, zh=name, en=name, kind="literal", declared=False, own_iri=iri)

    def type_for_class(self, iri: str) -> EntityType | None:
        """The declared type an RDF class IRI stands for (listed in its ``iris``, or named by its local name)."""
        local = normalise_label(local_name(iri)).casefold()
        for entity_type in self.types.values():
            if iri in entity_type.iris or iri == entity_type.iri:
                return entity_type
        for entity_type in self.types.values():
            if local and local in {entity_type.id.casefold(), entity_type.en.casefold(), entity_type.zh.casefold()}:
                return entity_type
        return None

    def type_for_value(self, value: str) -> EntityType | None:
        """The declared type a value of the ``type_relation`` names (its id, zh or en label)."""
        key = normalise_label(value).casefold()
        return next(
            (
                t
                for t in self.types.values()
                if key in {t.id.casefold(), normalise_label(t.zh).casefold(), t.en.casefold()}
            ),
            None,
        )

    def is_declared(self, label: str) -> bool:
        return relation_key(label) in self._by_label

    def relation_by_wikidata(self) -> dict[str, Relation]:
        return {pid: rel for rel in self.relations.values() for pid in rel.wikidata}

    def resolve_source_path(self, spec: SourceSpec) -> Path:
        """Source paths in a schema are relative to the schema file."""
        candidate = Path(spec.path).expanduser()
        return candidate if candidate.is_absolute() else (self.path.parent / candidate).resolve()


def relation_key(name: str) -> str:
    """How relation names are matched: normalised (segmentation spaces out), full-width forms as their ASCII
    (NFKC: ``Ｒａｔｉｎｇ``), and case folded, so ``Rating``, ``RATING`` and ``rating`` are one relation."""
    return normalise_label(unicodedata.normalize("NFKC", name)).casefold()


def local_name(iri: str) -> str:
    """The last segment of an IRI, after its last ``#``, ``/`` or ``:`` (``http://example.org/author`` → ``author``)."""
    for separator in ("#", "/", ":"):
        if separator in iri:
            iri = iri.rsplit(separator, 1)[1]
    return iri


def domain_schema_path(domain: str, workdir: Path) -> Path | None:
    """The schema a domain builds with: its own ``<workdir>/<domain>/schema.toml`` (what `kgforge init` writes),
    else a shipped ``schemas/<domain>.toml``; None when it has neither (the build then infers one)."""
    own = Path(workdir) / domain / DOMAIN_SCHEMA_FILE
    if own.is_file():
        return own
    return next(
        (folder / f"{domain}.toml" for folder in resources.schema_dirs() if (folder / f"{domain}.toml").is_file()), None
    )


DOMAIN_SCHEMA_FILE = "schema.toml"


def schema_path(domain_or_path: str) -> Path:
    """``travel`` → the shipped ``schemas/travel.toml``; a path to a .toml file is used as is."""
    as_path = Path(domain_or_path)
    if as_path.suffix == ".toml":
        if not as_path.is_file():
            raise SchemaError(f"schema file not found: {as_path}")
        return as_path
    for folder in resources.schema_dirs():
        candidate = folder / f"{domain_or_path}.toml"
        if candidate.is_file():
            return candidate
    known = sorted({p.stem for folder in resources.schema_dirs() for p in folder.glob("*.toml")})
    raise SchemaError(
        f"no schema for domain {domain_or_path!r}: looked for {domain_or_path}.toml in "
        f"{', '.join(str(d) for d in resources.schema_dirs())}; known domains: {', '.join(known)}"
    )


def load_schema(domain_or_path: str | Path) -> Schema:
    path = schema_path(str(domain_or_path))
    return schema_from_document(_schema_document(path), path)


def _schema_document(path: Path) -> dict[str, Any]:
    """The schema file at ``path`` as one table, with the file it ``extends`` merged in."""
    raw = _read_toml(path)
    parent = raw.pop("extends", None)
    if parent is not None:
        base = _read_toml(schema_path(_require_str(parent, path, "extends")))
        raw = _merge(base, raw)
    return raw


def schema_from_document(document: dict[str, Any], path: Path) -> Schema:
    """The schema a merged table describes; ``path`` names where it came from in messages."""
    schema = _parse(document, path)
    schema.document = document
    if schema.inferred:
        _note_inferred(schema)
    return schema


_noted: set[Path] = set()


def _note_inferred(schema: Schema) -> None:
    """Say once per schema file that what a stage works with was inferred, not written by a person."""
    if schema.path in _noted:
        return
    _noted.add(schema.path)
    print(
        f"note: the schema of domain {schema.name!r} was inferred from its data, not written by a person "
        f"({schema.path}); check it and delete its `inferred = true` line (`kgforge init {schema.name} --from FILE` "
        f"writes one to edit)",
        file=sys.stderr,
    )


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise SchemaError(f"{path}: invalid TOML: {exc}") from exc


def _merge(base: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    merged = {k: v for k, v in base.items() if k != "sources"}
    for key, value in child.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = {**merged[key], **value}
        else:
            merged[key] = value
    return merged


def _require_str(value: Any, path: Path, where: str) -> str:
    if not isinstance(value, str) or not value:
        raise SchemaError(f"{path}: {where} must be a non-empty string, got {value!r}")
    return value


def _parse(raw: dict[str, Any], path: Path) -> Schema:
    name = _require_str(raw.get("name"), path, "name")
    version = raw.get("version", 1)
    if not isinstance(version, int):
        raise SchemaError(f"{path}: version must be an integer, got {version!r}")
    relations = {rid: _parse_relation(rid, spec, path) for rid, spec in (raw.get("relations") or {}).items()}
    types = {tid: _parse_type(tid, spec, path) for tid, spec in (raw.get("types") or {}).items()}
    for rel in relations.values():
        for key, type_id in (("range", rel.range), ("domain", rel.domain)):
            if type_id is not None and type_id not in types:
                raise SchemaError(f"{path}: relations.{rel.id}.{key} names unknown type {type_id!r}")
    head_type = raw.get("head_type")
    if head_type is not None and head_type not in types:
        raise SchemaError(f"{path}: head_type names unknown type {head_type!r}")
    type_relation = raw.get("type_relation")
    if type_relation is not None and type_relation not in relations:
        raise SchemaError(f"{path}: type_relation names unknown relation {type_relation!r}")
    stop = tuple(raw.get("stop_relations", ()))
    for rid in stop:
        if rid not in relations:
            raise SchemaError(f"{path}: stop_relations names unknown relation {rid!r}")
    sources = [_parse_source(i, spec, path) for i, spec in enumerate(raw.get("sources") or [])]
    known = {
        "name",
        "version",
        "language",
        "relations",
        "types",
        "sources",
        "type_relation",
        "head_type",
        "stop_relations",
        "options",
        "description",
        "inferred",
    }
    unknown = sorted(set(raw) - known)
    if unknown:
        raise SchemaError(f"{path}: unknown top-level keys {unknown}; allowed: {sorted(known)}")
    return Schema(
        name=name,
        version=version,
        path=path,
        language=raw.get("language", "zh"),
        relations=relations,
        types=types,
        sources=sources,
        type_relation=type_relation,
        head_type=head_type,
        stop_relations=stop,
        options=dict(raw.get("options") or {}),
        inferred=raw.get("inferred") is True,
    )


def _parse_relation(rid: str, spec: Any, path: Path) -> Relation:
    where = f"relations.{rid}"
    if not isinstance(spec, dict):
        raise SchemaError(f"{path}: {where} must be a table")
    kind = spec.get("kind", "literal")
    if kind not in RELATION_KINDS:
        raise SchemaError(f"{path}: {where}.kind must be one of {RELATION_KINDS}, got {kind!r}")
    aliases = spec.get("aliases", [])
    if not isinstance(aliases, list) or not all(isinstance(a, str) for a in aliases):
        raise SchemaError(f"{path}: {where}.aliases must be a list of strings")
    wikidata = spec.get("wikidata", [])
    wikidata = [wikidata] if isinstance(wikidata, str) else wikidata
    datatype = spec.get("datatype")
    if datatype is not None:
        datatype = _check_iri(
            XSD + datatype.removeprefix("xsd:")
            if isinstance(datatype, str) and ":" not in datatype.removeprefix("xsd:")
            else datatype,
            path,
            f"{where}.datatype",
        )
    return Relation(
        id=rid,
        zh=_require_str(spec.get("zh"), path, f"{where}.zh"),
        en=_require_str(spec.get("en"), path, f"{where}.en"),
        kind=kind,
        aliases=tuple(aliases),
        range=spec.get("range"),
        domain=spec.get("domain"),
        wikidata=tuple(wikidata),
        datatype=datatype,
        iris=_iris(spec, path, where),
    )


def _parse_type(tid: str, spec: Any, path: Path) -> EntityType:
    if not isinstance(spec, dict):
        raise SchemaError(f"{path}: types.{tid} must be a table")
    return EntityType(
        id=tid,
        zh=_require_str(spec.get("zh"), path, f"types.{tid}.zh"),
        en=_require_str(spec.get("en"), path, f"types.{tid}.en"),
        iris=_iris(spec, path, f"types.{tid}"),
    )


def _iris(spec: dict[str, Any], path: Path, where: str) -> tuple[str, ...]:
    iris = spec.get("iris", [])
    if not isinstance(iris, list):
        raise SchemaError(f"{path}: {where}.iris must be a list of IRIs")
    return tuple(_check_iri(iri, path, f"{where}.iris") for iri in iris)


def _check_iri(value: Any, path: Path, where: str) -> str:
    try:
        return check_iri(_require_str(value, path, where))
    except ValueError as exc:
        raise SchemaError(f"{path}: {where}: {exc}") from None


def _parse_source(index: int, spec: Any, path: Path) -> SourceSpec:
    where = f"sources[{index}]"
    if not isinstance(spec, dict):
        raise SchemaError(f"{path}: {where} must be a table with kind and path")
    kind = _require_str(spec.get("kind"), path, f"{where}.kind")
    source_path = _require_str(spec.get("path"), path, f"{where}.path")
    options = {k: v for k, v in spec.items() if k not in ("kind", "path", "licence")}
    licence = _require_str(spec["licence"], path, f"{where}.licence") if "licence" in spec else None
    return SourceSpec(kind=kind, path=source_path, options=options, licence=licence)
