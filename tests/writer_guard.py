"""Which raw writes a user's path can reach without the output guard (``kgforge.core.output``).

A taint walk over the source of kgforge (and of any module a plug-in command lives in), no hand list of
writers or commands:

* **Sources** are read from the registries at run time: every parameter typed ``Path`` of every registered
  command (built-in and plug-in, through typer's own command tree) and of every public function of
  ``kgforge.api`` and method of ``Domain`` — but ``workdir``, the one folder whose layout kgforge writes itself.
* **The guard** hands out guarded values: what ``output_file`` / ``output_dir`` (and any function that returns
  one of theirs) return, and what their methods return (a sidecar, an opened handle, a temporary ``part``).
  Anything else made from a guarded value (``out.path.with_name(...)``, ``str(out)``) is a user's path again.
* **Sinks** are the raw writes: ``open`` in a writing mode, ``Path.write_text|write_bytes|open|mkdir|touch|
  unlink|rename|replace``, polars' ``write_*``/``sink_*``, ``savefig``/``save``, ``shutil``'s copies and moves,
  ``os.replace|rename|remove``, and :mod:`kgforge.core.files`' atomic helpers. A sink whose path is a user's
  path is a finding; one whose path is guarded, or kgforge's own (derived from none of the sources), is not.

Values flow through assignments, arguments (calls are resolved through imports, ``self``, the classes of
annotated and constructed receivers, else every method of that name), return values and the attributes of
classes, to a fixed point. The walk is conservative: where it cannot tell, a user's path stays one.
"""

from __future__ import annotations

import ast
import inspect
import io
import sys
import typing
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

CLEAN, GUARDED, USER = 0, 1, 2
GUARD_MODULE = "kgforge.core.output"
EXEMPT = {"kgforge.core.files", GUARD_MODULE}  # the implementation of the writes and of the guard
GUARDS = {"output_file", "output_dir"}
GUARD_METHODS = {"open", "part", "stream", "write_text", "write_bytes", "write_json", "sidecar", "beside", "file"}
# OutputDir.make(): the checked folder, whose files kgforge names itself (a cache); OutputDir.staged(): the new
# folder beside it that replaces it whole (a release)
ADOPTING = {"make", "staged"}
NOT_SOURCES = {"workdir", "self", "cls"}

ATOMIC = {"atomic_write", "atomic_path", "AtomicFile", "write_json_atomic", "write_text_atomic", "write_bytes_atomic"}
RECEIVER_SINKS = {"write_text", "write_bytes", "mkdir", "touch", "unlink", "rmdir", "symlink_to", "hardlink_to"}
FIRST_ARG_SINKS = {"savefig", "write_csv", "write_parquet", "write_ndjson", "write_json", "write_ipc", "write_avro"}
FIRST_ARG_SINKS |= {"write_excel", "write_delta", "sink_parquet", "sink_csv", "sink_ndjson", "sink_ipc"}
TARGET_SINKS = {"replace", "rename", "copy", "copy2", "copyfile", "copytree", "move", "link", "symlink"}
REMOVING = {"remove", "unlink", "rmtree", "removedirs"}
WRITE_MODES = set("wax+")
# calls that hand on what they are given (a container's items, a value's own kind): guarded stays guarded
PASS_THROUGH = {"zip", "enumerate", "list", "tuple", "sorted", "reversed", "iter", "next", "dict", "set", "frozenset"}
PASS_THROUGH |= {"items", "values", "get", "pop", "copy", "setdefault", "cast"}
# a method of the built-in kinds (dict.get, list.append, a file's write): never taken for a kgforge method of that name
BUILTIN_METHODS = {
    name for kind in (dict, list, set, str, bytes, io.TextIOBase, io.BufferedIOBase, Path) for name in dir(kind)
}
# what makes a path from a path (a file's contents, a count, a message read from one are no path)
PATH_CALLS = {"Path", "PurePath", "PosixPath", "str", "fspath", "abspath", "realpath", "normpath", "join", "dirname"}
PATH_CALLS |= {"basename", "expanduser", "with_name", "with_suffix", "with_stem", "joinpath", "resolve", "absolute"}
PATH_CALLS |= {"relative_to", "as_posix", "format", "removesuffix", "removeprefix", "strip", "rstrip", "lstrip"}
# a path's ``name``, ``stem`` and ``suffix`` are one component, which cannot choose a location (kgforge may name
# a file of its own folder after a user's file: ``raw/<dump name>.framed.json``); its other attributes can
NAME_ATTRS = {"name", "stem", "suffix", "suffixes"}


