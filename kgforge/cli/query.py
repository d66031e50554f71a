"""`kgforge query` and `kgforge export-rdf`."""

from __future__ import annotations

import csv
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import pyoxigraph as ox
import typer
from rich.markup import escape
from rich.status import Status
from rich.table import Column, Table

from kgforge.api import (
    QUERY_TIMEOUT,
    Domain,
    QueryReport,
    list_queries,
    load_query,
    parse_binding,
    registry,
)
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    HTTP_URL,
    LANGUAGE,
    NON_NEGATIVE,
    NOTHING_CHANGED,
    NOTHING_HALF_WRITTEN,
    OUT_FILE,
    POSITIVE_NUMBER,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    err_console,
    names_and_aliases,
    one_of,
    registered,
    show_mapping,
    when_interrupted,
)
from kgforge.cli._results import PREFIXES, declared_prefixes, labelled_rows, shorten, spreadsheet_cell, term_text
from kgforge.serve.client import endpoint_query  # the served graph's client, not a stage

RDF_FORMATS = registry("RDF format")


RESULT_FORMATS = ("table", "csv", "json")
TABLE_LIMIT = 100  # rows a table shows unless --limit says otherwise; csv and json give every row by default


# The options of `kgforge query`, in the order --help lists them (the command's signature keeps it).
QueryArgument = Annotated[
    str,
    typer.Argument(
        help="A shipped query's name (`kgforge queries` lists them, e.g. goal_two_step) or SPARQL text.",
        show_default=False,
    ),
]
QueryFileOption = Annotated[
    Path | None,
    typer.Option("--file", "-f", help="A .rq file; queries/NAME.rq finds a shipped query from any directory."),
]
BindOption = Annotated[
    list[str],
    typer.Option(
        "--bind",
        "-b",
        help="VAR=VALUE: an entity's label where VAR stands as "
        'a subject, else a literal; VAR="text" a plain literal, VAR@zh=text a '
        "tagged one, VAR=<IRI> an IRI.",
    ),
]
ResultFormatOption = Annotated[str, typer.Option("--format", parser=one_of(RESULT_FORMATS), help="table, csv or json.")]
RowLimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        parser=NON_NEGATIVE,
        show_default=False,
        help=f"Rows to print (0: all). Default {TABLE_LIMIT} for the table, all for csv and json.",
    ),
]
TimeoutOption = Annotated[float, typer.Option(parser=POSITIVE_NUMBER, help="Seconds before the query is stopped.")]
AllowServiceOption = Annotated[
    bool,
    typer.Option(
        "--allow-service",
        help="Let SERVICE clauses call the remote "
        "endpoints they name (refused by default: a query must not "
        "make this machine send requests it was not asked to).",
    ),
]
EndpointOption = Annotated[
    str | None,
    typer.Option(
        "--endpoint",
        parser=HTTP_URL,
        help="Run it on a served graph (`kgforge serve`: http://127.0.0.1:7878/sparql) instead of the store.",
    ),
]
LabelLanguageOption = Annotated[
    str | None,
    typer.Option(
        "--lang",
        parser=LANGUAGE,
        help="Language of the labels shown beside IRIs and tried first for plain values (default: the schema's).",
    ),
]


