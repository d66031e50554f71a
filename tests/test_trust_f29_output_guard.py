"""F29 (issue 44): every path a command writes for a user passes one guard (``kgforge.core.output``).

The probe's repros — ``ground --out /dev/full`` turned the device into a regular file (here a device node of
the test's own, the same kind as /dev/full, so that a regression replaces no device of the machine), ``--out
W/travel/manifest.json`` replaced the domain's manifest link, ``corpus split --out W/travel/store`` wrote into
the published build — and their kin for every command that writes a user's file or folder: each is one line
naming the option, exit 2, and what was there is untouched. A walk over kgforge's source (``tests/writer_guard``)
shows no user's path reaches a raw write without the guard, and that a plug-in's command that writes one does
fail it."""

from __future__ import annotations

import json
import os
import socket
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from kgforge.api import Domain, build_candidates, split_corpus
from kgforge.core.errors import ArgumentError
from kgforge.demo.runner import DIALOGUES
from tests.serve_support import build_demo

REPO = Path(__file__).resolve().parent.parent
# what the guard says (kgforge.core.output): a refusal for another reason (a missing option) is no proof
REFUSALS = (
    "is a symbolic link",
    "is not a regular file",
    "is a directory",
    ", not a folder",
    "manages itself",
)


def refused_by_the_guard(result, kind: str) -> str:
    assert result.returncode == 2, (kind, result.stderr)
    errors = result.stderr.strip().splitlines()
    assert len(errors) == 1 and "Traceback" not in result.stderr, (kind, result.stderr)
    assert any(words in errors[0] for words in REFUSALS), (kind, errors[0])
    return errors[0]


@pytest.fixture(scope="module")
def workdir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The demo domain built, and a second domain that `kgforge init` made but nothing built yet."""
    folder = tmp_path_factory.mktemp("f29") / "kg"
    build_demo(folder, with_derived=False)
    (folder / "books").mkdir()
    (folder / "books" / "schema.toml").write_text('name = "books"\n', encoding="utf-8")
    return folder


def snapshot(path: Path) -> tuple:
    """What is at ``path`` (kind, link target, bytes or listing), to show it unchanged."""
    mode = os.lstat(path).st_mode
    if stat.S_ISLNK(mode):
        return ("link", os.readlink(path))
    if stat.S_ISDIR(mode):
        return ("dir", sorted(p.name for p in path.iterdir()))
    if stat.S_ISREG(mode):
        return ("file", path.read_bytes())
    return ("special", stat.S_IFMT(mode))


def special_files(tmp_path: Path) -> dict[str, Path]:
    """A character device like /dev/full (where the test may make one: root), a FIFO and a socket."""
    found = {}
    try:
        os.mknod(tmp_path / "full", stat.S_IFCHR | 0o666, os.makedev(1, 7))
        found["device"] = tmp_path / "full"
    except PermissionError:
        pass  # not root: the FIFO and the socket stand for every file that is no regular file
    os.mkfifo(tmp_path / "fifo")
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(tmp_path / "sock"))
    listening.close()  # the socket file stays
    return found | {"fifo": tmp_path / "fifo", "socket": tmp_path / "sock"}


def hostile_files(workdir: Path, tmp_path: Path) -> dict[str, Path]:
    (tmp_path / "real.json").write_text("{}", encoding="utf-8")
    (tmp_path / "link.json").symlink_to(tmp_path / "real.json")
    (tmp_path / "folder").mkdir()
    return {
        **special_files(tmp_path),
        "link": tmp_path / "link.json",
        "directory": tmp_path / "folder",
        "manifest link": workdir / "demo" / "manifest.json",
        "published build": workdir / "demo" / "store" / "out.json",
        "domain folder": workdir / "demo" / "quarantine" / "out.json",
    }


def file_commands(workdir: Path) -> dict[str, list[str]]:
    """Commands that write a user's file, with OUT where the path goes."""
    w = ["--workdir", str(workdir)]
    d = str(DIALOGUES)
    return {
        "ground": ["ground", "demo", "--dialogues", d, "--out", "OUT", *w],
        "corpus candidates": ["corpus", "candidates", d, "--pool", d, "--out", "OUT", "--k", "2"],
        "corpus card": ["corpus", "card", d, "--domain", "demo", "--out", "OUT", *w],
        "export-rdf": ["export-rdf", "demo", "--format", "nq", "--out", "OUT", *w],
        "diff": ["diff", "demo", "--out", "OUT", *w],
        "goals": ["goals", "demo", "--n", "2", "--out", "OUT", *w],
        "qa generate --convquestions": ["qa", "generate", "demo", "--out", "q.jsonl", "--convquestions", "OUT", *w],
        "eval": ["eval", d, "--gold", d, "--out", "OUT"],
    }


