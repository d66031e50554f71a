"""`kgforge stats`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge.api import Domain, plot_stats
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NOTHING_CHANGED,
    OUT_DIR,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    show_mapping,
    when_interrupted,
)


@app.command("stats")
@when_interrupted(NOTHING_CHANGED)
def stats_command(
    domain: DomainArgument,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            metavar="DIR",
            callback=OUT_DIR,
            help="Also write PNG figures into DIR (`--plot .` for here): facts per relation "
            "(top 30) and the degree distribution (log-log).",
        ),
    ] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Entities, relations, triples and per-triple sizes (KdConv / DuConv Table 2)."""
    report = Domain(domain, workdir).stats()
    figures = plot_stats(report, plot) if plot is not None else []
    stats = report.as_dict()
    if json_out:
        emit_json(stats | ({"figures": [str(f) for f in figures]} if figures else {}))
        return
    flat = {k: v for k, v in stats.items() if not isinstance(v, dict)}
    show_mapping(f"{domain}", flat)
    show_mapping("entities by type", stats["entities_by_type"] or {"(none)": 0})
    if stats.get("languages"):  # DuRecDial 2.0 Table 2: what each language can name, and both
        parallel = stats["languages"]
        show_mapping(
            f"parallel KG ({' / '.join(parallel['languages'])} / both / all)",
            {
                what: " / ".join(f"{parallel[what][k]:,}" for k in (*parallel["languages"], "both", "all"))
                for what in ("entities", "attributes", "triples")
            },
        )
    for figure in figures:
        console.print(f"wrote {figure.absolute()}", markup=False, soft_wrap=True)
