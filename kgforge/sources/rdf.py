"""Source kind ``rdf``: any RDF file Oxigraph parses — N-Triples, N-Quads, Turtle, TriG, N3, RDF/XML, JSON-LD.

The syntax comes from the file's extension (``.nt .nq .ttl .trig .n3 .rdf .owl .xml .jsonld``, then
``.gz``/``.bz2`` when compressed; the compression is read from the first bytes) or the ``format`` option.
The file is streamed through ``pyoxigraph.parse``, never loaded whole. Quads of every graph land in the
source's one named graph (the graph of a quad is not kept).

What each triple becomes:

* a label predicate (``rdfs:label``, ``skos:prefLabel``, ``schema:name``, ``foaf:name``, or the schema's
  ``[options.rdf] label_predicates``) is written as ``rdfs:label``, an alias predicate (``skos:altLabel`` or
  ``alias_predicates``) as ``skos:altLabel``;
* ``rdf:type`` of a class the schema declares as a type (listed in the type's ``iris``, or named by its local
  name: ``ex:Book`` → type ``book``) becomes that type's class; other classes stay as they are;
* any other predicate maps onto the relation the schema declares for it (by ``iris`` or local name,
  ``ex:author`` → relation ``author``), or is kept under its own IRI, an undeclared relation;
* blank nodes become IRIs numbered in the order the file first mentions them (``…/entity/blank/<hash>``), so
  the same file always gives the same IRIs (the parser names anonymous ones at random).

An RDF/XML file's DOCTYPE may declare entities (``<!ENTITY owl "http://www.w3.org/2002/07/owl#">``, common in
OWL files); they are read before the parser sees the file. An entity whose value refers to another entity
(nesting: a 700-byte file can expand to gigabytes, the "billion laughs"), an external or parameter entity (a
reference to a local file or a URL), or references that would expand the file by more than
``MAX_ENTITY_EXPANSION`` bytes make the file an error naming its line, before the parser allocates anything.

Oxigraph's parsers resume after a syntax error at the next statement: a statement that does not parse (an
invalid IRI, bytes that are not UTF-8, a broken literal) is quarantined with its line and column, and the
statements around it land.
"""

from __future__ import annotations

import bz2
import gzip
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import pyoxigraph as ox

from kgforge.core.errors import InputError
from kgforge.core.quads import literal_term
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL, SKOS_ALT_LABEL, entity_iri
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.wikidata.framing import compression_of

LABEL_PREDICATES = (
    RDFS_LABEL,
    "http://www.w3.org/2004/02/skos/core#prefLabel",
    "http://schema.org/name",
    "https://schema.org/name",
    "http://xmlns.com/foaf/0.1/name",
)
ALIAS_PREDICATES = (SKOS_ALT_LABEL,)
RDF_XML_EXTENSIONS = {"owl": "rdf", "xml": "rdf"}
MAX_ERRORS_IN_PLACE = 3  # the same error this many times running: the parser is not moving on
MAX_ENTITY_EXPANSION = 16 << 20  # bytes that entity references may add to an RDF/XML file, all together
_DOCTYPE_HEAD = 1 << 20  # the internal subset comes before the root element: this much of the file holds it
_ENTITY = re.compile(rb"<!ENTITY\s+(%\s*)?([^\s\"'>]+)\s*(\"[^\"]*\"|'[^']*'|[^>]*)", re.DOTALL)
_REFERENCE = re.compile(rb"&([A-Za-z_:][\w.:-]*);")


@dataclass(frozen=True)
class RdfOptions:
    """``[options.rdf]`` of a schema, or an ``rdf`` source's own settings."""

    format: str | None = None
    """The syntax, as an extension (``ttl``, ``nt``, ``rdf``) or a media type; default: from the file's name."""
    base_iri: str | None = None
    """The IRI relative IRIs in the file are resolved against."""
    label_predicates: tuple[str, ...] = ()
    """Predicates written as ``rdfs:label``; default: rdfs:label, skos:prefLabel, schema:name, foaf:name."""
    alias_predicates: tuple[str, ...] = ()
    """Predicates written as ``skos:altLabel``; default: skos:altLabel."""


@register(
    "rdf",
    "RDF file of any syntax Oxigraph reads (.nt .nq .ttl .trig .n3 .rdf/.owl .jsonld, also .gz/.bz2; "
    "or the format option), streamed; predicates mapped onto the schema's relations where declared",
    suffixes=(".nt", ".nq", ".ttl", ".trig", ".n3", ".rdf", ".owl", ".jsonld"),
)
def import_rdf(ctx: ImportContext) -> None:
    settings = ctx.settings("rdf", RdfOptions)
    labels = set(settings.label_predicates or LABEL_PREDICATES)
    aliases = set(settings.alias_predicates or ALIAS_PREDICATES)
    fmt = rdf_format(ctx.path, settings.format)
    schema, writer = ctx.schema, ctx.writer
    used_labels: dict[str, int] = {}
    blanks: dict[str, str] = {}
    ctx.options["format"] = fmt.file_extension
    if fmt == ox.RdfFormat.RDF_XML:
        check_xml_entities(ctx.path)
    with _opened(ctx.path) as stream:
        for n, triple in enumerate(_parsed(ctx, ox.parse(stream, fmt, base_iri=settings.base_iri)), 1):
            ctx.location = f"statement {n}"
            s, p, o = _node(ctx, triple.subject, blanks), triple.predicate.value, triple.object
            if s is None or (obj := _object_term(ctx, o, blanks)) is None:
                continue
            if p in labels or p in aliases:
                used_labels[p] = used_labels.get(p, 0) + 1
                writer.term(s, RDFS_LABEL if p in labels else SKOS_ALT_LABEL, obj)
            elif p == RDF_TYPE and isinstance(o, ox.NamedNode) and (declared := schema.type_for_class(o.value)):
                writer.iri(s, RDF_TYPE, declared.iri)
            else:
                relation = schema.relation_for_iri(p)
                ctx.relations_used.add(relation)
                writer.term(s, relation.iri, obj)
            ctx.accept()
    ctx.options["label_predicates"] = sorted(p for p in used_labels if p in labels)
    ctx.options["alias_predicates"] = sorted(p for p in used_labels if p in aliases)