@pytest.mark.parametrize("command", list(file_commands(Path("W"))))
def test_a_file_output_refuses_devices_links_folders_and_kgforges_own_layout(command, workdir, tmp_path, cli):
    for kind, target in hostile_files(workdir, tmp_path).items():
        before = snapshot(target) if os.path.lexists(target) else None
        build_listing = snapshot(workdir / "demo" / "store")
        args = [str(target) if a == "OUT" else a for a in file_commands(workdir)[command]]
        line = refused_by_the_guard(cli(*args, cwd=tmp_path, check=False), kind)
        assert "--out" in line or "--convquestions" in line, (kind, line)
        assert (snapshot(target) if os.path.lexists(target) else None) == before, kind
        assert snapshot(workdir / "demo" / "store") == build_listing, kind


@pytest.mark.parametrize(
    ("command", "args"),
    [
        ("corpus split", ["corpus", "split", str(DIALOGUES), "--out", "OUT"]),
        ("stats --plot", ["stats", "demo", "--plot", "OUT"]),
        ("corpus stats --plot", ["corpus", "stats", str(DIALOGUES), "--plot", "OUT"]),
        ("rate sheet", ["rate", "sheet", "duconv-dialogue", "--system", f"a={DIALOGUES}", "--out", "OUT"]),
    ],
)
def test_a_folder_output_refuses_files_links_and_kgforges_own_layout(command, args, workdir, tmp_path, cli):
    (tmp_path / "plain.txt").write_text("kept", encoding="utf-8")
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "linked").symlink_to(tmp_path / "elsewhere")
    targets = {
        "file": tmp_path / "plain.txt",
        **special_files(tmp_path),
        "link to a folder": tmp_path / "linked",
        "published build": workdir / "demo" / "store",
        "domain folder": workdir / "demo",
        "domain quads": workdir / "demo" / "quads" / "split",
    }
    for kind, target in targets.items():
        before = snapshot(target) if os.path.lexists(target) else None
        argv = [str(target) if a == "OUT" else a for a in args] + (
            ["--workdir", str(workdir)] if "stats" in args else []
        )
        refused_by_the_guard(cli(*argv, cwd=tmp_path, check=False), kind)
        assert (snapshot(target) if os.path.lexists(target) else None) == before, kind
    assert snapshot(tmp_path / "elsewhere") == ("dir", [])


def test_the_library_refuses_what_the_command_line_does(workdir, tmp_path):
    """The probe's repros through the Python API: the same one-line refusal (an ArgumentError: OutputRefused)."""
    manifest = workdir / "demo" / "manifest.json"
    before = snapshot(manifest)
    with pytest.raises(ArgumentError, match="symbolic link"):
        Domain("demo", workdir).ground(DIALOGUES, manifest)
    fifo = special_files(tmp_path)["fifo"]
    with pytest.raises(ArgumentError, match="fifo is not a regular file"):
        Domain("demo", workdir).ground(DIALOGUES, fifo)
    with pytest.raises(ArgumentError, match="symbolic link"):
        split_corpus(DIALOGUES, workdir / "demo" / "store")
    with pytest.raises(ArgumentError, match="kgforge manages itself"):
        split_corpus(DIALOGUES, workdir / "demo" / "store" / "split")
    with pytest.raises(ArgumentError, match="kgforge manages itself"):
        build_candidates(DIALOGUES, DIALOGUES, workdir / "demo" / "builds" / "c.jsonl", k=2)
    assert snapshot(manifest) == before and stat.S_ISFIFO(os.lstat(fifo).st_mode)


