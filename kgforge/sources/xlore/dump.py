"""XLORE (the English–Chinese knowledge graph): its Turtle-like dumps, read leniently, and its web API.

Dumps (``xlore.instance.list.ttl``, ``xlore.instance.infobox.ttl``, ``xlore.taxonomy.ttl``,
``xlore.property.list.ttl``, ``xlore.instance.reference.ttl`` …) hold one triple per line. They are
read line by line with a tolerant pattern, never by a strict Turtle parser: ``@base`` / ``@prefix``
directives are honoured, relative IRIs resolved against the base (``http://xlore.org/instance/``
when the file has none), prefixed names expanded, source tags such as ``@enwiki`` / ``@zhwiki`` /
``@baidu`` on abstracts turned into language tags with a private-use subtag that keeps the source
(``en-x-enwiki``, ``zh-x-zhwiki``, ``zh-x-baidu``), ``owl:InstanceOf`` → ``rdf:type`` and
``owl:SubClassOf`` → ``rdfs:subClassOf``. A line that cannot be read is quarantined with its
file, line and byte offset; the others still land.

The web API client caches every good JSON reply on disk, keeps a minimum interval between requests,
and recognises the daily-quota reply (``当天访问次数到达上限``), which it raises and never caches.
"""

from __future__ import annotations

import re
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urljoin

import requests

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.jsonio import loads
from kgforge.core.quads import check_iri, literal_term
from kgforge.core.text import NotUtf8Error, decode_utf8
from kgforge.core.vocab import (
    OWL,
    RDF_TYPE,
    RDFS_LABEL,
    RDFS_SUBCLASS_OF,
    XLORE,
    class_iri,
)
from kgforge.crawl.cache import CachedResponse, ResponseCache
from kgforge.sources.matching import Linker, Named, name_key
from kgforge.sources.wikidata.entity import IndexRecord
from kgforge.sources.wikidata.framing import DumpReader
from kgforge.sources.wikidata.nt import unescape
from kgforge.sources.options import FLAT
from kgforge.sources.wikidata.select import SeedSelection, expand

INSTANCE = XLORE + "instance/"
CONCEPT = XLORE + "concept/"
PROPERTY = XLORE + "property/"
SCHEMA_PROPERTY = XLORE + "property#"
DEFAULT_PREFIXES = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#", "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "owl": OWL, "xsd": "http://www.w3.org/2001/XMLSchema#", "property": SCHEMA_PROPERTY,
    "skos": "http://www.w3.org/2004/02/skos/core#",
}
PREDICATE_RENAMES = {OWL + "InstanceOf": RDF_TYPE, OWL + "instanceOf": RDF_TYPE, OWL + "SubClassOf": RDFS_SUBCLASS_OF,
                     OWL + "subClassOf": RDFS_SUBCLASS_OF}
SOURCE_TAGS = {"enwiki": "en-x-enwiki", "zhwiki": "zh-x-zhwiki", "baidu": "zh-x-baidu", "hudong": "zh-x-hudong"}
QUOTA_TEXT = "当天访问次数到达上限"

_DIRECTIVE = re.compile(r"^\s*(?:@(base|prefix)|(BASE|PREFIX))\s+(?:([A-Za-z][\w.-]*)?:\s*)?<([^>]*)>\s*\.?\s*$",
                        re.IGNORECASE)
_TERM = (r'<[^<>"\s]*>|"(?:[^"\\]|\\.)*"(?:@[A-Za-z][A-Za-z0-9-]*|\^\^(?:<[^<>\s]*>|[A-Za-z][\w.-]*:[\w.-]*))?'
         r"|[A-Za-z][\w.-]*:[^\s<>\"]*|_:\S+|a")
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


class LineError(ValueError):
    """A line the lenient reader still cannot make sense of."""


def decoded_lines(reader: DumpReader) -> Iterator[tuple[int, int, str | LineError]]:
    """``(line, byte offset, text)`` of each line; a line that is not UTF-8 comes as the LineError naming
    its bad byte (quarantined, never read with replacement characters)."""
    for line_no, offset, raw in reader:
        try:
            yield line_no, offset, decode_utf8(raw, offset)
        except NotUtf8Error as exc:
            yield line_no, offset, LineError(str(exc))


