"""Every command's --help, rendered as a user sees it: a help line, clean option texts, exit 0; and --version."""

from __future__ import annotations

import re
from importlib import metadata
from typing import Any

import pytest
import typer
from rich.text import Text
from typer.testing import CliRunner

from kgforge.cli._lazy import app, load_commands
from tests.conftest import run_cli

load_commands()
ROOT = typer.main.get_command(app)


def _walk(command: Any, path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """The command and its sub-commands (typer runs on its own copy of click: groups are told by ``commands``)."""
    found = [(path, command)]
    if hasattr(command, "commands"):
        for name, sub in sorted(command.commands.items()):
            found += _walk(sub, path + (name,))
    return found


COMMANDS = _walk(ROOT)
# What a help text must never show once rich has rendered its markup: a bracketed note eaten as a tag leaves
# "schema  or 10"; a %-placeholder or {name} left unfilled; a space before punctuation, or empty brackets.
GLITCHES = re.compile(r" {2}|(?<=[A-Za-z0-9]) [.,;:)](\s|$)|\(\s*\)|\[\s*]|%\(|\{[a-z_]+}")


def _rendered(markup: str | None) -> str:
    return Text.from_markup(markup or "").plain


def test_every_command_is_walked():
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"build", "domains", "stats", "derive", "goals", "export", "embed", "query"} <= names
    assert len(COMMANDS) > 20


@pytest.mark.parametrize("path,command", COMMANDS, ids=[" ".join(p) or "kgforge" for p, _ in COMMANDS])
def test_help_renders_with_a_help_line_and_clean_option_texts(path, command):
    result = CliRunner().invoke(app, [*path, "--help"], prog_name="kgforge", terminal_width=100)
    assert result.exit_code == 0, result.output
    first_line = _rendered(command.help).strip().splitlines()[0] if command.help else ""
    assert first_line, f"`kgforge {' '.join(path)}` has no help line"
    assert first_line.split()[0] in result.output
    texts = {"help": _rendered(command.help)}
    texts |= {f"{p.name}": _rendered(getattr(p, "help", None)) for p in command.params}
    for what, text in texts.items():
        if what != "help":
            assert text.strip(), f"`kgforge {' '.join(path)}` option {what} has no help"
        glitch = GLITCHES.search(text.replace("\n\n", " ").replace("\n", " "))
        assert glitch is None, f"`kgforge {' '.join(path)}` {what}: {glitch.group()!r} in {text!r}"


def test_derive_help_says_where_its_defaults_come_from():
    out = CliRunner().invoke(app, ["derive", "--help"], terminal_width=200).output
    assert "[options.derive] max_group, else 10" in out
    assert "schema  or" not in out


def test_version_prints_the_installed_version():
    result = run_cli("--version")
    assert result.stdout.strip() == f"kgforge {metadata.version('kgforge')}"


@pytest.mark.parametrize(
    ("path", "option", "choice"),
    [(("ground",), "--format", "ground format"), (("synth",), "--style", "synth style")],
)
def test_an_option_chosen_from_a_registry_lists_what_the_registry_holds(path, option, choice):
    """Read from the registry, not written by hand: a plug-in's style or format is listed as a built-in is."""
    from kgforge.api import choices
    from kgforge.core.checks import in_words

    command = dict(COMMANDS)[path]
    (param,) = [p for p in command.params if option in p.opts]
    names = choices(choice)
    assert len(names) >= 3 and in_words(names) in param.help
    assert in_words(["a"]) == "a" and in_words(["a", "b", "c"]) == "a, b or c"