@dataclass
class Func:
    key: str
    module: Module
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: Klass | None
    params: list[str]
    nested: dict[str, Func] = field(default_factory=dict)
    levels: dict[str, int] = field(default_factory=dict)
    closure: dict[str, int] = field(default_factory=dict)
    returns: int = CLEAN

    @property
    def is_method(self) -> bool:
        return self.cls is not None and bool(self.params) and self.params[0] in ("self", "cls")


@dataclass
class Klass:
    key: str
    module: Module
    node: ast.ClassDef
    methods: dict[str, Func] = field(default_factory=dict)
    fields: list[str] = field(default_factory=list)
    attrs: dict[str, int] = field(default_factory=dict)


@dataclass
class Module:
    name: str
    path: Path
    tree: ast.Module
    imports: dict[str, tuple[str, str | None]] = field(default_factory=dict)
    funcs: dict[str, Func] = field(default_factory=dict)
    classes: dict[str, Klass] = field(default_factory=dict)


@dataclass(frozen=True)
class Finding:
    where: str  # file:line
    function: str
    sink: str

    def __str__(self) -> str:
        return f"{self.where}: {self.function}: a user's path reaches {self.sink} without kgforge.core.output"


class Index:
    """Every module, function and class of the source trees, with the taint state of the walk."""

    def __init__(self, modules: Iterable[tuple[str, Path]]) -> None:
        self.modules: dict[str, Module] = {}
        for name, path in modules:
            tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
            self.modules[name] = module = Module(name, path, tree)
            _collect(module)
        self.by_method: dict[str, list[Func]] = {}
        self.attr_names: dict[str, list[Klass]] = {}
        for module in self.modules.values():
            for klass in module.classes.values():
                for name, method in klass.methods.items():
                    self.by_method.setdefault(name, []).append(method)
                for name in {*klass.fields, *_self_attrs(klass)}:
                    self.attr_names.setdefault(name, []).append(klass)

    def functions(self) -> Iterator[Func]:
        for module in self.modules.values():
            for func in module.funcs.values():
                yield from _with_nested(func)
            for klass in module.classes.values():
                for method in klass.methods.values():
                    yield from _with_nested(method)

    def lookup(self, module: str, name: str, seen: frozenset[str] = frozenset()) -> Func | Klass | None:
        """``module.name`` as a function or class of the index, following re-exports (kgforge.api's lazy names too)."""
        found = self.modules.get(module)
        if found is None or (module, name) in seen:
            return None
        if name in found.funcs:
            return found.funcs[name]
        if name in found.classes:
            return found.classes[name]
        if name in found.imports:  # a lazy name (kgforge.core.lazy) is an import under TYPE_CHECKING: here too
            target, attr = found.imports[name]
            if attr is None:
                return None
            return self.lookup(target, attr, seen | {(module, name)})
        return None

    def find(self, obj: object) -> Func | Klass | None:
        """The index's entry for a function, method or class object."""
        obj = inspect.unwrap(obj)  # type: ignore[arg-type]
        module = self.modules.get(getattr(obj, "__module__", ""))
        if module is None:
            return None
        head, _, rest = getattr(obj, "__qualname__", "").partition(".")
        if rest:
            klass = module.classes.get(head)
            return klass.methods.get(rest) if klass is not None else None
        return module.funcs.get(head) or module.classes.get(head)


def _with_nested(func: Func) -> Iterator[Func]:
    yield func
    for inner in func.nested.values():
        yield from _with_nested(inner)


def _collect(module: Module) -> None:
    for node in ast.walk(module.tree):  # function-level (lazy) imports too: their names are as good
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                module.imports[alias.asname or alias.name] = (node.module, alias.name)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                module.imports[alias.asname or alias.name.split(".")[0]] = (alias.name, None)
    for node in module.tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            module.funcs[node.name] = _func(module, node, None, node.name)
        elif isinstance(node, ast.ClassDef):
            module.classes[node.name] = _klass(module, node)


def _klass(module: Module, node: ast.ClassDef) -> Klass:
    klass = Klass(f"{module.name}:{node.name}", module, node)
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            klass.methods[item.name] = _func(module, item, klass, f"{node.name}.{item.name}")
        elif (
            isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and "ClassVar" not in ast.unparse(item.annotation)
        ):
            klass.fields.append(item.target.id)
    return klass


