"""`kgforge domains`: what is built in the workdir."""

from __future__ import annotations

from kgforge.api import describe_workdir, list_domains
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NOTHING_CHANGED,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    when_interrupted,
)


@app.command("domains")
@when_interrupted(NOTHING_CHANGED)
def domains_command(workdir: WorkdirOption = DEFAULT_WORKDIR, json_out: JsonOption = False) -> None:
    """List the domains built in the workdir: quads, size on disk, published build, derived graphs, embeddings."""
    domains = list_domains(workdir)
    if json_out:
        emit_json([d.as_dict() for d in domains])
        return
    if not domains:
        console.print(
            f"no domain is built in {describe_workdir(workdir)}; build one with `kgforge build DOMAIN --source "
            "KIND:PATH` (`kgforge sources` lists the kinds), or `kgforge init` first",
            markup=False,
            soft_wrap=True,
        )
        return
    console.print(f"{len(domains)} domain(s) in {describe_workdir(workdir)}", markup=False, soft_wrap=True)
    for d in domains:
        console.print(
            f"[bold]{d.name}[/]  {d.quads:,} quads in {d.graphs} graphs, {_size(d.size_bytes)} on disk, "
            f"schema {d.schema}",
            soft_wrap=True,
        )
        console.print(f"  build {d.build_id} ({d.built_at})", markup=False)
        console.print(
            f"  derived: {', '.join(d.derived) or '-'}   embeddings: {', '.join(d.embeddings) or '-'}", markup=False
        )


def _size(n: float) -> str:
    """``1.7 MiB``: binary units, one decimal."""
    unit = "B"
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):  # noqa: B007 — the unit reached is read after the loop
        if n < 1024:
            break
        n /= 1024
    return f"{n:,.0f} B" if unit == "B" else f"{n:,.1f} {unit}"
