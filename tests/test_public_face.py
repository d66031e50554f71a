"""The public face: names loaded on first use by one mechanism (kgforge.core.lazy), choices read from their
registries, options handed over as typed records, and a build reported without a round trip through a dict."""

from __future__ import annotations

import ast
import importlib
import inspect
import sys
import textwrap
from pathlib import Path

import pytest

import kgforge.api as api
from kgforge.core.lazy import imports_for_type_checkers
from kgforge.core.registry import Registry

PACKAGE = Path(__file__).resolve().parent.parent / "kgforge"


@pytest.fixture
def lazy_module(tmp_path, monkeypatch):
    """A package ``facepkg`` whose face hands on ``facepkg.heavy``'s names, written as kgforge.api writes them."""
    package = tmp_path / "facepkg"
    package.mkdir()
    (package / "heavy.py").write_text("LOADED = True\ndef work():\n    return 42\nclass Thing:\n    pass\n", "utf-8")
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """\
            from typing import TYPE_CHECKING

            from kgforge.core import lazy

            def own():
                return "own"

            ALIAS = own

            if TYPE_CHECKING:
                from facepkg.heavy import Thing as Thing
                from facepkg.heavy import work as work
                import facepkg.heavy as heavy_module

            __getattr__, __dir__ = lazy.attach(__name__)
            """
        ),
        "utf-8",
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield importlib.import_module("facepkg")
    for name in ("facepkg", "facepkg.heavy"):
        sys.modules.pop(name, None)


def test_a_lazy_name_loads_its_module_on_first_use_and_stays(lazy_module):
    assert "facepkg.heavy" not in sys.modules
    assert "work" in dir(lazy_module) and "Thing" in dir(lazy_module)
    assert "facepkg.heavy" not in sys.modules  # listing the names loads nothing
    assert lazy_module.work() == 42 and "facepkg.heavy" in sys.modules
    assert vars(lazy_module)["work"] is sys.modules["facepkg.heavy"].work  # kept: no second lookup
    assert lazy_module.heavy_module is sys.modules["facepkg.heavy"]
    assert sorted(lazy_module.__all__) == ["ALIAS", "Thing", "heavy_module", "own", "work"]
    with pytest.raises(AttributeError, match="module 'facepkg' has no attribute 'nothing'"):
        lazy_module.nothing  # noqa: B018


def test_the_type_checking_block_is_read_as_type_checkers_read_it():
    source = (
        "import typing\nfrom typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from a.b import C as C\n    from a.b import d as e\n    import a.f as g\n"
        "if typing.TYPE_CHECKING:\n    from h import I as I\n"
        "def f():\n    if TYPE_CHECKING:\n        from x import Y as Y\n"  # not at the top: not a name of the module
        "from j import K as K\n"
    )
    assert imports_for_type_checkers(source) == {
        "C": ("a.b", "C"),
        "e": ("a.b", "d"),
        "g": ("a.f", None),
        "I": ("h", "I"),
    }


def test_importing_a_face_loads_none_of_what_it_hands_on():
    """kgforge, kgforge.api, kgforge.embed and kgforge.serve hand their names on through kgforge.core.lazy."""
    for face in (api, importlib.import_module("kgforge.embed"), importlib.import_module("kgforge.serve")):
        homes = imports_for_type_checkers(inspect.getsource(face))
        assert homes and set(homes) <= set(face.__all__), face.__name__
        name, (module, there) = sorted(homes.items())[0]
        assert getattr(face, name) is getattr(importlib.import_module(module), there)


@pytest.mark.parametrize("option", sorted(api.CHOICES))
def test_every_option_s_choices_come_from_where_its_stage_checks_them(option):
    module, name = api.CHOICES[option].split(":")
    home = getattr(importlib.import_module(module), name)
    names = api.choices(option)
    assert names and all(isinstance(n, str) for n in names), option
    if isinstance(home, Registry):
        assert api.registry(option) is home and list(names) == home.names()
    else:
        assert names == tuple(home() if callable(home) else home)
        with pytest.raises(TypeError, match="a list of names, not a registry"):
            api.registry(option)


def test_an_unknown_option_says_which_it_meant():
    with pytest.raises(KeyError, match="did you mean 'export format'"):
        api.choices("export formats")


def test_the_former_names_of_choice_lists_are_the_registries_themselves():
    assert api.EXPORT_FORMATS is api.registry("export format") and api.GOAL_STYLES is api.registry("goal style")
    assert api.choices("ground format") == tuple(api.GROUND_FORMATS.names()) and api.score_responses is api.evaluate


def test_command_modules_read_choices_from_registries_not_from_former_names():
    """The choice lists kgforge.api handed on one by one stay importable for callers, but the command line asks
    ``choices()``/``registry()``: a new option adds a line to CHOICES, not a name to the API."""
    source = (PACKAGE / "api.py").read_text(encoding="utf-8")
    tree = ast.parse(source)
    blocks = [n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"]
    former = imports_for_type_checkers(ast.unparse(ast.Module(body=[blocks[-1]], type_ignores=[])))
    assert "EXPORT_FORMATS" in former and "CorpusStats" not in former
    offenders = [
        f"{path.name}: {alias.name}"
        for path in sorted((PACKAGE / "cli").glob("*.py"))
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.ImportFrom) and node.module == "kgforge.api"
        for alias in node.names
        if alias.name in former
    ]
    assert not offenders, offenders


def test_the_command_line_hands_typed_options_records_over():
    """``kgforge export`` and ``kgforge embed`` build ExportOptions and EmbedConfig and hand them to Domain: no
    ``**options`` travels from a command into the library."""
    for module in ("export", "embed"):
        tree = ast.parse((PACKAGE / "cli" / f"{module}.py").read_text(encoding="utf-8"))
        calls = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("export", "export_parallel", "embed")
        ]
        assert calls, module
        for call in calls:
            assert not any(k.arg is None for k in call.keywords), ast.unparse(call)  # no **mapping
            assert len(call.keywords) <= 6, ast.unparse(call)  # the record carries the options, not keywords


def test_a_build_is_reported_from_its_typed_summary_never_through_a_dict():
    from kgforge.domain.building import BuildMethods

    source = inspect.getsource(BuildMethods.build)
    assert "as_dict" not in source and ".report()" in source
