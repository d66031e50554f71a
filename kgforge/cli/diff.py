"""`kgforge diff`: what changed between two builds of a domain."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge.api import Domain
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    OUT_FILE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
)


@app.command("diff")
def diff_command(
    domain: DomainArgument,
    from_build: Annotated[
        str, typer.Option("--from", help="The older build's id (default: the build before the published one).")
    ] = "",
    to_build: Annotated[str, typer.Option("--to", help="The newer build's id (default: the published build).")] = "",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", callback=OUT_FILE, help="Write the differing quads there as an RDF Patch (D removed, A added)."
        ),
    ] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """List the facts added, removed and changed per graph between two builds of a domain."""
    report = Domain(domain, workdir).diff(from_build=from_build or None, to_build=to_build or None, out=out)
    if json_out:
        emit_json(report.as_dict())
        return
    data = report.as_dict()
    console.print(
        f"{domain}: {report.from_build} → {report.to_build}: {data['added']:,} added, "
        f"{data['removed']:,} removed, {data['changed']:,} changed",
        markup=False,
        soft_wrap=True,
    )
    if not report.changed_graphs:
        console.print("  no graph differs (every graph has the same checksum)", markup=False)
    for graph in report.changed_graphs:
        console.print(
            f"  {graph.graph} ({graph.status}): {graph.added:,} added, {graph.removed:,} removed, "
            f"{graph.changed:,} changed",
            markup=False,
            soft_wrap=True,
        )
    unchanged = len(report.graphs) - len(report.changed_graphs)
    if unchanged:
        console.print(f"  {unchanged} graph(s) unchanged", markup=False)
    if report.out:
        console.print(f"quads written to {report.out} (RDF Patch)", markup=False, soft_wrap=True)
