"""The learned grounding choice: its model file (read back, refused when damaged or foreign), `kgforge ground
train` (refusing data without annotations, writing nothing), the shipped model reproduced by its training
command, and the candidates' features."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.errors import InputError
from kgforge.grounding.choice import CLAIM_FEATURES, TEXT_FEATURES, VALUE_FEATURES
from kgforge.grounding.index import GroundingIndex, make_fact
from kgforge.grounding.matching import Candidate, DialogueMatcher, MatchOptions
from kgforge.grounding.model_file import SHIPPED, model_bytes, model_document, read_model, shipped_path
from tests.conftest import run_cli, shared_file
from tests.test_grounding import build_kdconv_domain

STAGES = {"values": VALUE_FEATURES, "texts": TEXT_FEATURES, "claims": CLAIM_FEATURES}


def a_document(seed: int = 1) -> dict:
    rng = random.Random(seed)
    return model_document(
        {
            name: ([rng.uniform(-3, 3) for _ in names], rng.uniform(-2, 2), rng.uniform(0.1, 0.9))
            for name, names in STAGES.items()
        },
        {"seed": seed},
    )


def test_a_model_file_reads_back_the_weights_it_was_written_with(tmp_path):
    document = a_document()
    path = tmp_path / "m.json"
    path.write_bytes(model_bytes(document))
    choice = read_model(path)
    for name, stage in (("values", choice.values), ("texts", choice.texts), ("claims", choice.claims)):
        assert stage.names == STAGES[name]
        assert stage.weights == document[name]["weights"] and stage.threshold == document[name]["threshold"]
    assert model_bytes(a_document()) == model_bytes(document)  # the same training, the same bytes


@pytest.mark.parametrize(
    ("damage", "said"),
    [
        (lambda text: text[: len(text) // 2], ":"),  # cut short: the line the JSON breaks on
        (lambda text: text.replace('"version": 1', '"version": 99'), "format version 99"),
        (lambda text: text.replace('"rule"', '"rules"', 1), "checksum"),
        (lambda text: text.replace('"threshold": 0.', '"threshold": 0.9', 1), "checksum"),
        (lambda text: "[1, 2]", "not a kgforge grounding model"),
    ],
)
def test_a_damaged_or_foreign_model_file_is_one_error_naming_it(tmp_path, damage, said):
    path = tmp_path / "bad-model.json"
    path.write_text(damage(model_bytes(a_document()).decode("utf-8")), encoding="utf-8")
    with pytest.raises(InputError) as raised:
        read_model(path)
    message = str(raised.value)
    assert message.startswith(f"{path}:") and said in message and "\n" not in message


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.sampled_from(list('0123456789 {}[],.:"ae-')))
def test_any_changed_character_gives_the_same_model_or_an_error_naming_the_file(tmp_path_factory, at, char):
    text = model_bytes(a_document()).decode("utf-8")
    at %= len(text)
    path = tmp_path_factory.mktemp("m") / "m.json"
    path.write_text(text[:at] + char + text[at + 1 :], encoding="utf-8")
    try:
        choice = read_model(path)
    except InputError as exc:
        assert str(exc).startswith(f"{path}:")
        return
    original = read_model_text(text, path.parent / "original.json")
    assert choice.values.weights == original.values.weights and choice.claims.bias == original.claims.bias


def read_model_text(text: str, path: Path):
    path.write_text(text, encoding="utf-8")
    return read_model(path)


def test_the_shipped_model_is_of_this_version_and_says_what_it_was_trained_on():
    document = json.loads(shipped_path().read_text(encoding="utf-8"))
    assert [d["domain"] for d in document["trained"]["data"]] == ["travel", "film", "music"]
    choice = read_model(shipped_path())
    assert 0 < choice.values.threshold < 1 and 0 < choice.texts.threshold < 1
    assert MatchOptions().model == SHIPPED


# ---------------------------------------------------------------- a small domain, through the command line


def dialogue(topic: str, *messages: tuple[str, list[tuple[str, str]]]) -> dict:
    """A KdConv dialogue about ``topic``: each message with its gold (attrname, attrvalue) of the topic, if any."""
    return {
        "name": topic,
        "messages": [
            {
                "message": text,
                **({"attrs": [{"name": topic, "attrname": r, "attrvalue": v} for r, v in attrs]} if attrs else {}),
            }
            for text, attrs in messages
        ],
    }


TINY = [
    dialogue(
        "阿甘正传",
        ("你看过阿甘正传吗？", []),
        ("看过，导演是罗伯特·泽米吉斯，1994年上映的。", [("导演", "罗伯特·泽米吉斯"), ("上映时间", "1994年07月06日")]),
        ("主演是汤姆·汉克斯，片长142分钟。", [("主演", "汤姆·汉克斯"), ("片长", "142分钟")]),
    ),
    dialogue(
        "汤姆·汉克斯",
        ("汤姆·汉克斯是哪国人？", []),
        ("美国演员，1956年出生。", [("国籍", "美国"), ("出生日期", "1956年07月09日")]),
    ),
]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory) -> tuple[Path, Path]:
    """A film domain built from two hand-made annotated dialogues: the workdir and the dialogues' file."""
    folder = tmp_path_factory.mktemp("tiny")
    dialogues = folder / "tiny.json"
    dialogues.write_text(json.dumps(TINY, ensure_ascii=False), encoding="utf-8")
    run_cli("build", "film", "--source", f"kdconv-dialogues:{dialogues}", "--workdir", str(folder / "kg"))
    return folder / "kg", dialogues


