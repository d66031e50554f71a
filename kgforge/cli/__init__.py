"""The `kgforge` command line: a thin shell over the library.

Each module in this package adds its commands to ``app``; ``main`` imports them all, so a new
stage adds one module here and touches nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

import typer
from rich.markup import escape

from kgforge.cli._app import app, err_console
from kgforge.core.errors import KgforgeError

# click's exception classes, from whichever click typer runs on (the package, or typer's own copy of it).
_CLICK_ERROR = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")


def _load_commands() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def main() -> None:
    """Run the command line; every failure is one line on stderr: exit 2 for a bad argument (refused
    before the command runs), 1 for an error while it runs."""
    _load_commands()
    try:
        code = app(prog_name="kgforge", standalone_mode=False)
    except KgforgeError as exc:
        _fail(str(exc), 1)
    except typer.Abort:
        _fail("aborted", 1)
    except _CLICK_ERROR as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `kgforge` alone, or a group without its command
            exc.show()
            sys.exit(exc.exit_code)
        command = getattr(getattr(exc, "ctx", None), "command_path", "kgforge")
        _fail(f"{exc.format_message()} (see `{command} --help`)", exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int) -> None:
    err_console.print(f"[red]error[/]: {escape(message)}", soft_wrap=True)
    sys.exit(code)


__all__ = ["app", "main"]
