"""Arguments are checked at the edge: every command's numbers, choices and domain names have a checked
click type that refuses bad values with one line (exit 2), and the library functions behind the
commands refuse the same values with a KgforgeError, never a traceback or silent acceptance."""

from __future__ import annotations

import inspect
import types
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.cli._app import DOMAIN, Checked, app
from kgforge.cli._lazy import load_commands
from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.store.layout import check_domain_name, domain_paths

# Options whose values come from a fixed list: each must be checked against it.
ENUMERATED = {"fmt", "style", "layout", "precision", "evaluation", "device", "model", "site"}


@dataclass(frozen=True)
class Declared:
    command: str
    name: str
    base: type  # the annotation, Optional removed
    parser: object


def every_parameter() -> list[Declared]:
    """Every parameter of every command as declared (typer's own models, whatever click it runs on)."""
    load_commands()
    found = []

    def walk(application: typer.Typer, prefix: str) -> None:
        for info in application.registered_commands:
            hints = typing.get_type_hints(info.callback, include_extras=True)
            command = f"{prefix} {info.name or info.callback.__name__}".strip()
            for name, parameter in inspect.signature(info.callback).parameters.items():
                hint = hints[name]
                extras = typing.get_args(hint)[1:] if typing.get_origin(hint) is typing.Annotated else ()
                declared = [e for e in (*extras, parameter.default) if isinstance(e, typer.models.ParameterInfo)]
                base = typing.get_args(hint)[0] if extras else hint
                if typing.get_origin(base) in (typing.Union, types.UnionType):
                    base = next(a for a in typing.get_args(base) if a is not type(None))
                found.append(Declared(command, name, base, declared[0].parser if declared else None))
        for group in application.registered_groups:
            walk(group.typer_instance, f"{prefix} {group.name}".strip())

    walk(app, "")
    return found


def test_every_numeric_option_of_every_command_has_a_checked_type():
    numeric = [p for p in every_parameter() if p.base in (int, float)]
    assert len(numeric) >= 30
    assert [f"kgforge {p.command} {p.name}" for p in numeric if not isinstance(p.parser, Checked)] == []


def test_every_enumerated_option_is_checked():
    enumerated = [p for p in every_parameter() if p.name in ENUMERATED]
    assert len(enumerated) >= 9
    assert [f"kgforge {p.command} {p.name}" for p in enumerated if not isinstance(p.parser, Checked)] == []


def test_every_domain_goes_through_the_domain_type():
    domains = [p for p in every_parameter() if p.name == "domain"]
    assert len(domains) >= 13
    assert [f"kgforge {p.command}" for p in domains if p.parser is not DOMAIN] == []


REFUSED = [
    (["build", "../escaped"], "domain"),
    (["build", ""], "domain"),
    (["stats", "a/b"], "domain"),
    (["import", "xlore", "dump.ttl", "--domain", "..", "--hops", "1"], "--domain"),
    (["embed", "demo", "--dim", "0"], "--dim"),
    (["embed", "demo", "--lr", "nan"], "--lr"),
    (["embed", "demo", "--epochs", "-1"], "--epochs"),
    (["embed", "demo", "--precision", "fp8"], "--precision"),
    (["embed", "demo", "--name", "../../elsewhere"], "--name"),
    (["crawl", "douban_movie", "--delay", "-1"], "--delay"),
    (["crawl", "douban_movie", "--concurrency", "0"], "--concurrency"),
    (["crawl", "douban_movie", "--total-timeout", "inf"], "--total-timeout"),
    (["crawl", "no_such_site"], "site"),
    (["query", "demo", "SELECT * {}", "--timeout", "nan"], "--timeout"),
    (["related", "demo", "x", "-k", "0"], "-k"),
    (["derive", "demo", "--seed", "-1"], "--seed"),
    (["goals", "demo", "--one-step-ratio", "1.5"], "--one-step-ratio"),
    (["goals", "demo", "--hops", "0..9"], "--hops"),
    (["export", "demo", "--format", "nope", "--out", "x"], "--format"),
    (["import", "wikidata", "dump.json", "--domain", "film", "--fanout-cap", "-1"], "--fanout-cap"),
]


@pytest.mark.parametrize("args,named", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_bad_arguments_get_one_line_and_exit_2(cli, tmp_path, args, named):
    result = cli(*args, "--workdir", str(tmp_path / "kg"), cwd=tmp_path, check=False)
    assert result.returncode == 2, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and named.lower() in lines[0].lower(), result.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing written, inside the workdir or out


@pytest.mark.slow  # 300 hypothesis names
@settings(max_examples=300, deadline=None)
@given(st.text(max_size=70))
def test_a_domain_name_is_a_plain_folder_name_or_refused(name):
    workdir = Path("/tmp/kgforge-domains")
    try:
        checked = check_domain_name(name)
    except ArgumentError:
        return
    assert checked == name and (workdir / name).resolve().parent == workdir.resolve()
    assert domain_paths(name, workdir).root == workdir / name


@pytest.mark.parametrize(
    "name", ["", ".", "..", "../escaped", "a/b", "/abs", "a\\b", ".hidden", "a..b", "x" * 65, "tab\there", "nul\x00"]
)
def test_library_refuses_unsafe_domain_names(tmp_path, name):
    from kgforge.publish.transaction import build

    with pytest.raises(ArgumentError, match="domain"):
        domain_paths(name, tmp_path)
    with pytest.raises(KgforgeError):
        build(name, [], tmp_path / "kg", show_progress=False)
    assert not (tmp_path / "kg").exists() or list((tmp_path / "kg").iterdir()) == []
    for good in ("travel", "film", "duconv", "demo", "film-2024", "music_zh", "a.b"):
        assert check_domain_name(good) == good


def test_library_functions_refuse_what_the_options_refuse():
    from kgforge.derive import DeriveOptions
    from kgforge.embed import EmbedConfig
    from kgforge.goals.graph import GoalOptions

    for bad in (
        {"dim": 0},
        {"epochs": -1},
        {"learning_rate": float("nan")},
        {"learning_rate": 0.0},
        {"batch_size": 0},
        {"precision": "fp8"},
        {"evaluation": "maybe"},
        {"device": "tpu"},
        {"max_time": float("inf")},
        {"threads": 0},
        {"seed": -1},
    ):
        with pytest.raises(ArgumentError):
            EmbedConfig(**bad)
    with pytest.raises(ArgumentError, match="seed"):
        DeriveOptions(seed=-1)
    with pytest.raises(ArgumentError, match="seed"):
        GoalOptions(n=1, seed=-1)
    with pytest.raises(KgforgeError):
        GoalOptions(n=1, one_step_ratio=float("nan"))
