"""Progress on long work (docs/cli.md, "Progress bars"): bars on stderr only where a person watches a terminal,
nothing beside ``--json`` or into a pipe, the library quiet unless asked, and ``ground``'s bar moved by its
worker processes' parts as they end, in the parent, without a byte of the output changing.

The fast tests draw on rich's own console writing into memory as a terminal would (``force_terminal``); the
slow ones run the installed command with its stderr on a pseudo-terminal (``pty``), as a user's shell gives it."""

from __future__ import annotations

import io
import json
import os
import pty
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rich.console import Console

from kgforge import Domain
from kgforge.core import processes, progress
from kgforge.grounding import run
from tests.conftest import build_travel, run_cli, shared_file

BAR = "━"  # rich's bar, drawn only where a bar is shown


@pytest.fixture
def terminal(monkeypatch) -> io.StringIO:
    """What the bars draw, as a terminal of 120 columns would receive it."""
    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=120, highlight=False)
    monkeypatch.setattr(progress, "stderr_console", console)
    return screen


def test_steps_show_nothing_unless_asked_and_a_shown_step_counts(terminal):
    with progress.tracked("alone", 3) as step:
        step.advance(3)
    assert list(progress.iterate(range(5), "quiet")) == list(range(5))
    assert terminal.getvalue() == ""  # the library: quiet
    with progress.showing():
        assert progress.shown()
        with progress.tracked("outer step", 2) as outer:
            for item in progress.iterate(range(200), "inner step"):
                if item == 150:
                    time.sleep(0.3)  # the bar is drawn ten times a second: long enough to be seen
            outer.advance(2)
        with progress.showing(False):
            assert list(progress.iterate(range(3), "hidden step")) == [0, 1, 2]
    shown = terminal.getvalue()
    assert "outer step" in shown and "2/2" in shown and "eta" in shown and BAR in shown
    assert "inner step" in shown and "128/200" in shown  # its own line while it ran, moved on 64 items at a time
    assert "hidden step" not in shown and "alone" not in shown and "quiet" not in shown
    assert not progress.shown()


def _slow_square(n: int) -> tuple[int, int]:
    time.sleep(0.3 if n == 0 else 0.02)  # the first item ends last
    return n * n, os.getpid()


def test_forked_map_reports_each_item_in_the_parent_as_it_ends_and_keeps_the_order():
    ended: list[tuple[int, int]] = []
    results = processes.forked_map(
        _slow_square, list(range(6)), 2, "squares", done=lambda n: ended.append((n, os.getpid()))
    )
    assert [square for square, _ in results] == [n * n for n in range(6)]  # in the order of the items
    assert len({pid for _, pid in results} - {os.getpid()}) >= 1  # worked in other processes
    assert sorted(n for n, _ in ended) == list(range(6)) and {pid for _, pid in ended} == {os.getpid()}
    assert ended[-1][0] == 0  # reported as it ended, not in the items' order
    ended.clear()
    assert processes.forked_map(_slow_square, [1, 2], 1, "squares", done=lambda n: ended.append((n, 0)))[1][0] == 4
    assert ended == [(1, 0), (2, 0)]


def _shown(_: int) -> bool:
    return progress.shown()


def test_a_forked_worker_never_draws_a_bar():
    with progress.showing():
        assert processes.forked_map(_shown, [1, 2, 3, 4], 2, "shown") == [False] * 4


@pytest.fixture(scope="module")
def travel(tmp_path_factory) -> Path:
    return build_travel(tmp_path_factory.mktemp("travel"))


@pytest.mark.slow  # grounds a dev file twice over two processes (about 3 s)
def test_ground_s_bar_counts_the_parts_of_its_workers_and_the_output_keeps_its_bytes(
    travel, tmp_path, terminal, monkeypatch
):
    monkeypatch.setattr(run, "PART_DIALOGUES", 20)  # KdConv travel dev in parts over two processes
    dev = shared_file("kdconv/travel/dev.json")
    quiet = Domain("travel", travel).ground(dev, tmp_path / "quiet.json", workers=2)
    assert terminal.getvalue() == ""
    with progress.showing():
        shown = Domain("travel", travel).ground(dev, tmp_path / "shown.json", workers=2)
    assert shown.workers == quiet.workers == 2
    assert (tmp_path / "shown.json").read_bytes() == (tmp_path / "quiet.json").read_bytes()
    drawn = terminal.getvalue()
    assert "ground kdconv dialogues" in drawn and f"{quiet.dialogues}/{quiet.dialogues}" in drawn
    assert "read dev.json (lines)" in drawn and "grounding index of travel" in drawn


