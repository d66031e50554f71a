"""`kgforge build`, `kgforge check` and `kgforge sources`."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.markup import escape

from kgforge.api import Domain, source_kinds
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NOTHING_CHANGED,
    REBUILD_DISCARDED,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    bars_wanted,
    console,
    emit_json,
    reads_inputs,
    show_mapping,
    when_interrupted,
)


@app.command("build")
@when_interrupted(REBUILD_DISCARDED)
@reads_inputs
def build_command(
    domain: DomainArgument,
    source: Annotated[list[str], typer.Option("--source", "-s", help="Extra source KIND:PATH (repeatable).")] = [],
    schema: Annotated[
        str,
        typer.Option(help="Schema name or .toml path (default: the domain's own, else one inferred from the sources)."),
    ] = "",
    no_schema_sources: Annotated[
        bool, typer.Option("--no-schema-sources", help="Use only the --source inputs.")
    ] = False,
    full: Annotated[
        bool,
        typer.Option(
            "--full", help="Import and load every source, even those that did not change since the published build."
        ),
    ] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Import the domain's sources and swap in a freshly built store.

    Sources that did not change since the published build keep their graphs (--full imports them all)."""
    report = Domain(domain, workdir).build(
        source, schema=schema or None, schema_sources=not no_schema_sources, progress=bars_wanted(json_out), full=full
    )
    result = report.as_dict()
    if json_out:
        emit_json(result)
        return
    for src, decision in zip(result["sources"], report.decisions):
        note = f", [yellow]{src['quarantined']} quarantined[/] → {src['quarantine_file']}" if src["quarantined"] else ""
        console.print(
            f"  {escape(decision.action)} {escape(src['kind'])}:{escape(src['path'])}: "
            f"{src['counts'].get('records_ok', 0):,} records, {src['quads']:,} quads{note}",
            soft_wrap=True,
        )
        console.print(f"    {escape(decision.reason)}", soft_wrap=True, style="dim")
    if result["schema"]["inferred"]:
        console.print(f"  schema: [yellow]inferred[/] ({escape(result['schema']['path'])})", soft_wrap=True)
    if not report.published:
        console.print(
            f"nothing changed: build {result['build_id']} stays published ({result['total_quads']:,} "
            "quads; --full builds it again)"
        )
        return
    show_mapping(
        f"built {domain} ({result['build_id']})",
        {
            "quads": result["total_quads"],
            "graphs": len(result["graphs"]),
            "records loaded": result["records_ok"],
            "records quarantined": result["records_bad"],
            "load quads/s": result["timings"].get("load_quads_per_second") or 0,
        },
    )
    for dropped in report.dropped:
        console.print(f"[yellow]{escape(dropped.message)}[/]", soft_wrap=True)


@app.command("check")
@when_interrupted(NOTHING_CHANGED)
def check_command(
    domain: DomainArgument,
    clean: Annotated[
        bool,
        typer.Option(
            "--clean", help="Remove what killed or failed writers left behind (incomplete builds, *.part files) first."
        ),
    ] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Compare the store with its manifest (per-graph counts, quads checksums); report leftovers."""
    checked = Domain(domain, workdir).check(clean=clean)
    report, removed = checked.as_dict(), checked.removed or ()
    if json_out:
        emit_json(report)
    else:
        status = "[green]ok[/]" if report["ok"] else "[red]MISMATCH[/]"
        console.print(f"{domain} ({report['build_id']}): {status}, {report['total_quads']:,} quads")
        for problem in report["problems"]:
            console.print(f"  - {problem}", markup=False, soft_wrap=True)
        if removed:
            console.print(f"removed {len(removed)} left behind by killed or failed writers")
        if report["leftovers"]:
            console.print(
                f"[yellow]{len(report['leftovers'])} left behind by killed or failed writers[/] "
                f"(never read; remove with `{escape(report['clean_command'])}`):",
                soft_wrap=True,
            )
            for path in report["leftovers"]:
                console.print(f"  - {path}", markup=False, soft_wrap=True)
        if report["writer_pid"]:
            console.print(f"a writer is running (pid {report['writer_pid']}); its staging build is not checked")
    if not report["ok"]:
        raise typer.Exit(1)


@app.command("sources")
@when_interrupted(NOTHING_CHANGED)
def sources_command(json_out: JsonOption = False) -> None:
    """List the source kinds `--source KIND:PATH` accepts."""
    kinds = source_kinds()
    if json_out:
        emit_json(kinds)
    else:
        for kind, description in kinds.items():
            console.print(f"  {kind:<18} {description}", markup=False)
