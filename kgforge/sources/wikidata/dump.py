"""The Wikidata JSON dump importer: optional selection (index → seeds → N hops), then extraction.

Its options (schema ``[options.wikidata]``, a source's options, or ``kgforge import`` flags) are the fields of
:class:`WikidataOptions`: the selection (``seeds``, ``seed_classes``, ``seed_names``, ``hops``, ``fanout_cap``),
how the passes run (``workers``, ``engine``, ...) and what is kept of each entity (:class:`WikidataMapping`).
Without any seed the whole dump is imported.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import JsonObject
from kgforge.sources.importer import ImportContext
from kgforge.sources.matching import Named, link
from kgforge.sources.options import FLAT
from kgforge.sources.wikidata.entity import IndexRecord, WikidataConfig, WikidataMapping
from kgforge.sources.wikidata.framing import frame_document, is_line_framed
from kgforge.sources.wikidata.passes import (
    PassOptions,
    PassResult,
    index_records,
    read_journal,
    split_triple,
)
from kgforge.sources.wikidata.pipeline import BatchParser, PassSpec
from kgforge.sources.wikidata.select import (
    Expansion,
    SeedSelection,
    expand,
    instances_of,
    subclass_closure,
)


@dataclass(frozen=True)
class WikidataOptions:
    """``[options.wikidata]`` of a schema, a Wikidata source's own settings, or ``kgforge import`` flags."""

    selection: SeedSelection = field(default_factory=SeedSelection, metadata=FLAT)
    """``seeds`` (QIDs), ``seed_names``, ``hops``, ``fanout_cap``: the subgraph to keep (default: the whole dump)."""
    mapping: WikidataMapping = field(default_factory=WikidataMapping, metadata=FLAT)
    """``languages``, ``fallback``, ``exclude``, ``only_mapped``, ``no_follow``, ``descriptions``,
    ``keep_deprecated``, ``classes``: what is kept of each entity."""
    seed_classes: tuple[str, ...] = ()
    """Seed with the instances of these classes (QIDs) or of any subclass (P279*, from the dump itself)."""
    passes: PassOptions = field(default_factory=PassOptions, metadata=FLAT)
    """``workers``, ``engine``, ``address``, ``shard_bytes``, ``decompressor``, ``resume``, ``checkpoint_seconds``,
    ``batch_bytes``: how the passes run."""
    keep_journal: bool = False
    """Keep the extract pass's journal after its triples were written, to reuse it."""

    @property
    def seeded(self) -> bool:
        return self.selection.seeded or bool(self.seed_classes)


def import_dump(ctx: ImportContext) -> None:
    dump = ctx.path if is_line_framed(ctx.path) else frame_document(ctx.path, _state_root(ctx) / "documents")
    import_passes(ctx, dump)


def import_passes(
    ctx: ImportContext,
    dump: Path,
    modes: tuple[str, str] = ("index", "extract"),
    parser: BatchParser | None = None,
    align: Callable[[bytes], int] | None = None,
    header: bytes = b"",
) -> None:
    """The resumable passes over ``dump`` — index and selection when seeded, then extract — into ``ctx``.

    ``modes``, ``parser``, ``align`` and ``header`` name another line format's passes (see :class:`PassSpec`);
    by default the lines are JSON entities.
    """
    options = ctx.settings("wikidata", WikidataOptions)
    cfg = WikidataConfig.from_options(ctx.schema, options.mapping)
    state_root = _state_root(ctx)
    runner = options.passes.runner(dump.stat().st_size)
    wanted = None
    if options.seeded:
        index = runner.run(dump, PassSpec(modes[0], cfg, None, parser, align, header), state_root)
        _report_truncation(ctx, index)
        wanted = select_entities(ctx, index, options, cfg)
        ctx.engine = {"index": index}
    extract = runner.run(dump, PassSpec(modes[1], cfg, wanted, parser, align, header), state_root, ctx.advance)
    replay_extract(ctx, extract, cfg)
    ctx.engine = engine_record({**(ctx.engine or {}), "extract": extract})
    if wanted is None:  # selection already reported truncation
        _report_truncation(ctx, extract)
    if not options.keep_journal:  # its triples are in the source's quads now: free the disk
        shutil.rmtree(extract.journal.parent, ignore_errors=True)
    ctx.counts["workers"] = runner.workers
    ctx.counts["resumed_from_byte"] = extract.resumed_from


def engine_record(passes: dict[str, PassResult]) -> JsonObject:
    """What the manifest says of the engine: its name, nodes and workers (the last pass's run), and each
    pass's shards with their producers (the ray engine), under the names ``passes`` gives them."""
    last = list(passes.values())[-1].engine
    record = {key: value for key, value in last.items() if key != "shards"}
    if "shards" in last:
        record["shards"] = {mode: result.engine.get("shards", []) for mode, result in passes.items()}
    return record


