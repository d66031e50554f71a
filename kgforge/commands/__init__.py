"""The `kgforge` command line: a thin shell over the library.

Each module in this package adds its commands to ``app``; ``main`` imports them all, so a new
stage adds one module here and touches nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys

from rich.markup import escape

from kgforge.commands._app import app, err_console
from kgforge.errors import KgforgeError


def _load_commands() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


def main() -> None:
    _load_commands()
    try:
        app()
    except KgforgeError as exc:
        err_console.print(f"[red]error[/]: {escape(str(exc))}", soft_wrap=True)
        sys.exit(1)


__all__ = ["app", "main"]
