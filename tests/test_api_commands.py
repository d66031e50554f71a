"""The commands that called stage modules directly now go through the public API: each has a Domain method
returning a typed record (never a dict) whose ``as_dict()`` is what the command prints with ``--json``."""

from __future__ import annotations

import json
from dataclasses import fields, is_dataclass

import pytest

from kgforge.api import CheckReport, Domain, ImportReport, LinkSummary, RdfExportReport, Record, SchemaReport
from tests.test_typed_returns import return_type

NEW_METHODS = {
    "check": CheckReport,
    "link": LinkSummary,
    "import_dump": ImportReport,
    "export_rdf": RdfExportReport,
    "init_schema": SchemaReport,
}


@pytest.mark.parametrize("method", sorted(NEW_METHODS))
def test_each_new_method_returns_a_frozen_record(method: str):
    returned = return_type(getattr(Domain, method))  # its module names the record under TYPE_CHECKING
    assert returned is NEW_METHODS[method] and issubclass(returned, Record)
    assert is_dataclass(returned) and returned.__dataclass_params__.frozen


def test_check_and_export_rdf_print_what_the_api_returns(cli, tmp_path):
    workdir = tmp_path / "kg"
    cli("build", "demo", "--workdir", str(workdir))
    kg = Domain("demo", workdir)
    checked = kg.check()
    printed = json.loads(cli("check", "demo", "--workdir", str(workdir), "--json").stdout)
    assert printed == json.loads(json.dumps(checked.as_dict())) and list(printed) == [
        f.name for f in fields(checked) if f.name != "removed"
    ]
    cleaned = json.loads(cli("check", "demo", "--clean", "--workdir", str(workdir), "--json").stdout)
    assert cleaned["removed"] == [] and kg.check(clean=True).removed == ()
    out = tmp_path / "demo.ttl"
    printed = json.loads(
        cli("export-rdf", "demo", "--format", "turtle", "--out", str(out), "--workdir", str(workdir), "--json").stdout
    )
    again = kg.export_rdf(out, fmt="ttl")
    assert printed == again.as_dict() and again.statements > 0 and out.stat().st_size > 0


def test_init_through_the_api_writes_the_schema_the_command_writes(cli, tmp_path):
    sample = tmp_path / "films.csv"
    sample.write_text("subject,predicate,object\n霸王别姬,导演,陈凯歌\n活着,导演,张艺谋\n", encoding="utf-8")
    printed = json.loads(cli("init", "a", "--from", str(sample), "--workdir", str(tmp_path / "kg"), "--json").stdout)
    made = Domain("b", tmp_path / "kg").init_schema([str(sample)])
    assert printed["build_command"].endswith(f"--source csv:{sample}")
    assert {k: v for k, v in printed.items() if k not in ("domain", "schema", "build_command")} == {
        k: v for k, v in made.as_dict().items() if k not in ("domain", "schema")
    }
    assert (tmp_path / "kg" / "b" / "schema.toml").read_text(encoding="utf-8").replace('"b"', '"a"') == (
        tmp_path / "kg" / "a" / "schema.toml"
    ).read_text(encoding="utf-8")
    with pytest.raises(Exception, match="exists already"):
        Domain("b", tmp_path / "kg").init_schema([str(sample)])