class XloreReader:
    """Triples of one XLORE dump file, with the directives of that file applied as they come."""

    def __init__(self, path: Path, base: str = INSTANCE) -> None:
        self.path = Path(path)
        self.base = base
        self.prefixes = dict(DEFAULT_PREFIXES)
        self.reader = DumpReader(self.path, decompressor="python")

    def __iter__(self) -> Iterator[tuple[int, int, tuple[Term, str, Term] | LineError]]:
        """``(line, byte offset, (subject, predicate IRI, object) or the LineError)``."""
        for line_no, offset, text in decoded_lines(self.reader):
            if isinstance(text, LineError):
                yield line_no, offset, text
                continue
            text = text.strip()
            if not text or text.startswith("#"):
                continue
            directive = _DIRECTIVE.match(text)
            if directive:
                self._directive(directive)
                continue
            try:
                yield line_no, offset, self.triple(text)
            except LineError as exc:
                yield line_no, offset, exc

    def _directive(self, match: re.Match[str]) -> None:
        kind = (match.group(1) or match.group(2)).lower()
        iri = self.resolve(match.group(4))
        if kind == "base":
            self.base = iri
        else:
            self.prefixes[match.group(3) or ""] = iri

    def triple(self, text: str) -> tuple[Term, str, Term]:
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
        suffix = token[end + 1:]
        if suffix.startswith("@"):
            tag = suffix[1:]
            return Term(text, False, lang=SOURCE_TAGS.get(tag.lower(), tag))
        if suffix.startswith("^^"):
            datatype = self.term(suffix[2:])
            return Term(text, False, datatype=datatype.value)
        return Term(text, False)


class ConceptMappingReader:
    """XLore's ``dbpedia_xlore_concept.dat`` (tab-separated): DBpedia class, XLORE concept, labels
    written ``label@dbpedia``, ``label@en@xlore``, ``label@zh@xlore`` → equivalence and label triples."""

    def __init__(self, path: Path) -> None:
        self.reader = DumpReader(Path(path), decompressor="python")

    def __iter__(self) -> Iterator[tuple[int, int, tuple[Term, str, Term] | LineError]]:
        for line_no, offset, text in decoded_lines(self.reader):
            if isinstance(text, LineError):
                yield line_no, offset, text
                continue
            fields = text.rstrip("\r\n").split("\t")
            if fields == [""]:
                continue
            if not _ABSOLUTE.match(fields[0]):
                yield line_no, offset, LineError("expected a DBpedia class IRI, then the XLORE concept IRI and labels")
                continue
            dbpedia, concept = Term(fields[0], True), None  # classes XLore did not map have no concept
            if len(fields) > 1 and fields[1].startswith(CONCEPT):
                concept = Term(fields[1], True)
                yield line_no, offset, (concept, OWL + "equivalentClass", dbpedia)
            for label in fields[2 if concept else 1:]:
                text, _, where = label.partition("@")
                if where == "dbpedia":
                    yield line_no, offset, (dbpedia, RDFS_LABEL, Term(text, False, lang="en"))
                elif where in ("en@xlore", "zh@xlore") and concept is not None:
                    yield line_no, offset, (concept, RDFS_LABEL, Term(text, False, lang=where[:2]))
                else:
                    yield line_no, offset, LineError(f"label {label!r} is not text@dbpedia / text@en@xlore / text@zh@xlore")


def reader_for(path: Path, base: str | None = None) -> XloreReader | ConceptMappingReader:
    """The reader for one file; relative IRIs resolve against ``base``, else against the namespace the
    file's name implies (``xlore.property.*`` → property/, ``xlore.concept.*`` → concept/, else instance/)."""
    if path.name.endswith((".dat", ".dat.gz", ".dat.bz2")):
        return ConceptMappingReader(path)
    implied = PROPERTY if ".property." in path.name else CONCEPT if ".concept." in path.name else INSTANCE
    return XloreReader(path, base or implied)


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


# --- web API ---------------------------------------------------------------------------------

class XloreQuotaError(KgforgeError):
    """The XLORE API answered with its daily-quota text: stop for today (nothing was cached)."""


class XloreApiError(KgforgeError):
    """The XLORE API failed or answered something that is not JSON."""