def test_another_domain_of_the_workdir_is_refused_even_before_its_first_build(workdir, cli):
    """`books` holds only the schema `kgforge init` wrote: still a domain's folder of the workdir ground reads."""
    target = workdir / "books" / "grounded.json"
    args = ("ground", "demo", "--dialogues", str(DIALOGUES), "--out", str(target), "--workdir", str(workdir))
    result = cli(*args, check=False)
    assert result.returncode == 2 and "kgforge manages itself" in result.stderr, result.stderr
    assert not target.exists()


def test_a_domain_s_exports_and_a_new_path_are_written(workdir, tmp_path, cli):
    for out in (workdir / "demo" / "exports" / "grounded.json", tmp_path / "new" / "grounded.json"):
        cli("ground", "demo", "--dialogues", str(DIALOGUES), "--out", str(out), "--workdir", str(workdir))
        assert json.loads(out.read_text(encoding="utf-8"))[0]["messages"]
    split = cli("corpus", "split", str(DIALOGUES), "--out", str(workdir / "demo" / "exports" / "split"), "--json")
    assert {Path(p["file"]).name for p in json.loads(split.stdout)["parts"]} == {"train.json", "dev.json", "test.json"}


def test_a_refused_file_inside_an_output_folder_leaves_the_others_unwritten(tmp_path, cli):
    """Every file of `corpus split` is checked before the first is written: nothing half-written."""
    out = tmp_path / "split"
    out.mkdir()
    (tmp_path / "elsewhere.json").write_text("precious", encoding="utf-8")
    (out / "dev.json").symlink_to(tmp_path / "elsewhere.json")
    result = cli("corpus", "split", str(DIALOGUES), "--out", str(out), check=False)
    assert result.returncode == 2 and "dev.json is a symbolic link" in result.stderr
    assert sorted(p.name for p in out.iterdir()) == ["dev.json"]
    assert (tmp_path / "elsewhere.json").read_text(encoding="utf-8") == "precious"


def test_eval_s_per_response_file_is_guarded_and_written_only_when_named(tmp_path, cli):
    """`eval` writes no file the user did not name (once PREDICTIONS.eval.jsonl appeared beside the input); the
    one named with --out is guarded: a link there is refused, not replaced."""
    predictions = tmp_path / "pred.json"
    predictions.write_bytes(DIALOGUES.read_bytes())
    (tmp_path / "elsewhere").write_text("precious", encoding="utf-8")
    cli("eval", str(predictions), "--gold", str(DIALOGUES))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["elsewhere", "pred.json"]
    (tmp_path / "scores.jsonl").symlink_to(tmp_path / "elsewhere")
    result = cli(
        "eval", str(predictions), "--gold", str(DIALOGUES), "--out", str(tmp_path / "scores.jsonl"), check=False
    )
    assert result.returncode == 2 and "scores.jsonl is a symbolic link" in result.stderr
    assert (tmp_path / "scores.jsonl").is_symlink()
    assert (tmp_path / "elsewhere").read_text(encoding="utf-8") == "precious"


