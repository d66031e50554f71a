"""Typos and disfluencies as properties (hypothesis), templates as a file format, and the qa commands
run as a user runs them."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.errors import InputError
from kgforge.qa.phenomena import (
    QWERTY,
    STOPWORDS,
    add_disfluency,
    add_typo,
    alternatives,
    reading,
)
from kgforge.qa.templates import load_templates, parse_templates
from tests.conftest import shared_file
from tests.qa_support import build_domain, read_turns

HAN = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FA5)
QUESTIONS = st.text(alphabet=st.sampled_from("abcdefghijklmnopqrstuvwxyzABCDEFGHIJ ?,'-0123456789"), max_size=60)


@settings(deadline=None)  # a shared machine's pauses are not what is tested
@given(QUESTIONS, st.integers(0, 2**32))
def test_latin_typo_is_exactly_one_edit_of_its_kind(question: str, seed: int) -> None:
    result = add_typo(question, random.Random(seed), chinese=False)
    words = [w.strip("?,'-0123456789") for w in question.split()]
    if result is None:
        assert not any(len(w) >= 3 and w.isalpha() and w.lower() not in STOPWORDS for w in words)
        return
    typed, typo = result
    at = typo.position
    assert question[at : at + len(typo.before)] == typo.before
    assert typed == question[:at] + typo.after + question[at + len(typo.before) :]
    if typo.kind == "deletion":
        assert len(typo.before) == 1 and typo.after == "" and len(typed) == len(question) - 1
    elif typo.kind == "swap":
        assert typo.after == typo.before[::-1] and typo.before[0] != typo.before[1]
    else:
        assert typo.kind == "qwerty" and typo.after.lower() in QWERTY[typo.before.lower()]
        assert typo.after.isupper() == typo.before.isupper()
    assert typed != question


@settings(deadline=None)  # the first call builds the homophone table
@given(st.text(alphabet=HAN, min_size=1, max_size=20), st.integers(0, 2**32))
def test_chinese_typo_is_one_homophone(question: str, seed: int) -> None:
    result = add_typo(question, random.Random(seed), chinese=True)
    if result is None:
        assert not any(alternatives(c) for c in question)
        return
    typed, typo = result
    assert typo.kind == "homophone" and len(typed) == len(question)
    assert [i for i, (a, b) in enumerate(zip(question, typed)) if a != b] == [typo.position]
    assert reading(typo.before) == reading(typo.after) and typo.before != typo.after
    assert typo.after.encode("gb2312")[0] < 0xD8  # a common character (GB2312 level 1)


@settings(max_examples=50, deadline=None)
@given(st.sampled_from(["zh", "en"]), st.integers(0, 2**32))
def test_a_disfluency_keeps_the_question(language: str, seed: int) -> None:
    templates = load_templates(None, language)
    question = "城市之街的导演是谁？" if language == "zh" else "Who directed City Streets?"
    said, kind = add_disfluency(
        question,
        random.Random(seed),
        templates.disfluency,
        "城市之街的编剧" if language == "zh" else "What's the screenwriter of City Streets",
        language == "zh",
    )
    assert kind in ("filler", "takeback", "apology", "thanks", "repetition") and said != question
    if kind != "filler" or language == "zh":
        assert question.lower()[1:] in said.lower()
    else:
        assert said.replace(
            next(f for f in templates.disfluency["fillers"] if f.rstrip(", ") in said).rstrip(", ") + ",", ""
        ).replace(", ", " ").replace("  ", " ").strip(" ,") == question.replace(", ", " ")


def test_template_files_are_checked_with_their_place(tmp_path: Path) -> None:
    base = (Path(__file__).resolve().parent.parent / "kgforge" / "qa" / "templates" / "en.toml").read_text("utf-8")
    with pytest.raises(InputError, match=r"templates\[\d+\]\.texts\[0\] .*unknown placeholder\(s\) \{answer\}"):
        parse_templates(
            base + '\n[[templates]]\nkind = "simple"\ninteraction = "text"\nreference = "name"\n'
            'texts = ["{subject} is {answer}"]\n',
            "mine.toml",
        )
    with pytest.raises(InputError, match="deixis template must contain {ref} and not {subject}"):
        parse_templates(
            base + '\n[[templates]]\nkind = "simple"\ninteraction = "text"\nreference = "deixis"\n'
            'texts = ["{subject} {predicate}"]\n',
            "mine.toml",
        )
    with pytest.raises(InputError, match="mine.toml: invalid TOML"):
        parse_templates("[[templates]\n", "mine.toml")


def test_the_commands(tmp_path: Path, cli) -> None:
    workdir = tmp_path / "kg"
    build_domain(workdir, "travel", ("kdconv", shared_file("kdconv/travel/kb_travel.json")))
    w = ("--workdir", str(workdir))
    listed = json.loads(cli("qa", "predicates", "travel", *w, "--json").stdout)
    assert listed["types"]["attraction"]["entities"] == 1154
    cli("qa", "select", "travel", "--out", str(tmp_path / "s.json"), *w)
    out, cq = tmp_path / "turns.jsonl", tmp_path / "cq.jsonl"
    report = json.loads(
        cli(
            "qa",
            "generate",
            "travel",
            "--out",
            str(out),
            "--convquestions",
            str(cq),
            "--n",
            "4",
            "--selection",
            str(tmp_path / "s.json"),
            "--interaction",
            "voice",
            "--deixis",
            "--disfluency",
            *w,
            "--json",
        ).stdout
    )
    assert report["configurations"] == ["voice-deixis+disfluency"] and report["turns"] == len(read_turns(out))
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": t["id"], "prediction": t["answer_texts"][0]}, ensure_ascii=False) + "\n"
            for t in read_turns(out)
        ),
        encoding="utf-8",
    )
    scored = json.loads(cli("qa-eval", str(predictions), str(out), "--json").stdout)
    assert scored["alias"]["voice-deixis+disfluency"]["turn_accuracy"] == 1.0
    refused = cli("qa", "generate", "travel", "--out", str(out), "--typos", "--interaction", "voice", *w, check=False)
    assert refused.returncode == 2 and "typos belong to text interactions" in refused.stderr
    assert len(refused.stderr.strip().splitlines()) == 1
    assert cli("qa", "generate", "travel", "--out", str(out), "--n", "0", *w, check=False).returncode == 2
