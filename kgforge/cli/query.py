"""`kgforge query` and `kgforge export-rdf`."""

from __future__ import annotations

import csv
import sys
from pathlib import Path
from typing import Annotated

import pyoxigraph as ox
import typer
from rich.table import Table

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    HTTP_URL,
    POSITIVE_NUMBER,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    names_and_aliases,
    one_of,
    registered,
    show_mapping,
)
from kgforge.core.errors import QueryError
from kgforge.serve.client import endpoint_query
from kgforge.store.layout import domain_paths
from kgforge.store.query import (
    DEFAULT_TIMEOUT,
    QueryResult,
    QueryRunner,
    parse_binding,
    read_query_file,
    term_text,
)
from kgforge.store.rdf_export import RDF_FORMATS, export_rdf

RESULT_FORMATS = ("table", "csv", "json")


@app.command("query")
def query_command(
    domain: DomainArgument,
    sparql: Annotated[str, typer.Argument(help="SPARQL text (or use --file).")] = "",
    file: Annotated[Path | None, typer.Option("--file", "-f", help="A .rq file, e.g. queries/neighbourhood.rq.")] = None,
    bind: Annotated[list[str], typer.Option("--bind", "-b",
                                            help="VAR=VALUE (literal), VAR@zh=VALUE (tagged), VAR=<IRI>.")] = [],
    fmt: Annotated[str, typer.Option("--format", parser=one_of(RESULT_FORMATS), help="table, csv or json.")
                   ] = "table",
    timeout: Annotated[float, typer.Option(parser=POSITIVE_NUMBER, help="Seconds before the query is stopped.")
                       ] = DEFAULT_TIMEOUT,
    allow_service: Annotated[bool, typer.Option("--allow-service", help="Let SERVICE clauses call the remote "
                                                "endpoints they name (refused by default: a query must not "
                                                "make this machine send requests it was not asked to).")] = False,
    endpoint: Annotated[str | None, typer.Option("--endpoint", parser=HTTP_URL, help="Run it on a served graph "
                                                 "(`kgforge serve`: http://127.0.0.1:7878/sparql) instead of the store.")
                        ] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Run a SPARQL query over the union of the domain's graphs; values are bound, never pasted."""
    fmt = "json" if json_out else fmt
    if bool(sparql) == bool(file):
        raise QueryError("give either SPARQL text or --file, not both")
    text = read_query_file(file) if file else sparql
    bindings = dict(parse_binding(b) for b in bind)
    if endpoint:
        _print_result(endpoint_query(endpoint, text, bindings, timeout=timeout), fmt)
        return
    with QueryRunner(domain_paths(domain, workdir)) as runner:
        result = runner.query(text, bindings, timeout=timeout, allow_service=allow_service)
    _print_result(result, fmt)


def _print_result(result: QueryResult, fmt: str) -> None:
    if result.kind == "ask":
        emit_json({"boolean": result.boolean}) if fmt == "json" else console.print(str(result.boolean).lower())
        return
    if result.kind == "construct":
        sys.stdout.write(ox.serialize(result.triples, format=ox.RdfFormat.N_TRIPLES).decode("utf-8"))
        return
    if fmt == "json":
        emit_json({"head": {"vars": result.variables},
                   "results": {"bindings": [{k: _json_term(v) for k, v in row.items()} for row in result.rows]}})
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(result.variables)
        writer.writerows([[term_text(row.get(v)) for v in result.variables] for row in result.rows])
    else:
        table = Table(*result.variables, show_lines=False)
        for row in result.rows:
            table.add_row(*(term_text(row.get(v)) for v in result.variables))
        console.print(table)
        console.print(f"{len(result.rows)} row(s)")


def _json_term(term: ox.NamedNode | ox.Literal | ox.BlankNode) -> dict[str, str]:
    """A term in the W3C SPARQL 1.1 JSON results format."""
    if isinstance(term, ox.NamedNode):
        return {"type": "uri", "value": term.value}
    if isinstance(term, ox.BlankNode):
        return {"type": "bnode", "value": term.value}
    out = {"type": "literal", "value": term.value}
    if term.language:
        out["xml:lang"] = term.language
    elif term.datatype.value != "http://www.w3.org/2001/XMLSchema#string":
        out["datatype"] = term.datatype.value
    return out


@app.command("export-rdf")
def export_rdf_command(
    domain: DomainArgument,
    fmt: Annotated[str, typer.Option("--format", parser=registered(RDF_FORMATS), help=f"One of {names_and_aliases(RDF_FORMATS)}.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Export the store: N-Quads/TriG keep the named graphs; N-Triples/Turtle give their union."""
    report = export_rdf(domain, fmt, out, workdir)
    emit_json(report) if json_out else show_mapping(f"exported {domain}", report)
