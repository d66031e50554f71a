"""`kgforge init`: a schema for a new domain, inferred from sample data."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kgforge.build.transaction import parse_source
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    LANGUAGE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
)
from kgforge.core.errors import KgforgeError
from kgforge.core.schema import DOMAIN_SCHEMA_FILE, SourceSpec
from kgforge.sources.importer import kind_for_suffix, source_kinds
from kgforge.sources.schema_infer import infer_schema
from kgforge.store.layout import domain_paths

@app.command("init")
def init_command(
    domain: DomainArgument,
    from_: Annotated[list[str], typer.Option("--from", "-f", help="Sample data, FILE or KIND:FILE (repeatable); "
                                             "the kind follows from the extension (.csv .tsv .jsonl .nt .ttl …).")] = [],
    out: Annotated[Path | None, typer.Option("--out", help="Where to write the schema (default: "
                                             "WORKDIR/DOMAIN/schema.toml, which `kgforge build DOMAIN` uses).")] = None,
    language: Annotated[str | None, typer.Option(parser=LANGUAGE, help="Language of names and literals "
                                          "(default: from the samples' script).")] = None,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing schema file.")] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Write a schema for a new domain, inferred from sample data; print what was inferred and what to edit."""
    paths = domain_paths(domain, workdir)
    target = paths.output(out, paths.root / DOMAIN_SCHEMA_FILE) if out else paths.root / DOMAIN_SCHEMA_FILE
    if target.exists() and not force:
        raise KgforgeError(f"{target} exists already: edit it, or give --force to infer it again")
    if not from_:
        raise KgforgeError("give sample data with --from FILE (a CSV, TSV, JSON Lines or RDF file)")
    samples = [sample_source(text) for text in from_]
    inferred = infer_schema(domain, samples, language)
    schema = inferred.write(target)
    options = (f" --schema {target}" if out else "") + (f" --workdir {workdir}" if workdir != DEFAULT_WORKDIR else "")
    summary = dict(inferred.summary, schema=str(schema.path), build_command=f"kgforge build {domain}{options} "
                   + " ".join(f"--source {spec.kind}:{spec.path}" for spec in samples))
    if json_out:
        emit_json(summary)
        return
    _show(summary)


def sample_source(text: str) -> SourceSpec:
    """``KIND:FILE``, or a FILE whose extension names its kind."""
    kind, sep, _ = text.partition(":")
    if sep and kind in source_kinds():
        return parse_source(text)
    path = Path(text)
    suffixes = [s.lower() for s in path.suffixes if s.lower() not in (".gz", ".bz2")]
    kind = kind_for_suffix(suffixes[-1]) if suffixes else None
    if kind is None:
        raise KgforgeError(f"cannot tell the kind of {text!r} from its extension: write KIND:{text} "
                           f"(kinds: {', '.join(source_kinds())})")
    return SourceSpec(kind=kind, path=text)


def _show(summary: dict) -> None:
    console.print(f"[bold]wrote {escape(summary['schema'])}[/] ({summary['records']:,} sample records, "
                  f"language {summary['language']})", soft_wrap=True)
    for rid, rel in summary["relations"].items():
        extra = f" {rel['datatype']}" if rel.get("datatype") else ""
        is_type = " (the type relation)" if rid == summary["type_relation"] else ""
        console.print(f"  relation {rid:<20} {rel['kind']}{extra}{is_type}", markup=False)
    if summary["types"]:
        console.print(f"  types: {', '.join(summary['types'])}", markup=False)
    for section, settings in summary["settings"].items():
        console.print(f"  [options.{section}] " + ", ".join(f"{k} = {v}" for k, v in settings.items()),
                      markup=False, soft_wrap=True)
    console.print("edit: relation kinds and zh/en labels, datatypes, types; then delete the `inferred = true` line",
                  markup=False, soft_wrap=True)
    console.print(f"build: {summary['build_command']}", markup=False, soft_wrap=True)
