"""`kgforge serve`: a SPARQL endpoint and a browser explorer over a domain."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NOTHING_CHANGED,
    POSITIVE,
    POSITIVE_NUMBER,
    DomainArgument,
    WorkdirOption,
    app,
    console,
    err_console,
    when_interrupted,
    whole_number,
)
from kgforge.serve import ServeOptions, serve

if TYPE_CHECKING:
    from kgforge.serve.runner import Listening

PORT = whole_number(1)


@app.command("serve")
@when_interrupted(NOTHING_CHANGED)
def serve_command(
    domain: DomainArgument,
    host: Annotated[
        str, typer.Option(help="Address to listen on; loopback unless you mean to share it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(parser=PORT, help="Port to listen on.")] = 7878,
    timeout: Annotated[float, typer.Option(parser=POSITIVE_NUMBER, help="Seconds a query may run before 503.")] = 30.0,
    max_rows: Annotated[
        int, typer.Option("--max-rows", parser=POSITIVE, help="Most rows (or triples) one answer may hold.")
    ] = 100_000,
    workers: Annotated[
        int | None,
        typer.Option(
            parser=POSITIVE,
            help="Queries that may run at once, one worker process each (default: 2 per core, at least 8).",
        ),
    ] = None,
    cors: Annotated[
        list[str],
        typer.Option(
            "--cors",
            help="Let browser pages from this origin call the endpoint (repeatable; '*' for any). Off by default.",
        ),
    ] = [],
    allowed_hosts: Annotated[
        list[str],
        typer.Option(
            "--allowed-host",
            help="Also answer requests whose Host header "
            "is this name (repeatable; '*' for any). localhost, --host and "
            "IP addresses are always answered.",
        ),
    ] = [],
    max_connections: Annotated[
        int, typer.Option("--max-connections", parser=POSITIVE, help="Open connections at once; more are answered 503.")
    ] = 512,
    memory: Annotated[
        int | None,
        typer.Option(
            parser=whole_number(64),
            help="MiB one query worker may use; a "
            "query past it gets 503 (default: the workers together at most "
            "half the machine's memory).",
        ),
    ] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
) -> None:
    """Serve DOMAIN read-only: the SPARQL endpoint at /sparql and the explorer at /."""
    options = ServeOptions(
        host=host,
        port=port,
        timeout=timeout,
        max_rows=max_rows,
        cors=tuple(cors),
        allowed_hosts=tuple(allowed_hosts),
        max_connections=max_connections,
        worker_memory=memory,
        **({"workers": workers} if workers else {}),
    )

    def announce(where: Listening) -> None:
        console.print(
            f"kgforge serve {domain}: explorer {where.url}/ · SPARQL endpoint {where.url}/sparql (Ctrl-C stops)",
            soft_wrap=True,
        )
        if where.reachable_from_other_machines:
            err_console.print(
                f"listening on {where.host}: the endpoint and explorer are reachable from other machines",
                soft_wrap=True,
            )

    serve(domain, workdir, options, announce=announce)
