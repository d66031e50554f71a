"""The house rule on length: no function or method in kgforge/ spans more than 80 lines, signature included.

A command's option declarations count: a typer command whose signature alone fills a screen is as hard to read as
a long body (hence the ``Annotated`` option aliases in kgforge/cli). There is no allow-list: a function that grows
past the limit is split where it is, into helpers whose names say what each part does."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kgforge"
LIMIT = 80


def long_functions(source: str, limit: int = LIMIT) -> list[tuple[str, int]]:
    """``(qualified name, lines)`` of each function or method in ``source`` spanning more than ``limit`` lines,
    from its ``def`` line (decorators excluded: they describe it, they do not lengthen it) to its last line."""
    found: list[tuple[str, int]] = []

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = f"{prefix}{child.name}"
                if not isinstance(child, ast.ClassDef):
                    span = (child.end_lineno or child.lineno) - child.lineno + 1
                    if span > limit:
                        found.append((name, span))
                visit(child, f"{name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return found


def test_no_function_is_longer_than_the_limit():
    offenders = [
        f"{'.'.join(path.relative_to(PACKAGE.parent).with_suffix('').parts)}:{name} ({span} lines)"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name, span in long_functions(path.read_text(encoding="utf-8"))
    ]
    assert not offenders, (
        f"functions over {LIMIT} lines (split each into helpers that say what they do):\n" + "\n".join(offenders)
    )


def test_the_check_measures_what_it_says():
    """Signature lines count, decorators do not, nested functions and methods are found and named by where
    they sit, and a function of exactly the limit passes."""
    source = (
        "@decorator\n@another\ndef at_limit(\n    a: int,\n) -> None:\n    return None\n"  # 4 lines
        "class Holder:\n    def method(\n        self,\n        b: int,\n    ) -> None:\n        return None\n"  # 5
        "def outer():\n    def inner():\n        x = 1\n        y = 2\n        return x + y\n    return inner\n"
    )
    assert long_functions(source, limit=4) == [("Holder.method", 5), ("outer", 6)]
    assert long_functions(source, limit=3) == [("at_limit", 4), ("Holder.method", 5), ("outer", 6), ("outer.inner", 4)]
    assert long_functions(source, limit=6) == []
