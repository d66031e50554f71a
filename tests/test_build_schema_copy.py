"""A build keeps the schema it was made with: every stage reads a build with that schema, whatever happens to
the schema file later (edited, moved, or replaced by another kgforge's copy). Real builds on disk."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.core.errors import SchemaError
from kgforge.core.schema import load_schema
from kgforge.store.layout import SCHEMA_COPY
from kgforge.store.snapshot import Snapshot
from tests.conftest import run_cli
from tests.test_fault_kills import write_kb

SHIPPED = Path(__file__).resolve().parent.parent / "schemas"


@pytest.fixture
def own_schema(tmp_path) -> Path:
    """The travel domain with a schema of its own (what `kgforge init` writes), built once from a small KB."""
    schema = tmp_path / "kg" / "travel" / "schema.toml"
    schema.parent.mkdir(parents=True)
    shutil.copyfile(SHIPPED / "travel.toml", schema)
    Domain("travel", tmp_path / "kg").build(
        [f"kdconv:{write_kb(tmp_path / 'a.json', 60, '门票')}"], schema_sources=False
    )
    return schema


def ticket_label(snapshot: Snapshot) -> str:
    return snapshot.schema.relations["ticket"].zh


def test_an_edited_or_deleted_schema_file_does_not_change_the_build(own_schema, tmp_path):
    before = Snapshot.open("travel", tmp_path / "kg")
    assert (before.build / SCHEMA_COPY).is_file()
    own_schema.write_text(
        own_schema.read_text(encoding="utf-8").replace('zh = "门票"', 'zh = "票价"'), encoding="utf-8"
    )
    assert load_schema(own_schema).relations["ticket"].zh == "票价"
    assert ticket_label(Snapshot.open("travel", tmp_path / "kg")) == "门票"

    own_schema.unlink()
    after = Snapshot.open("travel", tmp_path / "kg")
    assert ticket_label(after) == "门票"
    assert after.schema.relations == before.schema.relations
    assert str(after.schema.path) == str(own_schema)  # messages still name the file the build was made with


def test_the_stages_that_extend_a_build_carry_its_schema(own_schema, tmp_path):
    domain = Domain("travel", tmp_path / "kg")
    first = Snapshot.open("travel", tmp_path / "kg")
    own_schema.unlink()  # derive reads its options from the build's schema, not from the file
    domain.derive()
    derived = Snapshot.open("travel", tmp_path / "kg")
    assert derived.build != first.build
    assert (derived.build / SCHEMA_COPY).read_bytes() == (first.build / SCHEMA_COPY).read_bytes()


def test_a_rebuild_after_a_schema_edit_takes_the_new_schema(own_schema, tmp_path):
    own_schema.write_text(
        own_schema.read_text(encoding="utf-8").replace('zh = "门票"', 'zh = "票价"'), encoding="utf-8"
    )
    report = Domain("travel", tmp_path / "kg").build([f"kdconv:{tmp_path / 'a.json'}"], schema_sources=False)
    assert report.published
    assert ticket_label(Snapshot.open("travel", tmp_path / "kg")) == "票价"


def test_the_copy_holds_the_schema_it_extends_merged(tmp_path):
    """demo.toml extends film: the build keeps both, merged, so it needs neither file later."""
    schema = load_schema(SHIPPED / "demo.toml")
    assert set(load_schema(SHIPPED / "film.toml").relations) <= set(schema.relations)
    assert "extends" not in schema.document
    assert json.loads(json.dumps(schema.document)) == schema.document  # what the build writes, it reads back


@pytest.mark.parametrize("shipped", sorted(p.name for p in SHIPPED.glob("*.toml")))
def test_every_shipped_schema_reads_back_the_same_from_its_copy(shipped):
    from kgforge.core.schema import schema_from_document

    schema = load_schema(SHIPPED / shipped)
    again = schema_from_document(json.loads(json.dumps(schema.document)), schema.path)
    assert again == schema
    assert again.relations == schema.relations and again.types == schema.types and again.options == schema.options


def test_a_build_without_a_copy_reads_the_file_its_manifest_names(own_schema, tmp_path):
    """Builds made before builds kept their schema still open, and say which file they are read with."""
    build = Snapshot.open("travel", tmp_path / "kg").build
    (build / SCHEMA_COPY).unlink()
    with pytest.warns(RuntimeWarning, match=f"made before builds kept their schema, so it is read with {own_schema}"):
        assert ticket_label(Snapshot.open("travel", tmp_path / "kg")) == "门票"
    own_schema.unlink()
    with pytest.raises(SchemaError, match="schema file not found"), pytest.warns(RuntimeWarning):
        _ = Snapshot.open("travel", tmp_path / "kg").schema


def test_a_damaged_copy_is_an_error_naming_it(own_schema, tmp_path):
    build = Snapshot.open("travel", tmp_path / "kg").build
    (build / SCHEMA_COPY).write_text("{not json", encoding="utf-8")
    with pytest.raises(SchemaError, match=r"schema\.json: the build's copy of its schema is damaged"):
        _ = Snapshot.open("travel", tmp_path / "kg").schema


def test_the_command_line_says_so_in_one_line(own_schema, tmp_path):
    build = Snapshot.open("travel", tmp_path / "kg").build
    (build / SCHEMA_COPY).unlink()
    done = run_cli("stats", "travel", "--workdir", str(tmp_path / "kg"))
    said = [line for line in done.stderr.splitlines() if "made before builds kept their schema" in line]
    assert len(said) == 1 and said[0].startswith("warning: ") and "warnings.warn" not in done.stderr
