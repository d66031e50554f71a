"""``kgforge``'s entry point: :func:`main` runs the command line and turns every failure into one line on stderr
with its exit status (2: a bad argument, 1: an error while the command ran, 130: Ctrl-C, saying what was kept).

Nothing heavier than kgforge.core is imported before main() runs: typer, rich and the command modules load
inside main's handlers (``_lazy``, ``_app``), so a Ctrl-C while they load is the same one line as one during a
command. This module imports no other module of ``kgforge.cli`` at its top, and none imports it back.
"""

from __future__ import annotations

import os
import sys
import warnings
from functools import partial
from typing import TYPE_CHECKING, Any, NoReturn, TypeGuard

from kgforge.cli._commands import AFTER_DISK_FULL, INTERRUPTED
from kgforge.core.errors import Interrupted, KgforgeError, OutputRefused, describe_os_error, is_disk_full

if TYPE_CHECKING:  # typer's own copy of click (0.29 on), read by the type checker only (see _lazy)
    from typer._click import ClickException, Command, Context

OTHERS = "interrupted; rerun the same command to start it again"


def _command_name(argv: list[str]) -> str:
    return next((arg for arg in argv if not arg.startswith("-")), "")


def _rerun(argv: list[str]) -> str:
    name = _command_name(argv)
    return AFTER_DISK_FULL.get(name) or _plugin_mark(name, "after_disk_full") or "rerun the same command"


def _plugin_mark(name: str, mark: str) -> str | None:
    """A plug-in command's own words (``@when_interrupted``), when the command line has loaded it."""
    lazy = sys.modules.get("kgforge.cli._lazy")
    return lazy.plugin_mark(name, mark) if lazy is not None and name not in INTERRUPTED else None


def interrupt_message(argv: list[str], exc: KeyboardInterrupt) -> str:
    """The one line Ctrl-C prints: the job's own (Interrupted), else the command's hint."""
    if isinstance(exc, Interrupted) and str(exc):
        return str(exc)
    name = _command_name(argv)
    return INTERRUPTED.get(name) or _plugin_mark(name, "interrupted") or OTHERS


class _CtrlC(Exception):
    """Ctrl-C inside a command, carried past typer (which would turn it into a bare exit 130)."""

    def __init__(self, interrupt: KeyboardInterrupt) -> None:
        super().__init__(str(interrupt))
        self.interrupt = interrupt


def _command() -> Command:
    """The click group of every command, its Ctrl-C carried out as :class:`_CtrlC`."""
    import typer

    from kgforge.cli._lazy import app  # lazy: typer and rich load inside main(), where Ctrl-C is handled

    group = typer.main.get_command(app)
    invoke = group.invoke

    def invoke_carrying_ctrl_c(ctx: Context) -> Any:
        try:
            return invoke(ctx)
        except KeyboardInterrupt as exc:
            raise _CtrlC(exc) from exc
        except BrokenPipeError:  # before click, whose own handling exits 1
            _quiet_broken_pipe()

    # wrapped on this one group, not in _lazy's group class: the groups typer makes of `app` elsewhere (a test's
    # CliRunner, the command index) keep click's own Ctrl-C handling; only main() carries it out
    group.invoke = invoke_carrying_ctrl_c  # type: ignore[method-assign]
    return group


