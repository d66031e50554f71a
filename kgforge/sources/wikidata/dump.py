"""The Wikidata JSON dump importer: optional selection (index → seeds → N hops), then extraction.

Run options (schema ``[options.wikidata]``, a source's options, or ``kgforge import`` flags):
``seeds`` (QIDs), ``seed_classes`` (QIDs; instances of them or of any subclass, P279* taken from
the dump), ``seed_names`` (labels matched against the index, e.g. the crawled start entities),
``hops`` (default 3), ``fanout_cap`` (default 200), ``workers``, ``decompressor``, ``resume``,
``checkpoint_seconds`` (default 5), ``batch_bytes`` (default 1 MiB), ``keep_journal`` (keep the
extract pass's journal after its triples were written, to reuse it; default false), ``engine`` (``local``,
the default, or ``ray``: see :mod:`kgforge.sources.wikidata.engines`), ``address`` (a Ray cluster to join) and
``shard_bytes`` (the ray engine's shard size, default 16 MiB).
Without any seed the whole dump is imported. Mapping options are in ``WikidataConfig``.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.sources.importer import ImportContext
from kgforge.sources.matching import Named, link
from kgforge.sources.wikidata.engines import DEFAULT_SHARD_BYTES, make_engine
from kgforge.sources.wikidata.entity import IndexRecord, WikidataConfig
from kgforge.sources.wikidata.framing import frame_document, is_line_framed
from kgforge.sources.wikidata.passes import (
    CHECKPOINT_SECONDS,
    PassResult,
    index_records,
    read_journal,
    run_resumable,
    split_triple,
)
from kgforge.sources.wikidata.pipeline import BATCH_BYTES, BatchParser, PassSpec
from kgforge.sources.wikidata.select import (
    Expansion,
    expand,
    instances_of,
    subclass_closure,
)

DEFAULT_HOPS = 3
DEFAULT_FANOUT_CAP = 200
PARALLEL_FROM_BYTES = 32 << 20
SEED_OPTIONS = ("seeds", "seed_classes", "seed_names")


def run_options(ctx: ImportContext) -> dict[str, Any]:
    return dict(ctx.schema.options.get("wikidata") or {}, **ctx.options)


def default_workers(path: Path, options: dict[str, Any]) -> int:
    if "workers" in options:
        return int(options["workers"])
    return 0 if path.stat().st_size < PARALLEL_FROM_BYTES else min(os.cpu_count() or 1, 8)


def import_dump(ctx: ImportContext) -> None:
    dump = ctx.path if is_line_framed(ctx.path) else frame_document(ctx.path, _state_root(ctx) / "documents")
    import_passes(ctx, dump)


def import_passes(ctx: ImportContext, dump: Path, modes: tuple[str, str] = ("index", "extract"),
                  parser: BatchParser | None = None, align: Callable[[bytes], int] | None = None,
                  header: bytes = b"") -> None:
    """The resumable passes over ``dump`` — index and selection when seeded, then extract — into ``ctx``.

    ``modes``, ``parser``, ``align`` and ``header`` name another line format's passes (see :class:`PassSpec`);
    by default the lines are JSON entities.
    """
    options = run_options(ctx)
    cfg = WikidataConfig.from_schema(ctx.schema, ctx.options)
    state_root = _state_root(ctx)
    workers = default_workers(dump, options)
    engine = make_engine(str(options.get("engine", "local")), workers, options.get("address"),
                         int(options.get("shard_bytes", DEFAULT_SHARD_BYTES)))
    common = {"workers": workers, "engine": engine, "decompressor": str(options.get("decompressor", "auto")),
              "resume": bool(options.get("resume", True)),
              "checkpoint_seconds": float(options.get("checkpoint_seconds", CHECKPOINT_SECONDS)),
              "batch_bytes": int(options.get("batch_bytes", BATCH_BYTES))}
    wanted = None
    if any(options.get(k) for k in SEED_OPTIONS):
        index = run_resumable(dump, PassSpec(modes[0], cfg, None, parser, align, header), state_root, **common)
        _report_truncation(ctx, index)
        wanted = select_entities(ctx, index, options)
        ctx.engine = {"index": index}
    extract = run_resumable(dump, PassSpec(modes[1], cfg, wanted, parser, align, header), state_root, **common,
                            on_progress=ctx.advance)
    replay_extract(ctx, extract, cfg)
    ctx.engine = engine_record({**(ctx.engine or {}), "extract": extract})
    if wanted is None:  # selection already reported truncation
        _report_truncation(ctx, extract)
    if not options.get("keep_journal"):  # its triples are in the source's quads now: free the disk
        shutil.rmtree(extract.journal.parent, ignore_errors=True)
    ctx.counts["workers"] = workers
    ctx.counts["resumed_from_byte"] = extract.resumed_from


def engine_record(passes: dict[str, PassResult]) -> dict[str, Any]:
    """What the manifest says of the engine: its name, nodes and workers (the last pass's run), and each
    pass's shards with their producers (the ray engine)."""
    last = passes["extract"].engine
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


def select_entities(ctx: ImportContext, index: PassResult, options: dict[str, Any]) -> frozenset[str]:
    """Seeds from QIDs, classes and names, expanded ``hops`` steps; the report lands in ``ctx.counts``."""
    records = lambda: index_records(index.journal)  # noqa: E731 - a fresh scan each call
    seeds = {str(q).upper() for q in _list(options.get("seeds"))}
    known = {r.id for r in records()} if seeds else set()
    for qid in sorted(seeds - known):
        ctx.reject(f"seed {qid}", "seed QID is not in the dump")
    seeds &= known if known else seeds
    if options.get("seed_classes"):
        closure = subclass_closure(records, {str(q).upper() for q in _list(options["seed_classes"])})
        ctx.counts["class_closure_size"] = len(closure)
        seeds |= instances_of(records, closure)
    unmatched: list[str] = []
    if options.get("seed_names"):
        by_name, unmatched = _seeds_by_name(ctx, records(), options["seed_names"],
                                            WikidataConfig.from_schema(ctx.schema, ctx.options))
        seeds |= by_name
    if not seeds:
        raise InputError(f"{ctx.path}: no seed entity found in the dump (seeds, seed_classes and seed_names "
                         "matched nothing); see the quarantine file for the details")
    hops = int(options.get("hops", DEFAULT_HOPS))
    cap = options.get("fanout_cap", DEFAULT_FANOUT_CAP)
    expansion = expand(records, seeds, hops, int(cap) if cap else None)
    _record_expansion(ctx, expansion, unmatched, index.journal.parent)
    return frozenset(expansion.entities)


def _seeds_by_name(ctx: ImportContext, records: Iterator[IndexRecord], seed_names: Any,
                   cfg: WikidataConfig) -> tuple[set[str], list[str]]:
    """Entities named like the given names (``{"name": type_id | None}`` or a list), by ``linking``."""
    named = seed_names if isinstance(seed_names, dict) else {name: None for name in _list(seed_names)}
    wanted = [Named(name, (name,), (), frozenset([t]) if t else frozenset()) for name, t in named.items()]
    types_by_class: dict[str, str] = {qid: iri.rsplit("/", 1)[-1] for qid, iri in cfg.classes.items()}
    candidates = (Named(r.id, tuple(r.labels), tuple(r.aliases),
                        frozenset(types_by_class[c] for c in r.instance_of if c in types_by_class))
                  for r in records)
    report = link(wanted, candidates)
    for name, qids in report.ambiguous.items():
        ctx.reject(f"seed name {name!r}", f"ambiguous: {len(qids)} entities carry this name, none chosen",
                   {"candidates": qids})
    ctx.counts["seed_names_linked"] = len(report.linked)
    ctx.counts["seed_names_ambiguous"] = len(report.ambiguous)
    ctx.counts["seed_names_unmatched"] = len(report.unmatched)  # listed in selection.json
    return set(report.linked.values()), report.unmatched


def _record_expansion(ctx: ImportContext, expansion: Expansion, unmatched: list[str], state: Path) -> None:
    summary = expansion.summary()
    for hop, size in enumerate(summary["per_hop"]):  # type: ignore[arg-type]
        ctx.counts[f"hop_{hop}_entities"] = size
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


def _list(value: Any) -> list:
    if value is None:
        return []
    return [value] if isinstance(value, str) else list(value)
