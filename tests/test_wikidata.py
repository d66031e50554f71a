"""Wikidata JSON dumps from the real samples: value types, labels, qualifiers, ranks, framing."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.core.schema import SourceSpec
from kgforge.core.vocab import (
    RDF_TYPE,
    RDFS_LABEL,
    SKOS_ALT_LABEL,
    class_iri,
    relation_iri,
)
from kgforge.publish.transaction import build
from kgforge.store.layout import domain_paths
from kgforge.store.snapshot import Snapshot

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
XSD = "http://www.w3.org/2001/XMLSchema#"
WIKIBASE = "http://wikiba.se/ontology#"


def build_source(workdir: Path, kind: str, path: Path, **options) -> tuple[ox.Store, dict]:
    """Build the film domain from one source; the store and the source's manifest entry."""
    summary = build(
        "film", [SourceSpec(kind, str(path), options)], workdir, show_progress=False, use_schema_sources=False
    )
    return Snapshot.open("film", workdir).store(), summary.as_dict()["sources"][0]


def build_from(workdir: Path, kind: str, path: Path, **options) -> ox.Store:
    return build_source(workdir, kind, path, **options)[0]


def objects(store: ox.Store, subject: str, predicate: str) -> set:
    return {q.object for q in store.quads_for_pattern(ox.NamedNode(subject), ox.NamedNode(predicate), None, None)}


def literal(value: str, datatype: str | None = None, lang: str | None = None) -> ox.Literal:
    if lang:
        return ox.Literal(value, language=lang)
    return ox.Literal(value, datatype=ox.NamedNode(datatype)) if datatype else ox.Literal(value)


def node(qid: str) -> ox.NamedNode:
    return ox.NamedNode(WD + qid)


@pytest.fixture(scope="module")
def mini(tmp_path_factory, request) -> ox.Store:
    from tests.conftest import shared_file

    path = shared_file("wikidata_json/mini-dump.assembled.json.bz2")
    return build_from(tmp_path_factory.mktemp("mini"), "wikidata", path)


def test_film_q2262932_values_of_each_type(mini: ox.Store) -> None:
    film = WD + "Q2262932"
    assert objects(mini, film, RDFS_LABEL) == {literal("城市之街", lang="zh"), literal("City Streets", lang="en")}
    # item values under the schema's relation IRIs (P57 director, P161 cast member)
    assert objects(mini, film, relation_iri("director")) == {node("Q51472")}
    assert node("Q93957") in objects(mini, film, relation_iri("starring"))
    assert len(objects(mini, film, relation_iri("starring"))) == 9
    # time with precision 9 (year) → xsd:gYear
    assert objects(mini, film, relation_iri("release_date")) == {literal("1931", XSD + "gYear")}
    # quantity 82 minutes: the amount directly, the unit on the statement node
    assert objects(mini, film, relation_iri("duration")) == {literal("82", XSD + "decimal")}
    (statement,) = objects(mini, film, "http://www.wikidata.org/prop/P2047")
    assert objects(mini, statement.value, WIKIBASE + "quantityUnit") == {node("Q7727")}
    # monolingualtext, external-id, commonsMedia; unmapped properties keep their wdt: IRIs
    assert objects(mini, film, WDT + "P1476") == {literal("City Streets", lang="en")}
    assert objects(mini, film, WDT + "P345") == {literal("tt0021750")}
    assert objects(mini, film, WDT + "P18") == {
        ox.NamedNode(
            "http://commons.wikimedia.org/wiki/Special:FilePath/Sylvia%20Sidney%20Paul%20Lukas%20City%20Streets.jpg"
        )
    }
    # P31 film → the domain type, from [options.wikidata] classes in schemas/film.toml
    assert ox.NamedNode(class_iri("film")) in objects(mini, film, RDF_TYPE)


def test_q42_labels_ranks_qualifiers_and_deprecated(mini: ox.Store) -> None:
    q42 = WD + "Q42"
    labels = objects(mini, q42, RDFS_LABEL)
    # zh fallback chain starts at zh-hans: the literal keeps the tag that was used
    assert labels == {literal("道格拉斯·亚当斯", lang="zh-hans"), literal("Douglas Adams", lang="en")}
    assert literal("Douglas Noël Adams", lang="en") in objects(mini, q42, SKOS_ALT_LABEL)
    assert objects(mini, q42, relation_iri("birth_date")) == {literal("1952-03-11", XSD + "date")}
    # P735 given name: preferred Q463035 wins over the normal Q19688263
    assert objects(mini, q42, WDT + "P735") == {node("Q463035")}
    # P551 residence: the deprecated Q159288 is absent, the two normal ones are there
    assert objects(mini, q42, WDT + "P551") == {node("Q84"), node("Q909993")}
    # qualifier: residence Q909993 with P580 start time 1957, attached to its statement node
    statements = objects(mini, q42, "http://www.wikidata.org/prop/P551")
    qualified = {
        s
        for s in statements
        if node("Q909993") in objects(mini, s.value, "http://www.wikidata.org/prop/statement/P551")
    }
    (statement,) = qualified
    assert objects(mini, statement.value, "http://www.wikidata.org/prop/qualifier/P580") == {
        literal("1957", XSD + "gYear")
    }
    assert objects(mini, statement.value, WIKIBASE + "rank") == {ox.NamedNode(WIKIBASE + "NormalRank")}
    assert ox.NamedNode(class_iri("star")) in objects(mini, q42, RDF_TYPE)


def test_q1040_coordinates_and_preferred_quantity(mini: ox.Store) -> None:
    karlsruhe = WD + "Q1040"
    points = objects(mini, karlsruhe, WDT + "P625")
    assert {p.datatype.value for p in points} == {"http://www.opengis.net/ont/geosparql#wktLiteral"}
    assert any(p.value.startswith("Point(8.40") and " 49.01" in p.value for p in points)
    # 56 population statements, one preferred: only that one is a fact
    assert objects(mini, karlsruhe, WDT + "P1082") == {literal("307755", XSD + "decimal")}


def test_single_entity_and_api_documents_are_accepted(workdir: Path, shared) -> None:
    store = build_from(workdir, "wikidata", shared("wikidata_json/wbgetentities-Q6-Q42-P31.wdtk.json"))
    assert literal("instance of", lang="en") in objects(store, WD + "P31", RDFS_LABEL)
    assert objects(store, WD + "Q42", WDT + "P31") == {node("Q5")}
    assert not objects(store, WD + "Q6", RDFS_LABEL)  # the "missing" record is skipped


def test_2015_dump_values_with_numeric_id_only(workdir: Path, shared) -> None:
    store = build_from(workdir, "wikidata", shared("wikidata_json/sample-dump-20150815.wdtk.json.gz"))
    assert objects(store, WD + "Q1", WDT + "P31") == {node("Q1454986")}
    manifest = domain_paths("film", workdir).manifest.read_text()
    assert '"entities": 101' in manifest


def test_deprecated_side_file_when_asked(workdir: Path, shared) -> None:
    build_from(workdir, "wikidata", shared("wikidata_json/mini-dump.assembled.json"), keep_deprecated=True)
    side = (workdir / "film" / "raw" / "wikidata" / "deprecated-mini-dump.assembled.json.jsonl").read_text()
    assert '"Q159288"' in side and '"entity": "Q42"' in side
