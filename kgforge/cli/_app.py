"""The typer app every command module registers on, shared options, checked argument types and output helpers."""

from __future__ import annotations

import functools
import inspect
import json
import os
import sys
from collections.abc import Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Annotated, Any, Generic, TypeVar

import typer
from rich.cells import cell_len
from rich.console import Console
from rich.markup import escape

from kgforge.core import checks, limits, progress
from kgforge.core.checks import in_words as in_words  # for the commands, which reach core only through here
from kgforge.core.errors import ArgumentError
from kgforge.core.output import safe_output_path
from kgforge.core.registry import Registry, UnknownName
from kgforge.core.version import __version__
from kgforge.store.layout import check_domain_name
from kgforge.store.workdir import DEFAULT_WORKDIR, ENV_VAR

app = typer.Typer(
    name="kgforge",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,
    help="Build, query and export knowledge graphs for knowledge-grounded dialogue research.",
)
# Lines written to a pipe or file are read by programs: wide enough that rich never breaks one (a JSON line,
# a CSV row, a path), unless $COLUMNS asks for a width.
PIPE_WIDTH = 4096


class _Console(Console):
    """rich's Console, except that a reader going away (`kgforge … | head`) ends the command with status 0,
    as it does for other Unix tools (rich's own choice is 1)."""

    def on_broken_pipe(self) -> None:
        self.quiet = True
        stdout_to_devnull()
        raise SystemExit(0)


def stdout_to_devnull() -> None:
    """Point stdout at /dev/null: its reader has gone, and what is still buffered must not raise again."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def _console(stderr: bool = False) -> Console:
    made = _Console(stderr=stderr, highlight=False)
    if not made.is_terminal and "COLUMNS" not in os.environ:
        made = _Console(stderr=stderr, highlight=False, width=PIPE_WIDTH, soft_wrap=True)
    return made


console = _console()
err_console = _console(stderr=True)


def _print_version(value: bool) -> None:
    if value:
        console.print(f"kgforge {__version__}", markup=False)
        raise typer.Exit()


@app.callback()
def _options(
    version: Annotated[
        bool,
        typer.Option("--version", callback=_print_version, is_eager=True, help="Print the installed version and exit."),
    ] = False,
) -> None:
    """Build, query and export knowledge graphs for knowledge-grounded dialogue research."""


T = TypeVar("T")


class Checked(Generic[T]):
    """A typer ``parser``: reads the text given on the command line, then applies a :mod:`kgforge.core.checks`
    function, the one the library applies to the same value, so a bad value is refused before the
    command runs, in one line naming the option (``Invalid value for '--dim': 0 is not a whole number
    >= 1``), and a Python caller of the library gets the same words as an ArgumentError."""

    def __init__(self, read: Callable[[str], Any], check: Callable[[Any, str], T], expected: str) -> None:
        self.read, self.check, self.expected = read, check, expected

    def __call__(self, value: Any) -> T:
        if isinstance(value, str):
            try:
                value = self.read(value)
            except ValueError:
                raise typer.BadParameter(f"{value!r} is not {self.expected}") from None
        try:
            return self.check(value, "")
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem) from None


def whole_number(minimum: int) -> Checked[int]:
    return Checked(int, partial(checks.whole, minimum=minimum), f"a whole number >= {minimum}")


def finite_number(minimum: float = 0.0, *, above: bool = False, maximum: float | None = None) -> Checked[float]:
    return Checked(float, partial(checks.number, minimum=minimum, above=above, maximum=maximum), "a finite number")


def one_of(options: Iterable[str]) -> Checked[str]:
    options = tuple(options)
    return Checked(str, partial(checks.choice, options=options), f"one of {', '.join(options)}")


def registered(registry: Registry[Any]) -> Checked[str]:
    """A checked ``parser`` for a name chosen from ``registry``: any name or alias in any case gives the entry's
    name; an unknown one is refused before the command runs, with the closest name ("did you mean")."""

    def check(value: str, what: str) -> str:
        try:
            return registry.entry(value).name
        except UnknownName as exc:
            raise ArgumentError(what, str(exc)) from None

    return Checked(str, check, f"a {registry.kind}")


def names_and_aliases(registry: Registry[Any]) -> str:
    """``nq (nquads, n-quads), trig, …``: the names an option takes, for its help."""
    return ", ".join(f"{e.name} ({', '.join(e.aliases)})" if e.aliases else e.name for e in registry)


POSITIVE = whole_number(1)  # counts, dimensions, sizes
NON_NEGATIVE = whole_number(0)  # retries, budgets, hops; seeds (NumPy takes no negative seed)
POSITIVE_NUMBER = finite_number(above=True)  # timeouts, durations, learning rates: > 0, never nan or inf
NON_NEGATIVE_NUMBER = finite_number()  # delays, ages: >= 0
FRACTION = finite_number(maximum=1.0)
DOMAIN = Checked(str, lambda value, _: check_domain_name(value), "a domain name")
FOLDER = Checked(str, checks.folder_name, "a plain folder name")
LANGUAGE = Checked(str, checks.language_tag, "a language tag")


def _languages(value: str, what: str) -> str:
    """One language tag, or several joined by commas (each checked)."""
    return ",".join(checks.language_tag(part.strip(), what) for part in value.split(","))


LANGUAGES = Checked(str, _languages, "language tags (zh, or zh,en)")
DEVICE = Checked(str, checks.device, "a device")
HTTP_URL = Checked(str, checks.http_url, "a URL")


def _hop_text(text: str, what: str) -> str:
    checks.hop_range(text, what)
    return text


HOP_RANGE = Checked(str, _hop_text, "N or LOW..HIGH")


def _output_check(folder: bool) -> Callable[[Path | None], Path | None]:
    """A typer ``callback`` for an option naming where a command writes a user's file (``folder``: folder): a
    device, a link, a directory for a file (a file for a folder), or a place inside any domain's folder or
    build is refused before the command runs (exit 2); the library checks the same path again, with the
    command's own domain and workdir, when it writes (kgforge.core.output)."""

    def check(value: Path | None) -> Path | None:
        if value is None:
            return None
        try:
            return safe_output_path(value, what="", folder=folder)
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem) from None

    return check


