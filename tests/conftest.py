"""Shared fixtures: the real sample data in ../shared/data, and running the CLI — in this process, as
``kgforge`` itself runs it, or in a fresh interpreter where the process is what a test checks."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
SHARED_DATA = Path(os.environ.get("KGFORGE_SHARED_DATA", REPO.parent / "shared" / "data"))
REQUIRE_SHARED = os.environ.get("KGFORGE_REQUIRE_SHARED") == "1"


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """Under ``-m "not slow"``, a test file marked slow as a whole (``pytestmark = pytest.mark.slow``) is not
    even imported: its imports alone (Lightning, Ray, a browser driver) cost seconds of the fast loop."""
    if config.getoption("markexpr") != "not slow" or not collection_path.name.startswith("test_"):
        return None
    return bool(WHOLE_FILE_SLOW.search(collection_path.read_text(encoding="utf-8"))) or None


WHOLE_FILE_SLOW = re.compile(r"^pytestmark = pytest\.mark\.slow\b", re.MULTILINE)

# Whether the test being set up is marked slow: its CLI runs in a fresh interpreter (see run_cli).
_running = {"slow": False}


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    _running["slow"] = item.get_closest_marker("slow") is not None


def shared_file(relative: str) -> Path:
    """A file under ../shared/data: skipped with a reason when absent, a failure under CI."""
    path = SHARED_DATA / relative
    if not path.exists():
        message = f"shared sample {path} is absent"
        if REQUIRE_SHARED:
            pytest.fail(message + " and KGFORGE_REQUIRE_SHARED=1 requires it")
        pytest.skip(message + " (set KGFORGE_SHARED_DATA or place ../shared beside the checkout)")
    return path


@pytest.fixture
def shared():
    """``shared("kdconv/travel/kb_travel.json")`` → the path, or skip/fail as above."""
    return shared_file


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    folder = tmp_path / "kg"
    folder.mkdir()
    return folder


# Read once, when the interpreter starts: a command given one of these runs in a fresh interpreter.
READ_AT_START = frozenset({"PYTHONHASHSEED"})


def run_cli(
    *args: str,
    cwd: Path | None = None,
    check: bool = True,
    timeout: float = 600,
    env: dict[str, str] | None = None,
    fresh: bool = False,
) -> subprocess.CompletedProcess:
    """Run ``kgforge ARGS`` as a user would: its exit status, stdout and stderr.

    In this process by default: ``kgforge.cli.main`` itself, with its own error handling and exit codes, so
    a test pays for the command and not for a new interpreter importing every stage (~2 s); ``COLUMNS`` in
    ``env`` sets the consoles' width as it does at start. In a fresh interpreter with ``fresh=True``, for
    what only a process shows (signals, workers that outlive their parent, the import time), when ``env``
    sets a variable read when the interpreter starts (``READ_AT_START``), and in a test marked slow: the
    long end-to-end runs (kills, distributed training, whole corpora) keep the process they were written
    against, where a second of start-up is nothing.
    ``timeout`` bounds only a fresh interpreter."""
    if fresh or _running["slow"] or READ_AT_START & set(env or {}):
        result = _run_fresh(args, cwd, timeout, env)
    else:
        result = _run_in_process(args, cwd, env)
    if check and result.returncode != 0:
        raise AssertionError(
            f"kgforge {' '.join(args)} exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
        )
    return result


def build_travel(workdir: Path) -> Path:
    """The KdConv travel graph (from the shared ``kb_travel.json``) built into ``workdir``, returned."""
    run_cli(
        "build",
        "travel",
        "--source",
        f"kdconv:{shared_file('kdconv/travel/kb_travel.json')}",
        "--workdir",
        str(workdir),
    )
    return workdir


def _run_fresh(
    args: tuple[str, ...], cwd: Path | None, timeout: float, env: dict[str, str] | None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-c", "from kgforge.cli import main; main()", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def _run_in_process(args: tuple[str, ...], cwd: Path | None, env: dict[str, str] | None) -> subprocess.CompletedProcess:
    """``main()`` with argv, cwd, environment and the standard streams of a process of its own; an exception
    that escapes it is printed as Python prints one at exit (status 1), so a test that a user sees no
    traceback still sees one."""
    from kgforge.cli import main

    stdout, stderr = _Stream(), _Stream()
    with (
        _process_state(["kgforge", *args], cwd, env),
        _console_width(env),
        contextlib.redirect_stdout(stdout),
        contextlib.redirect_stderr(stderr),
    ):
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if exc.code is not None and not isinstance(exc.code, int):
                print(exc.code, file=sys.stderr)
        except Exception:  # what the interpreter would print on its way out
            traceback.print_exc()
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
    return subprocess.CompletedProcess(["kgforge", *args], code, stdout.text(), stderr.text())


class _Stream(io.TextIOWrapper):
    """A text stream over bytes, as a pipe is: UTF-8, with a ``buffer`` for code that writes bytes."""

    def __init__(self) -> None:
        super().__init__(io.BytesIO(), encoding="utf-8", errors="backslashreplace", newline=None, write_through=True)

    def isatty(self) -> bool:
        return False

    def text(self) -> str:
        self.flush()
        return self.buffer.getvalue().decode("utf-8", errors="replace").replace("\r\n", "\n")


@contextlib.contextmanager
def _process_state(argv: list[str], cwd: Path | None, env: dict[str, str] | None) -> Iterator[None]:
    saved_argv, saved_cwd, saved_env = sys.argv, os.getcwd(), dict(os.environ)
    sys.argv = argv
    os.environ.update(env or {})
    if cwd is not None:
        os.chdir(cwd)
    try:
        yield
    finally:
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        sys.argv = saved_argv


@contextlib.contextmanager
def _console_width(env: dict[str, str] | None) -> Iterator[None]:
    """``COLUMNS`` as kgforge's consoles read it when they are made at start: that width, wrapped there
    (without it, output to a pipe is never wrapped)."""
    columns = (env or {}).get("COLUMNS", "")
    if not columns.isdigit():
        yield
        return
    from kgforge.cli._app import console, err_console

    saved = [(made, made._width, made.soft_wrap) for made in (console, err_console)]
    for made in (console, err_console):
        made.width, made.soft_wrap = int(columns), False
    try:
        yield
    finally:
        for made, width, soft_wrap in saved:
            made._width, made.soft_wrap = width, soft_wrap


@pytest.fixture
def cli():
    return run_cli


def install_example(example: Path, package: str, factory: pytest.TempPathFactory) -> str:
    """An example plug-in of docs/examples installed with pip (its own pyproject and entry points) into a folder
    of its own; the PYTHONPATH that puts it beside kgforge."""
    target = factory.mktemp("site")
    source = shutil.copytree(example, factory.mktemp("example") / example.name)  # pip builds beside it
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-cache-dir"]
    subprocess.run([*pip, "--target", str(target), str(source)], check=True, timeout=300, capture_output=True)
    assert (target / package).is_dir()
    return os.pathsep.join([str(target), os.environ.get("PYTHONPATH", str(Path(__file__).resolve().parent.parent))])
