"""`kgforge qa generate` on the real samples (KdConv travel and film, the Wikidata sample) and on a
generated Wikidata dump with qualifiers: every answer verified by SPARQL against the store."""

from __future__ import annotations

import json
from pathlib import Path

import datasets
import pytest
import torch

from kgforge.embed import EmbedConfig, embed
from kgforge.embed.bundle import Bundle
from kgforge.qa import GenerateOptions, QAGenerateReport, generate_dataset, predicates, select
from kgforge.qa.generate import eligible_subjects
from kgforge.qa.phenomena import QWERTY, reading
from kgforge.qa.pipeline import open_graph, select_predicates
from kgforge.qa.select import read_selection
from kgforge.store.snapshot import Snapshot
from tests.conftest import shared_file
from tests.qa_support import build_domain, read_turns, verify_all

CONFIGS = {
    "voice-original",
    "voice-deixis",
    "voice-disfluency",
    "voice-deixis+disfluency",
    "text-original",
    "text-deixis",
    "text-typos",
    "text-deixis+typos",
}
WD = "http://www.wikidata.org/entity/"


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> Path:
    """travel and film from KdConv, and (in a second workdir) the Wikidata sample as film."""
    workdir = tmp_path_factory.mktemp("qa-kg")
    build_domain(workdir, "travel", ("kdconv", shared_file("kdconv/travel/kb_travel.json")))
    build_domain(workdir, "film", ("kdconv-dialogues", shared_file("kdconv/film/dev.json")))
    build_domain(
        workdir / "wd",
        "film",
        ("wikidata", shared_file("wikidata_json/mini-dump.assembled.json.bz2")),
        ("wikidata-ttl", shared_file("wikidata_rdf/Q42.all.ttl")),
    )
    return workdir


def generated(
    kg: Path, tmp_path: Path, domain: str, workdir: Path | None = None, **options
) -> tuple[QAGenerateReport, list[dict]]:
    out = tmp_path / f"{domain}.jsonl"
    report = generate_dataset(
        Snapshot.open(domain, workdir or kg),
        out,
        GenerateOptions(**{"n": 12, "turns": 4, "seed": 3, **options}),
        convquestions=tmp_path / f"{domain}.cq.jsonl",
    )
    return report, read_turns(out)


@pytest.mark.parametrize(
    "domain, language, sub", [("travel", "zh", ""), ("film", "zh", ""), ("film", "en", "wd"), ("travel", "en", "")]
)
def test_every_answer_is_the_store_s(kg: Path, tmp_path: Path, domain: str, language: str, sub: str) -> None:
    workdir = kg / sub if sub else kg
    out = tmp_path / "turns.jsonl"
    report = generate_dataset(Snapshot.open(domain, workdir), out, GenerateOptions(n=12, turns=4, seed=3), language)
    turns = read_turns(out)
    assert report.turns == len(turns) > 0
    assert {t["config"] for t in turns} == CONFIGS
    assert report.questions_per_fact == 24
    # each fact is asked 24 times: 8 configurations x 3 variants
    per_fact: dict[tuple, int] = {}
    for t in turns:
        key = (t["yarn_id"], t["turn"])
        per_fact[key] = per_fact.get(key, 0) + 1
    assert set(per_fact.values()) == {24}
    assert verify_all(workdir, domain, turns) > 0  # every distinct fact checked; a wrong one fails inside
    assert all(t["question"] and t["answers"] and t["answer_texts"] for t in turns)


def test_deixis_typos_and_disfluencies_follow_the_rules(kg: Path, tmp_path: Path) -> None:
    _, turns = generated(kg, tmp_path, "film")
    assert not any(t["phenomena"]["deixis"] for t in turns if t["turn"] == 0)
    deictic = [t for t in turns if t["phenomena"]["deixis"]]
    assert deictic and all("deixis" in t["config"] for t in deictic)
    assert all(t["fact"]["subject_label"] not in t["question"] for t in deictic)
    by_id = {t["id"]: t for t in turns}
    for t in turns:
        typo = t["phenomena"]["typo"]
        assert (typo is not None) == ("typos" in t["config"]), t["id"]
        if typo:
            clean_twin = by_id[t["id"].replace("+typos", "").replace("text-typos", "text-original")]
            assert typo["clean"] == clean_twin["question"]
            assert_one_edit(typo, t["question"])
        assert (t["phenomena"]["disfluency"] is not None) == ("disfluency" in t["config"])
        if t["phenomena"]["disfluency"]:
            twin = by_id[t["id"].replace("+disfluency", "").replace("voice-disfluency", "voice-original")]
            assert twin["question"] in t["question"] or t["phenomena"]["disfluency"] == "repetition"


