"""New goals (from ``kgforge goals``) as dialogues without a conversation, in a layout meaningful without one."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.files import sha256_file
from kgforge.core.gc_pause import paused_gc
from kgforge.core.output import OutputFile
from kgforge.exports.assemble import (
    GOAL_CHECKS,
    PATH_SCHEMA,
    TOPIC_SCHEMA,
    Context,
    ExportCheckError,
    Grounded,
    assemble,
    check_report,
)
from kgforge.exports.in_language import LanguageCheck
from kgforge.exports.labels import Labels, Render
from kgforge.exports.model import Dialogue
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import Format, format_named, goal_layout
from kgforge.exports.writing import ExportReport, finish, layout_problems
from kgforge.goals.record import Goal, read_goals
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables


@paused_gc()
def export_goals(
    snapshot: Snapshot,
    goals_file: Path,
    options: ExportOptions,
    out: Path | OutputFile,
    tables: GraphTables | None = None,
) -> ExportReport:
    started = time.perf_counter()
    out = snapshot.paths.output(out)
    fmt = format_named(options.fmt)
    layout = goal_layout(fmt, options.layout)
    ctx = Context.open(snapshot, options.language, tables, allow_mixed=options.allow_mixed)
    goals = list(read_goals(goals_file))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals to export")
    made = _goal_records(ctx, goals, fmt, layout, options, ctx.manifest.build_id)
    checks = check_report(made.problems, made.ids, options.skip_invalid, GOAL_CHECKS)
    if made.untranslated and not options.skip_invalid:
        raise ExportCheckError(untranslated_message(made.untranslated, ctx.labels.language))
    if made.unusable and not options.skip_invalid:
        example = made.unusable[0]
        raise ExportCheckError(
            f"{len(made.unusable)} records would not be read by the {layout.kind} readers, nothing "
            f"was written (give --skip-invalid to write the others): {example['record_id']}: "
            f"{example['problems'][0]}"
        )
    rejected = [{"dialogue_id": made.ids[i], "reason": "; ".join(p)} for i, p in sorted(made.problems.items())] + [
        {"dialogue_id": u["record_id"], "reason": "; ".join(u["problems"])} for u in made.untranslated + made.unusable
    ]
    checks = replace(
        checks,
        layout_checks=f"what the {layout.kind} readers need ({type(fmt).__name__}.check)",
        layout_failures=tuple(made.unusable[:50]),
        language_failures=tuple(made.untranslated[:50]),
    )
    kept = made.records
    extra: dict[str, Any] = {}
    if options.changed_since:
        kept = _changed_since(ctx, goals, fmt, layout, options, made.records)
        extra["changed_since"] = {
            "build": options.changed_since,
            "records_changed": len(kept),
            "records_unchanged": len(made.records) - len(kept),
        }
    written = {record_id for record_id, _ in kept}
    extra = {
        "goals_file": str(goals_file),
        "goals_sha256": sha256_file(goals_file),
        "dialogues": len(written),
        "triples": sum(len(d.knowledge) for d in made.dialogues if d.dialogue_id in written),
        "checks": checks.as_dict(),
        "seeds": sorted({g.seed for g in goals if g.seed is not None}),
        "labels": ctx.labels.report().as_dict(),
        **extra,
    }
    return finish(ctx, fmt, layout, kept, options, out, extra, started, rejected)


@dataclass
class _GoalRecords:
    """What one pass of a goal export over one build made: the records that pass every check, the dialogues
    they were rendered from, and what failed (the checks' problems by goal number, the layout's by record)."""

    records: list[tuple[str, dict[str, Any]]]
    dialogues: list[Dialogue]
    problems: dict[int, list[str]]
    unusable: list[dict[str, Any]]
    ids: list[str]
    untranslated: list[dict[str, Any]]  # records holding text not in the export's language (LanguageCheck)


def _goal_records(
    ctx: Context, goals: list[Goal], fmt: Format, layout: Any, options: ExportOptions, build_id: str
) -> _GoalRecords:
    """Choose, check and render the subgraph of each goal in ``ctx``'s build, the records naming ``build_id``."""
    sub_options = options.subgraph(fmt, ctx.schema, goals=True)
    grounded = grounded_goals(goals)
    assembled = assemble(ctx, grounded, sub_options, options.add_related, goal_checks=True)
    render = Render.for_frame(
        ctx.labels, assembled.passing(), layout.segmented and options.segmented, fmt.type_relation, build_id
    )
    dialogues = assembled.dialogues(ctx.labels, render, fmt.shape)
    records = [(d.dialogue_id, record) for d in dialogues for record in fmt.goal_records(d, layout, render)]
    untranslated = language_problems(records, ctx.labels, fmt)
    unusable = layout_problems(fmt, layout, records)
    dropped = {u["record_id"] for u in untranslated + unusable}
    return _GoalRecords(
        [r for r in records if r[0] not in dropped], dialogues, assembled.problems, unusable, grounded.ids, untranslated
    )