OUT_FILE = _output_check(folder=False)
OUT_DIR = _output_check(folder=True)

DomainArgument = Annotated[
    str, typer.Argument(parser=DOMAIN, metavar="DOMAIN", help="Domain folder under --workdir (letters, digits, _ . -).")
]
WorkdirOption = Annotated[
    Path,
    typer.Option(
        "--workdir",
        help=f"Folder holding one sub-folder per domain: --workdir, else ${ENV_VAR}, else ./{DEFAULT_WORKDIR}.",
        envvar=ENV_VAR,
    ),
]
JsonOption = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON on stdout.")]
LlmUrlOption = Annotated[
    str | None, typer.Option("--llm-url", parser=HTTP_URL, help="OpenAI-compatible endpoint (…/v1).")
]
LlmModelOption = Annotated[str | None, typer.Option("--llm-model", help="Model name sent to the endpoint.")]
LlmKeyEnvOption = Annotated[
    str | None,
    typer.Option("--llm-key-env", help="Environment variable holding the API key (default: KGFORGE_LLM_API_KEY)."),
]

# What every command that reads dialogue, knowledge or review files accepts (kgforge.core.limits.ReadPolicy):
# one definition of each option, in one help panel, turned into the policy by read_policy().
_READING = "Reading: limits and bad text"
ReplaceInvalidOption = Annotated[
    bool,
    typer.Option(
        "--replace-invalid",
        help="Replace lone surrogates (\\ud800 escapes: text no UTF-8 writer can encode) with U+FFFD and say how "
        "many, instead of refusing the record that holds one.",
        rich_help_panel=_READING,
    ),
]
MaxRecordOption = Annotated[
    int,
    typer.Option(
        "--max-record-mib",
        parser=POSITIVE,
        metavar="MIB",
        help="The largest record read: a JSON line, a member of a JSON array, a line or row of a table.",
        rich_help_panel=_READING,
    ),
]
MaxUtterancesOption = Annotated[
    int,
    typer.Option(
        "--max-utterances",
        parser=POSITIVE,
        metavar="N",
        help="The most utterances one dialogue may hold (cutting a session into samples is quadratic).",
        rich_help_panel=_READING,
    ),
]
MaxFileOption = Annotated[
    int,
    typer.Option(
        "--max-file-mib",
        parser=POSITIVE,
        metavar="MIB",
        help="The largest file read whole: a JSON array or object, a CSV or Parquet table, a workbook.",
        rich_help_panel=_READING,
    ),
]
SkipInvalidOption = Annotated[
    bool,
    typer.Option(
        "--skip-invalid",
        help="Leave out records that are not dialogues of the file's layout, listing each (file, line, reason) "
        "in OUT.rejected.jsonl, instead of stopping at the first.",
    ),
]


