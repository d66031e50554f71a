"""`kgforge init`: a schema for a new domain, inferred from sample data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kgforge.api import Domain
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    LANGUAGE,
    OUT_FILE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
)


@app.command("init")
def init_command(
    domain: DomainArgument,
    from_: Annotated[
        list[str],
        typer.Option(
            "--from",
            "-f",
            help="Sample data, FILE or KIND:FILE (repeatable); "
            "the kind follows from the extension (.csv .tsv .jsonl .nt .ttl …).",
        ),
    ] = [],
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            callback=OUT_FILE,
            help="Where to write the schema (default: WORKDIR/DOMAIN/schema.toml, which `kgforge build DOMAIN` uses).",
        ),
    ] = None,
    language: Annotated[
        str | None,
        typer.Option(parser=LANGUAGE, help="Language of names and literals (default: from the samples' script)."),
    ] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing schema file.")] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Write a schema for a new domain, inferred from sample data; print what was inferred and what to edit."""
    report = Domain(domain, workdir).init_schema(from_, out=out, language=language, force=force)
    options = (f" --schema {report.schema}" if out else "") + (
        f" --workdir {workdir}" if workdir != DEFAULT_WORKDIR else ""
    )
    summary = dict(
        report.as_dict(),
        build_command=f"kgforge build {domain}{options} "
        + " ".join(f"--source {spec.kind}:{spec.path}" for spec in report.samples),
    )
    if json_out:
        emit_json(summary)
        return
    _show(summary)


def _show(summary: dict) -> None:
    console.print(
        f"[bold]wrote {escape(summary['schema'])}[/] ({summary['records']:,} sample records, "
        f"language {summary['language']})",
        soft_wrap=True,
    )
    for rid, rel in summary["relations"].items():
        extra = f" {rel['datatype']}" if rel.get("datatype") else ""
        is_type = " (the type relation)" if rid == summary["type_relation"] else ""
        console.print(f"  relation {rid:<20} {rel['kind']}{extra}{is_type}", markup=False)
    if summary["types"]:
        console.print(f"  types: {', '.join(summary['types'])}", markup=False)
    for section, settings in summary["settings"].items():
        console.print(
            f"  [options.{section}] " + ", ".join(f"{k} = {v}" for k, v in settings.items()),
            markup=False,
            soft_wrap=True,
        )
    console.print(
        "edit: relation kinds and zh/en labels, datatypes, types; then delete the `inferred = true` line",
        markup=False,
        soft_wrap=True,
    )
    console.print(f"build: {summary['build_command']}", markup=False, soft_wrap=True)