class XloreClient:
    """GET requests to the XLORE API, cached on disk, at most one per ``min_interval`` seconds."""

    def __init__(self, cache_dir: Path, base_url: str = "http://api.xlore.org", min_interval: float = 1.0,
                 timeout: float = 30.0, retries: int = 2, session: requests.Session | None = None) -> None:
        self.cache = ResponseCache(cache_dir)
        self.base_url = base_url.rstrip("/")
        self.min_interval, self.timeout, self.retries = min_interval, timeout, retries
        self.session = session or requests.Session()
        self._last = 0.0
        self.requests_made = 0

    def url(self, path: str, params: dict[str, str]) -> str:
        return f"{self.base_url}/{path.lstrip('/')}?{urlencode(params)}"

    def get(self, path: str, **params: str) -> Any:
        """The JSON reply to ``path?params`` — from the cache when there, else fetched and cached."""
        url = self.url(path, params)
        cached = self.cache.get(url)
        if cached is not None:
            return loads(cached.body)
        body = self._fetch(url)
        text = body.decode("utf-8", "replace")
        if QUOTA_TEXT in text:
            raise XloreQuotaError(f"{url}: the XLORE API says its daily quota is used up ({QUOTA_TEXT}); "
                                  "try again tomorrow — cached replies stay usable")
        try:
            data = loads(text)
        except ValueError as exc:
            raise XloreApiError(f"{url}: reply is not JSON ({exc}): {text[:200]!r}") from None
        self.cache.put(CachedResponse(url=url, final_url=url, status=200, headers={}, body=body,
                                      fetched_at=time.time()))
        return data

    def _fetch(self, url: str) -> bytes:
        problem = ""
        for attempt in range(self.retries + 1):
            wait = self.min_interval - (time.monotonic() - self._last)
            if wait > 0:
                time.sleep(wait)
            self._last = time.monotonic()
            self.requests_made += 1
            try:
                response = self.session.get(url, timeout=self.timeout)
            except requests.RequestException as exc:
                problem = f"{type(exc).__name__}: {exc}"
            else:
                if response.status_code == 200:
                    return response.content
                problem = f"HTTP {response.status_code}"
                if response.status_code < 500 and response.status_code != 429:
                    break
            time.sleep(min(2 ** attempt * self.min_interval, 30))
        raise XloreApiError(f"{url}: {problem} (after {attempt + 1} attempt(s))")

    def search_instances(self, word: str) -> list[dict[str, Any]]:
        """``/query?instances=word`` → the ``Instances`` list (``Label``, ``Uri``, ``Related Instances``)."""
        reply = self.get("query", instances=word)
        instances = reply.get("Instances") if isinstance(reply, dict) else None
        return instances if isinstance(instances, list) else []


# --- dump import -----------------------------------------------------------------------------

@dataclass(frozen=True)
class XloreOptions:
    """``[options.xlore]`` of a schema, or an ``xlore`` / ``xlore-api`` source's own settings."""

    selection: SeedSelection = field(default_factory=SeedSelection, metadata=FLAT)
    """``seeds``, ``seed_names``, ``hops``, ``fanout_cap``: the subgraph to keep (default: the whole dump)."""
    classes: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """Schema type → the XLORE concept IRIs whose instances are of that type (``owl:InstanceOf`` → ``rdf:type``)."""
    base: str | None = None
    """The IRI relative IRIs in the dump are resolved against."""
    base_url: str = "http://api.xlore.org"
    """The XLORE web API (``xlore-api``)."""
    min_interval: float = 1.0
    """Seconds between two API requests (``xlore-api``)."""
    language: str | None = None
    """The language tag of labels from the API (``xlore-api``); default: the schema's language."""


def seed_iri(seed: str) -> str:
    """``bdi809358`` or ``http://xlore.org/instance/bdi809358`` → the instance IRI."""
    return seed if "://" in seed else INSTANCE + seed