_READING_OPTIONS = (
    ("replace_invalid", ReplaceInvalidOption, False),
    ("max_record_mib", MaxRecordOption, limits.MAX_RECORD_MIB),
    ("max_utterances", MaxUtterancesOption, limits.MAX_UTTERANCES),
    ("max_file_mib", MaxFileOption, limits.MAX_FILE_MIB),
)


def reads_inputs(command: Callable[..., Any]) -> Callable[..., Any]:
    """Give a command the reading options above and run it under the :class:`~kgforge.core.limits.ReadPolicy`
    they make (``limits.reading``): every reader the library reaches from the command reads with it. Put it
    under ``@app.command``."""
    signature = inspect.signature(command, eval_str=True)
    added = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation)
        for name, annotation, default in _READING_OPTIONS
    ]

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        given = {name: kwargs.pop(name, default) for name, _, default in _READING_OPTIONS}
        policy = limits.ReadPolicy.of(**given)
        with limits.reading(policy):
            return command(*args, **kwargs)

    run.__signature__ = signature.replace(parameters=[*signature.parameters.values(), *added])  # type: ignore[attr-defined]
    run.__annotations__ = {**command.__annotations__, **{p.name: p.annotation for p in added}}
    return run


def bars_wanted(json_out: bool) -> bool:
    """Whether a command shows progress bars: on a terminal (stderr, where they are drawn), never beside
    ``--json`` nor into a pipe or file, where only what the command prints belongs."""
    return not json_out and progress.terminal_wants_bars()


def long_running(command: Callable[..., Any]) -> Callable[..., Any]:
    """Show the progress bars of the steps a command runs (:mod:`kgforge.core.progress`) when
    :func:`bars_wanted`: for a command that can run past a few seconds. Put it under ``@app.command``, on a
    command with ``json_out`` (``--json``), beside which no bar is drawn."""
    if "json_out" not in inspect.signature(command).parameters:
        raise TypeError(f"{command.__name__}: @long_running needs the command's json_out (--json) parameter")

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        with progress.showing(bars_wanted(bool(kwargs.get("json_out")))):
            return command(*args, **kwargs)

    return run


def emit_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2, default=str) + "\n")


KEY_CELLS = 26  # the key column of show_mapping, in terminal cells


def show_mapping(title: str, data: dict[str, Any]) -> None:
    """A flat key/value summary for people. Titles, keys and values are data (paths, entity names, install hints
    such as ``kgforge[release]``), never rich markup."""
    console.print(f"[bold]{escape(title)}[/]")
    for key, value in data.items():
        if isinstance(value, float):
            value = f"{value:,.1f}"
        elif isinstance(value, int):
            value = f"{value:,}"
        pad = " " * max(0, KEY_CELLS - cell_len(str(key)))  # a CJK character takes two cells, not one
        console.print(f"  {escape(str(key))}{pad} {escape(str(value))}")


# What Ctrl-C leaves, said by each command beside its own code (``@when_interrupted``); scripts/command_index.py
# copies it into the command index, so `kgforge` says it without importing the command's module.
REBUILD_DISCARDED = (
    "interrupted: the published store is unchanged (the unfinished build was discarded); rerun the same command"
)
NOTHING_HALF_WRITTEN = "interrupted: no file was left half-written (each is replaced whole); rerun the same command"
NOTHING_CHANGED = "interrupted: nothing was changed (this command only reads)"


def when_interrupted(said: str, *, after_disk_full: str | None = None) -> Callable[[Callable[..., Any]], Any]:
    """Mark a command's function with the line Ctrl-C prints (``said``) and, where going on after a full disk is
    not simply the same command again, how it is (``after_disk_full``). Put it below ``@app.command``."""

    def mark(function: Callable[..., Any]) -> Callable[..., Any]:
        function.interrupted = said  # type: ignore[attr-defined]
        function.after_disk_full = after_disk_full  # type: ignore[attr-defined]
        return function

    return mark
