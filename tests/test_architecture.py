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
    probe = "import sys; from kgforge.cli._lazy import load_commands; load_commands(); print('torch' in sys.modules)"
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


def test_no_package_may_import_a_dataset_room():
    """Every package of kgforge but the rooms themselves is a source of the "Dataset rooms are imported by name"
    contract, so a new package cannot reach a room but through the registries, as it would a plug-in's."""
    config = tomllib.loads((PACKAGE.parent / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c["name"] == "Dataset rooms are imported by name, never by another package"
    )
    packages = {
        f"kgforge.{path.stem if path.suffix == '.py' else path.name}"
        for path in PACKAGE.iterdir()
        if (path.suffix == ".py" or (path / "__init__.py").is_file()) and not path.name.startswith("_")
    }
    assert packages - {"kgforge.datasets"} <= set(contract["source_modules"])
    assert contract["forbidden_modules"] == ["kgforge.datasets"]


# ---------------------------------------------------------------- the snapshot is every reader's argument

# Where a build may be opened (Snapshot.open / .published / .of_build), and why each place may.
SNAPSHOT_OPENERS = {
    "store/snapshot.py": "defines it",
    "domain/base.py": "Domain.snapshot(): the public API opens the build each method reads",
    "serve/": "the SPARQL endpoint and the explorer: one snapshot per build they serve",
    "publish/transaction.py": "the build transaction, and extending(): a writer's build, under the write lock",
    "publish/domain_import.py": "the import writer: the build it extends, or none on a first build",
}
# Where a store may be opened (pyoxigraph's Store on a folder, the store adapter's read_only_store).
STORE_OPENERS = {
    "store/oxigraph.py": "defines read_only_store; bulk loading and extending a staged build",
    "store/snapshot.py": "Snapshot.store(): the snapshot's own build",
    "store/tables.py": "a build's tables, read for its snapshot (only the snapshot calls it: test_snapshot.py)",
    "store/worker.py": "the query worker: the store of the snapshot its QueryRunner was given",
    "serve/worker.py": "the endpoint's query workers: the builds the server holds snapshots of",
}
SNAPSHOT_OPENING = {"open", "published", "of_build"}
STORE_OPENING = {"read_only_store", "read_only", "secondary"}


def _named(node: ast.AST, name: str) -> bool:
    return (isinstance(node, ast.Name) and node.id == name) or (isinstance(node, ast.Attribute) and node.attr == name)


def openings(source: str) -> list[tuple[int, str]]:
    """``(line, what)`` of each place ``source`` opens a snapshot (``Snapshot.open``, ``.published``,
    ``.of_build``) or a store (``read_only_store``, ``Store.read_only``, ``Store(folder)``)."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Attribute) and node.attr in SNAPSHOT_OPENING and _named(node.value, "Snapshot"):
            found.append((node.lineno, f"Snapshot.{node.attr}"))
        elif isinstance(node, ast.Attribute) and node.attr in STORE_OPENING and _named(node.value, "Store"):
            found.append((node.lineno, f"Store.{node.attr}"))
        elif _named(node, "read_only_store") and not isinstance(node, ast.ImportFrom):
            found.append((node.lineno, "read_only_store"))
        elif isinstance(node, ast.Call) and _named(node.func, "Store") and (node.args or node.keywords):
            found.append((node.lineno, "Store(folder)"))
    return sorted(set(found))


def _allowed(path: Path, owners: dict[str, str]) -> bool:
    where = path.relative_to(PACKAGE).as_posix()
    return any(where == owner or (owner.endswith("/") and where.startswith(owner)) for owner in owners)


def test_only_the_api_the_endpoint_and_the_writers_open_a_snapshot_or_a_store():
    """Every reader stage takes the Snapshot it is handed, so one call reads one build however many stages it
    passes through; only the places named above open one (docs/architecture.md, "Reading a build")."""
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for line, what in openings(path.read_text(encoding="utf-8")):
            owners = SNAPSHOT_OPENERS if what.startswith("Snapshot") else STORE_OPENERS
            if not _allowed(path, owners):
                offenders.append(f"kgforge/{path.relative_to(PACKAGE)}:{line}: {what}")
    assert not offenders, (
        "these modules open a build or a store themselves; take the Snapshot the caller hands over (a writer "
        "extending a build: kgforge.publish.transaction.extending):\n" + "\n".join(offenders)
    )


def test_the_opening_walk_finds_what_it_looks_for():
    source = (
        "from kgforge.store.oxigraph import read_only_store\n"
        "import pyoxigraph as ox\n"
        "def f(paths, snapshot):\n"
        "    a = Snapshot.open(paths)\n"
        "    b = snapshot_module.Snapshot.published(paths)\n"
        "    c = ox.Store(str(paths))\n"
        "    d = ox.Store.read_only('x')\n"
        "    e = read_only_store('x')\n"
        "    f = ox.Store()\n"  # in memory: no build
        "    return snapshot.store(), snapshot.kept('b')\n"  # the snapshot's own build, and one it keeps
    )
    assert openings(source) == [
        (4, "Snapshot.open"),
        (5, "Snapshot.published"),
        (6, "Store(folder)"),
        (7, "Store.read_only"),
        (8, "read_only_store"),
    ]


# ---------------------------------------------------------------- the public face, and no circles


def test_the_public_api_module_stays_small():
    """kgforge/api.py holds Domain (its methods live with their stage in kgforge/domain/) and the few
    top-level functions; the names it hands on load through kgforge.core.lazy."""
    lines = len((PACKAGE / "api.py").read_text(encoding="utf-8").splitlines())
    assert lines <= 400, f"kgforge/api.py has {lines} lines (at most 400): put a stage's methods in kgforge/domain/"


def test_one_way_of_loading_names_on_first_use():
    """No module writes its own module ``__getattr__`` (a table of names and a copy of it for type checkers):
    the one mechanism is kgforge.core.lazy.attach, which reads the module's ``if TYPE_CHECKING:`` imports."""
    offenders = [
        f"kgforge/{path.relative_to(PACKAGE)}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for node in ast.parse(path.read_text(encoding="utf-8")).body
        if isinstance(node, ast.FunctionDef) and node.name in ("__getattr__", "__dir__")
    ]
    assert not offenders, "use `__getattr__, __dir__ = lazy.attach(__name__)` instead in:\n" + "\n".join(offenders)


def import_cycles() -> list[list[str]]:
    """The strongly connected groups of kgforge's modules (more than one module each) in grimp's import graph,
    which holds every import: at the top, inside functions (lazy ones), and under ``if TYPE_CHECKING:``."""
    import grimp

    graph = grimp.build_graph("kgforge")
    edges = {m: [n for n in graph.find_modules_directly_imported_by(m) if n in graph.modules] for m in graph.modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []
    for root in sorted(edges):  # Tarjan's algorithm, without recursion
        if root in index:
            continue
        work = [(root, iter(edges[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is None:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    group = stack[stack.index(node) :]
                    del stack[stack.index(node) :]
                    if len(group) > 1:
                        groups.append(sorted(group))
            elif child not in index:
                index[child] = low[child] = len(index)
                stack.append(child)
                work.append((child, iter(edges[child])))
            elif child in stack:
                low[node] = min(low[node], index[child])
    return groups


def test_no_module_imports_itself_back_even_through_a_lazy_import():
    """import-linter's contracts check packages; this checks modules, function-level imports included (a
    `kgforge.cli` face importing its `_lazy` helper that imports the face back was such a circle)."""
    import grimp

    graph = grimp.build_graph("kgforge")
    assert "kgforge.corpus" in graph.find_modules_directly_imported_by("kgforge.api")  # only inside functions
    assert import_cycles() == []


# ---------------------------------------------------------------- types all the way down

# A public function returns a typed record (kgforge.core.records.Record), never a bare dict: a caller reads
# ``report.triples``, and a checker follows it. Two ways out, each named: a record's serialisation escape
# (the methods below), and a JSON document written or sent as it is (a dataset's record, Croissant, a card
# header, a request body), which says so by returning kgforge.core.jsonio.JsonObject.
DICT_ESCAPES = {"as_dict", "to_dict", "to_json"}
DICT_RETURNS = {"dict", "Dict", "typing.Dict", "dict[str, Any]", "Dict[str, Any]", "dict[str, typing.Any]"}


def _returns_a_dict(annotation: ast.expr | None) -> bool:
    """Whether the annotation's text is a bare dict (or ``dict[str, Any]``), alone or ``| None``/Optional.
    Read as text, so the alias ``JsonObject`` (the same type to a checker) is told apart."""
    if annotation is None:
        return False
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):  # a quoted annotation
        annotation = ast.parse(annotation.value, mode="eval").body
    text = ast.unparse(annotation)
    if text.startswith(("Optional[", "typing.Optional[")) and text.endswith("]"):
        text = text[text.index("[") + 1 : -1]
    kinds = [part.strip() for part in text.split("|") if part.strip() != "None"]
    return len(kinds) == 1 and kinds[0] in DICT_RETURNS


def public_dict_returns(source: str) -> list[str]:
    """The public module-level functions and public methods of public classes whose return annotation is a
    bare dict, as ``name`` or ``Class.method``; the serialisation escapes (:data:`DICT_ESCAPES`) excepted."""
    found = []
    for node in ast.parse(source).body:
        functions: list[tuple[str, ast.AST]] = []
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions = [(node.name, node)]
        elif isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            functions = [
                (f"{node.name}.{m.name}", m)
                for m in node.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
            ]
        for name, function in functions:
            last = name.rsplit(".", 1)[-1]
            if last.startswith("_") or last in DICT_ESCAPES:
                continue
            assert isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef))
            if _returns_a_dict(function.returns):
                found.append(name)
    return found


def test_no_public_function_returns_a_dict():
    """Issue 45, "types all the way down": a result a caller reads fields of is a typed frozen record; a helper
    that returns a dict is private (``_name``); a JSON document says so (``JsonObject``)."""
    found = sorted(
        f"{path.relative_to(PACKAGE).as_posix()}:{name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for name in public_dict_returns(path.read_text(encoding="utf-8"))
    )
    assert not found, (
        "these public functions return a dict: return a typed record (kgforge.core.records.Record), make the "
        "helper private (_name), or, for a JSON document written or sent as it is, kgforge.core.jsonio."
        "JsonObject:\n" + "\n".join(found)
    )


def test_the_dict_walk_finds_what_it_looks_for():
    source = (
        "def a() -> dict[str, Any]: ...\n"
        "def b() -> dict: ...\n"
        "def c() -> JsonObject: ...\n"  # a document, and says so
        "def _d() -> dict: ...\n"  # private
        "def e() -> dict[str, int]: ...\n"  # typed values: a mapping, not a record in disguise
        "def f() -> dict[str, Any] | None: ...\n"
        "def g() -> 'Optional[Dict]': ...\n"
        "class P:\n"
        "    def as_dict(self) -> dict[str, Any]: ...\n"
        "    def report(self) -> dict: ...\n"
        "    def _state(self) -> dict: ...\n"
        "class _Q:\n"
        "    def report(self) -> dict: ...\n"
    )
    assert public_dict_returns(source) == ["a", "b", "f", "g", "P.report"]