def test_a_command_prints_no_bar_beside_json_nor_into_a_pipe():
    """In this process stderr is a pipe, as in a script: the same lines as ever, no bar."""
    dev = shared_file("kdconv/travel/dev.json")
    for extra in ((), ("--json",)):
        done = run_cli("corpus", "stats", str(dev), *extra)
        assert "dialogues" in done.stdout and BAR not in done.stderr and "eta" not in done.stderr


# ---------------------------------------------------------------- the command on a terminal


def on_terminal(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    """``kgforge ARGS`` in a fresh interpreter with stderr on a pseudo-terminal and stdout on a pipe."""
    main, side = pty.openpty()
    command = [sys.executable, "-c", "from kgforge.cli import main; main()", *args]
    env = {**os.environ, "COLUMNS": "120", "TERM": "xterm-256color"}
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=side, stdin=subprocess.DEVNULL, cwd=cwd, env=env)
    os.close(side)
    out: list[bytes] = []
    reader = threading.Thread(target=lambda: out.append(process.stdout.read()))
    reader.start()
    err = b""
    while True:
        try:
            data = os.read(main, 1 << 16)
        except OSError:  # the other end closed (Linux says EIO)
            break
        if not data:
            break
        err += data
    process.wait(timeout=300)
    reader.join()
    os.close(main)
    return process.returncode, out[0], err


def piped(args: list[str], cwd: Path) -> tuple[int, bytes, bytes]:
    command = [sys.executable, "-c", "from kgforge.cli import main; main()", *args]
    done = subprocess.run(command, capture_output=True, cwd=cwd, timeout=300, env={**os.environ, "COLUMNS": "120"})
    return done.returncode, done.stdout, done.stderr


@pytest.mark.slow  # fresh interpreters, each command twice, with a terminal and without
def test_long_commands_draw_bars_on_a_terminal_and_print_the_same_bytes_without_one(tmp_path):
    workdir = tmp_path / "kg"
    film = tmp_path / "dev.json"  # a copy: a file written beside it would be seen here
    film.write_bytes(shared_file("kdconv/film/dev.json").read_bytes())
    run_cli("build", "film", "--source", f"kdconv-dialogues:{film}", "--workdir", str(workdir))
    dialogues = json.loads(film.read_text(encoding="utf-8"))
    many = [dict(d, name=f"{d['name']}#{copy}") for copy in range(8) for d in dialogues]  # 1,200: parts of 500
    (tmp_path / "many.json").write_text(json.dumps(many, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "pool.json").write_text(json.dumps(dialogues[:50], ensure_ascii=False), encoding="utf-8")
    grounded = tmp_path / "grounded.json"
    ground = ["ground", "film", "--dialogues", "many.json", "--out", str(grounded), "--workers", "2"]
    candidates = ["corpus", "candidates", str(film), "--pool", "pool.json", "--out", "c.jsonl", "--method", "bm25"]
    commands = {
        "ground kdconv dialogues": ground,
        "score responses": ["eval", str(film), "--gold", str(film), "--domain", "film"],
        "ground dialogues": ["corpus", "stats", str(film), "--domain", "film"],
        "read dev.json (lines)": ["corpus", "split", str(film), "--out", "split"],
        "rank the pool (BM25)": candidates,
    }
    for step, args in commands.items():
        args = [*args, "--workdir", str(workdir)] if "--domain" in args or args[0] == "ground" else args
        code, out, err = on_terminal(args, tmp_path)
        assert code == 0, err.decode(errors="replace")
        drawn = err.decode(errors="replace")
        assert step in drawn and BAR in drawn and "eta" in drawn, (args, drawn[-2000:])
        written = grounded.read_bytes() if args[0] == "ground" else None
        code, plain, plain_err = piped(args, tmp_path)
        assert code == 0 and plain == out, args  # stdout: the same bytes with a bar on the terminal or none
        assert BAR.encode() not in plain_err and b"eta" not in plain_err
        if written is not None:
            assert grounded.read_bytes() == written  # the grounded file: the same bytes with and without a bar
            assert any(f"{done}/1200" in drawn for done in (500, 700, 1000)), drawn  # parts counted as they end
        code, out, err = on_terminal([*args, "--json"], tmp_path)
        assert code == 0 and BAR.encode() not in err and b"eta" not in err, (args, err[-2000:])
        assert json.loads(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        ["kg", "dev.json", "many.json", "pool.json", "grounded.json", "split", "c.jsonl"]
    )  # eval wrote no file beside its inputs
