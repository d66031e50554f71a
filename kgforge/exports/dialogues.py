"""Real dialogues (DuConv sessions or samples, KdConv dialogues, DuRecDial sessions or samples) re-grounded
in a graph, losslessly.

Every field a dialogue has is written back as it was, gold annotation included (KdConv ``attrs``,
DuConv and DuRecDial ``knowledge``); the graph's facts about the dialogue's topics go in a field of
their own (``retrieved_attrs`` on each KdConv message, ``retrieved_knowledge`` elsewhere). With
``refresh_attrs`` a gold value that the graph now states otherwise (one value for that head and
relation) is rewritten, and every change is listed in ``OUT.refresh.jsonl``. The report says how many
dialogues came in, went out and were left out (with why), and how much of the gold annotation of the
exported ones the graph holds and the retrieved facts cover.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.files import sha256_file
from kgforge.core.gc_pause import paused_gc
from kgforge.core.output import OutputFile
from kgforge.exports.assemble import (
    DIALOGUE_CHECKS,
    Assembled,
    Context,
    assemble,
    check_report,
)
from kgforge.exports.grounding import (
    GoldResolver,
    SourceFile,
    gold_frame,
    ground,
    read_sources,
)
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, value_at
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import (
    Format,
    detect_layout,
    dialogue_layouts,
    format_named,
)
from kgforge.exports.writing import ExportReport, finish, layout_problems
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables


@paused_gc()
def export_dialogues(
    snapshot: Snapshot,
    dialogues_file: Path,
    options: ExportOptions,
    out: Path | OutputFile,
    tables: GraphTables | None = None,
) -> ExportReport:
    started = time.perf_counter()
    out = snapshot.paths.output(out)
    source_fmt, source_layout = detect_layout(dialogues_file, options.input_layout)
    fmt = format_named(options.fmt)
    layout = dialogue_layouts(fmt, source_fmt, source_layout, options.layout)
    ctx = Context.open(snapshot, options.language, tables, allow_mixed=options.allow_mixed)
    source = read_dialogues(dialogues_file, source_layout.kind, options.skip_invalid)
    made = _records(
        ctx, source, fmt, source_fmt, layout, options, ctx.manifest.build_id, out if options.refresh_attrs else None
    )
    warnings = layout_problems(fmt, layout, made.records)
    rejected = source.rejected + [
        {
            "file": str(dialogues_file),
            "line": source.dialogues[i].line,
            "dialogue_id": source.ids[i],
            "reason": "; ".join(p),
        }
        for i, p in sorted(made.assembled.problems.items())
    ]
    extra = {
        "dialogues_file": str(dialogues_file),
        "dialogues_sha256": sha256_file(dialogues_file),
        "input_format": source_fmt.name,
        "input_layout": source_layout.kind,
        "checks": check_report(made.assembled.problems, source.ids, options.skip_invalid, DIALOGUE_CHECKS).as_dict(),
        **_coverage(
            source, made.dialogues, made.assembled.passing(), made.resolved, rejected, made.topics_not_in_graph
        ),
        "gold_kept_exactly": gold_kept(fmt, made.per_dialogue),
        "reader_warnings": len(warnings),
        "reader_warning_examples": warnings[:10],
        **({"refresh": made.refresh} if made.refresh is not None else {}),
        "labels": ctx.labels.report().as_dict(),
    }
    records = made.records
    if options.changed_since:
        records = _changed_since(ctx, dialogues_file, source_layout.kind, fmt, source_fmt, layout, options, records)
        extra["changed_since"] = {
            "build": options.changed_since,
            "records_changed": len(records),
            "records_unchanged": len(made.records) - len(records),
        }
    return finish(ctx, fmt, layout, records, options, out, extra, started, rejected)


@dataclass
class _Made:
    """What one pass of an export over one build made: the records, and what the report counts from."""

    records: list[tuple[str, dict[str, Any]]]
    assembled: Assembled
    dialogues: list[Dialogue]
    per_dialogue: list[tuple[Dialogue, list[dict[str, Any]]]]
    resolved: pl.DataFrame
    topics_not_in_graph: list[dict[str, Any]]
    refresh: dict[str, Any] | None


def _records(
    ctx: Context,
    source: SourceFile,
    fmt: Format,
    source_fmt: Format,
    layout: Any,
    options: ExportOptions,
    build_id: str,
    refresh_out: OutputFile | None,
) -> _Made:
    """Ground ``source``'s dialogues in ``ctx``'s build, choose and check their subgraphs and render their
    records (naming build ``build_id``); with ``refresh_out``, gold values are refreshed first."""
    grounding = ground(ctx, source, ctx.class_iris())
    gold = GoldResolver(ctx, grounding.index, gold_frame(source.dialogues))
    resolved = gold.resolved()
    refresh = _refresh(ctx, source, gold, resolved, refresh_out) if refresh_out else None
    sub_options = options.subgraph(source_fmt, ctx.schema, goals=False)
    assembled = assemble(ctx, grounding.grounded, sub_options, options.add_related, goal_checks=False)
    render = Render.for_frame(
        ctx.labels, assembled.passing(), layout.segmented and options.segmented, fmt.type_relation, build_id
    )
    dialogues = assembled.dialogues(ctx.labels, render, fmt.shape)
    per_dialogue = [(d, fmt.dialogue_records(d, layout, render)) for d in dialogues]
    records = [
        (d.dialogue_id if len(recs) == 1 else f"{d.dialogue_id}/{j}", record)
        for d, recs in per_dialogue
        for j, record in enumerate(recs)
    ]
    return _Made(records, assembled, dialogues, per_dialogue, resolved, grounding.topics_not_in_graph, refresh)


def _changed_since(
    ctx: Context,
    dialogues_file: Path,
    input_layout: str,
    fmt: Format,
    source_fmt: Format,
    layout: Any,
    options: ExportOptions,
    records: list[tuple[str, dict[str, Any]]],
) -> list[tuple[str, dict[str, Any]]]:
    """The ``records`` that differ from what the same export of build ``options.changed_since`` writes (its
    subgraph, labels or gold values changed), or that it does not write at all: exactly the dialogues the
    changes between the two builds touch. The earlier build's records are rendered naming the current
    build, so only what the graph gives them can differ."""
    assert options.changed_since is not None  # the caller's condition
    then = Context.open(ctx.snapshot.kept(options.changed_since), options.language)
    before = _records(
        then,
        read_dialogues(dialogues_file, input_layout, options.skip_invalid),
        fmt,
        source_fmt,
        layout,
        options,
        ctx.manifest.build_id,
        None,
    )
    earlier = dict(before.records)
    changed = [(record_id, record) for record_id, record in records if earlier.get(record_id) != record]
    if not changed:
        raise KgforgeError(
            f"no dialogue's subgraph changed since build {options.changed_since} "
            f"({len(records):,} records compared); nothing was written"
        )
    return changed


def read_dialogues(path: Path, input_layout: str | None = None, skip_invalid: bool | None = False) -> SourceFile:
    """The real dialogues in ``path``, in ``input_layout`` (a kind such as ``kdconv``) or the layout its first
    record has. A record that is not a dialogue of that layout is an error naming the file and its line,
    unless ``skip_invalid`` (then it is in the result's ``rejected``; ``None``: the caller cannot skip, and
    the error does not offer it); a file without one is an error."""
    fmt, layout = detect_layout(path, input_layout)
    source = read_sources(path, fmt, layout)
    if source.rejected and (not skip_invalid or not source.dialogues):
        first, kind = source.rejected[0], source.layout.kind
        why = f"{len(source.rejected)} of {source.records_in} records are not {kind} dialogues"
        if not source.dialogues:
            why = f"no record of the file is a {kind} dialogue"
        elif skip_invalid is not None:
            why += "; nothing was written, give --skip-invalid to write the others"
        raise InputError(f"{path}:{first['line']}: {first['reason']} ({why})")
    if not source.dialogues:
        raise InputError(f"{path}: no {source.layout.kind} dialogue could be read")
    return source


def _coverage(
    source: SourceFile,
    dialogues: list[Dialogue],
    retrieved: pl.DataFrame,
    resolved: pl.DataFrame,
    rejected: list[dict[str, Any]],
    topics_not_in_graph: list[dict[str, Any]],
) -> dict[str, Any]:
    """The coverage report: dialogues in, out and left out (with why), and, over the exported dialogues
    only, how many gold triples the graph states and how many the ``retrieved`` rows hold."""
    number = {dialogue_id: i for i, dialogue_id in enumerate(source.ids)}
    exported = [number[d.dialogue_id] for d in dialogues]
    pool = retrieved.select("dialogue", "s", "p", "o")
    gold = resolved.filter(pl.col("dialogue").is_in(exported))
    in_graph = gold.filter(pl.col("s").is_not_null())
    in_pool = in_graph.join(pool.unique(), on=["dialogue", "s", "p", "o"], how="semi").height
    total = gold.height
    return {
        "dialogues_in": source.records_in,
        "dialogues_read": len(source.dialogues),
        "dialogues": len(dialogues),
        "dialogues_rejected": len(rejected),
        "rejected_reasons": dict(Counter(r["reason"].split(":")[0] for r in rejected).most_common()),
        "exported_share": round(len(dialogues) / source.records_in, 4) if source.records_in else None,
        "gold_triples": total,
        "gold_in_graph": in_graph.height,
        "gold_in_retrieved": in_pool,
        "attr_coverage": round(in_pool / total, 4) if total else None,
        "attr_coverage_of_gold_in_graph": round(in_pool / in_graph.height, 4) if in_graph.height else None,
        "topics_per_dialogue": round(sum(len(d.topics) for d in dialogues) / len(dialogues), 2) if dialogues else None,
        "retrieved_per_dialogue": round(pool.height / len(dialogues), 2) if dialogues else None,
        # counted on the retrieved rows: ``Dialogue.triples`` is filled for row formats only
        "dialogues_without_retrieved": len(set(exported) - set(pool["dialogue"].unique().to_list())),
        "declared_topics_not_in_graph": len(topics_not_in_graph),
        "declared_topics_not_in_graph_examples": topics_not_in_graph[:10],
    }


def gold_kept(fmt: Format, per_dialogue: list[tuple[Dialogue, list[dict[str, Any]]]]) -> dict[str, int]:
    """Counted on the records as written: every gold triple of every exported dialogue, in every record
    made from it, where it was and with the value it has in the dialogue (after any refresh)."""
    total = kept = 0
    for dialogue, records in per_dialogue:
        for record in records:
            inside = fmt.dataset_record(record)
            assert dialogue.source is not None  # a real dialogue, read from its source
            for triple in dialogue.source.gold:
                total += 1
                kept += fmt.keeps(inside, dialogue.source.record, triple)
    return {"gold_triples_written": total, "kept": kept}


def _refresh(
    ctx: Context, source: SourceFile, gold: GoldResolver, resolved: pl.DataFrame, out: OutputFile
) -> dict[str, Any]:
    """Rewrite, in each dialogue's record, every gold value the graph states otherwise for the same head and
    relation (one value only); list each change in ``OUT.refresh.jsonl``. Values the graph has several
    of, or none, are kept and counted."""
    stale = resolved.filter(pl.col("s").is_null())
    values = (
        gold.values(stale)
        .unique(["dialogue", "g", "o"])
        .group_by("dialogue", "g")
        .agg("o", "o_is_entity", n=pl.col("o").len())
    )
    render = Render.for_frame(ctx.labels, None, source.layout.segmented)
    changes = []
    for i, g, objects, is_entity, _ in values.filter(pl.col("n") == 1).sort("dialogue", "g").iter_rows():
        dialogue = source.dialogues[i]
        triple = dialogue.gold[g]
        new = render.name(objects[0], ctx.labels.entity(objects[0])) if is_entity[0] else render.text(objects[0])
        if new == triple.tail:
            continue
        value_at(dialogue.record, triple.where)[triple.tail_key] = new  # the record read from the file, not the file
        changes.append(
            {
                "dialogue_id": source.ids[i],
                "line": dialogue.line,
                "where": list(triple.where),
                "head": triple.head,
                "relation": triple.relation,
                "old": triple.tail,
                "new": new,
            }
        )
    log = out.sidecar(".refresh.jsonl")
    log.write_text("".join(json.dumps(c, ensure_ascii=False) + "\n" for c in changes))
    several = values.filter(pl.col("n") > 1).height
    return {
        "gold_not_stated_as_written": stale.height,
        "changed": len(changes),
        "kept_graph_has_several": several,
        "kept_not_in_graph": stale.height - values.height,
        "changes_file": str(log),
    }
