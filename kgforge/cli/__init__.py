"""The `kgforge` command line: a thin shell over the library.

Each module in this package adds its commands to ``app``. A command's module is imported only when that
command runs (``_commands.COMMANDS`` says which module holds which command, and the line `--help` lists
for it), so `kgforge --help` and `--version` start in a fraction of a second instead of importing every
stage (polars, torch, pypinyin, …). A module that the index does not name yet is still found: an unknown
command name loads every module before it is called unknown.

``main`` (the ``kgforge`` entry point, ``kgforge.cli:main``) is :mod:`kgforge.cli._main`'s; the typer app and the
command index (:mod:`kgforge.cli._lazy`) load on first use. The helpers import nothing from this package's
face, so no import of ``kgforge.cli`` goes round in a circle (``tests/test_architecture.py``).
"""

from typing import TYPE_CHECKING

from kgforge.cli._main import interrupt_message as interrupt_message
from kgforge.cli._main import main as main
from kgforge.core import lazy

if TYPE_CHECKING:  # typer and rich load inside main(), where Ctrl-C is handled: these on first use (core.lazy)
    from kgforge.cli._app import err_console as err_console
    from kgforge.cli._lazy import app as app
    from kgforge.cli._lazy import command_index as command_index
    from kgforge.cli._lazy import interrupt_index as interrupt_index
    from kgforge.cli._lazy import load_commands as load_commands

__getattr__, __dir__ = lazy.attach(__name__)
