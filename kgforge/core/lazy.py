"""Names a module hands on from other modules, loaded on first use: one list, read by people, type checkers and
the interpreter alike.

A module writes the names it re-exports as plain imports under ``if TYPE_CHECKING:`` — ``from kgforge.corpus
import CorpusStats as CorpusStats`` (the ``X as X`` form says "re-exported" to mypy and ruff) — and ends with

    __getattr__, __dir__ = lazy.attach(__name__)

Type checkers, linters and editors read the imports as they are; at run time the block does not run, and
:func:`attach` reads it from the module's own source the first time a name is missing (PEP 562), imports that
name's module and keeps the value on the module. There is no second table to keep in step with the imports,
and no stub file. ``__all__`` is made the same way on first use: the module's public functions, classes and
assigned names, what it imports ``as`` itself, and every name the blocks bind (``from kgforge.api import *`` loads them all, as it asks to).
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from collections.abc import Callable
from typing import Any

__all__ = ["attach", "imports_for_type_checkers"]


def imports_for_type_checkers(source: str) -> dict[str, tuple[str, str | None]]:
    """Each name bound by an import under a top-level ``if TYPE_CHECKING:`` of ``source``: name -> (module, the
    name in that module, or None where the name is the module itself: ``import a.b as c``)."""
    found: dict[str, tuple[str, str | None]] = {}
    for block in ast.parse(source).body:
        if not (isinstance(block, ast.If) and _is_type_checking(block.test)):
            continue
        for node in block.body:
            if isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found |= {(a.asname or a.name): (node.module, a.name) for a in node.names if a.name != "*"}
            elif isinstance(node, ast.Import):
                found |= {a.asname: (a.name, None) for a in node.names if a.asname}
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _public_definitions(source: str) -> list[str]:
    """The module's own public functions, classes and names it assigns (top level, no leading underscore), and
    the names it imports as they are named (``from m import x as x``)."""
    found, reexported = [], []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.append(node.name)
        elif isinstance(node, ast.Assign):
            found += [target.id for target in node.targets if isinstance(target, ast.Name)]
        elif isinstance(node, ast.ImportFrom):  # ``from m import x as x`` at the top: re-exported as it is
            reexported += [a.asname for a in node.names if a.asname == a.name]
    return [name for name in found if not name.startswith("_")] + reexported


def _source(module_name: str) -> str:
    module = sys.modules.get(module_name)
    spec = module.__spec__ if module is not None else importlib.util.find_spec(module_name)
    source = spec.loader.get_source(module_name) if spec and spec.loader else None  # type: ignore[attr-defined]
    if source is None:  # a sourceless install: the names cannot be found, so say which module lost them
        raise ImportError(f"{module_name}: its source is needed to load the names it hands on, and it is missing")
    return str(source)


def attach(module_name: str) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for ``module_name``: each name of its ``if TYPE_CHECKING:`` imports loaded from
    its own module on first use and kept, and ``__all__`` made on first use (see the module docstring)."""
    module = sys.modules[module_name]
    found: dict[str, tuple[str, str | None]] = {}

    def homes() -> dict[str, tuple[str, str | None]]:
        if not found:  # read once, on the first name missing: importing the module costs nothing more
            found.update(imports_for_type_checkers(_source(module_name)))
        return found

    def __getattr__(name: str) -> Any:
        if name == "__all__":
            value: Any = sorted({*_public_definitions(_source(module_name)), *homes()})
        elif name in homes():
            home, there = homes()[name]
            value = _load(home, there)
        else:
            raise AttributeError(f"module {module_name!r} has no attribute {name!r}")
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted({*vars(module), *homes()})

    return __getattr__, __dir__


def _load(module: str, name: str | None) -> Any:
    loaded = importlib.import_module(module)
    if name is None:
        return loaded
    try:
        return getattr(loaded, name)
    except AttributeError:  # ``from kgforge import corpus``: a submodule not imported yet
        return importlib.import_module(f"{module}.{name}")