def _func(module: Module, node: ast.FunctionDef | ast.AsyncFunctionDef, klass: Klass | None, qualname: str) -> Func:
    args = node.args
    params = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    params += [a.arg for a in (args.vararg, args.kwarg) if a is not None]
    func = Func(f"{module.name}:{qualname}", module, node, klass, params)
    for inner in _defs_within(node):
        func.nested.setdefault(inner.name, _func(module, inner, klass, f"{qualname}.{inner.name}"))
    return func


def _defs_within(node: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The functions defined in ``node``'s body, not those defined in them (each walks its own)."""
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield child
        elif not isinstance(child, (ast.ClassDef, ast.Lambda, ast.expr)):
            yield from _defs_within(child)


def _self_attrs(klass: Klass) -> set[str]:
    return {
        node.attr
        for method in klass.methods.values()
        for node in ast.walk(method.node)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
        if isinstance(node.ctx, ast.Store)
    }


# ---------------------------------------------------------------- sources


def command_callbacks(include_plugins: bool = True) -> list[tuple[str, object]]:
    """(command line, callback) of every registered command: the built-ins through typer's own tree, the
    plug-ins (entry-point group ``kgforge.commands``) through their registry."""
    import typer

    from kgforge.cli._app import app
    from kgforge.cli._lazy import load_commands

    load_commands()
    found: list[tuple[str, object]] = []

    def walk(command: object, words: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children is not None:
            for name, child in children.items():
                walk(child, [*words, name])
        elif getattr(command, "callback", None) is not None:
            found.append((" ".join(words), command.callback))

    walk(typer.main.get_command(app), ["kgforge"])
    if include_plugins:
        from kgforge.cli._lazy import PLUGIN_COMMANDS

        for entry in PLUGIN_COMMANDS:
            walk(entry.obj, ["kgforge", entry.name])
    return found


def api_functions(index: Index) -> list[tuple[str, Func]]:
    """Every public function of kgforge.api (its lazily loaded names included) and every method of Domain."""
    import kgforge.api as api

    found = [(f"kgforge.api.{name}", index.lookup("kgforge.api", name)) for name in api.__all__]
    found += [(f"Domain.{name}", method) for name, method in domain_methods(index).items()]
    return [(label, func) for label, func in found if isinstance(func, Func)]


def domain_methods(index: Index) -> dict[str, Func]:
    """Every method of ``kgforge.api.Domain``, its bases' (the per-stage mixins of kgforge.domain) included, as
    Python finds them: the first class of the MRO that defines a name."""
    import kgforge.api as api

    methods: dict[str, Func] = {}
    for klass in api.Domain.__mro__:
        found = index.find(klass)
        if isinstance(found, Klass):
            for name, method in found.methods.items():
                methods.setdefault(name, method)
    return methods


def path_parameters(obj: object) -> list[str]:
    """The parameters of a command's callback typed as a path (``Path``, ``Path | None``, ``list[Path]``)."""
    try:
        hints = typing.get_type_hints(inspect.unwrap(obj))  # type: ignore[arg-type]
    except Exception:  # an annotation that does not evaluate: read it as text
        hints = {k: v for k, v in getattr(inspect.unwrap(obj), "__annotations__", {}).items()}
    return [name for name, hint in hints.items() if name not in NOT_SOURCES and name != "return" and _is_path(hint)]


def annotated_paths(func: Func) -> list[str]:
    """The parameters of an API function annotated as a path (``Path | str``, ``Iterable[Path | str]``)."""
    args = func.node.args
    return [
        a.arg
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)
        if a.arg not in NOT_SOURCES and a.annotation is not None and "Path" in ast.unparse(a.annotation)
    ]


def _is_path(hint: object) -> bool:
    if hint is Path or (isinstance(hint, str) and "Path" in hint):
        return True
    return any(_is_path(arg) for arg in typing.get_args(hint))


# ---------------------------------------------------------------- the walk


@dataclass
class Walk:
    index: Index
    queue: list[Func] = field(default_factory=list)
    callers: dict[str, set[str]] = field(default_factory=dict)
    readers: dict[str, set[str]] = field(default_factory=dict)  # attribute name -> functions that read it
    findings: set[Finding] = field(default_factory=set)
    funcs: dict[str, Func] = field(default_factory=dict)
    record: bool = False

    def __post_init__(self) -> None:
        self.funcs = {func.key: func for func in self.index.functions()}

    def taint(self, func: Func, names: Iterable[str]) -> None:
        for name in names:
            if name in func.params and func.levels.get(name, CLEAN) < USER:
                func.levels[name] = USER
                self.queue.append(func)

    def run(self) -> set[Finding]:
        """To the fixed point (every transfer is monotone, so the order of the queue does not matter), then
        once more recording the sinks. The writes' and the guard's own modules are not walked: what goes in
        is checked where it is called, what comes out is the guard's."""
        self.queue.extend(self.funcs.values())  # every function once: attributes and closures flow too
        while self.queue:
            func = self.queue.pop()
            if func.module.name not in EXEMPT:
                Scope(self, func).analyse()
        self.record = True
        for func in self.funcs.values():
            if func.module.name not in EXEMPT:
                Scope(self, func).analyse()
        return self.findings

    def join_param(self, func: Func, name: str, level: int) -> None:
        if level > func.levels.get(name, CLEAN):
            func.levels[name] = level
            self.queue.append(func)

    def join_return(self, func: Func, level: int) -> None:
        if level > func.returns:
            func.returns = level
            self.queue.extend(self.funcs[key] for key in self.callers.get(func.key, ()))

    def join_attr(self, klass: Klass, name: str, level: int) -> None:
        if level > klass.attrs.get(name, CLEAN):
            klass.attrs[name] = level
            self.queue.extend(self.funcs[key] for key in self.readers.get(name, ()) if key in self.funcs)

    def attr_level(self, name: str, klass: Klass, reader: Func) -> int:
        self.readers.setdefault(name, set()).add(reader.key)
        return klass.attrs.get(name, CLEAN)


class Scope(ast.NodeVisitor):
    """One function walked with the levels of its parameters: its assignments, calls and sinks."""

    def __init__(self, walk: Walk, func: Func) -> None:
        self.walk, self.func, self.module = walk, func, func.module
        self.env: dict[str, int] = dict(func.closure)
        self.types: dict[str, Klass] = {}
        for name in func.params:
            self.env[name] = func.levels.get(name, CLEAN)
        self._annotated_types()
        self.returned = CLEAN

    def _annotated_types(self) -> None:
        args = self.func.node.args
        for arg in (*args.posonlyargs, *args.args, *args.kwonlyargs):
            if arg.annotation is not None:
                klass = self._class_named(ast.unparse(arg.annotation).strip("'\""))
                if klass is not None:
                    self.types[arg.arg] = klass
        if self.func.is_method and self.func.cls is not None:
            self.types[self.func.params[0]] = self.func.cls

    def _class_named(self, text: str) -> Klass | None:
        name = text.split("|")[0].strip()
        found = self.module.classes.get(name)
        if found is None and name in self.module.imports:
            target, attr = self.module.imports[name]
            entry = self.walk.index.lookup(target, attr) if attr else None
            found = entry if isinstance(entry, Klass) else None
        return found

    def analyse(self) -> None:
        for statement in self.func.node.body:
            self.visit(statement)
        self.walk.join_return(self.func, self.returned)

    # ---- statements

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        inner = self.func.nested.get(node.name)
        if inner is not None:
            closure = {k: max(v, inner.closure.get(k, CLEAN)) for k, v in self.env.items()}
            if closure != inner.closure:
                inner.closure = closure
                self.walk.queue.append(inner)

    visit_AsyncFunctionDef = visit_FunctionDef  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        return

    def visit_Assign(self, node: ast.Assign) -> None:
        level = self.level(node.value)
        for target in node.targets:
            self.bind(target, level, node.value)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.bind(node.target, self.level(node.value), node.value)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.bind(node.target, max(self.level(node.value), self.level(node.target)), node.value)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.bind(node.target, self.level(node.value), node.value)

    def visit_For(self, node: ast.For) -> None:
        self.bind(node.target, self.level(node.iter), None)
        for statement in (*node.body, *node.orelse):
            self.visit(statement)

    visit_AsyncFor = visit_For  # noqa: N815

    def visit_With(self, node: ast.With) -> None:
        for item in node.items:
            level = self.level(item.context_expr)
            if item.optional_vars is not None:
                self.bind(item.optional_vars, level, item.context_expr)
        for statement in node.body:
            self.visit(statement)

    visit_AsyncWith = visit_With  # noqa: N815

    def visit_Return(self, node: ast.Return) -> None:
        if node.value is not None:
            self.returned = max(self.returned, self.level(node.value))

    def visit_Expr(self, node: ast.Expr) -> None:
        self.level(node.value)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.expr):
                self.level(child)
            elif isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                self.visit(child)

    def bind(self, target: ast.expr, level: int, value: ast.expr | None) -> None:
        if isinstance(target, ast.Name):
            self.env[target.id] = level  # flow-sensitive: `out = paths.output(out)` guards from here on
            klass = self.constructed(value) if value is not None else None
            if klass is not None:
                self.types[target.id] = klass
            else:
                self.types.pop(target.id, None)
        elif isinstance(target, (ast.Tuple, ast.List)):
            values = value.elts if isinstance(value, (ast.Tuple, ast.List)) else [None] * len(target.elts)
            for element, part in zip(target.elts, values):
                self.bind(element, self.level(part) if part is not None else level, part)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, level, None)
        elif isinstance(target, ast.Attribute):
            klass = self.receiver_class(target.value)
            if klass is not None:
                self.walk.join_attr(klass, target.attr, level)
        elif isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name):
            self.env[target.value.id] = max(self.env.get(target.value.id, CLEAN), level)

    # ---- expressions

    def level(self, node: ast.expr | None) -> int:
        if node is None or isinstance(node, ast.Constant):
            return CLEAN
        if isinstance(node, ast.Name):
            return self.env.get(node.id, CLEAN)
        if isinstance(node, ast.Call):
            return self.call(node)
        if isinstance(node, ast.Attribute):
            return self.attribute(node)
        if isinstance(node, ast.IfExp):
            self.level(node.test)
            return max(self.level(node.body), self.narrowed(node.test, node.orelse))
        if isinstance(node, ast.BoolOp):
            return max(self.level(v) for v in node.values)
        if isinstance(node, ast.Lambda):
            self.level(node.body)
            return CLEAN
        if isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.comprehension(node)
        if isinstance(node, ast.Compare):
            for child in (node.left, *node.comparators):
                self.level(child)
            return CLEAN
        if isinstance(node, ast.Await):
            return self.level(node.value)
        if isinstance(node, ast.NamedExpr):
            self.visit_NamedExpr(node)
            return self.level(node.target)
        if isinstance(node, (ast.Yield, ast.YieldFrom)):
            self.returned = max(self.returned, self.level(node.value))
            return CLEAN
        children = max((self.level(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr)), default=CLEAN)
        if isinstance(node, (ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Subscript, ast.Starred, ast.Slice)):
            return children  # a container of guarded values holds guarded values
        return _derived(children)  # text and arithmetic made from a guarded value: not checked

    def narrowed(self, test: ast.expr, orelse: ast.expr) -> int:
        """``x if isinstance(v, OutputFile) else y``: in ``y``, ``v`` is no value the guard handed out, so one
        whose level is guarded (every caller passed such a value or kgforge's own) is kgforge's own there."""
        name = _not_guarded_in_else(test)
        if name is None or self.env.get(name) != GUARDED:
            return self.level(orelse)
        self.env[name] = CLEAN
        try:
            return self.level(orelse)
        finally:
            self.env[name] = GUARDED

    def comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> int:
        for generator in node.generators:
            self.bind(generator.target, self.level(generator.iter), None)
            for condition in generator.ifs:
                self.level(condition)
        parts = [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        return max(self.level(part) for part in parts)

    def attribute(self, node: ast.Attribute) -> int:
        owner = self.level(node.value)
        # out.path, out.parent of a guarded or a user's value: a user's path again (unchecked); a name is no place
        level = USER if owner >= GUARDED and node.attr not in NAME_ATTRS else CLEAN
        klass = self.receiver_class(node.value)
        if klass is not None:
            level = max(level, self.walk.attr_level(node.attr, klass, self.func))
        return level

    def receiver_class(self, node: ast.expr) -> Klass | None:
        if isinstance(node, ast.Name):
            return self.types.get(node.id)
        return self.constructed(node)

    def constructed(self, node: ast.expr | None) -> Klass | None:
        """The class of what ``node`` makes (``C(...)``, ``cls(...)``) or returns (a function annotated ``-> C``)."""
        if not isinstance(node, ast.Call):
            return None
        func = node.func
        if isinstance(func, ast.Name) and func.id == "cls" and self.func.cls is not None:
            return self.func.cls
        targets = self.callees(func) if isinstance(func, (ast.Name, ast.Attribute)) else []
        if len(targets) != 1:
            return None
        target = targets[0]
        if isinstance(target, Klass):
            return target
        returns = target.node.returns
        return Scope(self.walk, target)._class_named(ast.unparse(returns).strip("'\"")) if returns is not None else None

    def resolve_name(self, node: ast.Name) -> Func | Klass | None:
        nested = self.func.nested.get(node.id) or _enclosing(self.walk, self.func, node.id)
        if nested is not None:
            return nested
        module = self.module
        if node.id in module.funcs:
            return module.funcs[node.id]
        if node.id in module.classes:
            return module.classes[node.id]
        if node.id in module.imports:
            target, attr = module.imports[node.id]
            return self.walk.index.lookup(target, attr) if attr else None
        return None

    def call(self, node: ast.Call) -> int:
        args = [self.level(a.value if isinstance(a, ast.Starred) else a) for a in node.args]
        keywords = {k.arg: self.level(k.value) for k in node.keywords}
        func = node.func
        receiver = self.level(func.value) if isinstance(func, ast.Attribute) else CLEAN
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        self.sink(node, name, receiver, args, keywords)
        if isinstance(func, ast.Name) and func.id in GUARDS and self.is_guard(func):
            return GUARDED
        if receiver >= GUARDED and name in GUARD_METHODS | ADOPTING:  # what the guard's objects hand out
            return CLEAN if name in ADOPTING else GUARDED
        if name in PASS_THROUGH:
            return max([receiver, *args, *keywords.values()], default=CLEAN)
        targets = self.callees(func)
        if not targets:
            return _derived(max([receiver, *args], default=CLEAN)) if name in PATH_CALLS else CLEAN
        return max(self.enter(target, node, args, keywords, isinstance(func, ast.Attribute)) for target in targets)

    def is_guard(self, func: ast.Name) -> bool:
        return self.module.imports.get(func.id, ("", None))[0] == GUARD_MODULE or self.module.name == GUARD_MODULE

    def callees(self, func: ast.expr) -> list[Func | Klass]:
        if isinstance(func, ast.Name):
            if func.id == "cls" and self.func.cls is not None:
                return [self.func.cls]
            found = self.resolve_name(func)
            return [found] if found is not None else []
        if not isinstance(func, ast.Attribute):
            return []
        value = func.value
        if isinstance(value, ast.Name) and value.id in self.module.imports and value.id not in self.env:
            target, attr = self.module.imports[value.id]
            module = target if attr is None else f"{target}.{attr}"
            found = self.walk.index.lookup(module, func.attr)
            return [found] if found is not None else []
        klass = self.receiver_class(value)
        if klass is not None:
            method = _method(klass, func.attr, self.walk.index)
            return [method] if method is not None else []
        if func.attr in BUILTIN_METHODS:
            return []
        return list(self.walk.index.by_method.get(func.attr, []))

    def enter(self, target: Func | Klass, node: ast.Call, args: list[int], keywords: dict, bound: bool) -> int:
        if isinstance(target, Klass):
            init = _method(target, "__init__", self.walk.index)
            if init is not None:
                self.enter(init, node, args, keywords, True)
            else:
                for name, level in [*zip(target.fields, args), *keywords.items()]:
                    if name is not None:
                        self.walk.join_attr(target, name, level)
            return CLEAN
        if target.module.name in EXEMPT:  # not walked: the guard's API hands out guarded values, the rest is
            if target.module.name == GUARD_MODULE and target.node.name in GUARDS | GUARD_METHODS:  # made from
                return GUARDED  # what it is given (a path checked by `safe_output_path` is a user's path still)
            return CLEAN if target.node.name in ADOPTING else _derived(max([*args, *keywords.values()], default=0))
        params = target.params[1:] if bound and target.is_method else target.params
        for name, level in zip(params, args):
            self.walk.join_param(target, name, level)
        for name, level in keywords.items():
            if name in target.params:
                self.walk.join_param(target, name, level)
        self.walk.callers.setdefault(target.key, set()).add(self.func.key)
        return target.returns

    # ---- sinks

    def sink(self, node: ast.Call, name: str, receiver: int, args: list[int], keywords: dict) -> None:
        if not self.walk.record or receiver == GUARDED and isinstance(node.func, ast.Attribute):
            return
        paths: list[int] = []
        is_attr = isinstance(node.func, ast.Attribute)
        if name == "open" and _writes(node, 0 if is_attr else 1):
            paths = [receiver] if is_attr else args[:1]
        elif name in ATOMIC:
            paths = args[:1] + [keywords.get("path", CLEAN)]
        elif is_attr and name in RECEIVER_SINKS:
            paths = [receiver]
        elif is_attr and name in FIRST_ARG_SINKS and (node.args or node.keywords):
            paths = args[:1] + [keywords.get("file", CLEAN)]
        elif name == "save":
            paths = args
        elif name in TARGET_SINKS:
            paths = args[1:2] if not is_attr or _module_call(node) else args[:1]
        elif name in REMOVING and _module_call(node):
            paths = args[:1]
        if any(level == USER for level in paths):
            where = f"{self.module.path}:{node.lineno}"
            self.walk.findings.add(Finding(where, self.func.key, ast.unparse(node.func)))


def _not_guarded_in_else(test: ast.expr) -> str | None:
    """``v`` of a test ``isinstance(v, OutputFile)`` (or ``OutputDir``, or a tuple naming them)."""
    if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "isinstance"):
        return None
    if len(test.args) != 2 or not isinstance(test.args[0], ast.Name):
        return None
    kinds = ast.unparse(test.args[1])
    return test.args[0].id if "OutputFile" in kinds or "OutputDir" in kinds else None


