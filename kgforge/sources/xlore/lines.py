"""XLORE's dump lines, read leniently: Turtle-like triple lines and the concept-mapping TSV.

Dumps (``xlore.instance.list.ttl``, ``xlore.instance.infobox.ttl``, ``xlore.taxonomy.ttl``,
``xlore.property.list.ttl``, ``xlore.instance.reference.ttl`` …) hold one triple per line. They are
read line by line with a tolerant pattern, never by a strict Turtle parser: ``@base`` / ``@prefix``
directives are honoured, relative IRIs resolved against the base (``http://xlore.org/instance/``
when the file has none), prefixed names expanded, source tags such as ``@enwiki`` / ``@zhwiki`` /
``@baidu`` on abstracts turned into language tags with a private-use subtag that keeps the source
(``en-x-enwiki``, ``zh-x-zhwiki``, ``zh-x-baidu``), ``owl:InstanceOf`` → ``rdf:type`` and
``owl:SubClassOf`` → ``rdfs:subClassOf``. A line that cannot be read comes as a :class:`LineError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import urljoin

from kgforge.core.errors import InputError
from kgforge.core.quads import check_iri, literal_term
from kgforge.core.text import NotUtf8Error, decode_utf8
from kgforge.core.vocab import OWL, RDF_TYPE, RDFS_LABEL, RDFS_SUBCLASS_OF, XLORE
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.nt import unescape

INSTANCE = XLORE + "instance/"
CONCEPT = XLORE + "concept/"
PROPERTY = XLORE + "property/"
SCHEMA_PROPERTY = XLORE + "property#"
DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": OWL,
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "property": SCHEMA_PROPERTY,
    "skos": "http://www.w3.org/2004/02/skos/core#",
}
PREDICATE_RENAMES = {
    OWL + "InstanceOf": RDF_TYPE,
    OWL + "instanceOf": RDF_TYPE,
    OWL + "SubClassOf": RDFS_SUBCLASS_OF,
    OWL + "subClassOf": RDFS_SUBCLASS_OF,
}
SOURCE_TAGS = {"enwiki": "en-x-enwiki", "zhwiki": "zh-x-zhwiki", "baidu": "zh-x-baidu", "hudong": "zh-x-hudong"}

_DIRECTIVE = re.compile(
    r"^\s*(?:@(base|prefix)|(BASE|PREFIX))\s+(?:([A-Za-z][\w.-]*)?:\s*)?<([^>]*)>\s*\.?\s*$", re.IGNORECASE
)
_TERM = (
    r'<[^<>"\s]*>|"(?:[^"\\]|\\.)*"(?:@[A-Za-z][A-Za-z0-9-]*|\^\^(?:<[^<>\s]*>|[A-Za-z][\w.-]*:[\w.-]*))?'
    r"|[A-Za-z][\w.-]*:[^\s<>\"]*|_:\S+|a"
)
_ABSOLUTE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
_TRIPLE = re.compile(rf"^\s*({_TERM})\s+({_TERM})\s+({_TERM})\s*\.?\s*$")


@dataclass(frozen=True)
class Term:
    """An IRI (``value`` absolute) or a literal (``value`` the text, with ``lang`` or ``datatype``)."""

    value: str
    is_iri: bool
    lang: str | None = None
    datatype: str | None = None

    def nquads(self) -> str:
        """The term in N-Quads; ValueError when the store would refuse it (see ``kgforge.core.quads``)."""
        return f"<{check_iri(self.value)}>" if self.is_iri else literal_term(self.value, self.lang, self.datatype)


Triple = tuple[Term, str, Term]  # subject, predicate IRI (renamed), object


class LineError(ValueError):
    """A line the lenient reader still cannot make sense of."""


class LineReader(Protocol):
    """How one file's lines become triples."""

    changes: int  # directives read that changed what the lines after them mean

    def items(self, text: str) -> Iterator[Triple | LineError]:
        """The triples of one line (a line of the concept mapping gives several), or why it cannot be read."""


class TurtleLines:
    """Lines of an ``xlore.*.ttl`` file, read with the ``@base`` and ``@prefix`` directives met so far."""

    def __init__(self, base: str = INSTANCE, prefixes: dict[str, str] | None = None) -> None:
        self.base = base
        self.prefixes = dict(DEFAULT_PREFIXES if prefixes is None else prefixes)
        self.changes = 0

    def items(self, text: str) -> Iterator[Triple | LineError]:
        if blank_or_comment(text) or self.directive(text):
            return
        try:
            yield self.triple(text)
        except LineError as exc:
            yield exc

    def directive(self, text: str) -> bool:
        """Apply ``text`` when it is a directive line; whether it was one."""
        directive = _DIRECTIVE.match(text)
        if directive:
            self._apply(directive)
        return directive is not None

    def _apply(self, match: re.Match[str]) -> None:
        iri = self.resolve(match.group(4))
        if (match.group(1) or match.group(2)).lower() == "base":
            self.changes += iri != self.base
            self.base = iri
        else:
            name = match.group(3) or ""
            self.changes += iri != self.prefixes.get(name)
            self.prefixes[name] = iri

    def triple(self, text: str) -> Triple:
        match = _TRIPLE.match(text)
        if match is None:
            raise LineError("not a triple line (subject predicate object .)")
        subject, predicate, obj = (self.term(t) for t in match.groups())
        if not subject.is_iri or not predicate.is_iri:
            raise LineError("subject and predicate must be IRIs")
        return subject, PREDICATE_RENAMES.get(predicate.value, predicate.value), obj

    def resolve(self, iri: str) -> str:
        """An IRI as written, or resolved against ``@base`` when relative."""
        return iri if _ABSOLUTE.match(iri) else urljoin(self.base, iri)

    def term(self, token: str) -> Term:
        if token == "a":
            return Term(RDF_TYPE, True)
        if token.startswith("<"):
            return Term(self.resolve(token[1:-1]), True)
        if token.startswith("_:"):
            return Term(urljoin(self.base, ".well-known/genid/" + token[2:]), True)
        if token.startswith('"'):
            return self._literal(token)
        prefix, _, local = token.partition(":")
        if prefix not in self.prefixes:
            raise LineError(f"unknown prefix {prefix + ':'!r}")
        return Term(self.prefixes[prefix] + local, True)

    def _literal(self, token: str) -> Term:
        end = token.rindex('"')
        text = unescape(token[1:end])
        suffix = token[end + 1 :]
        if suffix.startswith("@"):
            tag = suffix[1:]
            return Term(text, False, lang=SOURCE_TAGS.get(tag.lower(), tag))
        if suffix.startswith("^^"):
            datatype = self.term(suffix[2:])
            return Term(text, False, datatype=datatype.value)
        return Term(text, False)


