"""Names of one thing in two languages, aligned across sources: ``kgforge align DOMAIN --lang en``.

A thing is aligned when one entity carries names in both languages (a ``name_en`` column, a Wikidata item's
labels, a reviewed translation), or when an entity named only in the other language is ``owl:sameAs`` one
named in the domain's (``kgforge link``). The rest are matched by name: an entity named only in ``language``
(as an English corpus names its entities) whose name is the ``language`` name of exactly one entity that has
both, is that entity, when their types agree (same class, or one of them untyped). Several such entities
make the name *ambiguous* (every candidate is listed; none is chosen); none makes it *missing*.

The name matches are published, with ``--write``, as ``owl:sameAs`` in the graph ``graph/derived/aligned/<lang>``
(kind ``aligned``), which the exports and goals read as they read ``kgforge link``'s links.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.files import write_json_atomic
from kgforge.core.quads import QuadWriter, check_lang
from kgforge.core.text import normalise_label
from kgforge.core.vocab import CLASS, OWL_SAME_AS, graph_iri
from kgforge.publish.transaction import add_graphs, extending
from kgforge.store.languages import in_language, language_labels
from kgforge.store.layout import (
    DomainPaths,
    staged_build,
)
from kgforge.store.manifest import GraphEntry
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

SHOWN = 50  # examples of each list kept in the report (the file has them all)


@dataclass(frozen=True)
class AlignmentReport:
    domain: str
    language: str  # the other language
    base_language: str  # the domain's
    entities: int  # entities the domain's facts use
    both: int  # with a name in each language on the entity itself
    linked: int  # named in one language, its owl:sameAs partner in the other
    matched: int  # aligned by name (type-checked) in this run
    type_rejected: int  # name matches refused because the types differ
    ambiguous: dict[str, list[str]]  # name → the entities it could be
    missing: dict[str, list[str]]  # a language → the names (in the other one) that have none in it
    report_file: Path
    graph: str | None  # the published alignment graph (with ``write``)

    def as_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["report_file"] = str(self.report_file)
        data["ambiguous"] = dict(list(self.ambiguous.items())[:SHOWN])
        data["missing"] = {lang: names[:SHOWN] for lang, names in self.missing.items()}
        data["ambiguous_count"] = len(self.ambiguous)
        data["missing_count"] = {lang: len(names) for lang, names in self.missing.items()}
        return data


def align_languages(snapshot: Snapshot, language: str = "en", write: bool = False) -> AlignmentReport:
    """Align the names of ``snapshot``'s build in its own language and ``language`` (see the module's rules);
    ``write`` publishes the name matches as ``owl:sameAs``. The full lists go to ``<domain>/align-<language>.json``."""
    language = check_lang(language)
    paths = snapshot.paths
    base = snapshot.schema.language
    tables = snapshot.tables()
    facts = tables.domain_facts()
    used = (set(facts["s"].to_list()) | set(facts.filter(pl.col("o_is_entity"))["o"].to_list())) - set(
        tables.relations["iri"].to_list()
    )
    used = {iri for iri in used if not iri.startswith(CLASS)}
    things = ~pl.col("iri").is_in(tables.relations["iri"].implode()) & ~pl.col("iri").str.starts_with(CLASS)
    own = _names(tables.labels.filter(things), base)
    other = _names(tables.labels.filter(things), language)
    links = snapshot.same_as_pairs(kinds=("links",))  # not an earlier run's own matches: they are redone
    partner = defaultdict(set)
    for a, b in links:
        partner[a].add(b)
        partner[b].add(a)
    other_all = language_labels(tables.labels, language).labels  # partners may be outside the domain's facts
    own_all = language_labels(tables.labels, base).labels
    both = {iri for iri in used if iri in own and iri in other}
    linked = {
        iri for iri in used - both if any(p in (other_all if iri in own else own_all) for p in partner.get(iri, ()))
    }
    classes = _classes(tables)
    by_other_name: dict[str, list[str]] = defaultdict(list)
    for iri in sorted(set(own) & set(other)):  # candidates: anything named in both, facts or not
        for name in other[iri]:
            by_other_name[normalise_label(name).casefold()].append(iri)
    matches, ambiguous, type_rejected, missing_other = {}, {}, 0, []
    for iri in sorted(used - both - linked - set(own)):  # named in the other language only
        name = other[iri][0]
        candidates = [c for c in by_other_name.get(normalise_label(name).casefold(), []) if c != iri]
        fitting = [c for c in candidates if _types_agree(classes.get(iri), classes.get(c))]
        type_rejected += len(candidates) - len(fitting)
        if len(fitting) == 1:
            matches[iri] = fitting[0]
        elif fitting:
            ambiguous[name] = fitting
        else:
            missing_other.append(name)
    missing_own = sorted(own[iri][0] for iri in used - both - linked if iri in own)
    missing = {language: missing_own, base: sorted(missing_other)}  # names lacking a counterpart in that language
    graph = _publish(paths, language, matches) if write and matches else None
    report = AlignmentReport(
        paths.domain,
        language,
        base,
        len(used),
        len(both),
        len(linked),
        len(matches),
        type_rejected,
        ambiguous,
        missing,
        paths.root / f"align-{language}.json",
        graph,
    )
    write_json_atomic(
        report.report_file, {**asdict(report), "report_file": str(report.report_file), "matches": matches}
    )
    return report


def _names(labels: pl.DataFrame, language: str) -> dict[str, list[str]]:
    """Each IRI's names in ``language`` (preferred labels first)."""
    rows = labels.filter(in_language(pl.col("lang"), language)).sort("iri", pl.col("preferred").not_(), "label")
    names: dict[str, list[str]] = {}
    for iri, label in rows.select("iri", "label").iter_rows():
        names.setdefault(iri, []).append(label)
    return names


def _classes(tables: GraphTables) -> dict[str, frozenset[str]]:
    grouped: dict[str, set[str]] = defaultdict(set)
    for iri, cls in tables.types.filter(pl.col("class").str.starts_with(CLASS)).iter_rows():
        grouped[iri].add(cls)
    return {iri: frozenset(c) for iri, c in grouped.items()}


def _types_agree(a: frozenset[str] | None, b: frozenset[str] | None) -> bool:
    return not a or not b or bool(a & b)


def _publish(paths: DomainPaths, language: str, matches: dict[str, str]) -> str:
    graph = graph_iri("derived", "aligned", language)
    quads_file = f"quads/aligned-{language}.nq"
    with extending(paths) as current, staged_build(paths) as staging:
        with QuadWriter(staging / quads_file, graph) as writer:
            for entity, counterpart in sorted(matches.items()):
                writer.iri(entity, OWL_SAME_AS, counterpart)
        add_graphs(
            current,
            staging,
            {
                graph: GraphEntry(
                    quads_file=quads_file, quads=writer.count, kind="aligned", details={"language": language}
                )
            },
            {f"align-{language}": {"graph": graph, "matches": len(matches)}},
        )
    return graph
