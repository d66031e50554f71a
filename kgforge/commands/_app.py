"""The typer app every command module registers on, and shared options and output helpers."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

app = typer.Typer(
    name="kgforge", no_args_is_help=True, pretty_exceptions_enable=False, add_completion=False,
    help="Build, query and export knowledge graphs for knowledge-grounded dialogue research.",
)
console = Console(highlight=False)
err_console = Console(stderr=True, highlight=False)

WorkdirOption = Annotated[
    Path, typer.Option("--workdir", help="Folder holding one sub-folder per domain.", envvar="KGFORGE_WORKDIR")
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
DEFAULT_WORKDIR = Path("kg")


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


def show_mapping(title: str, data: dict[str, Any]) -> None:
    """A flat key/value summary for people."""
    console.print(f"[bold]{title}[/]")
    for key, value in data.items():
        if isinstance(value, float):
            value = f"{value:,.1f}"
        elif isinstance(value, int):
            value = f"{value:,}"
        console.print(f"  {key:<26} {value}")
