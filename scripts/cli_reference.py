"""Write docs/cli.md from the command line's own ``--help`` (run it after changing a command):

.venv/bin/python scripts/cli_reference.py          # rewrite docs/cli.md
.venv/bin/python scripts/cli_reference.py --check  # exit 1 if docs/cli.md differs (tests run this)
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import click
import typer
from typer.testing import CliRunner

from kgforge.cli._lazy import app, load_commands

DOC = Path(__file__).resolve().parent.parent / "docs" / "cli.md"
WIDTH = 110


def command_paths(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    paths = []
    for name in sorted(group.commands):
        command = group.commands[name]
        if getattr(command, "hidden", False):
            continue
        paths.append((*prefix, name))
        if isinstance(command, click.Group):
            paths += command_paths(command, (*prefix, name))
        # a command that also takes subcommands of its own (`kgforge ground train`)
        paths += [(*prefix, name, sub) for sub in sorted(getattr(command, "subcommands", {}))]
    return paths


def help_text(path: tuple[str, ...]) -> str:
    result = CliRunner().invoke(
        app,
        [*path, "--help"],
        prog_name="kgforge",
        terminal_width=WIDTH,
        env={"COLUMNS": str(WIDTH), "NO_COLOR": "1", "TERM": "dumb"},
    )
    if result.exit_code != 0:
        raise SystemExit(f"kgforge {' '.join(path)} --help failed: {result.output}")
    return "\n".join(line.rstrip() for line in result.output.strip().splitlines())


def reference() -> str:
    load_commands()
    os.environ["COLUMNS"] = str(WIDTH)
    root = typer.main.get_command(app)
    parts = [
        "# Command-line reference",
        "",
        "Generated from `kgforge … --help` by `scripts/cli_reference.py`; do not edit by hand "
        "(`tests/test_cli_reference.py` fails when this file and the commands drift apart).",
        "",
        "## kgforge",
        "",
        "```",
        help_text(()),
        "```",
        "",
    ]
    for path in command_paths(root):
        parts += [f"## kgforge {' '.join(path)}", "", "```", help_text(path), "```", ""]
    return "\n".join(parts)


def main() -> None:
    text = reference()
    if "--check" in sys.argv:
        if not DOC.is_file() or DOC.read_text(encoding="utf-8") != text:
            sys.exit(f"{DOC} is out of date: run .venv/bin/python scripts/cli_reference.py")
        return
    DOC.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
