"""The top-level group of the command line: it imports a command's module when that command is resolved,
and lists every command for --help and shell completion from ``_commands.COMMANDS`` without importing any.
Installed packages add commands through the entry-point group ``kgforge.commands`` (:data:`PLUGIN_COMMANDS`;
docs/extending.md): a built-in command never loads them, `kgforge --help` and an unknown name do.
Imported by ``main`` (and by ``kgforge.cli.app``'s first use), never when ``kgforge.cli`` is imported; it imports
nothing from ``kgforge.cli``'s face (no circle)."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import click
import typer

from kgforge.cli._app import app, err_console
from kgforge.cli._commands import COMMANDS
from kgforge.core.errors import KgforgeError
from kgforge.core.registry import Entry, Registry

__all__ = ["PLUGIN_COMMANDS", "app", "command_index", "err_console", "interrupt_index", "load_commands", "plugin_mark"]


def load_commands() -> None:
    """Import every command module of :mod:`kgforge.cli` (those not named with a leading ``_``)."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not module.name.startswith("_"):
            importlib.import_module(f"kgforge.cli.{module.name}")


def _as_command(name: str, obj: Any) -> Entry[click.Command]:
    """A plug-in's entry point as a command: a function (typer reads its signature, as for a built-in command),
    a ``typer.Typer`` (a group of subcommands) or a click command."""
    if name in COMMANDS:
        raise KgforgeError(f"`kgforge {name}` is a built-in command; name the plug-in's command otherwise")
    if isinstance(obj, typer.Typer):
        command = typer.main.get_command(obj)
    elif isinstance(obj, click.Command):
        command = obj
    elif callable(obj):
        holder = typer.Typer()
        holder.command(name)(obj)
        command = typer.main.get_command(holder)
    else:
        raise KgforgeError(f"it is a {type(obj).__name__}, not a function, a typer.Typer or a click command")
    command.name = name
    return Entry(name, command, _summary(command.help or ""))


# Commands of installed packages: ``[project.entry-points."kgforge.commands"] hello = "mypkg.cli:hello"``.
PLUGIN_COMMANDS: Registry[click.Command] = Registry("command", entry_point_group="kgforge.commands", plugin=_as_command)


def plugin_mark(name: str, mark: str) -> str | None:
    """A plug-in command's ``@when_interrupted`` mark (``interrupted`` or ``after_disk_full``), if it has one."""
    try:
        command = PLUGIN_COMMANDS.get(name) if name not in COMMANDS and name in PLUGIN_COMMANDS else None
    except KgforgeError:
        return None
    return getattr(getattr(command, "callback", None), mark, None)


def command_index() -> dict[str, tuple[str, str]]:
    """Each command's module and first help paragraph, from the modules themselves (what ``COMMANDS`` holds)."""
    load_commands()
    modules = {
        info.name or info.callback.__name__.lower().replace("_", "-"): info.callback.__module__
        for info in app.registered_commands
    }
    modules |= {
        info.name: info.typer_instance.registered_commands[0].callback.__module__ for info in app.registered_groups
    }
    group = typer.main.get_command(app)
    return {
        name: (modules[name].rsplit(".", 1)[-1], _summary(command.help or ""))
        for name, command in group.commands.items()
        if not command.hidden
    }


def interrupt_index() -> tuple[dict[str, str], dict[str, str]]:
    """What Ctrl-C prints per command and, where it differs from the same command again, how to go on after a
    full disk: read from each command's ``@when_interrupted`` mark (a group's from its first marked command)."""
    load_commands()
    callbacks = [
        (info.name or info.callback.__name__.lower().replace("_", "-"), info.callback)
        for info in app.registered_commands
    ]
    callbacks += [
        (info.name, command.callback)
        for info in app.registered_groups
        for command in info.typer_instance.registered_commands
    ]
    said: dict[str, str] = {}
    after_disk_full: dict[str, str] = {}
    for name, callback in callbacks:
        if name not in said and getattr(callback, "interrupted", None):
            said[name] = callback.interrupted
            if callback.after_disk_full:
                after_disk_full[name] = callback.after_disk_full
    return dict(sorted(said.items())), dict(sorted(after_disk_full.items()))


def _summary(help_text: str) -> str:
    return inspect.cleandoc(help_text).split("\n\n")[0].strip()


class _LazyGroup(typer.core.TyperGroup):
    """The top-level group: imports a command's module when the command is resolved; lists the commands
    for --help and shell completion from the index, without importing any."""

    listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands, *PLUGIN_COMMANDS.names()]))

    def get_command(self, ctx: typer.Context, cmd_name: str) -> click.Command | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in COMMANDS and self.listing:
            return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][1])
        if cmd_name in COMMANDS:
            importlib.import_module(f"kgforge.cli.{COMMANDS[cmd_name][0]}")
        else:
            load_commands()
        command = typer.main.get_command(app).commands.get(cmd_name)  # type: ignore[attr-defined]
        if command is None and cmd_name in PLUGIN_COMMANDS:
            command = PLUGIN_COMMANDS.get(cmd_name)
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