def assert_one_edit(typo: dict, question: str) -> None:
    clean, at, before, after = typo["clean"], typo["position"], typo["before"], typo["after"]
    assert clean[at : at + len(before)] == before
    assert question == clean[:at] + after + clean[at + len(before) :]
    if typo["kind"] == "deletion":
        assert len(before) == 1 and after == ""
    elif typo["kind"] == "swap":
        assert len(before) == 2 and after == before[::-1] and before[0] != before[1]
    elif typo["kind"] == "qwerty":
        assert after.lower() in QWERTY[before.lower()] and after.isupper() == before.isupper()
    else:
        assert typo["kind"] == "homophone" and reading(before) == reading(after) and before != after


def test_same_seed_same_files_other_seed_other_files(kg: Path, tmp_path: Path) -> None:
    outputs = []
    for run, seed in enumerate((5, 5, 6)):
        out = tmp_path / f"run{run}.jsonl"
        cq = tmp_path / f"run{run}.cq.jsonl"
        generate_dataset(Snapshot.open("travel", kg), out, GenerateOptions(n=10, seed=seed), convquestions=cq)
        outputs.append((out.read_bytes(), cq.read_bytes()))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] != outputs[2][0]


def test_outputs_load_with_datasets_with_the_convquestions_card_types(kg: Path, tmp_path: Path) -> None:
    generated(kg, tmp_path, "travel")
    cache = str(tmp_path / "hf-cache")
    card = datasets.load_dataset("json", data_files=str(tmp_path / "travel.cq.jsonl"), split="train", cache_dir=cache)
    string = datasets.Value("string")
    expected = datasets.Features(
        {
            "domain": string,
            "seed_entity": string,
            "seed_entity_text": string,
            "questions": datasets.Sequence(string),
            "answers": datasets.Sequence(datasets.Sequence(string)),
            "answer_texts": datasets.Sequence(string),
        }
    )
    assert card.features == expected
    assert card.num_rows == 12 * 24
    row = card[0]
    assert len(row["questions"]) == len(row["answers"]) == len(row["answer_texts"])
    turns = datasets.load_dataset("json", data_files=str(tmp_path / "travel.jsonl"), split="train", cache_dir=cache)
    assert turns.num_rows == len(read_turns(tmp_path / "travel.jsonl"))
    answer = turns.features["answers"].feature
    assert answer["names"] == datasets.Sequence(string) and answer["is_entity"] == datasets.Value("bool")
    assert turns.features["turn"] == datasets.Value("int64")
    assert turns.features["phenomena"]["typo"]["kind"] == string
    assert turns[0]["question"] and isinstance(turns[0]["answers"][0]["names"], list)


def test_only_the_asked_configuration(kg: Path, tmp_path: Path) -> None:
    report, turns = generated(kg, tmp_path, "travel", interactions=("text",), phenomena=("deixis", "typos"))
    assert {t["config"] for t in turns} == {"text-deixis+typos"} and report.questions_per_fact == 3


def test_predicates_and_statistical_selection(kg: Path, tmp_path: Path) -> None:
    report = predicates(Snapshot.open("film", kg / "wd"), "en")
    star = (
        report.types["star/Q18844224"]
        if "star/Q18844224" in report.types
        else next(v for k, v in report.types.items() if k.startswith("star"))
    )
    by_label = {p["label"]: p for p in star["predicates"] if p["label"]}
    assert by_label["date of birth"]["coverage"] == 1.0 and by_label["date of birth"]["asks"] == "when"
    out = tmp_path / "selection.json"
    select(Snapshot.open("film", kg / "wd"), out, "en")
    selection = read_selection(out)
    reasons = {p["predicate"].rsplit("/", 1)[-1]: p["reason"] for s in selection.values() for p in s.predicates}
    assert reasons["P18"] == "no name in en" and reasons["P735"] == "no name in en"  # image, given name
    kept = {p["label"] for s in selection.values() for p in s.predicates if p["selected"]}
    assert "date of birth" in kept
    travel = tmp_path / "travel-selection.json"
    select(Snapshot.open("travel", kg), travel)
    chosen = read_selection(travel)["attraction"]
    assert {p["reason"] for p in chosen.predicates if p["label"] == "Information"} == {"free text"}
    assert "地址" in {p["label"] for p in chosen.predicates if p["selected"]}


def test_an_edited_selection_is_obeyed(kg: Path, tmp_path: Path) -> None:
    out = tmp_path / "selection.json"
    select(Snapshot.open("travel", kg), out)
    data = json.loads(out.read_text(encoding="utf-8"))
    for p in data["types"]["attraction"]["predicates"]:
        p["selected"] = p["label"] == "电话"
    out.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    turns_file = tmp_path / "t.jsonl"
    generate_dataset(Snapshot.open("travel", kg), turns_file, GenerateOptions(n=5), selection=out)
    assert {tuple(t["fact"]["predicate_labels"]) for t in read_turns(turns_file)} == {("电话",)}