def main() -> None:
    """Run the command line; every failure is one line on stderr: exit 2 for a bad argument (refused
    before the command runs, or a path to write refused by the output guard before anything is written), 1 for
    an error while it runs, 130 for Ctrl-C (saying what was kept)."""
    interrupted = partial(_fail, code=130, label="")
    warnings.showwarning = _one_line_warning
    piped_to_nothing = _is_devnull(sys.stdout)
    args = options_after_command(sys.argv[1:])
    try:
        import typer

        command = _command()
    except KeyboardInterrupt:  # rich may be half-loaded: plain stderr
        sys.stderr.write("interrupted while starting: nothing was run\n")
        sys.exit(130)
    # click's exception classes, from whichever click typer runs on (the package, or typer's own copy of it).
    click_error = next(cls for cls in typer.BadParameter.__mro__ if _is_click_exception(cls))
    try:
        code = command.main(args=args, prog_name="kgforge", standalone_mode=False)
        sys.stdout.flush()  # here, where a closed pipe is caught, not at exit
    except BrokenPipeError:
        _quiet_broken_pipe()
    except SystemExit as exc:
        # typer's help console, on a closed pipe, points stdout at /dev/null and exits 1: the same quiet end
        if exc.code == 1 and not piped_to_nothing and _is_devnull(sys.stdout):
            sys.exit(0)
        raise
    except OutputRefused as exc:  # a path the library was asked to write, refused before anything was written
        _fail(str(exc), 2)
    except KgforgeError as exc:
        _fail(str(exc), 1)
    except OSError as exc:  # a file the command could not read or write: disk full, missing, refused
        _fail(describe_os_error(exc, _rerun(sys.argv[1:])), 1)
    except _CtrlC as exc:
        interrupted(interrupt_message(args, exc.interrupt))
    except typer.Abort:
        _fail("aborted", 1)
    except click_error as exc:
        if type(exc).__name__ == "NoArgsIsHelpError":  # `kgforge` alone, or a group without its command
            exc.show()
            sys.exit(exc.exit_code)
        path = getattr(getattr(exc, "ctx", None), "command_path", "kgforge")
        _fail(f"{exc.format_message()} (see `{path} --help`){_where_options_go(exc, path)}", exc.exit_code)
    except Exception as exc:  # a library's own error for a full disk (torch's, raised while handling ENOSPC)
        if not is_disk_full(exc):
            raise
        _fail(describe_os_error(exc, _rerun(sys.argv[1:])), 1)
    if code == 130:  # Ctrl-C before a command ran (typer's own exit code for it)
        interrupted(interrupt_message(args, KeyboardInterrupt()))
    sys.exit(code if isinstance(code, int) else 0)


# Options every command takes, accepted before the command too (`kgforge --workdir X stats travel`), with
# how many values each takes.
_COMMAND_OPTIONS = {"--workdir": 1, "--json": 0}


def _is_click_exception(cls: type) -> TypeGuard[type[ClickException]]:
    """By its name: the class is the click package's or typer's own copy's, whichever typer runs on."""
    return cls.__name__ == "ClickException"


def options_after_command(args: list[str]) -> list[str]:
    """``args`` with the command options given before the command name moved after its arguments (before a
    ``--``, where one ends them), where click looks for them."""
    moved: list[str] = []
    while args and args[0].split("=", 1)[0] in _COMMAND_OPTIONS:
        takes = 0 if "=" in args[0] else _COMMAND_OPTIONS[args[0]]
        moved, args = moved + args[: 1 + takes], args[1 + takes :]
    if not moved or not args:
        return moved + args
    end = args.index("--") if "--" in args else len(args)
    return args[:end] + moved + args[end:]


def _where_options_go(exc: Exception, command: str) -> str:
    """For an option given before the command that only the command takes: where it goes."""
    if command != "kgforge" or type(exc).__name__ != "NoSuchOption":
        return ""
    return (
        "; a command's own options go after its name: `kgforge COMMAND ... OPTION` (`--workdir` and "
        "`--json` may stand before it)"
    )


def _is_devnull(stream: object) -> bool:
    try:
        return os.path.samestat(os.fstat(stream.fileno()), os.stat(os.devnull))  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False


def _quiet_broken_pipe() -> NoReturn:
    """The reader of stdout went away (`kgforge query … | head`): stop quietly with status 0, as other Unix
    tools do, what Python still flushes at exit going to /dev/null instead of raising a second error."""
    from kgforge.cli._app import stdout_to_devnull  # lazy: as above

    stdout_to_devnull()
    sys.exit(0)


def _one_line_warning(
    message: Warning | str, category: type[Warning], filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """A warning is one line on stderr, like every other message of the command line: what happened and what
    to do, without the source line Python shows under it."""
    (file or sys.stderr).write(f"warning: {message}\n")


def _fail(message: str, code: int, label: str = "[red]error[/]: ") -> None:
    from rich.markup import escape

    from kgforge.cli._app import err_console  # lazy: as above

    err_console.print(f"{label}{escape(message)}", soft_wrap=True)
    sys.exit(code)
