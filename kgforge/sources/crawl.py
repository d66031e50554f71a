"""Crawled sites as a source of `kgforge build`: ``crawl:<site>`` → the graph ``crawl/<site>``.

The site is crawled first when ``raw/crawl/<site>/`` holds no finished crawl (an unfinished one is
resumed), with the settings of the schema's ``[options.crawl]`` and the source entry
(``base_url``, ``limit``, ``delay``, ...). Then every crawled site of the domain is re-parsed from
the cache, cleaned (:mod:`kgforge.crawl.cleanup`) and merged across sites
(:mod:`kgforge.crawl.merge`); this site's records become quads: structured facts, texts as
language-tagged literals, the page URL as ``prov:hadPrimarySource`` of each entity.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from requests.utils import requote_uri
from rich.markup import escape

from kgforge.core.errors import InputError
from kgforge.core.files import write_json_atomic
from kgforge.core.progress import stderr_console
from kgforge.core.schema import Relation, Schema
from kgforge.core.text import normalise_label
from kgforge.core.vocab import (
    PROV_SOURCE,
    RDF_TYPE,
    RDFS_LABEL,
    SKOS_ALT_LABEL,
    entity_iri,
)
from kgforge.crawl.cleanup import CleanupOptions, clean
from kgforge.crawl.engine import crawl, crawl_dir_for, crawled_spec, read_records
from kgforge.crawl.fetch import CrawlConfig
from kgforge.crawl.frontier import Frontier
from kgforge.crawl.merge import Merge, english_key, merge
from kgforge.crawl.spec import Record, SiteSpec, load_spec
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.options import FLAT, options_dict

MAX_WARNINGS_SHOWN = 20
NAMES_REPORT = "names_report.json"
FRONTIER = "frontier.sqlite"  # a crawl's folder holds it from its start: a crawl (finished or not) is there


@dataclass(frozen=True)
class CrawlOptions:
    """``[options.crawl]`` of a schema, or a ``crawl`` source's own settings."""

    fetch: CrawlConfig = field(default_factory=CrawlConfig, metadata=FLAT)
    """``delay``, ``workers``, ``obey_robots``, ``max_retries``, timeouts, ...: how the site is fetched (see
    :class:`~kgforge.crawl.fetch.CrawlConfig`)."""
    base_url: str | None = None
    """Where the site is served (a mirror, a test server); default: the site spec's own."""
    limit: int | None = None
    """Fetch at most this many pages (0 or unset: no limit)."""
    english_min_sites: int = 2
    """An English name is accepted for an entity when at least this many sites give it."""
    min_triples: int = 0
    """Drop start entities with fewer facts than this (KdConv)."""
    drop_text_words: tuple[str, ...] = ()
    """Drop text values (comments, plots) containing any of these words."""
    rating_symbols: dict[str, Any] | None = None
    """Map a numeric rating onto symbols: a table of ``relation``, ``target``, ``cuts`` and ``symbols``."""

    def cleanup(self) -> CleanupOptions:
        return CleanupOptions.from_options(options_dict(self))


@register(
    "crawl",
    "A crawled site, crawl:<site> (a spec in crawlers/); crawls what is missing, then loads it",
    reads_file=False,
)
def import_crawl(ctx: ImportContext) -> None:
    site = ctx.path.name
    options = ctx.settings("crawl", CrawlOptions)
    root = Path(ctx.workdir or ".")
    spec = load_spec(site, options.base_url)
    crawl_dir = crawl_dir_for(root, site)
    if not (crawl_dir / FRONTIER).exists():
        _refuse_crawl_elsewhere(root, site)
    ensure_crawled(spec, crawl_dir, options)
    cleanup = options.cleanup()
    text_relations = {r for r in ctx.schema.relations if ctx.schema.relations[r].kind == "text"}
    records: list[Record] = []
    for other, folder in crawled_sites(root).items():
        other_spec = crawled_spec(folder)
        site_records = list(read_records(folder, other_spec))
        if other == site:
            _warn(ctx, site_records, folder)
        result = clean(site_records, cleanup, text_relations, other_spec.start_kinds())
        if other == site:
            for dropped in result.dropped:
                ctx.quarantine.reject(str(ctx.path), dropped.url, dropped.reason, dropped.value)
                ctx.counts["dropped by clean-up"] += 1
        records += result.records
    merged = merge(records, options.english_min_sites)
    report = merged.report()
    write_json_atomic(root / "raw" / "crawl" / NAMES_REPORT, report.as_dict())
    for record in records:
        if record.site == site:
            _emit(ctx, spec, record, merged)
            ctx.accept()
    ctx.counts["english names accepted"] = len(report.english_accepted)
    ctx.counts["english names unresolved"] = len(report.english_unresolved)
    ctx.counts["entities merged across sites"] = len(report.merged_across_sites)


