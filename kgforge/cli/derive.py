"""`kgforge derive`."""

from __future__ import annotations

from typing import Annotated

import typer

from kgforge.api import Domain
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NON_NEGATIVE,
    POSITIVE,
    REBUILD_DISCARDED,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    show_mapping,
    when_interrupted,
    whole_number,
)


@app.command("derive")
@when_interrupted(REBUILD_DISCARDED)
def derive_command(
    domain: DomainArgument,
    max_group: Annotated[
        int | None,
        typer.Option(
            "--max-group",
            parser=whole_number(2),
            help="Groups sharing (predicate, object) with more members than this give a seeded sample of pairs instead "
            "of all of them (default: the schema's \\[options.derive] max_group, else 10).",
        ),
    ] = None,
    max_pairs: Annotated[
        int | None,
        typer.Option(
            "--max-pairs",
            parser=POSITIVE,
            help="At most this many pairs per relation, a seeded sample (default: the schema's \\[options.derive] "
            "max_pairs, else 5000).",
        ),
    ] = None,
    seed: Annotated[int | None, typer.Option(parser=NON_NEGATIVE, help="Seed for the pair samples.")] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Associated two-hop triples (entities sharing a predicate and object) into their own named graph."""
    report = Domain(domain, workdir).derive(max_group=max_group, seed=seed, max_pairs=max_pairs).as_dict()
    if json_out:
        emit_json(report)
        return
    show_mapping(f"derived {domain}", {k: v for k, v in report.items() if not isinstance(v, dict) and k != "options"})
    console.print("[bold]per relation[/] (pairs written / groups / capped groups / pairs left out)")
    for name, counts in sorted(report["relations"].items(), key=lambda kv: -kv[1]["pairs"]):
        console.print(
            f"  {name:<14} {counts['pairs']:>10,} {counts['groups']:>8,} {counts['groups_capped']:>6,} "
            f"{counts['pairs_left_out']:>14,}"
        )
    if report["skipped_relations"]:
        console.print("skipped: " + ", ".join(f"{k} ({v})" for k, v in report["skipped_relations"].items()))
