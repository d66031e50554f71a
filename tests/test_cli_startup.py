"""The command line as a shell user meets it: a fast start (`--help` and `--version` import no stage),
`python -m kgforge`, shell completion, options every command takes accepted before the command, a quiet
end when the reader of a pipe goes away, output that a pipe gets unwrapped, and key/value tables that
line up with Chinese keys."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.cells import cell_len

from tests.conftest import REPO, run_cli

# Modules a `--help` or `--version` has no use for: each costs tenths of a second to import.
HEAVY = (
    "polars",
    "torch",
    "pykeen",
    "pypinyin",
    "jieba",
    "numpy",
    "rdflib",
    "scipy",
    "requests",
    "starlette",
    "matplotlib",
    "kgforge.api",
    "kgforge.qa",
    "kgforge.exports",
    "kgforge.embed",
    "kgforge.publish",
    "kgforge.sources",
    "kgforge.crawl",
    "kgforge.serve",
    "kgforge.evaluation",
)


def _imported_by(*args: str) -> set[str]:
    """The modules loaded by `kgforge ARGS` in a fresh interpreter."""
    code = (
        "import sys, json\nsys.argv = ['kgforge', *json.loads(sys.argv[1])]\nfrom kgforge.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)))"
    )
    result = subprocess.run([sys.executable, "-c", code, json.dumps(args)], capture_output=True, text=True, timeout=120)
    return set(json.loads(result.stderr.rsplit("MODULES ", 1)[1]))


@pytest.mark.parametrize("args", [("--help",), ("--version",), ()], ids=["--help", "--version", "no arguments"])
def test_help_and_version_import_no_stage(args):
    loaded = _imported_by(*args)
    assert not [m for m in HEAVY if m in loaded], sorted(m for m in HEAVY if m in loaded)


# The stages (and what they pull in) that the public API loads on first use, not on import: every command
# imports kgforge.api, and `kgforge build` needs only the build and the store.
STAGES = (
    "kgforge.corpus",
    "kgforge.crawl",
    "kgforge.derive",
    "kgforge.embed",
    "kgforge.evaluation",
    "kgforge.exports",
    "kgforge.goals",
    "kgforge.grounding",
    "kgforge.languages",
    "kgforge.qa",
    "kgforge.stats",
    "kgforge.publish.domain_import",
    "kgforge.publish.link",
    "kgforge.sources.wikidata",
    "kgforge.store.rdf_export",
    "torch",
    "numpy",
    "requests",
    "pypinyin",
    "matplotlib",
)


def test_importing_the_api_loads_no_stage():
    code = "import sys, json, kgforge.api\nprint(json.dumps(sorted(sys.modules)))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    loaded = set(json.loads(result.stdout))
    assert "kgforge.publish.transaction" in loaded
    assert not [m for m in STAGES if m in loaded], sorted(m for m in STAGES if m in loaded)


@pytest.mark.slow  # a fresh interpreter, its imports listed
def test_build_help_loads_no_stage():
    loaded = _imported_by("build", "--help")
    assert "kgforge.cli.build" in loaded
    assert not [m for m in STAGES if m in loaded], sorted(m for m in STAGES if m in loaded)


def test_every_public_name_is_the_one_its_stage_defines():
    """Loading on first use changes no name: each lazy name (an import under ``if TYPE_CHECKING:``, read by
    kgforge.core.lazy) is its module's object, and ``import *`` works."""
    import importlib
    import inspect

    import kgforge
    import kgforge.api as api
    from kgforge.core.lazy import imports_for_type_checkers

    homes = imports_for_type_checkers(inspect.getsource(api))
    assert len(homes) > 80 and {"CorpusStats", "ExportOptions", "EXPORT_FORMATS", "describe_workdir"} <= set(homes)
    for name, (module, there) in homes.items():
        assert getattr(api, name) is getattr(importlib.import_module(module), there), name
    namespace: dict = {}
    exec("from kgforge.api import *", namespace)
    assert set(api.__all__) <= namespace.keys()
    assert all(getattr(kgforge, name) is not None for name in kgforge.__all__)
    assert kgforge.corpus_stats is api.corpus_stats and kgforge.crawl_site is api.crawl_site


@pytest.mark.slow  # a fresh interpreter, its imports listed
def test_a_command_imports_its_own_module_only():
    loaded = _imported_by("queries", "--json")
    assert "kgforge.cli.query" in loaded
    assert not {"kgforge.cli.embed", "kgforge.cli.qa", "kgforge.cli.goals", "pykeen", "torch"} & loaded


def test_help_lists_every_command_with_its_help_line():
    out = run_cli("--help", env={"COLUMNS": "200"}).stdout
    for name, first in [
        ("build", "Import the domain's sources and swap in a freshly built store."),
        ("import", "Add a Wikidata or XLORE source to a domain's store."),
        ("qa-eval", "Score predictions turn by turn"),
    ]:
        assert any(
            line.split("│")[1].strip().startswith(f"{name} ") and first in line
            for line in out.splitlines()
            if line.count("│") >= 2
        ), name


@pytest.mark.slow  # imports every command module in a fresh interpreter
def test_the_command_index_matches_the_command_modules():
    result = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "command_index.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr


def test_an_unknown_command_is_still_refused_with_the_help_hint():
    result = run_cli("buidl", check=False)
    assert result.returncode == 2 and "No such command 'buidl'" in result.stderr


@pytest.mark.slow  # ten fresh interpreters, timed
def test_version_starts_about_as_fast_as_importing_typer():
    def median(command: list[str]) -> float:
        times = []
        for _ in range(5):
            started = time.perf_counter()
            subprocess.run(command, capture_output=True, check=True, timeout=60)
            times.append(time.perf_counter() - started)
        return statistics.median(times)

    # relative, so that a loaded machine does not fail it: a stage imported at start costs seconds, not this
    typer_alone = median([sys.executable, "-c", "import typer"])
    version = median([sys.executable, "-m", "kgforge", "--version"])
    assert version < 3 * typer_alone + 0.1, (version, typer_alone)


