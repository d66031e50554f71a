"""Cross-site merging and bilingual names, decided in one place.

Records of the same type and the same normalised Chinese name are one entity, unless they
disagree on a disambiguator (a film's year, a person's date of birth): then each disambiguator
value is its own entity and records without one stay apart, and the case is reported. A single
entity gets the ``name`` IRI the dialogue corpora (KdConv, DuConv) use, so crawled and corpus
knowledge about "霸王别姬" meet; split ones get an IRI keyed by name and disambiguator.

An English name is accepted (``rdfs:label@en``) when at least ``min_sites`` sites give the same
one, as DuRecDial 2.0 did; otherwise every candidate is kept as ``skos:altLabel@en`` and the
entity is listed in the report.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kgforge.core.records import Record as Report  # Record here is a crawled record
from kgforge.core.text import normalise_label
from kgforge.core.vocab import entity_iri
from kgforge.crawl.spec import Record

_YEAR = re.compile(r"(1[89]\d\d|20\d\d)")
_DATE = re.compile(r"(1[89]\d\d|20\d\d)-\d\d-\d\d")
DISAMBIGUATORS = {"release_date": _YEAR, "birth_date": _DATE}


@dataclass(frozen=True)
class AcceptedName(Report):
    """An English name at least ``min_sites`` sites agree on (``rdfs:label@en``)."""

    entity: str
    name: str
    english: str
    sites: tuple[str, ...]  # the sites giving an English name


@dataclass(frozen=True)
class UnresolvedName(Report):
    """An entity whose English candidates no two sites agree on: each kept as ``skos:altLabel@en``."""

    entity: str
    name: str
    type: str
    candidates: dict[str, str]  # site -> English name
    decision: str = "kept as alternative labels"


@dataclass(frozen=True)
class MergedAcrossSites(Report):
    """An entity more than one site describes."""

    entity: str
    name: str
    sites: tuple[str, ...]
    urls: tuple[str, ...]


@dataclass(frozen=True)
class NamesReport(Report):
    """What merging decided about names, as the crawl's names report writes it."""

    english_accepted: tuple[AcceptedName, ...]
    english_unresolved: tuple[UnresolvedName, ...]
    merged_across_sites: tuple[MergedAcrossSites, ...]
    ambiguous_names: tuple[dict[str, Any], ...]  # name, type and the disambiguator values it was split by


@dataclass
class MergedEntity:
    iri: str
    name: str
    entity_type: str
    records: list[Record] = field(default_factory=list)
    english: str | None = None  # accepted English name
    english_candidates: dict[str, str] = field(default_factory=dict)  # site → English name


@dataclass
class Merge:
    entities: list[MergedEntity]
    by_url: dict[str, MergedEntity]
    ambiguous: list[dict[str, Any]] = field(default_factory=list)

    def report(self) -> NamesReport:
        """The names report (written beside the crawl, ``names_report.json``): English names accepted and left
        unresolved, entities merged across sites, and names split by a disambiguator."""
        return NamesReport(
            english_accepted=tuple(
                AcceptedName(e.iri, e.name, e.english, tuple(sorted(e.english_candidates)))
                for e in self.entities
                if e.english
            ),
            english_unresolved=tuple(
                UnresolvedName(e.iri, e.name, e.entity_type, e.english_candidates)
                for e in self.entities
                if e.english_candidates and e.english is None
            ),
            merged_across_sites=tuple(
                MergedAcrossSites(
                    e.iri, e.name, tuple(sorted({r.site for r in e.records})), tuple(r.url for r in e.records)
                )
                for e in self.entities
                if len({r.site for r in e.records}) > 1
            ),
            ambiguous_names=tuple(self.ambiguous),
        )


def disambiguator(record: Record) -> str:
    for fact in record.facts:
        pattern = DISAMBIGUATORS.get(fact.relation)
        match = pattern.search(fact.value) if pattern else None
        if match:
            return match.group(1) if pattern is _YEAR else match.group(0)
    return ""


def english_key(name: str) -> str:
    return re.sub(r"[\W_]+", " ", name.casefold()).strip()


def merge(records: list[Record], min_sites: int = 2) -> Merge:
    """Group ``records`` (from every crawled site of a domain) into entities."""
    groups: dict[tuple[str, str], list[Record]] = defaultdict(list)
    for record in records:
        if record.name:
            groups[(record.entity_type, normalise_label(record.name))].append(record)
    result = Merge([], {})
    for (entity_type, name), members in groups.items():
        by_value: dict[str, list[Record]] = defaultdict(list)
        for record in members:
            by_value[disambiguator(record)].append(record)
        values = sorted(v for v in by_value if v)
        if len(values) <= 1:
            clusters = {"": members}
        else:
            clusters = dict(by_value)
            result.ambiguous.append(
                {"name": name, "type": entity_type, "values": values, "urls": [r.url for r in members]}
            )
        for value, cluster in clusters.items():
            iri = entity_iri(name) if not value else entity_iri(f"{entity_type}|{name}|{value}", "crawl")
            entity = MergedEntity(iri, name, entity_type, cluster)
            _decide_english(entity, min_sites)
            result.entities.append(entity)
            for record in cluster:
                result.by_url[record.url] = entity
    return result


def _decide_english(entity: MergedEntity, min_sites: int) -> None:
    votes: dict[str, set[str]] = defaultdict(set)
    for record in entity.records:
        if record.name_en:
            entity.english_candidates.setdefault(record.site, record.name_en)
    for site, name in entity.english_candidates.items():
        votes[english_key(name)].add(site)
    agreed = [key for key, sites in votes.items() if len(sites) >= min_sites]
    if len(agreed) == 1:
        entity.english = next(n for n in entity.english_candidates.values() if english_key(n) == agreed[0])
