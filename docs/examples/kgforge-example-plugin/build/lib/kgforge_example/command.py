"""Command ``kgforge relation-counts DOMAIN``: how many facts each relation has, through the public API."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge import Domain


def relation_counts(
    domain: Annotated[str, typer.Argument(help="Domain folder under --workdir.")],
    workdir: Annotated[Path, typer.Option("--workdir", envvar="KGFORGE_WORKDIR")] = Path("kg"),
) -> None:
    """Facts per relation of DOMAIN's published build, most first."""
    facts = Domain(domain, workdir).tables().facts
    counts = facts.group_by("p").len().sort(["len", "p"], descending=[True, False])
    for relation, n in counts.iter_rows():
        typer.echo(f"{n}\t{relation}")