class ConceptLines:
    """Lines of XLore's ``dbpedia_xlore_concept.dat`` (tab-separated): DBpedia class, XLORE concept, labels
    written ``label@dbpedia``, ``label@en@xlore``, ``label@zh@xlore`` → equivalence and label triples."""

    changes = 0  # the mapping has no directives

    def items(self, text: str) -> Iterator[Triple | LineError]:
        fields = text.rstrip("\r\n").split("\t")
        if fields == [""]:
            return
        if not _ABSOLUTE.match(fields[0]):
            yield LineError("expected a DBpedia class IRI, then the XLORE concept IRI and labels")
            return
        dbpedia, concept = Term(fields[0], True), None  # classes XLore did not map have no concept
        if len(fields) > 1 and fields[1].startswith(CONCEPT):
            concept = Term(fields[1], True)
            yield concept, OWL + "equivalentClass", dbpedia
        for label in fields[2 if concept else 1 :]:
            text, _, where = label.partition("@")
            if where == "dbpedia":
                yield dbpedia, RDFS_LABEL, Term(text, False, lang="en")
            elif where in ("en@xlore", "zh@xlore") and concept is not None:
                yield concept, RDFS_LABEL, Term(text, False, lang=where[:2])
            else:
                yield LineError(f"label {label!r} is not text@dbpedia / text@en@xlore / text@zh@xlore")


def is_concept_mapping(path: Path) -> bool:
    return path.name.endswith((".dat", ".dat.gz", ".dat.bz2"))


def implied_base(path: Path, base: str | None = None) -> str:
    """``base``, else the namespace the file's name implies (``xlore.property.*`` → property/,
    ``xlore.concept.*`` → concept/, else instance/)."""
    return base or (PROPERTY if ".property." in path.name else CONCEPT if ".concept." in path.name else INSTANCE)


def line_reader(path: Path, base: str | None = None) -> LineReader:
    """A fresh reader for the lines of ``path``: relative IRIs resolve against :func:`implied_base`."""
    return ConceptLines() if is_concept_mapping(path) else TurtleLines(implied_base(path, base))


def decoded_lines(reader: DumpReader) -> Iterator[tuple[int, int, str | LineError]]:
    """``(line, byte offset, text)`` of each line; a line that is not UTF-8 comes as the LineError naming
    its bad byte (quarantined, never read with replacement characters)."""
    for line_no, offset, raw in reader:
        yield line_no, offset, decoded(raw, offset)


def decoded(raw: bytes, offset: int) -> str | LineError:
    try:
        return decode_utf8(raw, offset)
    except NotUtf8Error as exc:
        return LineError(str(exc))


def line_items(lines: LineReader, text: str | LineError) -> Iterator[Triple | LineError]:
    """What :meth:`LineReader.items` makes of a decoded line (a line that was not UTF-8: its error)."""
    return iter([text]) if isinstance(text, LineError) else lines.items(text)


def file_triples(path: Path, base: str | None = None) -> Iterator[tuple[int, int, Triple | LineError]]:
    """``(line, byte offset, triple or LineError)`` of every line of one file, directives applied as they come."""
    lines = line_reader(path, base)
    for line_no, offset, text in decoded_lines(DumpReader(Path(path), decompressor="python")):
        for item in line_items(lines, text):
            yield line_no, offset, item


def head(path: Path, base: str | None = None) -> TurtleLines:
    """What the file's leading ``@base`` / ``@prefix`` lines (XLore's generator writes them first) make of
    relative IRIs and prefixed names: the state every part of the file is read in."""
    lines = TurtleLines(implied_base(path, base))
    for _, offset, raw in DumpReader(Path(path), decompressor="python"):
        text = decoded(raw, offset)
        if isinstance(text, LineError) or not (blank_or_comment(text) or lines.directive(text)):
            break
    return lines


def blank_or_comment(text: str) -> bool:
    text = text.strip()
    return not text or text.startswith("#")


def xlore_files(path: Path) -> list[Path]:
    """A dump file, or every ``*.ttl`` (also ``.gz``/``.bz2``) file of a folder, property lists first."""
    path = Path(path)
    if path.is_file():
        return [path]
    if not path.is_dir():
        raise InputError(f"{path}: no such file or folder")
    files = sorted(p for p in path.iterdir() if p.is_file() and re.search(r"\.(ttl|nt|dat)(\.gz|\.bz2)?$", p.name))
    if not files:
        raise InputError(f"{path}: no XLORE dump files (*.ttl, *.ttl.gz, *.ttl.bz2) in this folder")
    return sorted(files, key=lambda p: (".property." not in p.name, p.name))
