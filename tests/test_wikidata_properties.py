"""Property-based: generated entities with every value type and the odd shapes real dumps have."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.quads import XSD, literal_term
from kgforge.core.vocab import RDF_TYPE, RDFS_LABEL
from kgforge.demo.wikidata_dump import write_dump
from kgforge.sources.wikidata.entity import WikidataConfig, process_entity
from kgforge.sources.wikidata.passes import read_journal, run_resumable, split_triple
from kgforge.sources.wikidata.pipeline import PassSpec
from kgforge.sources.wikidata.values import map_value

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
CFG = WikidataConfig()

text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=20).filter(str.strip)
qids = st.integers(1, 10**9).map(lambda n: f"Q{n}")
decimal = st.decimals(allow_nan=False, allow_infinity=False, places=3, min_value=-(10**9), max_value=10**9)


def entity_value(draw_old_style: bool):
    def make(n: int) -> dict:
        value = {"entity-type": "item", "numeric-id": n}
        if not draw_old_style:
            value["id"] = f"Q{n}"
        return {"type": "wikibase-entityid", "value": value}

    return make


datavalues = st.one_of(
    st.builds(lambda n, old: entity_value(old)(n), st.integers(1, 10**8), st.booleans()).map(
        lambda d: (d, "wikibase-item")
    ),
    text.map(lambda s: ({"type": "string", "value": s}, "string")),
    text.map(lambda s: ({"type": "string", "value": s}, "external-id")),
    st.builds(
        lambda y, m, d, p: (
            {
                "type": "time",
                "value": {
                    "time": f"{'+' if y >= 0 else '-'}{abs(y):04d}-{m:02d}-{d:02d}T00:00:00Z",
                    "precision": p,
                    "timezone": 0,
                    "before": 0,
                    "after": 0,
                    "calendarmodel": WD + "Q1985727",
                },
            },
            "time",
        ),
        st.integers(-20000, 20000),
        st.integers(0, 12),
        st.integers(0, 28),
        st.integers(0, 14),
    ),
    st.builds(
        lambda a, unit: ({"type": "quantity", "value": {"amount": f"{a:+f}", "unit": unit}}, "quantity"),
        decimal,
        st.sampled_from(["1", WD + "Q7727", WD + "Q11573"]),
    ),
    st.builds(
        lambda t, lang: ({"type": "monolingualtext", "value": {"text": t, "language": lang}}, "monolingualtext"),
        text,
        st.sampled_from(["en", "zh", "zh-hans", "de-ch", "be-tarask"]),
    ),
    st.builds(
        lambda lat, lon: (
            {
                "type": "globecoordinate",
                "value": {"latitude": lat, "longitude": lon, "altitude": None, "precision": 0.001, "globe": WD + "Q2"},
            },
            "globe-coordinate",
        ),
        st.floats(-90, 90),
        st.floats(-180, 180),
    ),
)


@st.composite
def statements(draw, pid: str, index: int) -> dict:
    kind = draw(st.sampled_from(["value", "value", "value", "somevalue", "novalue"]))
    snak: dict = {"snaktype": kind, "property": pid}
    if kind == "value":
        snak["datavalue"], snak["datatype"] = draw(datavalues)
    if draw(st.booleans()):
        snak["hash"] = f"{index:040x}"
    statement = {
        "mainsnak": snak,
        "type": "statement",
        "rank": draw(st.sampled_from(["preferred", "normal", "normal", "deprecated"])),
    }
    style = draw(st.sampled_from(["upper", "lower", "missing"]))
    if style != "missing":
        sid = f"Q1${index:08d}-AAAA-BBBB-CCCC-DDDDDDDDDDDD"
        statement["id"] = sid.lower() if style == "lower" else sid
    if draw(st.booleans()):
        statement["qualifiers"] = {
            "P580": [{"snaktype": "value", "property": "P580", "datavalue": draw(datavalues)[0]}]
        }
    if draw(st.booleans()):
        statement["an-unknown-key"] = {"x": [1, 2]}
    return statement


@st.composite
def entities(draw) -> dict:
    pids = draw(
        st.lists(
            st.sampled_from(["P31", "P57", "P161", "P577", "P2047", "P1476", "P625", "P345"]), unique=True, max_size=5
        )
    )
    claims = {
        pid: [draw(statements(pid, i * 10 + j)) for j in range(draw(st.integers(1, 4)))] for i, pid in enumerate(pids)
    }
    labels = draw(
        st.one_of(st.just([]), st.dictionaries(st.sampled_from(["en", "zh", "zh-hant", "mul", "fr"]), text, max_size=4))
    )
    if isinstance(labels, dict):
        labels = {k: {"language": k, "value": v} for k, v in labels.items()}
    return {
        "type": "item",
        "id": "Q1",
        "labels": labels,
        "descriptions": [],
        "aliases": {},
        "claims": claims or draw(st.sampled_from([{}, []])),
        "unknown-top-level": True,
    }


def value_key(statement: dict) -> str:
    """Equal for statements that must give one direct triple; each unknown value is its own."""
    snak = statement["mainsnak"]
    if snak["snaktype"] == "value":  # values that map to one term (Q1 with or without "id") are one fact
        return map_value(snak["datavalue"], snak.get("datatype")).term
    return str(statement.get("id") or json.dumps(snak, sort_keys=True))


@pytest.mark.slow  # hypothesis entities through the whole parser
@settings(max_examples=150, deadline=None)
@given(entities())
def test_every_good_statement_arrives(entity: dict) -> None:
    out = process_entity(entity, CFG)
    assert not out.problems
    subject = WD + "Q1"
    for pid, group in (entity["claims"] or {}).items():
        ranks = {s["rank"] for s in group}
        best = "preferred" if "preferred" in ranks else "normal"
        chosen = [s for s in group if s["rank"] == best]
        direct = {o for s, p, o in out.triples if s == subject and p == WDT + pid}
        novalue = (subject, RDF_TYPE, f"<http://www.wikidata.org/prop/novalue/{pid}>") in out.triples
        values = [s for s in chosen if s["mainsnak"]["snaktype"] == "value"]
        somevalues = [s for s in chosen if s["mainsnak"]["snaktype"] == "somevalue"]
        assert len(direct) == len({value_key(s) for s in values} | {value_key(s) for s in somevalues})
        assert novalue == any(s["mainsnak"]["snaktype"] == "novalue" for s in chosen)
        for statement in values:
            datavalue = statement["mainsnak"]["datavalue"]
            if datavalue["type"] == "wikibase-entityid":
                assert f"<{WD}Q{datavalue['value']['numeric-id']}>" in direct
            elif datavalue["type"] == "string":
                assert literal_term(datavalue["value"]) in direct
            elif datavalue["type"] == "monolingualtext":
                assert literal_term(datavalue["value"]["text"], lang=datavalue["value"]["language"]) in direct
            elif datavalue["type"] == "quantity":
                amount = datavalue["value"]["amount"].lstrip("+")
                assert literal_term(amount, datatype=XSD + "decimal") in direct
        if best == "normal" and "deprecated" in ranks:
            deprecated = [s for s in group if s["rank"] == "deprecated"]
            assert len(out.deprecated) >= len(deprecated)
    labels = entity["labels"] if isinstance(entity["labels"], dict) else {}
    got_labels = [o for s, p, o in out.triples if p == RDFS_LABEL]
    zh_chain = [t for t in ("zh", "mul", "zh-hant") if t in labels]
    en_chain = [t for t in ("en", "mul") if t in labels]
    assert len(got_labels) == bool(zh_chain) + bool(en_chain)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(entities(), min_size=1, max_size=6))
def test_dump_framing_round_trip(tmp_path: Path, batch: list[dict]) -> None:
    for index, item in enumerate(batch):
        item["id"] = f"Q{index + 1}"
    folder = tmp_path / str(abs(hash(json.dumps(batch, sort_keys=True, default=str))))
    dump = write_dump(folder / "dump.json.bz2", batch)
    result = run_resumable(dump, PassSpec("extract", CFG), folder / "state", decompressor="python")
    journal = {split_triple(p) for k, p in read_journal(result.journal, "T")}
    expected = {t for item in batch for t in process_entity(item, CFG).triples}
    assert journal == expected
    assert result.counts["entities"] == len(batch)


broken_values = st.one_of(
    st.builds(lambda s: {"type": "string", "value": s}, st.text(min_size=1).map(lambda s: s + "\ud800")),
    st.builds(
        lambda iri: {"type": "globecoordinate", "value": {"latitude": 1.0, "longitude": 2.0, "globe": iri}},
        st.one_of(st.just("not an iri"), st.integers(min_value=1), st.just(["Q2"])),
    ),
    st.builds(
        lambda unit: {"type": "quantity", "value": {"amount": "+1", "unit": unit}},
        st.one_of(st.just("has space"), st.just("<x>"), st.integers()),
    ),
    st.builds(
        lambda precision, calendar: {
            "type": "time",
            "value": {"time": "+2001-02-03T00:00:00Z", "precision": precision, "calendarmodel": calendar},
        },
        st.one_of(st.just(True), st.just([11]), st.integers(15, 99), st.just(11)),
        st.one_of(st.just(WD + "Q1985727"), st.just("bad calendar"), st.just({"id": "Q1"})),
    ),
    st.builds(
        lambda kind: {"type": kind, "value": {"id": ["Q1"]}},  # unhashable type or id
        st.one_of(st.just(["string"]), st.just({"a": 1}), st.just("wikibase-entityid")),
    ),
)


@settings(max_examples=100, deadline=None)
@given(broken_values)
def test_a_broken_value_is_reported_with_its_statement_and_the_rest_arrives(datavalue: dict) -> None:
    good = {
        "mainsnak": {"snaktype": "value", "datavalue": {"type": "string", "value": "ok"}, "datatype": "string"},
        "rank": "normal",
        "id": "Q1$good",
    }
    bad = {
        "mainsnak": {"snaktype": "value", "datavalue": datavalue, "datatype": "string"},
        "rank": "normal",
        "id": "Q1$bad",
    }
    out = process_entity({"id": "Q1", "claims": {"P1": [good], "P2": [bad]}}, CFG)
    assert (WD + "Q1", WDT + "P1", '"ok"') in out.triples
    direct_p2 = [t for t in out.triples if t[1] == WDT + "P2"]
    if out.problems:  # the value is unusable: named, with its statement id, and nothing half-written
        [(where, reason, record)] = out.problems
        assert where == "Q1 P2 Q1$bad" and reason.startswith("bad value: ") and record is bad
        assert direct_p2 == []
    else:  # only the well-formed time (precision 11, Gregorian) gets here
        assert datavalue["type"] == "time" and direct_p2 == [(WD + "Q1", WDT + "P2", f'"2001-02-03"^^<{XSD}date>')]