def _state_root(ctx: ImportContext) -> Path:
    if ctx.workdir is not None:
        return Path(ctx.workdir) / "raw" / "wikidata"
    return Path(tempfile.mkdtemp(prefix="kgforge-wikidata-"))


def _report_truncation(ctx: ImportContext, result: PassResult) -> None:
    if result.truncated:
        ctx.reject("end of dump", result.truncated)
        ctx.counts["dump_truncated"] = 1


def select_entities(
    ctx: ImportContext, index: PassResult, options: WikidataOptions, cfg: WikidataConfig
) -> frozenset[str]:
    """Seeds from QIDs, classes and names, expanded ``hops`` steps; the report lands in ``ctx.counts``."""
    records = lambda: index_records(index.journal)  # noqa: E731 - a fresh scan each call
    selection = options.selection
    seeds = {q.upper() for q in selection.seeds}
    known = {r.id for r in records()} if seeds else set()
    for qid in sorted(seeds - known):
        ctx.reject(f"seed {qid}", "seed QID is not in the dump")
    seeds &= known if known else seeds
    if options.seed_classes:
        closure = subclass_closure(records, {q.upper() for q in options.seed_classes})
        ctx.counts["class_closure_size"] = len(closure)
        seeds |= instances_of(records, closure)
    unmatched: list[str] = []
    if selection.seed_names:
        by_name, unmatched = _seeds_by_name(ctx, records(), selection.named(), cfg)
        seeds |= by_name
    if not seeds:
        raise InputError(
            f"{ctx.path}: no seed entity found in the dump (seeds, seed_classes and seed_names "
            "matched nothing); see the quarantine file for the details"
        )
    expansion = expand(records, seeds, selection.hops, selection.fanout_cap or None)
    _record_expansion(ctx, expansion, unmatched, index.journal.parent)
    return frozenset(expansion.entities)


def _seeds_by_name(
    ctx: ImportContext, records: Iterator[IndexRecord], named: dict[str, str | None], cfg: WikidataConfig
) -> tuple[set[str], list[str]]:
    """Entities named like the given names (name → type id, or None for any type), by ``linking``."""
    wanted = [Named(name, (name,), (), frozenset([t]) if t else frozenset()) for name, t in named.items()]
    types_by_class: dict[str, str] = {qid: iri.rsplit("/", 1)[-1] for qid, iri in cfg.classes.items()}
    candidates = (
        Named(
            r.id,
            tuple(r.labels),
            tuple(r.aliases),
            frozenset(types_by_class[c] for c in r.instance_of if c in types_by_class),
        )
        for r in records
    )
    report = link(wanted, candidates)
    for name, qids in report.ambiguous.items():
        ctx.reject(
            f"seed name {name!r}", f"ambiguous: {len(qids)} entities carry this name, none chosen", {"candidates": qids}
        )
    ctx.counts["seed_names_linked"] = len(report.linked)
    ctx.counts["seed_names_ambiguous"] = len(report.ambiguous)
    ctx.counts["seed_names_unmatched"] = len(report.unmatched)  # listed in selection.json
    return set(report.linked.values()), report.unmatched


def _record_expansion(ctx: ImportContext, expansion: Expansion, unmatched: list[str], state: Path) -> None:
    summary = expansion.summary()
    for hop, level in enumerate(expansion.levels):  # the summary's per_hop sizes
        ctx.counts[f"hop_{hop}_entities"] = len(level)
    ctx.counts["selected_entities"] = len(expansion.entities)
    ctx.counts["fanout_capped_nodes"] = len(expansion.capped)
    summary["unmatched_seed_names"] = unmatched
    (state / "selection.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False), encoding="utf-8")


def replay_extract(ctx: ImportContext, result: PassResult, cfg: WikidataConfig) -> None:
    """Journal of the extract pass → the source's quads, quarantine and deprecated side file."""
    relations = {rel.iri: rel for rel in ctx.schema.relations.values()}
    used: set[str] = set()
    deprecated = None
    try:
        for kind, payload in read_journal(result.journal):
            if kind == "T":
                s, p, o = split_triple(payload)
                ctx.writer.term(s, p, o)
                if p in relations:
                    used.add(p)
            elif kind == "E":
                entry = json.loads(payload)
                ctx.reject(entry["location"], entry["reason"], entry.get("record"))
            elif kind == "D" and cfg.keep_deprecated:
                deprecated = deprecated or _deprecated_file(ctx)
                deprecated.write(payload + "\n")
    finally:
        if deprecated is not None:
            deprecated.close()
    ctx.relations_used.update(relations[iri] for iri in used)
    for key, value in result.counts.items():
        ctx.counts[key] += value
    ctx.accept(result.counts.get("entities", 0))


def _deprecated_file(ctx: ImportContext) -> Any:
    folder = Path(ctx.workdir or tempfile.gettempdir()) / "raw" / "wikidata"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"deprecated-{ctx.path.name}.jsonl"
    ctx.counts["deprecated_file_written"] = 1
    return open(path, "w", encoding="utf-8")
