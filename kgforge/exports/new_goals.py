"""New goals (from ``kgforge goals``) as dialogues without a conversation, in a layout meaningful without one."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.files import sha256_file
from kgforge.core.gc_pause import paused_gc
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
from kgforge.exports.labels import Render
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import format_named, goal_layout
from kgforge.exports.writing import finish, layout_problems
from kgforge.goals.record import Goal, read_goals
from kgforge.store.layout import domain_paths
from kgforge.store.tables import GraphTables


@paused_gc()
def export_goals(domain: str, goals_file: Path, options: ExportOptions, out: Path,
                 workdir: Path | str | None = None, tables: GraphTables | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    out = domain_paths(domain, workdir).output(out)
    fmt = format_named(options.fmt)
    layout = goal_layout(fmt, options.layout)
    ctx = Context.open(domain, workdir, options.language, tables, allow_mixed=options.allow_mixed)
    goals = list(read_goals(goals_file))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals to export")
    sub_options = options.subgraph(fmt, ctx.schema, goals=True)
    grounded = _grounded(goals)
    assembled = assemble(ctx, grounded, sub_options, options.add_related, goal_checks=True)
    problems = assembled.problems
    checks = check_report(problems, grounded.ids, options.skip_invalid, GOAL_CHECKS)
    render = Render.for_frame(ctx.labels, assembled.passing(), layout.segmented and options.segmented,
                              fmt.type_relation, ctx.manifest.build_id)
    dialogues = assembled.dialogues(ctx.labels, render, fmt.shape)
    records = [(d.dialogue_id, record) for d in dialogues for record in fmt.goal_records(d, layout, render)]
    unusable = layout_problems(fmt, layout, records)
    if unusable and not options.skip_invalid:
        example = unusable[0]
        raise ExportCheckError(f"{len(unusable)} records would not be read by the {layout.kind} readers, nothing was "
                               f"written (give --skip-invalid to write the others): {example['record_id']}: "
                               f"{example['problems'][0]}")
    dropped = {u["record_id"] for u in unusable}
    kept = [r for r in records if r[0] not in dropped]
    rejected = ([{"dialogue_id": grounded.ids[i], "reason": "; ".join(p)} for i, p in sorted(problems.items())]
                + [{"dialogue_id": u["record_id"], "reason": "; ".join(u["problems"])} for u in unusable])
    checks["layout_checks"] = f"what the {layout.kind} readers need ({type(fmt).__name__}.check)"
    checks["layout_failures"] = unusable[:50]
    extra = {"goals_file": str(goals_file), "goals_sha256": sha256_file(goals_file),
             "dialogues": len({record_id for record_id, _ in kept}),
             "triples": sum(len(d.knowledge) for d in dialogues if d.dialogue_id not in dropped), "checks": checks,
             "seeds": sorted({g.seed for g in goals if g.seed is not None}), "labels": ctx.labels.report()}
    return finish(ctx, fmt, layout, kept, options, out, extra, started, rejected)


def _grounded(goals: list[Goal]) -> Grounded:
    topics = pl.DataFrame([(i, pos, t) for i, g in enumerate(goals) for pos, t in enumerate(g.topics)],
                          schema=TOPIC_SCHEMA, orient="row")
    paths = pl.DataFrame([(i, t["s"], t["p"], t["o"], bool(t["o_is_entity"])) for i, g in enumerate(goals)
                          for t in g.path], schema=PATH_SCHEMA, orient="row")
    ids = [f"dlg-{g.goal_id.removeprefix('g-')}" for g in goals]
    meta = {i: {"kind": g.kind, "goal_id": g.goal_id, "seed": g.seed, "sequence": g.extra.get("sequence"),
                "profile": g.extra.get("profile"), "topic_types": g.topic_types} for i, g in enumerate(goals)}
    return Grounded(topics, paths, ids, meta)