def _refuse_crawl_elsewhere(root: Path, site: str) -> None:
    """A domain without a crawl of ``site`` whose workdir holds one in another domain's ``raw/`` (`kgforge crawl`
    puts it in the spec's domain unless told): an error saying where it is, rather than a new crawl of the
    whole site (offline: nothing fetched, then "no usable record")."""
    others = [
        folder.name
        for folder in sorted(root.parent.iterdir() if root.parent.is_dir() else ())
        if folder != root and (crawl_dir_for(folder, site) / FRONTIER).is_file()
    ]
    if others:
        where = ", ".join(f"{name!r} ({crawl_dir_for(root.parent / name, site)})" for name in others)
        raise InputError(
            f"crawl:{site}: domain {root.name!r} holds no crawl of {site} (none in {crawl_dir_for(root, site)}); "
            f"the raw/ folder of domain {where} does: build that domain (`kgforge build {others[0]} --source "
            f"crawl:{site}`), or crawl the site into this one (`kgforge crawl {site} --domain {root.name}`)"
        )


def ensure_crawled(spec: SiteSpec, crawl_dir: Path, options: CrawlOptions) -> None:
    """Crawl the site when nothing was crawled, resume an unfinished crawl, else do nothing."""
    frontier_file = crawl_dir / FRONTIER
    pending = None
    if frontier_file.exists():
        frontier = Frontier(frontier_file)
        try:
            pending = frontier.counts()["pending"] if frontier.get_meta("site") else None
        finally:
            frontier.close()
    if pending == 0:
        return
    crawl(spec, crawl_dir, options.fetch, limit=options.limit or None, resume=pending is not None, show_progress=False)


def crawled_sites(domain_root: Path) -> dict[str, Path]:
    base = Path(domain_root) / "raw" / "crawl"
    if not base.is_dir():
        return {}
    return {d.name: d for d in sorted(base.iterdir()) if (d / FRONTIER).is_file()}


def _warn(ctx: ImportContext, records: list[Record], folder: Path) -> None:
    warnings = [w for record in records for w in record.warnings]
    ctx.counts["field warnings"] += len(warnings)
    (folder / "warnings.txt").write_text("".join(w + "\n" for w in warnings), encoding="utf-8")
    for text in warnings[:MAX_WARNINGS_SHOWN]:
        stderr_console.print(f"[yellow]warning[/]: {escape(text)}", soft_wrap=True)
    if len(warnings) > MAX_WARNINGS_SHOWN:
        stderr_console.print(f"[yellow]warning[/]: {len(warnings)} in all, listed in {folder / 'warnings.txt'}")


def _relation(schema: Schema, name: str) -> Relation:
    return schema.relations.get(name) or schema.relation_for(name)


def _emit(ctx: ImportContext, spec: SiteSpec, record: Record, merged: Merge) -> None:
    writer, schema, lang = ctx.writer, ctx.schema, spec.language
    ctx.location = record.url  # where a quad the writer refuses came from
    if not record.name:
        ctx.reject(record.url, "no entity name found on the page", None)
        return
    entity = merged.by_url[record.url]
    subject = entity.iri
    writer.literal(subject, RDFS_LABEL, entity.name, lang=lang)
    if record.name_en and entity.english and english_key(record.name_en) == english_key(entity.english):
        writer.literal(subject, RDFS_LABEL, entity.english, lang="en")
    elif record.name_en:
        writer.literal(subject, SKOS_ALT_LABEL, record.name_en, lang="en")
    writer.iri(subject, PROV_SOURCE, requote_uri(record.url))
    if record.entity_type in schema.types:
        writer.iri(subject, RDF_TYPE, schema.types[record.entity_type].iri)
    else:
        ctx.counts[f"type {record.entity_type} not in schema {schema.name}"] += 1
    for fact in record.facts:
        relation = _relation(schema, fact.relation)
        ctx.relations_used.add(relation)
        if not relation.declared:
            ctx.counts[f"unmapped relation {relation.zh}"] += 1
        if relation.kind == "entity":
            writer.iri(subject, relation.iri, _target(ctx, fact.value, fact.target_url, merged, lang))
        else:
            writer.literal(subject, relation.iri, fact.value, lang=fact.lang or lang)
    ctx.counts["facts"] += len(record.facts)


def _target(ctx: ImportContext, name: str, url: str | None, merged: Merge, lang: str) -> str:
    """A linked entity: the crawled page's entity when it was crawled, else the entity of that name."""
    entity = merged.by_url.get(url) if url else None
    if entity is not None:
        return entity.iri
    label = normalise_label(name)
    iri = entity_iri(label)
    ctx.writer.literal(iri, RDFS_LABEL, label, lang=lang)
    return iri