def test_an_output_file_checks_its_sidecars_and_an_output_dir_its_files(tmp_path):
    from kgforge.core.output import output_dir, output_file

    (tmp_path / "x.json.manifest.json").symlink_to(tmp_path / "nowhere")
    out = output_file(tmp_path / "x.json")
    with pytest.raises(ArgumentError, match="symbolic link"):
        out.sidecar(".manifest.json")
    assert out.write_text("{}") == tmp_path / "x.json"
    folder = output_dir(tmp_path / "made")
    with pytest.raises(ArgumentError, match="not a file name"):
        folder.file("../escape.json")
    assert folder.file("a.txt").write_text("a") == tmp_path / "made" / "a.txt"
    with pytest.raises(ArgumentError, match="a file, not a folder"):
        output_dir(tmp_path / "x.json")


# ---------------------------------------------------------------- the walk


@pytest.mark.slow  # parses and walks every module of kgforge (a few seconds)
def test_no_user_path_reaches_a_raw_write_without_the_guard():
    from tests.writer_guard import unguarded_writes

    findings, sources = unguarded_writes(REPO)
    assert not findings, "\n".join(sorted(map(str, findings)))
    walked = {label.split(" (")[0]: names for label, names in sources.items()}
    # the registries' commands and the API were read, with the options that name paths
    assert "out" in walked["kgforge ground"] and "dialogues" in walked["kgforge ground"]
    assert "out" in walked["kgforge corpus split"] and "plot" in walked["kgforge corpus stats"]
    assert "leaderboard" in walked["kgforge eval"] and "convquestions" in walked["kgforge qa generate"]
    assert "workdir" not in walked["kgforge ground"]
    assert "out" in walked["Domain.ground"] and "out" in walked["kgforge.api.split_corpus"]


PLUGIN = '''
"""A plug-in with two commands: one writes its --out by hand, one through the guard."""
from pathlib import Path
from typing import Annotated

import typer

from kgforge.core.output import output_file


def scribble(out: Annotated[Path, typer.Option("--out")]) -> None:
    """Write a note beside OUT, by hand."""
    _note(Path(out).with_suffix(".txt"))


def _note(target: Path) -> None:
    target.write_text("note", encoding="utf-8")


def tidy(out: Annotated[Path, typer.Option("--out")]) -> None:
    """Write a note to OUT, through the guard."""
    output_file(out).sidecar(".txt").write_text("note")
'''


@pytest.fixture
def plugin_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A package with two `kgforge.commands` entry points, found on sys.path as an installed distribution is."""
    from kgforge.cli._lazy import PLUGIN_COMMANDS

    site = tmp_path / "site"
    (site / "f29_plugin").mkdir(parents=True)
    (site / "f29_plugin" / "__init__.py").write_text(textwrap.dedent(PLUGIN), encoding="utf-8")
    info = site / "f29_plugin-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: f29-plugin\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[kgforge.commands]\nf29-scribble = f29_plugin:scribble\nf29-tidy = f29_plugin:tidy\n", encoding="utf-8"
    )
    monkeypatch.syspath_prepend(str(site))
    saved = (dict(PLUGIN_COMMANDS._entries), dict(PLUGIN_COMMANDS._keys), PLUGIN_COMMANDS._loaded)
    PLUGIN_COMMANDS._loaded = False
    yield site / "f29_plugin" / "__init__.py"
    PLUGIN_COMMANDS._entries, PLUGIN_COMMANDS._keys, PLUGIN_COMMANDS._loaded = saved
    sys.modules.pop("f29_plugin", None)


@pytest.mark.slow  # parses and walks every module of kgforge (a few seconds)
def test_a_plugin_command_that_writes_without_the_guard_fails_the_walk(plugin_commands):
    from tests.writer_guard import unguarded_writes

    findings, sources = unguarded_writes(REPO)
    assert any(label.startswith("kgforge f29-scribble") for label in sources)
    assert any(label.startswith("kgforge f29-tidy") for label in sources)
    found = [f for f in findings if f.where.startswith(str(plugin_commands))]
    assert len(found) == 1 and found[0].function == "f29_plugin:_note", "\n".join(map(str, findings))
    assert "target.write_text" in str(found[0])
    assert all(f in found for f in findings)  # kgforge itself stays clean, the guarded twin too