def test_training_on_a_small_domain_writes_a_model_that_grounds_with_scored_claims(tiny, tmp_path):
    workdir, dialogues = tiny
    model = tmp_path / "model.json"
    trained = run_cli(
        "ground", "train", "--data", f"film:{dialogues}", "--out", str(model), "--workdir", str(workdir), "--json"
    )
    report = json.loads(trained.stdout)
    assert report["trained_on"][0]["gold"] == 6 and report["candidates"]["values"] >= 6
    assert read_model(model).values.names == VALUE_FEATURES
    done = run_cli(
        "ground", "film", "--dialogues", str(dialogues), "--out", str(tmp_path / "o.json"), "--model", str(model),
        "--workdir", str(workdir), "--json",
    )  # fmt: skip
    assert json.loads(done.stdout)["model"] == str(model)
    claims = [
        c for d in json.loads((tmp_path / "o.json").read_text("utf-8")) for m in d["messages"] for c in m["claims"]
    ]
    assert claims and all(0.0 <= c["score"] <= 1.0 for c in claims)


def test_the_rules_alone_score_every_claim_one(tiny, tmp_path):
    workdir, dialogues = tiny
    run_cli(
        "ground", "film", "--dialogues", str(dialogues), "--out", str(tmp_path / "o.json"), "--model", "rules",
        "--workdir", str(workdir),
    )  # fmt: skip
    claims = [
        c for d in json.loads((tmp_path / "o.json").read_text("utf-8")) for m in d["messages"] for c in m["claims"]
    ]
    assert claims and {c["score"] for c in claims} == {1.0}


def test_training_data_without_annotations_is_one_line_naming_the_file_and_nothing_is_written(tiny, tmp_path):
    workdir, _ = tiny
    bare = tmp_path / "bare.json"
    bare.write_text(json.dumps([{"name": "阿甘正传", "messages": [{"message": "你好"}]}]), encoding="utf-8")
    out = tmp_path / "model.json"
    failed = run_cli(
        "ground", "train", "--data", f"film:{bare}", "--out", str(out), "--workdir", str(workdir), check=False
    )
    assert failed.returncode == 1 and f"{bare}:1: no dialogue has gold attrs" in failed.stderr
    assert failed.stderr.count("\n") == 1 and "Traceback" not in failed.stderr and not out.exists()


def test_a_damaged_model_file_stops_the_grounding_before_anything_is_written(tiny, tmp_path):
    workdir, dialogues = tiny
    model = tmp_path / "model.json"
    model.write_text(model_bytes(a_document()).decode("utf-8").replace('"version": 1', '"version": 2'), "utf-8")
    out = tmp_path / "o.json"
    failed = run_cli(
        "ground", "film", "--dialogues", str(dialogues), "--out", str(out), "--model", str(model),
        "--workdir", str(workdir), check=False,
    )  # fmt: skip
    assert failed.returncode == 1 and f"{model}:1:" in failed.stderr and "format version 2" in failed.stderr
    assert failed.stderr.count("\n") == 1 and not out.exists()


# ---------------------------------------------------------------- the candidates' features


def test_every_candidate_has_one_feature_a_name_and_the_rules_verdict_first():
    index = GroundingIndex(
        names={"f": ["阿甘正传"], "p": ["汤姆·汉克斯"]},
        facts_of={
            "f": [
                make_fact("f", "主演", "汤姆·汉克斯", "p", False, 24),
                make_fact("f", "片长", "142分钟", None, False, 24),
                make_fact(
                    "f",
                    "Information",
                    "阿甘正传是罗伯特·泽米吉斯执导的电影，汤姆·汉克斯主演，1994年上映。",
                    None,
                    True,
                    24,
                ),
            ]
        },
        text_relation_names={"information"},
    )
    found: list[Candidate] = []
    matcher = DialogueMatcher(index, ["阿甘正传"], MatchOptions(model="rules"), collect=found)
    for message in ["主演是汤姆·汉克斯，片长142分钟。", "罗伯特·泽米吉斯执导的电影，1994年上映。"]:
        matcher.message(message)
    values = [c for c in found if not c.text]
    texts = [c for c in found if c.text]
    assert values and texts
    assert all(len(c.features) == len(VALUE_FEATURES) for c in values)
    assert all(len(c.features) == len(TEXT_FEATURES) for c in texts)
    assert all(c.features[0] == (1.0 if c.rule else 0.0) for c in found)


# ---------------------------------------------------------------- the shipped model, reproduced


@pytest.mark.slow  # builds the three KdConv domains and trains on their dev sets (about 20 s)
def test_the_shipped_model_is_reproduced_by_its_training_command(tmp_path):
    """docs/grounding.md's command, on graphs built as the protocol builds them, gives the shipped file's bytes."""
    workdir = tmp_path / "kg"
    for domain in ("travel", "film", "music"):
        build_kdconv_domain(domain, workdir)
    out = tmp_path / "model.json"
    data = [
        arg for d in ("travel", "film", "music") for arg in ("--data", f"{d}:{shared_file(f'kdconv/{d}/dev.json')}")
    ]
    run_cli("ground", "train", *data, "--seed", "0", "--out", str(out), "--workdir", str(workdir))
    assert out.read_bytes() == shipped_path().read_bytes()
