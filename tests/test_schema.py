"""Domain schemas: the shipped ones load, invalid ones fail naming file and key."""

from __future__ import annotations

from pathlib import Path

import pytest

import tests.conftest as conftest
from kgforge.core.errors import SchemaError
from kgforge.core.schema import load_schema


@pytest.mark.parametrize("domain", ["film", "music", "travel", "duconv"])
def test_shipped_schemas_load_with_bilingual_relations(domain):
    schema = load_schema(domain)
    assert schema.relations
    for relation in schema.relations.values():
        assert relation.zh and relation.en and relation.kind in ("entity", "literal", "text")
        assert relation.iri.startswith("https://kgforge.org/relation/")


def test_duconv_extends_film_and_overrides_its_name_for_representative_work():
    film, duconv = load_schema("film"), load_schema("duconv")
    assert film.relation_for("代表作品").id == duconv.relation_for("代表作").id == "representative_work"
    assert duconv.relation_for("出生 日期").id == "birth_date"  # segmented form finds the relation
    assert set(film.relations) == set(duconv.relations)


def test_undeclared_relations_get_an_opaque_iri():
    relation = load_schema("travel").relation_for("奇怪 关系")
    assert not relation.declared and relation.zh == "奇怪关系"
    assert "奇怪" not in relation.iri


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("name = 'x'\n[relations.a]\nzh = 'a'\nen = 'a'\nkind = 'graph'\n", "relations.a.kind must be one of"),
        ("name = 'x'\n[relations.a]\nen = 'a'\n", "relations.a.zh must be a non-empty string"),
        ("[relations.a]\nzh = 'a'\nen = 'a'\n", "name must be a non-empty string"),
        ("name = 'x'\nhead_type = 'city'\n", "head_type names unknown type 'city'"),
        (
            "name = 'x'\n[relations.a]\nzh = 'a'\nen = 'a'\ndomain = 'star'\n",
            "relations.a.domain names unknown type 'star'",
        ),
        ("name = 'x'\nstop_relations = ['nope']\n", "stop_relations names unknown relation 'nope'"),
        ("name = 'x'\n[[sources]]\nkind = 'kdconv'\n", "sources[0].path must be a non-empty string"),
        ("name = 'x'\ncolour = 'blue'\n", "unknown top-level keys ['colour']"),
        ("name = = 'x'\n", "invalid TOML"),
    ],
)
def test_invalid_schemas_name_file_and_key(tmp_path: Path, body: str, message: str):
    path = tmp_path / "broken.toml"
    path.write_text(body, encoding="utf-8")
    with pytest.raises(SchemaError) as error:
        load_schema(str(path))
    assert str(path) in str(error.value) and message in str(error.value)


def test_unknown_domain_lists_the_known_ones():
    with pytest.raises(SchemaError, match="known domains: .*travel"):
        load_schema("astronomy")


def test_shared_data_absent_skips_or_fails_as_configured(monkeypatch):
    monkeypatch.setattr(conftest, "REQUIRE_SHARED", False)
    with pytest.raises(pytest.skip.Exception, match="absent"):
        conftest.shared_file("no/such/file.json")
    monkeypatch.setattr(conftest, "REQUIRE_SHARED", True)
    with pytest.raises(pytest.fail.Exception, match="KGFORGE_REQUIRE_SHARED=1"):
        conftest.shared_file("no/such/file.json")
