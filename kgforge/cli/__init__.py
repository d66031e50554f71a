"""The `kgforge` command line: a thin shell over the library.

Each module in this package adds its commands to ``app``; ``main`` imports them all, so a new
stage adds one module here and touches nothing else.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from functools import partial
from typing import Any

from kgforge.core.errors import Interrupted, KgforgeError, describe_os_error, is_disk_full

# Nothing heavier than kgforge.core is imported before main() runs: typer, rich and the command modules
# load inside main's handlers, so a Ctrl-C while they load is the same one line as one during a command.


def __getattr__(name: str) -> Any:
    if name in ("app", "err_console"):
        from kgforge.cli import _app  # lazy: typer and rich load inside main(), where Ctrl-C is handled

        return getattr(_app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _load_commands() -> None:
    for module in pkgutil.iter_modules(__path__):
        if not module.name.startswith("_"):
            importlib.import_module(f"{__name__}.{module.name}")


_REBUILD = "interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same command"
_NOTHING_WRITTEN = "interrupted: no file was left half-written (each is replaced whole); rerun the same command"
# What Ctrl-C leaves, per command; a job that kept more raises Interrupted with its own words (embed: its checkpoint).
INTERRUPT_HINTS = {
    "build": _REBUILD, "derive": _REBUILD, "link": _REBUILD,
    "import": "interrupted: the published store is unchanged; rerun the same command to resume the import from its "
              "last checkpoint",
    "crawl": "interrupted: the pages fetched so far are cached; rerun with --resume to continue the crawl",
    "embed": "interrupted before this run's first checkpoint: the model bundle is unchanged; rerun the same command",
    "goals": _NOTHING_WRITTEN, "export": _NOTHING_WRITTEN, "export-rdf": _NOTHING_WRITTEN,
} | dict.fromkeys(("stats", "query", "domains", "check", "related", "sources", "export-formats", "crawl-sites",
                   "serve"), "interrupted: nothing was changed (this command only reads)")
OTHERS = "interrupted; rerun the same command to start it again"
# How to go on after a full disk, where it is not simply the same command again.
RESUME_AFTER_DISK_FULL = {"crawl": "rerun it with --resume (the pages fetched so far are cached)",
                          "import": "rerun the same command: the import resumes from its last checkpoint"}


def _command_name(argv: list[str]) -> str:
    return next((arg for arg in argv if not arg.startswith("-")), "")


def _rerun(argv: list[str]) -> str:
    return RESUME_AFTER_DISK_FULL.get(_command_name(argv), "rerun the same command")


def interrupt_message(argv: list[str], exc: KeyboardInterrupt) -> str:
    """The one line Ctrl-C prints: the job's own (Interrupted), else the command's hint."""
    if isinstance(exc, Interrupted) and str(exc):
        return str(exc)
    return INTERRUPT_HINTS.get(_command_name(argv), OTHERS)


class _CtrlC(Exception):
    """Ctrl-C inside a command, carried past typer (which would turn it into a bare exit 130)."""

    def __init__(self, interrupt: KeyboardInterrupt) -> None:
        super().__init__(str(interrupt))
        self.interrupt = interrupt


def _command() -> Any:
    """The click group of every command, its Ctrl-C carried out as :class:`_CtrlC`."""
    import typer

    from kgforge.cli._app import app  # lazy: as above

    group = typer.main.get_command(app)
    invoke = group.invoke

    def invoke_carrying_ctrl_c(ctx: typer.Context) -> object:
        try:
            return invoke(ctx)
        except KeyboardInterrupt as exc:
            raise _CtrlC(exc) from exc

    group.invoke = invoke_carrying_ctrl_c
    return group


def main() -> None:
    """Run the command line; every failure is one line on stderr: exit 2 for a bad argument (refused
    before the command runs), 1 for an error while it runs, 130 for Ctrl-C (saying what was kept)."""
    interrupted = partial(_fail, code=130, label="")
    try:
        import typer

        _load_commands()
        command = _command()
    except KeyboardInterrupt:  # rich may be half-loaded: plain stderr
        sys.stderr.write("interrupted while starting: nothing was run\n")
        sys.exit(130)
    # click's exception classes, from whichever click typer runs on (the package, or typer's own copy of it).
    click_error = next(cls for cls in typer.BadParameter.__mro__ if cls.__name__ == "ClickException")
    try:
        code = command.main(prog_name="kgforge", standalone_mode=False)
    except KgforgeError as exc:
        _fail(str(exc), 1)
    except OSError as exc:  # a file the command could not read or write: disk full, missing, refused
        _fail(describe_os_error(exc, _rerun(sys.argv[1:])), 1)
    except _CtrlC as exc:
        interrupted(interrupt_message(sys.argv[1:], exc.interrupt))
    except typer.Abort:
        _fail("aborted", 1)
    except click_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `kgforge` alone, or a group without its command
            exc.show()
            sys.exit(exc.exit_code)
        command = getattr(getattr(exc, "ctx", None), "command_path", "kgforge")
        _fail(f"{exc.format_message()} (see `{command} --help`)", exc.exit_code)
    except Exception as exc:  # a library's own error for a full disk (torch's, raised while handling ENOSPC)
        if not is_disk_full(exc):
            raise
        _fail(describe_os_error(exc, _rerun(sys.argv[1:])), 1)
    if code == 130:  # Ctrl-C before a command ran (typer's own exit code for it)
        interrupted(interrupt_message(sys.argv[1:], KeyboardInterrupt()))
    sys.exit(code if isinstance(code, int) else 0)


def _fail(message: str, code: int, label: str = "[red]error[/]: ") -> None:
    from rich.markup import escape

    from kgforge.cli._app import err_console  # lazy: as above

    err_console.print(f"{label}{escape(message)}", soft_wrap=True)
    sys.exit(code)


__all__ = ["app", "main"]