def _derived(level: int) -> int:
    """What is made from a value: a guarded one's derivations are a user's path again (not checked)."""
    return USER if level >= GUARDED else CLEAN


def _writes(node: ast.Call, position: int) -> bool:
    mode = node.args[position] if len(node.args) > position else None
    mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
    if mode is None:
        return False
    if isinstance(mode, ast.Constant) and isinstance(mode.value, str):
        return bool(WRITE_MODES & set(mode.value))
    return True  # a mode computed at run time: it may write


def _module_call(node: ast.Call) -> bool:
    return (
        isinstance(node.func, ast.Attribute)
        and isinstance(node.func.value, ast.Name)
        and (node.func.value.id in ("os", "shutil"))
    )


def _method(klass: Klass, name: str, index: Index) -> Func | None:
    if name in klass.methods:
        return klass.methods[name]
    for base in klass.node.bases:
        entry = None
        if isinstance(base, ast.Name):
            entry = klass.module.classes.get(base.id)
            if entry is None and base.id in klass.module.imports:
                target, attr = klass.module.imports[base.id]
                entry = index.lookup(target, attr) if attr else None
        if isinstance(entry, Klass):
            found = _method(entry, name, index)
            if found is not None:
                return found
    return None


def _enclosing(walk: Walk, func: Func, name: str) -> Func | None:
    """A function nested in one that encloses ``func`` (a sibling closure), by name."""
    key = func.key
    while "." in key.partition(":")[2]:
        key = key.rsplit(".", 1)[0]
        outer = walk.funcs.get(key)
        if outer is not None and name in outer.nested:
            return outer.nested[name]
    return None


