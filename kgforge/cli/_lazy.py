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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
import typer

from kgforge.cli._app import app, err_console
from kgforge.cli._commands import COMMANDS
from kgforge.core.errors import KgforgeError
from kgforge.core.registry import Entry, Registry

if TYPE_CHECKING:
    # typer (0.29 on) runs on its own copy of click, whose classes are not the click package's: these are the ones
    # its groups take and return. Named for the type checker only (a typer on the click package runs as well).
    from typer._click import Command as ClickCommand
    from typer._click import Context, HelpFormatter
    from typer._click.shell_completion import CompletionItem

__all__ = ["PLUGIN_COMMANDS", "app", "command_index", "err_console", "interrupt_index", "load_commands", "plugin_mark"]


def load_commands() -> None:
    """Import every command module of :mod:`kgforge.cli` (those not named with a leading ``_``)."""
    for module in pkgutil.iter_modules([str(Path(__file__).parent)]):
        if not module.name.startswith("_"):
            importlib.import_module(f"kgforge.cli.{module.name}")


def _as_command(name: str, obj: Any) -> Entry[ClickCommand]:
    """A plug-in's entry point as a command: a function (typer reads its signature, as for a built-in command),
    a ``typer.Typer`` (a group of subcommands) or a click command."""
    if name in COMMANDS:
        raise KgforgeError(f"`kgforge {name}` is a built-in command; name the plug-in's command otherwise")
    command: ClickCommand
    if isinstance(obj, typer.Typer):
        command = typer.main.get_command(obj)
    elif isinstance(obj, click.Command):
        # A command of the click package stands in typer's group as it is: the group calls only what both clicks'
        # Command have (make_context, invoke, its help), though the types of the two copies are unrelated.
        command = obj  # type: ignore[assignment]
    elif callable(obj):
        holder = typer.Typer()
        holder.command(name)(obj)
        command = typer.main.get_command(holder)
    else:
        raise KgforgeError(f"it is a {type(obj).__name__}, not a function, a typer.Typer or a click command")
    command.name = name
    return Entry(name, command, _summary(command.help or ""))


# Commands of installed packages: ``[project.entry-points."kgforge.commands"] hello = "mypkg.cli:hello"``.
PLUGIN_COMMANDS: Registry[ClickCommand] = Registry("command", entry_point_group="kgforge.commands", plugin=_as_command)


def plugin_mark(name: str, mark: str) -> str | None:
    """A plug-in command's ``@when_interrupted`` mark (``interrupted`` or ``after_disk_full``), if it has one."""
    try:
        command = PLUGIN_COMMANDS.get(name) if name not in COMMANDS and name in PLUGIN_COMMANDS else None
    except KgforgeError:
        return None
    return getattr(getattr(command, "callback", None), mark, None)


def command_index() -> dict[str, tuple[str, str]]:
    """Each command's module and first help paragraph, from the modules themselves (what ``COMMANDS`` holds)."""
    commands, groups = _functions()
    modules = {name: function.__module__ for name, function in commands}
    modules |= {name: functions[0].__module__ for name, functions in groups.items()}
    return {
        name: (modules[name].rsplit(".", 1)[-1], _summary(command.help or ""))
        for name, command in _group().commands.items()
        if not command.hidden
    }


def interrupt_index() -> tuple[dict[str, str], dict[str, str]]:
    """What Ctrl-C prints per command and, where it differs from the same command again, how to go on after a
    full disk: read from each command's ``@when_interrupted`` mark (a group's from its first marked command)."""
    commands, groups = _functions()
    callbacks = commands + [(name, function) for name, functions in groups.items() for function in functions]
    said: dict[str, str] = {}
    after_disk_full: dict[str, str] = {}
    for name, callback in callbacks:
        interrupted: str | None = getattr(callback, "interrupted", None)  # @when_interrupted's marks
        if name not in said and interrupted:
            said[name] = interrupted
            after: str | None = getattr(callback, "after_disk_full", None)
            if after:
                after_disk_full[name] = after
    return dict(sorted(said.items())), dict(sorted(after_disk_full.items()))


def _functions() -> tuple[list[tuple[str, Callable[..., Any]]], dict[str, list[Callable[..., Any]]]]:
    """The function of each top-level command, by the command's name, and the functions of each group's
    subcommands, by the group's name, once every command module is loaded (typer keeps each command's function)."""
    load_commands()
    commands = [
        (info.name or info.callback.__name__.lower().replace("_", "-"), info.callback)
        for info in app.registered_commands
        if info.callback is not None
    ]
    groups = {
        info.name: [command.callback for command in info.typer_instance.registered_commands if command.callback]
        for info in app.registered_groups
        if info.name and info.typer_instance is not None
    }
    return commands, groups


def _group() -> typer.core.TyperGroup:
    """The group typer makes of ``app`` (a :class:`_LazyGroup`: ``app.info.cls``), its commands those loaded."""
    group = typer.main.get_command(app)
    if not isinstance(group, typer.core.TyperGroup):  # typer makes a lone command of an app with one command
        raise TypeError(f"kgforge's app makes a {type(group).__name__}, not a group")
    return group


def _summary(help_text: str) -> str:
    return inspect.cleandoc(help_text).split("\n\n")[0].strip()


class _LazyGroup(typer.core.TyperGroup):
    """The top-level group: imports a command's module when the command is resolved; lists the commands
    for --help and shell completion from the index, without importing any."""

    listing = False

    def list_commands(self, ctx: Context) -> list[str]:
        return list(dict.fromkeys([*COMMANDS, *self.commands, *PLUGIN_COMMANDS.names()]))

    def get_command(self, ctx: Context, cmd_name: str) -> ClickCommand | None:
        if cmd_name in self.commands:
            return self.commands[cmd_name]
        if cmd_name in COMMANDS and self.listing:
            return typer.core.TyperCommand(cmd_name, help=COMMANDS[cmd_name][1])
        if cmd_name in COMMANDS:
            importlib.import_module(f"kgforge.cli.{COMMANDS[cmd_name][0]}")
        else:
            load_commands()
        command = _group().commands.get(cmd_name)
        if command is None and cmd_name in PLUGIN_COMMANDS:
            command = PLUGIN_COMMANDS.get(cmd_name)
        if command is not None:
            self.commands[cmd_name] = command
        return command

    def format_help(self, ctx: Context, formatter: HelpFormatter) -> None:
        self.listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self.listing = False

    def shell_complete(self, ctx: Context, incomplete: str) -> list[CompletionItem]:
        self.listing = True
        try:
            return super().shell_complete(ctx, incomplete)
        finally:
            self.listing = False


app.info.cls = _LazyGroup
