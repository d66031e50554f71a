"""Typed returns: every ``Domain`` method and the stage functions behind them return a frozen dataclass with
typed fields, never a dict; ``as_dict()`` is the JSON edge only."""

from __future__ import annotations

import collections.abc
import dataclasses
import importlib
import inspect
import typing
from pathlib import Path

import pytest

import kgforge.api as api
from kgforge.collect import add_tokens, export_collection, prepare_collection
from kgforge.core.lazy import imports_for_type_checkers
from kgforge.core.records import Record, flattened, json_key, omitted_when_none
from kgforge.demo.site import demo_crawl
from kgforge.derive import derive
from kgforge.embed.related import related
from kgforge.embed.train import embed, train_bundle
from kgforge.evaluation import evaluate, evaluate_systems
from kgforge.exports import export_dialogues, export_goals
from kgforge.goals.check import validate
from kgforge.goals.generate import generate
from kgforge.goals.record import Goal
from kgforge.grounding import ground_file
from kgforge.publish.domain_import import import_into_domain
from kgforge.publish.link import link_domain
from kgforge.publish.transaction import build, check_store
from kgforge.qa import evaluate as qa_score
from kgforge.qa import generate_dataset, llm_templates, predicates, select
from kgforge.qa.generate import generate as qa_spin
from kgforge.release import audit_import, audit_sample, check_release, make_release
from kgforge.stats import domain_stats
from kgforge.store.diff import diff_builds
from kgforge.store.rdf_export import export_rdf

STAGES = [
    build,
    derive,
    domain_stats,
    generate,
    validate,
    export_goals,
    export_dialogues,
    ground_file,
    embed,
    train_bundle,
    related,
    diff_builds,
    evaluate,
    evaluate_systems,
    predicates,
    select,
    llm_templates,
    generate_dataset,
    qa_spin,
    qa_score,
    check_store,
    link_domain,
    import_into_domain,
    export_rdf,
    demo_crawl,
    make_release,
    check_release,
    audit_sample,
    audit_import,
    api.evaluate,
    api.list_queries,
    api.qa_evaluate,
    prepare_collection,
    add_tokens,
    export_collection,
]
UNTYPED = (dict, collections.abc.Mapping, collections.abc.MutableMapping, typing.Any)


def domain_methods() -> list:
    return [member for name, member in inspect.getmembers(api.Domain, inspect.isfunction) if not name.startswith("_")]


def type_checking_names(module) -> dict[str, object]:
    """The names ``module`` imports under ``if TYPE_CHECKING:`` (what its annotations name), loaded."""
    homes = imports_for_type_checkers(inspect.getsource(module))
    return {name: getattr(importlib.import_module(home), there) for name, (home, there) in homes.items() if there}


def return_type(function) -> object:
    lazy = {name: getattr(api, name) for name in api.__all__}  # api imports most of them on first use
    module = inspect.getmodule(function)
    names = {**vars(api), **lazy, **type_checking_names(module), **vars(module)}
    return typing.get_type_hints(function, globalns=names)["return"]


def untyped(annotation: object) -> bool:
    """Whether ``annotation`` is a dict, a Mapping or Any, or a union holding one."""
    if annotation in UNTYPED:
        return True
    origin = typing.get_origin(annotation)
    if origin in UNTYPED:
        return True
    if origin in (typing.Union, __import__("types").UnionType):
        return any(untyped(a) for a in typing.get_args(annotation))
    return False


@pytest.mark.parametrize("function", domain_methods() + STAGES, ids=lambda f: f.__qualname__)
def test_no_domain_method_or_stage_returns_a_dict(function):
    annotation = return_type(function)
    assert not untyped(annotation), f"{function.__qualname__} returns {annotation}: return a frozen dataclass"


DATA = {"snapshot", "tables", "language"}  # Domain methods handing out the build's data (Snapshot, tables, a str)


@pytest.mark.parametrize(
    "function", [f for f in domain_methods() if f.__name__ not in DATA], ids=lambda f: f.__qualname__
)
def test_reports_are_frozen_records_without_a_data_dict(function):
    report = return_type(function)
    assert report.__dataclass_params__.frozen, report
    names = {f.name for f in dataclasses.fields(report)}
    assert "data" not in names, f"{report.__name__} wraps a dict: give it typed fields"
    assert issubclass(report, Record) or hasattr(report, "as_dict"), report


def test_every_stage_report_is_a_record_whose_fields_are_typed_and_documented():
    reports = {return_type(f) for f in domain_methods() + STAGES}
    records = [r for r in reports if isinstance(r, type) and issubclass(r, Record)]
    assert len(records) >= 11, records
    for report in records:
        assert report.__doc__ and not report.__doc__.startswith(report.__name__ + "("), report  # a written docstring
        hints = typing.get_type_hints(report)
        assert all(f.name in hints for f in dataclasses.fields(report)), report


def test_the_goal_path_is_typed():
    hint = typing.get_type_hints(Goal)["path"]
    assert typing.get_origin(hint) is list and dataclasses.is_dataclass(typing.get_args(hint)[0]), hint


@dataclasses.dataclass(frozen=True)
class _Inner(Record):
    a: int


@dataclasses.dataclass(frozen=True)
class _Example(Record):
    """An example record."""

    name: str
    fmt: str = json_key("format", default="csv")
    where: Path = Path("x/y")
    parts: tuple[_Inner, ...] = ()
    extra: dict[str, int] = flattened()
    sometimes: int | None = omitted_when_none()
    last: bool = True


def test_as_dict_keeps_the_json_shape():
    record = _Example("n", parts=(_Inner(1),), extra={"k": 2})
    assert record.as_dict() == {"name": "n", "format": "csv", "where": "x/y", "parts": [{"a": 1}], "k": 2, "last": True}
    assert list(record.as_dict()) == ["name", "format", "where", "parts", "k", "last"]
    assert _Example("n", sometimes=0).as_dict()["sometimes"] == 0


def test_the_eval_report_is_the_scoring_s_own_record_and_prints_the_keys_it_always_has(tmp_path):
    """``kgforge eval --json`` prints ``EvalReport.as_dict()``: the stage's own record, its keys in the order the
    command has always printed them (resources where they stand, optional keys only when present)."""
    pairs = tmp_path / "pairs.txt"
    pairs.write_text("我 喜欢 这部 电影\t我 也 喜欢 这部 电影\n他 是 导演\t他 是 一位 演员\n", encoding="utf-8")
    report = api.evaluate(pairs, out=tmp_path / "scores.jsonl", options=api.EvalOptions(metrics=("f1", "meteor")))
    scored = api.score_responses(pairs, out=tmp_path / "again.jsonl", options=api.EvalOptions(metrics=("f1", "meteor")))
    assert type(report) is type(scored) is api.EvalReport
    assert report.metrics["f1"] == scored.metrics["f1"] > 0 and report.official is None  # not the official five
    assert report.per_response == str(tmp_path / "scores.jsonl")
    assert list(report.as_dict()) == [
        "responses",
        "inputs",
        "segmentation",
        "matched_unsegmented",
        "metrics",
        "left_out",
        "meteor_stages",
        "per_response",
        "seconds",
    ]
    assert list(report.seconds) == ["read", "metrics", "total"]


def test_the_shipped_queries_are_typed_records_naming_what_they_return():
    queries = {query.name: query for query in api.list_queries()}
    assert "goal_two_step" in queries and queries["goal_two_step"].path.suffix == ".rq"
    assert all(query.description for query in queries.values())