def rdf_format(path: Path, name: str | None = None) -> ox.RdfFormat:
    """The syntax named by ``name`` (an extension or media type) or by the file's extension."""
    suffixes = [s.lstrip(".").lower() for s in path.suffixes if s.lower() not in (".gz", ".bz2")]
    wanted = name or (suffixes[-1] if suffixes else "")
    wanted = RDF_XML_EXTENSIONS.get(wanted, wanted)
    found = ox.RdfFormat.from_extension(wanted) or ox.RdfFormat.from_media_type(wanted)
    if found is None:
        raise InputError(
            f"{path}: cannot tell the RDF syntax from {wanted!r}; name a file .nt .nq .ttl .trig .n3 "
            f".rdf .jsonld, or give the format option"
        )
    return found


@contextmanager
def _opened(path: Path) -> Iterator[IO[bytes]]:
    opener: Any = {"gz": gzip.open, "bz2": bz2.open}.get(compression_of(path), open)
    with opener(path, "rb") as stream:
        yield stream


def check_xml_entities(path: Path) -> None:
    """InputError naming the line when the entities an XML file declares could expand it past
    :data:`MAX_ENTITY_EXPANSION` (nested, external or parameter entities, or too many references)."""
    with _opened(path) as stream:
        head = stream.read(_DOCTYPE_HEAD)
    values: dict[bytes, int] = {}
    for match in _ENTITY.finditer(head):
        line = head.count(b"\n", 0, match.start()) + 1
        parameter, name, value = match.group(1), match.group(2), match.group(3)
        where = f"{path}: line {line}: the DOCTYPE's entity {name.decode('utf-8', 'replace')!r}"
        if parameter or value[:1] not in (b'"', b"'"):
            raise InputError(
                f"{where} is a parameter or external entity (it would read another file or a URL); "
                "such files are not read"
            )
        if _REFERENCE.search(value) or b"%" in value:
            raise InputError(
                f"{where} refers to other entities; nested entities can expand a small file to "
                'gigabytes ("billion laughs"), so the file is not read'
            )
        values[name] = len(value) - 2
    if not values:
        return
    expansion, line = 0, 1
    with _opened(path) as stream:
        for chunk in iter(lambda: stream.readline(1 << 20), b""):
            expansion += sum(values.get(ref.group(1), 0) for ref in _REFERENCE.finditer(chunk))
            if expansion > MAX_ENTITY_EXPANSION:
                raise InputError(
                    f"{path}: line {line}: its entity references would add more than "
                    f"{MAX_ENTITY_EXPANSION >> 20} MiB to the file; it is not read"
                )
            line += chunk.endswith(b"\n")


def _parsed(ctx: ImportContext, parser: Iterator[ox.Quad]) -> Iterator[ox.Quad]:
    """The parser's quads; each syntax error quarantined with its place, parsing resumed after it."""
    last, repeats = None, 0
    while True:
        try:
            yield next(parser)
            repeats = 0
        except StopIteration:
            return
        except (SyntaxError, OSError, EOFError) as exc:
            where = _error_place(exc)
            repeats = repeats + 1 if (where, str(exc)) == last else 1
            last = (where, str(exc))
            if repeats >= MAX_ERRORS_IN_PLACE or not isinstance(exc, SyntaxError):
                ctx.reject(where, f"the parser cannot go on ({exc}); the rest of the file is not read")
                return
            ctx.reject(
                where, f"not {ctx.options.get('format') or 'RDF'}: {exc.msg if isinstance(exc, SyntaxError) else exc}"
            )


def _error_place(exc: BaseException) -> str:
    if isinstance(exc, SyntaxError) and exc.lineno:
        return f"line {exc.lineno}" + (f" column {exc.offset}" if exc.offset else "")
    return "end of file"


def _node(ctx: ImportContext, term: Any, blanks: dict[str, str]) -> str | None:
    """A subject as an IRI (blank nodes numbered for the file); None (quarantined) for a quoted triple."""
    if isinstance(term, ox.NamedNode):
        return term.value
    if isinstance(term, ox.BlankNode):
        if term.value not in blanks:
            blanks[term.value] = entity_iri(f"{ctx.path.name}#{len(blanks)}", "blank")
        return blanks[term.value]
    ctx.reject(ctx.location, f"a quoted triple (RDF 1.2) is not supported as a subject or object: {term}")
    return None


def _object_term(ctx: ImportContext, term: Any, blanks: dict[str, str]) -> str | None:
    if isinstance(term, ox.Literal):
        try:
            return literal_term(term.value, term.language, term.datatype.value if not term.language else None)
        except ValueError as exc:
            ctx.reject(ctx.location, f"literal refused: {exc}", term.value[:200])
            return None
    node = _node(ctx, term, blanks)
    return f"<{node}>" if node else None