def wikidata_entity(
    qid: str, zh: str, en: str, claims: dict[str, list[tuple[str, dict[str, str]]]] | None = None, kind: str = "item"
) -> dict:
    def snak(pid: str, target: str) -> dict:
        return {
            "snaktype": "value",
            "property": pid,
            "datatype": "wikibase-item",
            "datavalue": {
                "type": "wikibase-entityid",
                "value": {"entity-type": "item", "id": target, "numeric-id": int(target[1:])},
            },
        }

    statements = {}
    for pid, values in (claims or {}).items():
        statements[pid] = [
            {
                "mainsnak": snak(pid, target),
                "type": "statement",
                "rank": "normal",
                "id": f"{qid}${pid}-{target}",
                "qualifiers": {q: [snak(q, v)] for q, v in qualifiers.items()},
            }
            for target, qualifiers in values
        ]
    entity = {
        "type": kind,
        "id": qid,
        "labels": {"zh": {"language": "zh", "value": zh}, "en": {"language": "en", "value": en}},
        "descriptions": {},
        "aliases": {"en": [{"language": "en", "value": en + " (alias)"}]},
        "claims": statements,
    }
    if kind == "property":
        entity["datatype"] = "wikibase-item"
    return entity


def test_qualified_facts_name_the_qualifier_never_the_answer(tmp_path: Path) -> None:
    """A generated dump in the real framing: a film whose cast statement carries a character role."""
    entities = [
        wikidata_entity(
            "Q1001",
            "测试之城",
            "Test City",
            {"P31": [("Q11424", {})], "P57": [("Q2003", {})], "P161": [("Q2001", {"P453": "Q3001"}), ("Q2002", {})]},
        ),
        wikidata_entity(
            "Q1002",
            "第二部",
            "Second Film",
            {"P31": [("Q11424", {})], "P57": [("Q2003", {})], "P161": [("Q2002", {"P453": "Q3002"}), ("Q2001", {})]},
        ),
        *[
            wikidata_entity(q, zh, en, {"P31": [("Q5", {})], "P106": [("Q33999", {})]})
            for q, zh, en in (
                ("Q2001", "甲演员", "Actor A"),
                ("Q2002", "乙演员", "Actor B"),
                ("Q2003", "丙导演", "Director C"),
            )
        ],
        wikidata_entity("Q3001", "南·库利", "Nan Cooley"),
        wikidata_entity("Q3002", "警长", "The Sheriff"),
        wikidata_entity("Q33999", "演员", "actor"),
        wikidata_entity("Q11424", "电影", "film"),
        wikidata_entity("P453", "饰演角色", "character role", kind="property"),
    ]
    dump = tmp_path / "qualified.json"
    dump.write_text("[\n" + ",\n".join(json.dumps(e, ensure_ascii=False) for e in entities) + "\n]\n", encoding="utf-8")
    workdir = tmp_path / "kg"
    build_domain(workdir, "film", ("wikidata", dump))
    out = tmp_path / "q.jsonl"
    report = generate_dataset(Snapshot.open("film", workdir), out, GenerateOptions(n=20, turns=3, seed=1), "en")
    turns = read_turns(out)
    qualified = [t for t in turns if t["fact"]["kind"] == "qualified"]
    assert report.fact_kinds.get("qualified", 0) > 0 and qualified
    for turn in qualified:
        (qualifier,) = turn["fact"]["qualifiers"]
        assert qualifier["text"] in turn["question"] or "typos" in turn["config"]
        assert qualifier["text"] not in turn["answer_texts"]
        assert qualifier["value"].startswith(WD + "Q300")
    assert verify_all(workdir, "film", turns) > 0


@pytest.mark.slow  # trains a model before generating
def test_related_turn_is_the_most_similar_entity_by_inner_product(kg: Path, tmp_path: Path) -> None:
    embed(
        Snapshot.open("travel", kg),
        EmbedConfig(model="RotatE", dim=16, epochs=2, threads=1, evaluation="none"),
        progress=False,
    )
    report, turns = generated(kg, tmp_path, "travel", related=True, turns=3)
    assert report.related_turns > 0
    bundle = Bundle.open(kg / "travel" / "models" / "default")
    ids = bundle.iri_to_id
    graph = open_graph(Snapshot.open("travel", kg))
    allowed = [ids[c] for c in eligible_subjects(graph, select_predicates(graph)) if c in ids]
    for conversation in {t["conversation_id"] for t in turns}:
        ordered = sorted((t for t in turns if t["conversation_id"] == conversation), key=lambda t: t["turn"])
        related = [t for t in ordered if t["fact"]["related"]]
        assert len(related) <= 1 and (not related or related[0] is ordered[-1])
        if related:
            seed = ordered[0]["fact"]["subject"]
            scores = bundle.vectors[allowed] @ bundle.vectors[ids[seed]]
            scores[[i for i, e in enumerate(allowed) if e == ids[seed]]] = float("-inf")
            best = bundle.entities["iri"][allowed[int(torch.argmax(scores))]]
            assert related[0]["fact"]["subject"] == best and not related[0]["phenomena"]["deixis"]
            assert related[0]["fact"]["subject_label"] in related[0]["question"] or "typos" in related[0]["config"]
    assert verify_all(kg, "travel", [t for t in turns if t["fact"]["related"]]) > 0
