"""The top-level group of the command line: it imports a command's module when that command is resolved,
and lists every command for --help and shell completion from ``_commands.COMMANDS`` without importing any.
Imported by ``main`` (and by ``kgforge.cli.app``'s first use), never when ``kgforge.cli`` is imported."""

from __future__ import annotations

import importlib
import inspect

import typer

from kgforge.cli import _load_commands
from kgforge.cli._app import app, err_console
from kgforge.cli._commands import COMMANDS

__all__ = ["app", "command_index", "err_console"]


def command_index() -> dict[str, tuple[str, str]]:
    """Each command's module and first help paragraph, from the modules themselves (what ``COMMANDS`` holds)."""
    _load_commands()
    modules = {info.name or info.callback.__name__.lower().replace("_", "-"): info.callback.__module__
               for info in app.registered_commands}
    modules |= {info.name: info.typer_instance.registered_commands[0].callback.__module__
                for info in app.registered_groups}
    group = typer.main.get_command(app)
    return {name: (modules[name].rsplit(".", 1)[-1], _summary(command.help or ""))
            for name, command in group.commands.items() if not command.hidden}


def _summary(help_text: str) -> str:
    return inspect.cleandoc(help_text).split("\n\n")[0].strip()


class _LazyGroup(typer.core.TyperGroup):
    """The top-level group: imports a command's module when the command is resolved; lists the commands
    for --help and shell completion from the index, without importing any."""

    listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands]))

    def get_command(self, ctx: typer.Context, cmd_name: str) -> typer.core.TyperCommand | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in COMMANDS and self.listing:
            return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][1])
        if cmd_name in COMMANDS:
            importlib.import_module(f"kgforge.cli.{COMMANDS[cmd_name][0]}")
        else:
            _load_commands()
        command = typer.main.get_command(app).commands.get(cmd_name)  # type: ignore[attr-defined]
        if command is not None:
            self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: typer.Context, formatter: object) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def shell_complete(self, ctx: typer.Context, incomplete: str) -> list[object]:
        self.listing = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self.listing = False


app.info.cls = _LazyGroup
