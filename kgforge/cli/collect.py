"""`kgforge collect`: serve a site where pairs of crowd workers chat under goals, then export the dialogues."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NOTHING_HALF_WRITTEN,
    POSITIVE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    err_console,
    in_words,
    one_of,
    show_mapping,
    when_interrupted,
    whole_number,
)
from kgforge.collect import STYLES, add_tokens, export_collection, prepare_collection, serve_collection
from kgforge.serve import ServeOptions

if TYPE_CHECKING:
    from typer._click import Context  # typer's own copy of click (0.29 on), read by the type checker (see _lazy)

    from kgforge.serve.runner import Listening

SERVE_STOPPED = (
    "interrupted: every accepted turn is in DIR/journal.jsonl; run the same command again and every open "
    "session goes on where it was"
)


class _ServeByDefault(typer.core.TyperGroup):
    """`kgforge collect DOMAIN …` is `kgforge collect serve DOMAIN …`: a first word that names no subcommand
    is the domain (a domain named `tokens` or `export` needs the `serve` spelled out)."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and not args[0].startswith("-"):
            args = ["serve", *args]
        return super().parse_args(ctx, args)


collect_app = typer.Typer(
    cls=_ServeByDefault,
    no_args_is_help=True,
    help="Collect dialogues from pairs of crowd workers chatting under goals (serve, tokens, export).",
)
app.add_typer(collect_app, name="collect")
FORMATS = sorted({fmt for entry in STYLES for fmt in entry.obj.exports})
FolderArgument = Annotated[Path, typer.Argument(help="The collection folder (the --out of `kgforge collect`).")]


@collect_app.command("serve")
@when_interrupted(SERVE_STOPPED)
def serve_command(
    domain: DomainArgument,
    goals: Annotated[Path, typer.Option("--goals", help="Goals JSONL from `kgforge goals`.")],
    style: Annotated[str, typer.Option(parser=one_of(STYLES.names()), help=in_words(STYLES.names()) + ".")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The collection folder (made, or resumed).")],
    host: Annotated[
        str, typer.Option(help="Address to listen on; loopback unless you mean to share it.")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option(parser=whole_number(1), help="Port to listen on.")] = 7879,
    workers: Annotated[
        int | None, typer.Option(parser=whole_number(0), help="Make worker tokens until there are N (workers.tsv).")
    ] = None,
    per_goal: Annotated[
        int | None, typer.Option("--per-goal", parser=POSITIVE, help="Sessions per goal (default 1).")
    ] = None,
    allowed_hosts: Annotated[
        list[str],
        typer.Option("--allowed-host", help="Also answer this Host name (repeatable; '*' for any)."),
    ] = [],
    max_connections: Annotated[
        int, typer.Option("--max-connections", parser=POSITIVE, help="Open connections at once; more get 503.")
    ] = 512,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
) -> None:
    """Serve the collection site for GOALS of DOMAIN; every accepted turn is on disk before its answer."""
    report = prepare_collection(domain, goals, style, out, workdir=workdir, per_goal=per_goal, workers=workers)
    show_mapping(f"collection {escape(str(report.folder))}", _summary(report))
    if report.goals_refused:
        err_console.print(
            f"warning: {report.goals_refused} goals were refused by the {report.style} goal export "
            f"(why: {escape(str(report.folder / 'refused.jsonl'))})",
            soft_wrap=True,
        )
    options = ServeOptions(
        host=host, port=port, allowed_hosts=tuple(allowed_hosts), max_connections=max_connections, workers=1
    )

    def announce(where: Listening) -> None:
        console.print(
            f"kgforge collect {domain}: workers open {where.url}/collect?token=TOKEN (their tokens: "
            f"{escape(str(report.workers_file))}); admin view {where.url}/collect/admin?token=ADMIN "
            f"(the token in {escape(str(report.admin_file))}) (Ctrl-C stops)",
            soft_wrap=True,
        )
        if where.reachable_from_other_machines:
            err_console.print(f"listening on {where.host}: the site is reachable from other machines", soft_wrap=True)

    serve_collection(report.folder, options, workdir=workdir, announce=announce)


def _summary(report: object) -> dict[str, object]:
    data = report.as_dict()  # type: ignore[attr-defined]
    return {key: data[key] for key in ("domain", "style", "goals", "goals_refused", "per_goal", "workers", "sessions")}


@collect_app.command("tokens")
@when_interrupted(NOTHING_HALF_WRITTEN)
def tokens_command(
    folder: FolderArgument,
    add: Annotated[int, typer.Option("--add", parser=POSITIVE, help="Worker tokens to add.")],
    json_out: JsonOption = False,
) -> None:
    """Add worker tokens to a collection folder's workers.tsv (a running server takes them at once)."""
    report = add_tokens(folder, add)
    if json_out:
        emit_json(report.as_dict())
        return
    console.print(
        f"added {report.added} workers ({', '.join(report.added_ids)}); {report.workers} in "
        f"{escape(str(report.workers_file))}",
        soft_wrap=True,
    )


@collect_app.command("export")
@when_interrupted(NOTHING_HALF_WRITTEN)
def export_command(
    folder: FolderArgument,
    fmt: Annotated[
        str,
        typer.Option("--format", parser=one_of(FORMATS), help=f"{in_words(FORMATS)} (one its style exports)."),
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write.")],
    json_out: JsonOption = False,
) -> None:
    """Write the finished sessions in a dataset's layout, with clicked facts, worker ids, timings and checks."""
    report = export_collection(folder, fmt, out)
    if json_out:
        emit_json(report.as_dict())
        return
    show_mapping(f"wrote {escape(str(report.out))}", {k: v for k, v in report.as_dict().items() if k != "out"})
    if report.open_left_out:
        err_console.print(
            f"note: {report.open_left_out} sessions are not finished and were not written", soft_wrap=True
        )