def language_problems(records: list[tuple[str, dict[str, Any]]], labels: Labels, fmt: Format) -> list[dict[str, Any]]:
    """The records holding text not in ``labels``' language (:class:`LanguageCheck`), with where; with
    ``allow_mixed`` none (the text is listed in the labels' report instead)."""
    check = LanguageCheck(labels, fmt.marks)
    found = []
    for record_id, record in records:
        problems = check.problems(record)
        if problems:
            found.append({"record_id": record_id, "problems": problems})
    return found


def untranslated_message(untranslated: list[dict[str, Any]], language: str) -> str:
    example = untranslated[0]
    more = f" (and {len(example['problems']) - 1} more in it)" if len(example["problems"]) > 1 else ""
    return (
        f"{len(untranslated)} goals hold text with no {language} form, nothing was written (give --allow-mixed "
        f"to write it as it is, listed in the report, or --skip-invalid to write the others): "
        f"{example['record_id']}: {example['problems'][0]}{more}"
    )


def _changed_since(
    ctx: Context,
    goals: list[Goal],
    fmt: Format,
    layout: Any,
    options: ExportOptions,
    records: list[tuple[str, dict[str, Any]]],
) -> list[tuple[str, dict[str, Any]]]:
    """The ``records`` that differ from what the same export of build ``options.changed_since`` makes (a fact
    of the goal's subgraph or path changed, came or went, or a label changed), or that it does not make at all
    (the goal failed a check there): exactly the goals the changes between the two builds touch. The earlier
    build's records are rendered naming the current build, so only what the graph gives them can differ."""
    assert options.changed_since is not None  # the caller's condition
    then = Context.open(ctx.snapshot.kept(options.changed_since), options.language)
    earlier = dict(_goal_records(then, goals, fmt, layout, options, ctx.manifest.build_id).records)
    changed = [(record_id, record) for record_id, record in records if earlier.get(record_id) != record]
    if not changed:
        raise KgforgeError(
            f"no goal's subgraph changed since build {options.changed_since} "
            f"({len(records):,} records compared); nothing was written"
        )
    return changed


def grounded_goals(goals: list[Goal]) -> Grounded:
    """New goals as dialogues to assemble: their topics, goal paths, ids and what each carries (sequence, profile)."""
    topics = pl.DataFrame(
        [(i, pos, t) for i, g in enumerate(goals) for pos, t in enumerate(g.topics)], schema=TOPIC_SCHEMA, orient="row"
    )
    paths = pl.DataFrame(
        [(i, t.s, t.p, t.o, bool(t.o_is_entity)) for i, g in enumerate(goals) for t in g.path],
        schema=PATH_SCHEMA,
        orient="row",
    )
    ids = [f"dlg-{g.goal_id.removeprefix('g-')}" for g in goals]
    meta = {
        i: {
            "kind": g.kind,
            "goal_id": g.goal_id,
            "seed": g.seed,
            "sequence": g.extra.get("sequence"),
            "profile": g.extra.get("profile"),
            "profile_en": g.extra.get("profile_en"),
            "profile_entities": g.extra.get("profile_entities"),
            "situation": g.extra.get("situation"),
            "topic_types": g.topic_types,
        }
        for i, g in enumerate(goals)
    }
    return Grounded(topics, paths, ids, meta)