@app.command("query")
@when_interrupted(NOTHING_CHANGED)
def query_command(
    domain: DomainArgument,
    query: QueryArgument = "",
    file: QueryFileOption = None,
    bind: BindOption = [],
    fmt: ResultFormatOption = "table",
    limit: RowLimitOption = None,
    timeout: TimeoutOption = QUERY_TIMEOUT,
    allow_service: AllowServiceOption = False,
    endpoint: EndpointOption = None,
    lang: LabelLanguageOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Run a SPARQL query over the union of the domain's graphs; values are bound, never pasted.

    The query is a shipped query's name or SPARQL text; each IRI in the result comes with its label."""
    fmt = "json" if json_out else fmt
    text = load_query(query, file)
    bindings = dict(parse_binding(b) for b in bind)
    rows = (TABLE_LIMIT if fmt == "table" else 0) if limit is None else limit
    prefixes = {**PREFIXES, **declared_prefixes(text)}
    if endpoint:
        result = endpoint_query(endpoint, text, bindings, timeout=timeout, domain=domain, label_language=lang)
        shown = result.rows[:rows] if rows else result.rows  # the endpoint sends every row: cut here
        _print_result(
            QueryReport(
                domain,
                result.kind,
                tuple(result.variables),
                tuple(shown),
                result.boolean,
                truncated=len(shown) < len(result.rows),
                more_rows=len(result.rows) - len(shown),
                triples=tuple(result.triples or ()),
            ),
            fmt,
            prefixes,
        )
        return
    with _waiting(enabled=fmt != "json" and err_console.is_terminal) as waiting:
        # by name when it is one, so a missing binding's message can name the query
        report = Domain(domain, workdir).query(
            text if file else query,
            timeout=timeout,
            limit=rows,
            allow_service=allow_service,
            waiting=waiting,
            label_language=lang,
            **bindings,
        )
    _print_result(report, fmt, prefixes)


@app.command("queries")
def queries_command(json_out: JsonOption = False) -> None:
    """List the shipped queries, by name, with what each returns (`kgforge query DOMAIN NAME` runs one)."""
    described = {shipped.name: shipped.description for shipped in list_queries()}
    if json_out:
        emit_json(described)
        return
    table = Table("name", "what it returns", show_lines=False)
    for name, description in described.items():
        table.add_row(name, description)
    console.print(table)


@contextmanager
def _waiting(enabled: bool) -> Iterator[Callable[[float], None] | None]:
    """A callback showing a spinner with the elapsed time on stderr once a query has run a second."""
    if not enabled:
        yield None
        return
    status: Status | None = None

    def show(elapsed: float) -> None:
        nonlocal status
        if elapsed < 1.0:
            return
        if status is None:
            status = err_console.status("")
            status.start()
        status.update(f"querying… {elapsed:.0f} s")

    try:
        yield show
    finally:
        if status is not None:
            status.stop()


def _print_result(report: QueryReport, fmt: str, prefixes: dict[str, str]) -> None:
    if report.kind == "ask":
        emit_json({"boolean": report.boolean}) if fmt == "json" else console.print(str(report.boolean).lower())
        return
    if report.kind == "construct":
        data = ox.serialize(list(report.triples), format=ox.RdfFormat.N_TRIPLES)
        assert data is not None  # given no output, pyoxigraph returns the bytes (its stub: bytes | None for both)
        sys.stdout.write(data.decode("utf-8"))
        return
    variables, rows = list(report.variables), list(report.rows)
    columns, texts = labelled_rows(variables, rows, report.labels)
    columns = columns if report.labels else variables  # an endpoint's answer comes without labels
    if fmt == "json":
        bindings = [
            {
                **{k: _json_term(v) for k, v in row.items()},
                **{c: {"type": "literal", "value": text[c]} for c in columns if c not in variables and text[c]},
            }
            for row, text in zip(rows, texts)
        ]
        emit_json(
            {"head": {"vars": columns}, "results": {"bindings": bindings}}
            | ({"more_rows": report.more_rows if report.more_rows is not None else True} if report.truncated else {})
        )
    elif fmt == "csv":
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(columns)
        writer.writerows([[spreadsheet_cell(text[c] or "") for c in columns] for text in texts])
    else:
        table = Table(*(Column(v, overflow="fold") for v in variables), show_lines=False)
        for row in rows:
            table.add_row(*(_table_cell(report, row.get(v), prefixes) for v in variables))
        console.print(table)
        console.print(f"{len(rows)} row(s)")
    if report.truncated:
        err_console.print(_more_note(report, fmt), soft_wrap=True)


def _table_cell(report: QueryReport, term: Any, prefixes: dict[str, str]) -> str:
    """A literal's value; an IRI as a prefixed name (the query's own prefixes too), its label before it."""
    if not isinstance(term, ox.NamedNode):
        return escape(term_text(term))
    label = report.label(term)
    short = shorten(term.value, prefixes)
    return escape(f"{label} ({short})" if label else short)


def _more_note(report: QueryReport, fmt: str) -> str:
    shown = len(report.rows)
    how_many = f"{report.more_rows:,} more rows" if report.more_rows is not None else "more rows"
    every = "--limit 0 for all" + (" (or --format csv --limit 0 > rows.csv)" if fmt == "table" else "")
    return f"{how_many} not shown (first {shown:,} printed); {every}"


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
@when_interrupted(NOTHING_HALF_WRITTEN)
def export_rdf_command(
    domain: DomainArgument,
    fmt: Annotated[
        str, typer.Option("--format", parser=registered(RDF_FORMATS), help=f"One of {names_and_aliases(RDF_FORMATS)}.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", callback=OUT_FILE, help="File to write.")],
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Export the store: N-Quads/TriG keep the named graphs; N-Triples/Turtle give their union."""
    report = Domain(domain, workdir).export_rdf(out, fmt=fmt).as_dict()
    emit_json(report) if json_out else show_mapping(f"exported {domain}", report)
