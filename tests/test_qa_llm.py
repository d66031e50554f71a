"""The optional LLM steps against a real OpenAI-compatible HTTP server on 127.0.0.1: predicate
selection (with a malformed reply quarantined and the statistical choice kept), template writing
(checked before use), judging, the on-disk cache and the API key."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kgforge.core.quarantine import Quarantine
from kgforge.qa import (
    GenerateOptions,
    LLMSettings,
    evaluate,
    generate_dataset,
    llm_templates,
    select,
)
from kgforge.qa.select import read_selection
from kgforge.store.snapshot import Snapshot
from tests.conftest import shared_file
from tests.qa_support import build_domain, chat_server, read_turns

LEAK = "北京市东城区景山前街4号"  # the address of 故宫: a template holding it gives an answer away


@pytest.fixture(scope="module")
def kg(tmp_path_factory) -> Path:
    workdir = tmp_path_factory.mktemp("qa-llm")
    build_domain(workdir, "travel", ("kdconv", shared_file("kdconv/travel/kb_travel.json")))
    build_domain(workdir, "film", ("kdconv-dialogues", shared_file("kdconv/film/dev.json")))
    return workdir


def offered(prompt: str) -> list[tuple[str, str]]:
    return re.findall(r"^(p\d+): (.+?) \(coverage", prompt, re.MULTILINE)


def test_llm_selection_with_a_malformed_reply(kg: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("QA_TEST_KEY", "secret-test-key")

    def reply(prompt: str) -> str:
        if "Entity type: 明星/演员." in prompt:
            return "I would keep p1 and p3."
        return "```json\n" + json.dumps({"keep": [key for key, _ in offered(prompt)[:2]]}) + "\n```"

    with chat_server(reply) as server:
        settings = LLMSettings(server.url, "test-model", key_env="QA_TEST_KEY")
        statistical = tmp_path / "statistical.json"
        select(Snapshot.open("film", kg), statistical)
        out = tmp_path / "llm.json"
        report = select(Snapshot.open("film", kg), out, llm=settings)
        first_calls = len(server.requests)
        assert first_calls > 2 and report.llm.rejected == 1
        assert all(h.get("Authorization") == "Bearer secret-test-key" for h in server.headers)
        sizes = [len(offered(r["messages"][-1]["content"])) for r in server.requests]
        assert max(sizes) == 50 and all(0 < n <= 50 for n in sizes)  # the untyped films have 73: two calls
        # star (no occupation): its reply kept p1 and p2
        (prompt,) = [
            r["messages"][-1]["content"]
            for r in server.requests
            if "Entity type: 明星." in r["messages"][-1]["content"]
        ]
        chosen = read_selection(out)["star"]
        kept_labels = {label for key, label in offered(prompt) if key in ("p1", "p2")}
        assert {p["label"] for p in chosen.predicates if p["selected"]} == kept_labels and chosen.selector == "llm"
        assert {p["reason"] for p in chosen.predicates if p["label"] in kept_labels} == {"LLM kept"}
        # star/演员: the malformed reply kept the statistical choice
        fallback, before = read_selection(out)["star/演员"], read_selection(statistical)["star/演员"]
        assert fallback.selected == before.selected and fallback.selected
        assert all(
            "LLM reply quarantined" in p["reason"]
            for p in fallback.predicates
            if p["reason"].startswith(("kept", "coverage", "score"))
        )
        quarantined = [
            json.loads(line)
            for line in (kg / "film" / "quarantine" / "qa-llm.jsonl").read_text(encoding="utf-8").splitlines()
        ]
        assert quarantined[-1]["reason"].startswith("malformed LLM reply: not JSON")
        assert quarantined[-1]["record"] == "I would keep p1 and p3." and "star/演员" in quarantined[-1]["location"]
        # a rerun asks only what was not answered well: the good replies come from the cache
        again = select(Snapshot.open("film", kg), tmp_path / "again.json", llm=settings)
        assert again.llm.cache_hits == first_calls - 1 and again.llm.calls == 1
        assert read_selection(tmp_path / "again.json")["star"].selected == chosen.selected
    cache = kg / "film" / "raw" / "llm-cache"
    files = list(cache.iterdir())
    assert len(files) == first_calls - 1 and all(re.fullmatch(r"[0-9a-f]{64}\.json", f.name) for f in files)
    assert not any("secret-test-key" in f.read_text(encoding="utf-8") for f in files)


def test_llm_templates_are_checked_before_use(kg: Path, tmp_path: Path) -> None:
    def reply(prompt: str) -> str:
        if "'地址'" in prompt:
            return json.dumps(
                {
                    "voice": {
                        "name": ["{subject}究竟坐落在什么地方？", f"{{subject}}是在{LEAK}吗？"],
                        "deixis": ["{ref}究竟坐落在什么地方？", "{ref}在{where}？"],
                    },
                    "text": {"name": ["{subject} 坐落"], "deixis": ["{ref} 坐落"]},
                }
            )
        if "'电话'" in prompt:
            return "no templates today"
        return json.dumps(
            {
                "voice": {"name": ["{subject}的{predicate}呢？"], "deixis": ["{ref}的{predicate}呢？"]},
                "text": {"name": ["{subject}？{predicate}"], "deixis": ["{ref}？{predicate}"]},
            }
        )

    with chat_server(reply) as server:
        out = tmp_path / "templates.toml"
        report = llm_templates(Snapshot.open("travel", kg), out, LLMSettings(server.url, "test-model"))
    assert report.templates_refused == 2 and report.llm.rejected == 1
    text = out.read_text(encoding="utf-8")
    assert "究竟坐落在什么地方" in text and LEAK not in text and "{where}" not in text
    turns_file = tmp_path / "t.jsonl"
    generate_dataset(
        Snapshot.open("travel", kg),
        turns_file,
        GenerateOptions(n=30, turns=5, seed=4, interactions=("voice",), phenomena=()),
        templates=out,
    )
    asked = [t["question"] for t in read_turns(turns_file) if t["fact"]["predicate_labels"] == ["地址"]]
    assert asked and any(q.endswith("究竟坐落在什么地方？") for q in asked)


def test_llm_judge_beside_the_alias_score(kg: Path, tmp_path: Path) -> None:
    gold = tmp_path / "gold.jsonl"
    generate_dataset(
        Snapshot.open("travel", kg), gold, GenerateOptions(n=3, turns=2, seed=1, interactions=("text",), phenomena=())
    )
    turns = read_turns(gold)
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(
        "".join(
            json.dumps({"id": t["id"], "prediction": t["answer_texts"][0] if i % 2 else "错"}, ensure_ascii=False)
            + "\n"
            for i, t in enumerate(turns)
        ),
        encoding="utf-8",
    )

    def reply(prompt: str) -> str:
        gold_line = re.search(r"Correct answers \(any one suffices\): (.*)", prompt).group(1)
        predicted = re.search(r"Predicted answer: (.*)", prompt).group(1)
        return json.dumps({"correct": predicted in json.loads(gold_line)})

    with chat_server(reply) as server:
        client = LLMSettings(server.url, "judge").client_at(tmp_path / "cache", Quarantine(tmp_path / "rejected.jsonl"))
        report = evaluate(predictions, gold, client)
    judged, alias = report.llm_judge["all"], report.alias["all"]
    assert (
        judged["turn_accuracy"]
        == alias["turn_accuracy"]
        == round(sum(i % 2 for i in range(len(turns))) / len(turns), 6)
    )
    assert report.llm_judge["unjudged_turns"] == 0
