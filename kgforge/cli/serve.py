"""`kgforge serve`: a SPARQL endpoint and a browser explorer over a domain."""

from __future__ import annotations

from typing import Annotated

import typer

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    POSITIVE,
    POSITIVE_NUMBER,
    DomainArgument,
    WorkdirOption,
    app,
    console,
    whole_number,
)
from kgforge.serve import ServeOptions, serve

PORT = whole_number(1)


@app.command("serve")
def serve_command(
    domain: DomainArgument,
    host: Annotated[str, typer.Option(help="Address to listen on; loopback unless you mean to share it.")
                    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(parser=PORT, help="Port to listen on.")] = 7878,
    timeout: Annotated[float, typer.Option(parser=POSITIVE_NUMBER, help="Seconds a query may run before 503.")
                       ] = 30.0,
    max_rows: Annotated[int, typer.Option("--max-rows", parser=POSITIVE,
                                          help="Most rows (or triples) one answer may hold.")] = 100_000,
    workers: Annotated[int | None, typer.Option(parser=POSITIVE, help="Queries that may run at once, one worker "
                                                "process each (default: 2 per core, at least 8).")] = None,
    cors: Annotated[list[str], typer.Option("--cors", help="Let browser pages from this origin call the endpoint "
                                            "(repeatable; '*' for any). Off by default.")] = [],
    memory: Annotated[int | None, typer.Option(parser=whole_number(64), help="MiB one query worker may use; a "
                                               "query past it gets 503 (default: the workers together at most "
                                               "half the machine's memory).")] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
) -> None:
    """Serve DOMAIN read-only: the SPARQL endpoint at /sparql and the explorer at /."""
    options = ServeOptions(host=host, port=port, timeout=timeout, max_rows=max_rows, cors=tuple(cors),
                           worker_memory=memory, **({"workers": workers} if workers else {}))
    console.print(f"kgforge serve {domain}: explorer http://{host}:{port}/ · SPARQL endpoint "
                  f"http://{host}:{port}/sparql (Ctrl-C stops)")
    serve(domain, workdir, options)
