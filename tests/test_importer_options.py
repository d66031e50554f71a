"""Importer options as typed records: through a real build a misspelt key or a value of the wrong type stops the
build with the schema file, where the key was written and what was expected; any valid table round-trips."""

from __future__ import annotations

import types
import typing
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.api import Domain
from kgforge.core.errors import SchemaError
from kgforge.sources.crawl import CrawlOptions
from kgforge.sources.options import option_types, options_dict, read_options
from kgforge.sources.rdf import RdfOptions
from kgforge.sources.records import RecordsOptions
from kgforge.sources.wikidata.dump import WikidataOptions
from kgforge.sources.xlore.dump import XloreOptions

OPTION_RECORDS = (RecordsOptions, RdfOptions, CrawlOptions, WikidataOptions, XloreOptions)
ONE_ENTITY_DUMP = '[\n{"id": "Q1", "type": "item", "labels": {"en": {"language": "en", "value": "one"}}}\n]\n'


def write_domain(tmp_path: Path, body: str) -> Path:
    (tmp_path / "books.csv").write_text("id,name\nhttp://example.org/b1,Good One\n", encoding="utf-8")
    (tmp_path / "books.ttl").write_text("<http://example.org/b1> <http://example.org/pages> 3 .\n", encoding="utf-8")
    (tmp_path / "dump.json").write_text(ONE_ENTITY_DUMP, encoding="utf-8")
    schema = tmp_path / "shelf.toml"
    schema.write_text('name = "shelf"\nversion = 1\nlanguage = "en"\n' + body, encoding="utf-8")
    return schema


def build_fails(tmp_path: Path, body: str) -> str:
    schema = write_domain(tmp_path, body)
    with pytest.raises(SchemaError) as failed:
        Domain("shelf", workdir=tmp_path / "kg").build(schema=str(schema))
    assert not (tmp_path / "kg" / "shelf" / "store").exists()  # nothing published
    return str(failed.value)


@pytest.mark.parametrize(
    ("body", "where", "key", "near"),
    [
        ('[[sources]]\nkind = "csv"\npath = "books.csv"\nseparater = ";"\n', "the source", "separater", "separator"),
        (
            '[options.records]\nlable = "name"\n\n[[sources]]\nkind = "csv"\npath = "books.csv"\n',
            "[options.records]",
            "lable",
            "label",
        ),
        (
            '[options.wikidata]\nhop = 2\n\n[[sources]]\nkind = "wikidata"\npath = "dump.json"\n',
            "[options.wikidata]",
            "hop",
            "hops",
        ),
        (
            '[[sources]]\nkind = "rdf"\npath = "books.ttl"\nlabel_predicate = ["http://example.org/name"]\n',
            "the source",
            "label_predicate",
            "label_predicates",
        ),
    ],
)
def test_an_unknown_key_names_file_section_key_and_the_closest(tmp_path, body, where, key, near):
    message = build_fails(tmp_path, body)
    assert str(tmp_path / "shelf.toml") in message and where in message
    assert f"unknown option {key!r}" in message and f"did you mean {near!r}" in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '[[sources]]\nkind = "wikidata"\npath = "dump.json"\nworkers = "two"\n',
            "workers must be a whole number, got 'two'",
        ),
        (
            '[options.wikidata]\nhops = -1\n\n[[sources]]\nkind = "wikidata"\npath = "dump.json"\n',
            "hops -1 is not a whole number >= 0",
        ),
        ('[[sources]]\nkind = "csv"\npath = "books.csv"\nseparator = 1\n', "separator must be a string, got 1"),
        (
            '[options.rdf]\nlabel_predicates = 3\n\n[[sources]]\nkind = "rdf"\npath = "books.ttl"\n',
            "label_predicates must be a list of strings (or one), got 3",
        ),
    ],
)
def test_a_wrong_value_names_the_key_and_what_was_expected(tmp_path, body, expected):
    message = build_fails(tmp_path, body)
    assert str(tmp_path / "shelf.toml") in message and expected in message


def test_the_sources_own_setting_wins_over_the_schema_table(tmp_path):
    schema = write_domain(
        tmp_path, '[options.records]\nlabel = "id"\n\n[[sources]]\nkind = "csv"\npath = "books.csv"\nlabel = "name"\n'
    )
    Domain("shelf", workdir=tmp_path / "kg").build(schema=str(schema))
    labels = Domain("shelf", workdir=tmp_path / "kg").query(
        "SELECT ?l WHERE { GRAPH ?g { ?s <http://www.w3.org/2000/01/rdf-schema#label> ?l } }"
    )
    assert [row["l"].value for row in labels.rows] == ["Good One"]


def valid(hint: Any) -> st.SearchStrategy[Any]:
    """Values of ``hint`` that every record's own checks accept (positive numbers: timeouts must be > 0)."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    text = st.text(max_size=8)
    if origin in (typing.Union, types.UnionType):
        return st.one_of([st.none() if a is type(None) else valid(a) for a in args])
    if origin is tuple:
        return st.lists(valid(args[0]), max_size=3)
    if origin is dict:
        return st.dictionaries(text, text if args[1] is Any else valid(args[1]), max_size=3)
    return {bool: st.booleans(), int: st.integers(1, 10**6), str: text, float: st.floats(0.5, 1e6, allow_nan=False)}[
        hint
    ]


@st.composite
def tables(draw: st.DrawFn) -> tuple[type, dict[str, Any]]:
    cls = draw(st.sampled_from(OPTION_RECORDS))
    known = option_types(cls)
    keys = draw(st.lists(st.sampled_from(sorted(known)), unique=True))
    return cls, {key: draw(valid(known[key])) for key in keys}


@pytest.mark.slow  # hypothesis tables, each through a real build
@settings(max_examples=150, deadline=None)
@given(tables())
def test_any_valid_table_round_trips(case):
    cls, table = case
    record = read_options(cls, "shelf.toml", "any", table)
    written = options_dict(record)
    assert {key: written[key] for key in table} == table
    assert read_options(cls, "shelf.toml", "any", written) == record
    assert read_options(cls, "shelf.toml", "any", {}, written) == record  # the same as a source's settings


def test_the_docs_list_every_key_of_every_record():
    docs = (Path(__file__).parent.parent / "docs" / "sources.md").read_text(encoding="utf-8")
    table = {line.split("|")[2].strip(" `"): line for line in docs.splitlines() if line.startswith("| `")}
    for cls in OPTION_RECORDS:
        row = table[f"{cls.__module__}.{cls.__name__}"]
        assert all(f"`{key}`" in row for key in option_types(cls)), cls