class XloreImport:
    """One XLORE source: every triple, or the N-hop neighbourhood of seeds (two passes over the files)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.options = ctx.settings("xlore", XloreOptions)
        self.files = xlore_files(ctx.path)
        self.relations = {rel.iri: rel for rel in ctx.schema.relations.values()}
        self.property_map: dict[str, str] = {}  # XLORE infobox property IRI → domain relation IRI
        self.classes = {iri: class_iri(type_id) for type_id, iris in self.options.classes.items()
                        for iri in iris}

    def triples(self) -> Iterator[tuple[str, Term, str, Term]]:
        """``(location, subject, predicate, object)`` of every readable line; bad lines are quarantined."""
        for path in self.files:
            for line, offset, item in reader_for(path, self.options.base):
                location = f"{path.name} line {line} (byte {offset})"
                if isinstance(item, LineError):
                    self.ctx.reject(location, str(item))
                    continue
                subject, predicate, obj = item
                yield location, subject, predicate, obj

    def run(self) -> None:
        self._read_property_labels()
        wanted = self._select() if self.options.selection.seeded else None
        held: list[tuple[str, Term, str, Term]] = []  # concept/property triples, kept if referenced
        referenced: set[str] = set()
        for location, subject, predicate, obj in self.triples():
            if wanted is None or subject.value in wanted:
                self._emit(location, subject, predicate, obj)
                if obj.is_iri:
                    referenced.add(obj.value)
                referenced.add(predicate)
            elif wanted is not None and not subject.value.startswith(INSTANCE):
                held.append((location, subject, predicate, obj))
        for location, subject, predicate, obj in held:
            if subject.value in referenced:
                self._emit(location, subject, predicate, obj)

    def _read_property_labels(self) -> None:
        """``<property/P> rdfs:label "导演"@zh`` → P is mapped onto the schema relation of that label."""
        label_iri = RDFS_LABEL
        for path in self.files:
            if ".property." not in path.name:
                continue
            for _, _, item in reader_for(path, self.options.base):
                if isinstance(item, LineError) or item[1] != label_iri or item[2].is_iri:
                    continue
                subject, _, label = item
                if self.ctx.schema.is_declared(label.value):
                    self.property_map[subject.value] = self.ctx.schema.relation_for(label.value).iri

    def _emit(self, location: str, subject: Term, predicate: str, obj: Term) -> None:
        predicate = self.property_map.get(predicate, predicate)
        try:
            self.ctx.writer.term(check_iri(subject.value), check_iri(predicate), obj.nquads())
            if predicate == RDF_TYPE and obj.value in self.classes:
                self.ctx.writer.iri(subject.value, RDF_TYPE, self.classes[obj.value])
        except ValueError as exc:  # UnicodeEncodeError included
            self.ctx.reject(location, f"bad triple: {exc}")
            return
        if predicate in self.relations:
            self.ctx.relations_used.add(self.relations[predicate])
        self.ctx.accept()

    def _select(self) -> set[str]:
        selection = self.options.selection
        linker = Linker(Named(n, (n,)) for n in selection.named())
        label_iri = RDFS_LABEL
        folder = Path(self.ctx.workdir) / "raw" / "xlore" if self.ctx.workdir else Path(tempfile.mkdtemp())
        edges = folder / f"{self.ctx.path.name}.edges"
        edges.parent.mkdir(parents=True, exist_ok=True)
        known: set[str] = set()
        with open(edges, "w", encoding="utf-8") as out:
            for _, subject, predicate, obj in self.triples():
                if not subject.value.startswith(INSTANCE):
                    continue
                known.add(subject.value)
                if obj.is_iri and obj.value.startswith(INSTANCE) and predicate != RDF_TYPE:
                    out.write(f"{subject.value}\t{obj.value}\n")
                elif predicate == label_iri and not obj.is_iri:
                    linker.offer(Named(subject.value, (obj.value,)))
        seeds = {seed_iri(s) for s in selection.seeds}
        for missing in sorted(seeds - known):
            self.ctx.reject(f"seed {missing}", "seed instance is not in the dump")
        seeds &= known
        report = linker.report()
        for name, iris in report.ambiguous.items():
            self.ctx.reject(f"seed name {name!r}", f"ambiguous: {len(iris)} instances carry this name, none chosen",
                            {"candidates": iris})
        self.ctx.counts["seed_names_unmatched"] = len(report.unmatched)
        seeds |= set(report.linked.values())
        if not seeds:
            raise InputError(f"{self.ctx.path}: no seed instance found (seeds and seed_names matched nothing)")

        def records() -> Iterator[IndexRecord]:
            with open(edges, encoding="utf-8") as handle:
                for text in handle:
                    source, target = text.rstrip("\n").split("\t")
                    yield IndexRecord(source, [target], [], [], [], [])

        expansion = expand(records, seeds, selection.hops, selection.fanout_cap or None)
        for hop, level in enumerate(expansion.levels):
            self.ctx.counts[f"hop_{hop}_entities"] = len(level)
        self.ctx.counts["selected_entities"] = len(expansion.entities)
        self.ctx.counts["fanout_capped_nodes"] = len(expansion.capped)
        edges.unlink()
        return expansion.entities


def import_xlore_dump(ctx: Any) -> None:
    XloreImport(ctx).run()


# --- API import ------------------------------------------------------------------------------

def seed_names_of(path: Path, reject: Callable[[str, str], None]) -> list[str]:
    """``xlore-api:PATH``: a file with one name per line (a line that is not UTF-8 goes to ``reject(location,
    reason)``), or the names themselves, comma-separated."""
    if path.is_file():
        names = []
        for line_no, _, text in decoded_lines(DumpReader(path, decompressor="python")):
            if isinstance(text, LineError):
                reject(f"line {line_no}", str(text))
            else:
                names.append(text)
    else:
        names = re.split(r"[,，]", str(path))
    return [n.strip() for n in names if n.strip()]


def import_xlore_api(ctx: Any) -> None:
    """Seeds looked up by name in the XLORE API, then their related instances, ``hops`` deep.

    A name is resolved when exactly one returned instance carries it (after normalisation);
    otherwise it is reported (ambiguous with the candidates, or not found) and not followed.
    Replies are cached under ``raw/xlore-api/``, so a run stopped by the daily quota continues
    from the cache the next day.
    """
    options = ctx.settings("xlore", XloreOptions)
    cache = Path(ctx.workdir) / "raw" / "xlore-api" if ctx.workdir else Path(tempfile.mkdtemp())
    client = XloreClient(cache, options.base_url, options.min_interval)
    lang = options.language or ctx.schema.language
    hops, cap = options.selection.hops, options.selection.fanout_cap
    resolved: dict[str, str] = {}  # name key → instance IRI
    related: dict[str, list[str]] = {}  # instance IRI → related names (capped)
    frontier = seed_names_of(Path(ctx.path), ctx.reject)
    for _ in range(hops + 1):
        next_names: list[str] = []
        for name in frontier:
            if name_key(name) in resolved:
                continue
            found = _resolve(ctx, client, name)
            if found is None:
                continue
            iri = found["Uri"]
            resolved[name_key(name)] = iri
            ctx.writer.literal(iri, RDFS_LABEL, found["Label"], lang=lang)
            names = [r["Label"] for r in found.get("Related Instances") or [] if isinstance(r, dict) and r.get("Label")]
            related[iri] = names[:cap]
            ctx.counts["fanout_capped_nodes"] += len(names) > cap
            next_names += related[iri]
            ctx.accept()
        frontier = next_names
    for iri, names in related.items():
        for name in names:
            if name_key(name) in resolved:
                ctx.writer.iri(iri, SCHEMA_PROPERTY + "hasReferedTo", resolved[name_key(name)])
    ctx.counts["api_requests"] = client.requests_made


def _resolve(ctx: Any, client: XloreClient, name: str) -> dict[str, Any] | None:
    where = client.url("query", {"instances": name})
    try:
        replies = client.search_instances(name)
    except XloreApiError as exc:  # this name's reply only (the daily quota still stops the run)
        ctx.reject(where, f"unusable reply: {exc}")
        return None
    instances = [i for i in replies
                 if isinstance(i, dict) and isinstance(i.get("Label"), str) and isinstance(i.get("Uri"), str)]
    exact = [i for i in instances if name_key(i["Label"]) == name_key(name)]
    if len(exact) == 1 and exact[0]["Uri"].startswith(XLORE):
        try:
            check_iri(exact[0]["Uri"])
            literal_term(exact[0]["Label"])
        except (ValueError, UnicodeEncodeError) as exc:
            ctx.reject(where, f"unusable instance: {exc}", exact[0])
            return None
        return exact[0]
    if len(exact) > 1:
        ctx.reject(where, f"ambiguous: {len(exact)} instances are named {name!r}",
                   {"candidates": [i["Uri"] for i in exact]})
    else:
        ctx.counts["names_not_found"] += 1
    return None