@pytest.mark.slow  # starts a fresh interpreter
def test_python_dash_m_kgforge_is_the_command(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "kgforge", "--workdir", str(tmp_path), "domains"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert f"no domain is built in {tmp_path}" in " ".join(result.stdout.split())
    usage = subprocess.run([sys.executable, "-m", "kgforge", "--help"], capture_output=True, text=True, timeout=60)
    assert "Usage: kgforge [OPTIONS] COMMAND" in usage.stdout


def test_shell_completion_completes_commands_and_options():
    env = {"_KGFORGE_COMPLETE": "complete_bash", "COMP_WORDS": "kgforge bu", "COMP_CWORD": "1"}
    assert run_cli(env=env).stdout.split() == ["build"]
    env |= {"COMP_WORDS": "kgforge query travel --fo", "COMP_CWORD": "3"}
    assert run_cli(env=env).stdout.split() == ["--format"]
    shown = run_cli("--show-completion", "bash", env={"SHELL": "/bin/bash"})
    assert "_KGFORGE_COMPLETE=complete_bash" in shown.stdout


@pytest.mark.parametrize("before", [["--workdir", "{w}"], ["--workdir={w}"], ["--json", "--workdir", "{w}"]])
def test_options_every_command_takes_are_accepted_before_the_command(before, tmp_path):
    args = [arg.format(w=tmp_path) for arg in before]
    result = run_cli(*args, "domains")
    if "--json" in args:
        assert json.loads(result.stdout) == []
    else:
        assert f"no domain is built in {tmp_path}" in " ".join(result.stdout.split())


def test_options_before_the_command_go_after_its_arguments_and_before_a_double_dash():
    from kgforge.cli._main import options_after_command

    assert options_after_command(["--workdir", "w", "stats", "travel"]) == ["stats", "travel", "--workdir", "w"]
    assert options_after_command(["--json", "query", "t", "--", "-x"]) == ["query", "t", "--json", "--", "-x"]
    assert options_after_command(["stats", "--workdir", "w"]) == ["stats", "--workdir", "w"]
    assert options_after_command(["--version"]) == ["--version"]
    assert options_after_command(["--workdir"]) == ["--workdir"]  # click says what is missing


_WORDS = st.sampled_from(["stats", "query", "travel", "x", "--limit", "3", "--", "-v", "--format=csv"])
_LEADING = st.lists(st.sampled_from([["--json"], ["--workdir", "w"], ["--workdir=v"]]), max_size=3)


@given(_LEADING, st.lists(_WORDS, max_size=8))
def test_moving_leading_options_keeps_every_word_and_the_order_of_the_rest(leading, rest):
    from kgforge.cli._main import options_after_command

    options = [word for option in leading for word in option]
    moved = options_after_command(options + rest)
    if options and rest:  # the command and its words first, in order; the options before any `--`
        end = rest.index("--") if "--" in rest else len(rest)
        assert moved == rest[:end] + options + rest[end:]
    else:
        assert moved == options + rest


def _closed_reader(args: list[str]) -> subprocess.CompletedProcess:
    """`kgforge ARGS` writing into a pipe whose reader has gone away (`… | head` once head has its lines)."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-c", "from kgforge.cli import main; main()", *args],
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=120,
        )
    finally:
        os.close(write_end)


@pytest.mark.slow  # a fresh interpreter per pipe, its reader closed
@pytest.mark.parametrize("args", [["queries", "--json"], ["queries"], ["sources"], ["--help"]])
def test_a_reader_that_goes_away_ends_the_command_quietly_with_status_0(args):
    result = _closed_reader(args)
    assert result.returncode == 0, result.stderr
    assert result.stderr == ""


@pytest.mark.slow  # a fresh interpreter writing to a pipe
def test_piped_output_is_not_wrapped_at_80_columns():
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    result = subprocess.run(
        [sys.executable, "-m", "kgforge", "queries"], capture_output=True, text=True, env=env, timeout=60
    )
    described = json.loads(run_cli("queries", "--json").stdout)
    for name, description in described.items():
        assert any(name in line and description in line for line in result.stdout.splitlines()), name


def test_key_value_tables_line_up_with_chinese_keys(capsys):
    from kgforge.cli._app import show_mapping

    show_mapping("types", {"景点": 1200, "attraction": 3, "北京市东城区": 45})
    lines = capsys.readouterr().out.splitlines()[1:]
    value_columns = {cell_len(line[: line.rindex(" ") + 1]) for line in lines}
    assert len(value_columns) == 1, lines


def test_key_value_tables_print_brackets_as_written(capsys):
    from kgforge.cli._app import show_mapping

    show_mapping("[b]release[/b] → out[1]", {"[k]": "[red]x", "croissant": "pip install 'kgforge[release]'"})
    out = capsys.readouterr().out
    assert "[b]release[/b] → out[1]" in out and "[k]" in out and "[red]x" in out
    assert "pip install 'kgforge[release]'" in out


def test_a_command_option_before_the_command_says_where_it_goes():
    result = run_cli("--limit", "3", "query", "travel", "entity_facts", check=False)
    assert result.returncode == 2
    said = " ".join(result.stderr.split())
    assert "No such option: --limit (see `kgforge --help`); a command's own options go after its name" in said
    elsewhere = run_cli("queries", "--nope", check=False)
    assert "go after its name" not in elsewhere.stderr  # an option the command itself lacks: its own help
