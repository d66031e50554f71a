"""The house rules the import linter cannot see: no function-level kgforge import hides a cycle."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "kgforge"
LAZY = "# lazy:"  # on the import's line or the line above: it defers a heavy load (torch), and why


def function_level_imports(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of each ``kgforge`` import inside a function that lacks a ``# lazy:`` reason."""
    lines = source.splitlines()
    found = []
    for function in (n for n in ast.walk(ast.parse(source)) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for node in ast.walk(function):
            modules = (
                [node.module or ""]
                if isinstance(node, ast.ImportFrom) and not node.level
                else [a.name for a in node.names]
                if isinstance(node, ast.Import)
                else []
            )
            if any(m == "kgforge" or m.startswith("kgforge.") for m in modules) and not any(
                LAZY in line for line in lines[max(0, node.lineno - 2) : node.lineno]
            ):
                found.append((node.lineno, lines[node.lineno - 1].strip()))
    return found


def test_no_function_level_kgforge_imports():
    offenders = [
        f"{path.relative_to(PACKAGE.parent)}:{line}: {text}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for line, text in function_level_imports(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        "function-level kgforge imports (move them to the top of the module; if one defers a "
        "heavy load, say so with '# lazy: <why>'):\n" + "\n".join(offenders)
    )


def test_the_check_finds_what_it_looks_for():
    source = (
        "def f():\n    from kgforge.publish import x\n"
        "def g():\n    import kgforge.embed  # lazy: torch\n"
        "def k():\n    # lazy: torch\n    from kgforge.embed import (\n        x,\n    )\n"
        "def h():\n    import json\n"
    )
    assert function_level_imports(source) == [(2, "from kgforge.publish import x")]


@pytest.mark.slow  # starts a fresh interpreter
def test_the_command_line_starts_without_torch():
    """Every command module loads at start; none may pull in torch (seconds per CLI call, and the kill
    tests' windows assume a quick start). The api, the demo and the embed commands load it on first use."""
    probe = "import sys; from kgforge.cli import _load_commands; _load_commands(); print('torch' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"


def test_every_command_module_is_held_to_the_public_api():
    """Each command module of kgforge/cli (not the ``_`` helpers) is a source of import-linter's "Command modules
    go through the public API" contract, so a new command cannot import a stage module unnoticed."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "Command modules go through the public API"
    )
    commands = {f"kgforge.cli.{path.stem}" for path in (PACKAGE / "cli").glob("*.py") if not path.stem.startswith("_")}
    assert commands - set(contract["source_modules"]) == set()
    assert {"kgforge.qa", "kgforge.evaluation", "kgforge.embed", "kgforge.store"} <= set(contract["forbidden_modules"])
