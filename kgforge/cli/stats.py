"""`kgforge stats`."""

from __future__ import annotations

from kgforge.api import Domain
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    emit_json,
    show_mapping,
)


@app.command("stats")
def stats_command(domain: DomainArgument, workdir: WorkdirOption = DEFAULT_WORKDIR,
                  json_out: JsonOption = False) -> None:
    """Entities, relations, triples and per-triple sizes (KdConv / DuConv Table 2)."""
    stats = Domain(domain, workdir).stats().as_dict()
    if json_out:
        emit_json(stats)
        return
    flat = {k: v for k, v in stats.items() if not isinstance(v, dict)}
    show_mapping(f"{domain}", flat)
    show_mapping("entities by type", stats["entities_by_type"] or {"(none)": 0})