# ---------------------------------------------------------------- entry points


def kgforge_modules(root: Path) -> list[tuple[str, Path]]:
    package = root / "kgforge"
    return [
        (".".join(path.relative_to(root).with_suffix("").parts).removesuffix(".__init__"), path)
        for path in sorted(package.rglob("*.py"))
    ]


def unguarded_writes(root: Path, *, include_plugins: bool = True) -> tuple[set[Finding], dict[str, list[str]]]:
    """The raw writes a user's path reaches without the guard, and the sources walked (function -> parameters)."""
    commands = command_callbacks(include_plugins)
    modules = kgforge_modules(root)
    for _, callback in commands:  # a plug-in command's own module is walked too
        original = inspect.unwrap(callback)  # type: ignore[arg-type]
        name = getattr(original, "__module__", "")
        if not name.startswith("kgforge.") and name in sys.modules:
            source = inspect.getsourcefile(original)
            if source is not None:
                modules.append((name, Path(source)))
    index = Index(modules)
    walk = Walk(index)
    sources: dict[str, list[str]] = {}
    found = [(label, index.find(callback), path_parameters(callback)) for label, callback in commands]
    found += [(label, func, annotated_paths(func)) for label, func in api_functions(index)]
    for label, entry, names in found:
        if isinstance(entry, Func) and names:
            walk.taint(entry, names)
            sources[f"{label} ({entry.key})"] = names
    return walk.run(), sources
