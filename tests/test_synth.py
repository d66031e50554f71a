"""`kgforge synth` against the three seed domains built from the shared samples: the templated realiser
offline, and a scripted OpenAI-compatible model on 127.0.0.1 (benchmarks/scripted_llm.py) that plants wrong
values, answers badly, limits its rate — checked by what the server saw and by the graph itself."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox
import pytest

from benchmarks.scripted_llm import BAD_KINDS, Script, scripted_server
from kgforge import Domain
from kgforge.core.errors import KgforgeError
from kgforge.corpus import corpus_stats
from kgforge.exports import format_named
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from kgforge.synth import SYNTH_STYLES
from tests.synth_support import Seed, build_seed, released_turns, true_sentences

STYLES = ("duconv", "kdconv", "durecdial")


# the acceptance runs of the styles whose graphs take longer to build (DuConv's derive too) are in the full loop
SLOW_STYLES = [
    pytest.param("duconv", marks=pytest.mark.slow),
    "kdconv",
    pytest.param("durecdial", marks=pytest.mark.slow),
]


@pytest.fixture(scope="module")
def seeds(tmp_path_factory: pytest.TempPathFactory) -> Callable[[str], Seed]:
    """``seeds(style)``: that style's seed domain with 40 goals, built on first use."""
    root = tmp_path_factory.mktemp("synth")
    made: dict[str, Seed] = {}

    def seed(style: str) -> Seed:
        if style not in made:
            made[style] = build_seed(root / style, style)
        return made[style]

    return seed


def llm(server: object, **options: object) -> dict[str, object]:
    return {"llm_url": server.url, "llm_model": "scripted", "concurrency": 4, **options}


def records(path: Path, style: str) -> list[dict]:
    text = path.read_text(encoding="utf-8")
    return json.loads(text) if style == "kdconv" else [json.loads(line) for line in text.splitlines()]


def layout_of(style: str, name: str):
    fmt = format_named(SYNTH_STYLES.get(style).export_format)
    return fmt, fmt.layout(name)


# ---------------------------------------------------------------- the templated realiser


@pytest.mark.parametrize("style", SLOW_STYLES)
def test_the_templated_realiser_passes_verification_and_writes_what_the_readers_need(
    seeds: Callable[[str], Seed], style: str, tmp_path: Path
) -> None:
    seed = seeds(style)
    out = tmp_path / "out.txt"
    report = Domain(seed.domain, seed.workdir).synth(seed.goals, out, style=style, n=20)
    assert report.model == "templated" and report.requests == 0
    assert report.dialogues == report.goals == 20 and report.dropped == 0 and report.rejected is None
    assert report.knowledge_turns > report.dialogues and report.verified_share == 1.0
    assert set(report.verdicts) <= {"supported", "chitchat"}
    written = records(out, style)
    fmt, layout = layout_of(style, report.layout)
    for record in written:  # the readers' needs, as the exports encode them (docs/exports.md)
        assert fmt.check(record, layout) == []
    manifest = json.loads((tmp_path / "out.txt.manifest.json").read_text(encoding="utf-8"))
    assert manifest["templated"] is True and manifest["model"] == "templated" and manifest["prompts"] is None
    assert manifest["build_id"] == report.build_id and manifest["reader_kind"] == report.reader_kind
    stats = corpus_stats(out)  # every existing command reads it as it reads the seed's own files
    assert stats.dialogues == len(written) and stats.utterances == report.turns


def test_templated_turns_state_facts_the_graph_holds_by_their_ask(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    out = tmp_path / "travel.json"
    Domain(seed.domain, seed.workdir).synth(seed.goals, out, style="kdconv", n=10)
    facts = [f for d in records(out, "kdconv") for m in d["messages"] for f in m["facts"]]
    assert len(facts) > 20
    with QueryRunner(Snapshot.open(seed.domain, seed.workdir)) as runner:
        for fact in facts:
            bindings = {
                name: ox.NamedNode(value[1:-1]) if value.startswith("<") else ox.Literal(value)
                for name, value in fact["bindings"].items()
            }
            assert runner.query(fact["ask"], bindings, timeout=30).boolean is True, fact
        wrong = dict(facts[0]["bindings"]) | {"value": "不是这个值"}
        wrong = {k: ox.NamedNode(v[1:-1]) if v.startswith("<") else ox.Literal(v) for k, v in wrong.items()}
        if "$value" in facts[0]["ask"]:
            assert runner.query(facts[0]["ask"], wrong, timeout=30).boolean is False


def test_the_same_seed_writes_the_same_bytes_and_the_goals_order(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    kg = Domain(seed.domain, seed.workdir)
    kg.synth(seed.goals, tmp_path / "a.json", style="kdconv", n=20)
    kg.synth(seed.goals, tmp_path / "b.json", style="kdconv", n=20)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    goals = [json.loads(line) for line in seed.goals.read_text(encoding="utf-8").splitlines()][:20]
    assert [r["name"] for r in records(tmp_path / "a.json", "kdconv")] == [g["topic_labels"][0] for g in goals]


# ---------------------------------------------------------------- a scripted model


@pytest.mark.parametrize("style", SLOW_STYLES)
def test_planted_wrong_values_are_repaired_or_dropped(seeds: Callable[[str], Seed], style: str, tmp_path: Path) -> None:
    seed = seeds(style)
    out = tmp_path / "out.txt"
    script = Script(style, plant=0.3, fix=0.8)
    with scripted_server(script) as server:
        report = Domain(seed.domain, seed.workdir).synth(seed.goals, out, style=style, **llm(server))
    truth = true_sentences(seed.workdir, seed.domain)
    wrong = {s.replace(" ", "") for s in script.planted} - truth
    assert len(wrong) >= 10, "the scripted model planted too few wrong values to judge"
    said = [t.replace(" ", "") for turns in released_turns(out, style) for t in turns]
    leaked = [t for t in said if t in wrong]
    assert len(leaked) <= 0.01 * len(wrong), leaked
    assert report.verified_share is not None and report.verified_share >= 0.95
    assert report.repairs > 0 and report.repaired_turns > 0 and report.dialogues >= 0.7 * report.goals
    assert report.requests == report.sent == len(script.log) and report.prompt_tokens > 0
    rejected = (
        [json.loads(line) for line in (tmp_path / "out.txt.rejected.jsonl").read_text().splitlines()]
        if (report.dropped)
        else []
    )
    assert len(rejected) == report.dropped == report.goals - report.dialogues
    assert all(r["kind"] and r["reason"] and r["goal_id"] for r in rejected)
    assert sum(report.drops.values()) == report.dropped
    fmt, layout = layout_of(style, report.layout)
    assert all(fmt.check(record, layout) == [] for record in records(out, style))


def test_a_rerun_asks_nothing_again_and_writes_the_same_bytes(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    script = Script("kdconv")
    kg = Domain(seed.domain, seed.workdir)
    with scripted_server(script) as server:
        first = kg.synth(seed.goals, tmp_path / "a.json", style="kdconv", n=15, seed=7, **llm(server))
        asked = len(script.log)
        again = kg.synth(seed.goals, tmp_path / "b.json", style="kdconv", n=15, seed=7, **llm(server))
    assert asked == first.sent > 0 and len(script.log) == asked and again.sent == 0
    assert again.cache_hits == first.requests
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (again.prompt_tokens, again.completion_tokens) == (first.prompt_tokens, first.completion_tokens)


def test_dry_run_counts_what_the_server_then_receives(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    kg = Domain(seed.domain, seed.workdir)
    script = Script("kdconv", plant=0.0)  # no wrong value, so no repair: the drafts are all that is sent
    with scripted_server(script) as server:
        options = llm(server, seed=11, n=25)
        plan = kg.synth_plan(seed.goals, tmp_path / "d.json", style="kdconv", **options)
        assert script.log == []  # nothing sent
        report = kg.synth(seed.goals, tmp_path / "d.json", style="kdconv", **options)
        again = kg.synth_plan(seed.goals, tmp_path / "d.json", style="kdconv", **options)
    assert plan.requests == len(script.log) == report.sent == 25 and plan.cached == 0
    received = sum(entry["chars"] for entry in script.log)
    assert abs(plan.prompt_chars - received) <= 0.01 * received
    assert (again.requests, again.cached, again.prompt_chars) == (0, 25, 0)  # answered: nothing to send


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_a_bad_reply_is_counted_and_asked_again(seeds: Callable[[str], Seed], kind: str, tmp_path: Path) -> None:
    seed = seeds("duconv")
    script = Script("duconv", plant=0.0, bad=kind)
    with scripted_server(script) as server:
        report = Domain(seed.domain, seed.workdir).synth(
            seed.goals, tmp_path / "o.txt", style="duconv", n=6, **llm(server)
        )
    assert report.bad_replies == {kind: 6} and report.retries == 6
    assert report.dialogues == 6 and report.dropped == 0


@pytest.mark.parametrize("kind", BAD_KINDS)
def test_replies_that_stay_bad_drop_the_dialogue_with_the_reason(
    seeds: Callable[[str], Seed], kind: str, tmp_path: Path
) -> None:
    seed = seeds("kdconv")
    out = tmp_path / "o.json"
    with scripted_server(Script("kdconv", always_bad=kind)) as server:
        report = Domain(seed.domain, seed.workdir).synth(
            seed.goals, out, style="kdconv", n=2, max_tries=2, **llm(server)
        )
    assert report.dialogues == 0 and report.drops == {f"bad reply: {kind}": 2} and report.bad_replies == {kind: 4}
    rejected = [json.loads(line) for line in (tmp_path / "o.json.rejected.jsonl").read_text().splitlines()]
    assert [r["kind"] for r in rejected] == [f"bad reply: {kind}"] * 2 and all(kind in r["reason"] for r in rejected)
    assert json.loads(out.read_text(encoding="utf-8")) == []  # a whole (empty) file, never half of one


def test_429_and_retry_after_are_honoured(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    script = Script("kdconv", plant=0.0, rate_limited=0.6)
    with scripted_server(script) as server:
        report = Domain(seed.domain, seed.workdir).synth(
            seed.goals, tmp_path / "o.json", style="kdconv", n=8, **llm(server)
        )
    assert script.limited >= 2 and report.dialogues == 8 and report.sent == len(script.log) == 8


def test_goals_of_another_style_or_domain_are_refused_in_one_line(
    seeds: Callable[[str], Seed], tmp_path: Path, cli
) -> None:
    seed = seeds("kdconv")
    goals = [json.loads(line) for line in seed.goals.read_text(encoding="utf-8").splitlines()]
    duconv_style = tmp_path / "duconv-style.jsonl"
    duconv_style.write_text("".join(json.dumps(g | {"kind": "one_step"}) + "\n" for g in goals), encoding="utf-8")
    elsewhere = tmp_path / "elsewhere.jsonl"
    moved = [g | {"topics": [t.replace("/entity/name/", "/entity/name/x") for t in g["topics"]]} for g in goals]
    elsewhere.write_text("".join(json.dumps(g) + "\n" for g in moved), encoding="utf-8")
    args = [
        "synth",
        seed.domain,
        "--out",
        str(tmp_path / "o.json"),
        "--style",
        "kdconv",
        "--workdir",
        str(seed.workdir),
    ]
    result = cli(*args, "--goals", str(duconv_style), check=False)
    assert result.returncode != 0 and "duconv-style" in result.stderr and len(result.stderr.strip().splitlines()) == 1
    result = cli(*args, "--goals", str(elsewhere), check=False)
    assert result.returncode != 0 and "another domain" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not (tmp_path / "o.json").exists()


def test_prompt_templates_can_be_replaced_placeholders_only(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    bundled = (Path(__file__).parent.parent / "kgforge/datasets/kdconv/prompts/synth.toml").read_text(encoding="utf-8")
    mine = tmp_path / "mine.toml"
    mine.write_text(bundled.replace("写一段中文对话", "请写一段自然的中文对话"), encoding="utf-8")
    script = Script("kdconv", plant=0.0)
    with scripted_server(script) as server:
        kg = Domain(seed.domain, seed.workdir)
        kg.synth(seed.goals, tmp_path / "o.json", style="kdconv", n=2, prompts=mine, **llm(server))
        manifest = json.loads((tmp_path / "o.json.manifest.json").read_text(encoding="utf-8"))
        assert manifest["prompts"]["source"] == str(mine) and len(script.log) == 2
        bad = tmp_path / "bad.toml"
        bad.write_text(bundled.replace("{knowledge}", "{facts}"), encoding="utf-8")
        with pytest.raises(KgforgeError, match=r"bad.toml: \[zh\].draft: unknown placeholder \{facts\}"):
            kg.synth(seed.goals, tmp_path / "o.json", style="kdconv", n=2, prompts=bad, **llm(server))


@pytest.mark.slow  # builds the demo domain and derives it (about 8 s)
def test_the_demo_synthesises_its_goals_offline(tmp_path: Path) -> None:
    from kgforge.demo.runner import QUIET, step_build, step_derive, step_goals, step_synth

    workdir = tmp_path / "kg"
    for step in (step_build, step_derive, step_goals, step_synth):
        step(workdir, QUIET)
    out = workdir / "demo" / "exports" / "synth.duconv.jsonl"
    sessions = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(sessions) == 20
    assert all(set(s["verdicts"]) <= {"supported", "chitchat"} and "supported" in s["verdicts"] for s in sessions)


def test_english_dialogues_from_the_templates(seeds: Callable[[str], Seed], tmp_path: Path) -> None:
    seed = seeds("kdconv")
    out = tmp_path / "en.json"
    report = Domain(seed.domain, seed.workdir).synth(seed.goals, out, style="kdconv", language="en", n=5)
    messages = [m["message"] for d in records(out, "kdconv") for m in d["messages"]]
    assert report.language == "en" and report.dialogues == 5 and report.verified_share == 1.0
    assert any(m.startswith("The address of ") for m in messages) and not any("的地址是" in m for m in messages)
    assert report.mixed_labels > 0  # the travel graph names its places in Chinese only: said so, not hidden


def test_the_order_of_completion_never_changes_the_output(seeds: Callable[[str], Seed], tmp_path: Path, cli) -> None:
    seed = seeds("kdconv")
    with scripted_server(Script("kdconv")) as server:
        outputs = []
        for concurrency in ("1", "8"):
            shutil.rmtree(seed.workdir / seed.domain / "raw" / "llm-cache", ignore_errors=True)  # asked afresh
            out = tmp_path / f"c{concurrency}.json"
            result = cli(
                "synth", seed.domain, "--goals", str(seed.goals), "--out", str(out), "--style", "kdconv", "--n", "12",
                "--llm-url", server.url, "--llm-model", "m", "--concurrency", concurrency, "--workdir", str(seed.workdir),
            )  # fmt: skip
            assert "synth kdconv: repaired" not in result.stderr  # the progress bar is for a terminal only
            outputs.append(out.read_bytes())
        assert len(server.script.log) > 24  # both runs asked the model
    assert outputs[0] == outputs[1]


def test_an_endpoint_that_answers_nothing_is_one_line_and_writes_nothing(
    seeds: Callable[[str], Seed], tmp_path: Path, cli
) -> None:
    seed = seeds("kdconv")
    out = tmp_path / "o.json"
    args = ["synth", seed.domain, "--goals", str(seed.goals), "--out", str(out), "--style", "kdconv", "--n", "2"]
    result = cli(
        *args, "--llm-url", "http://127.0.0.1:9/v1", "--llm-model", "m", "--workdir", str(seed.workdir), check=False
    )
    assert result.returncode == 1 and "no request was answered" in result.stderr and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and not out.exists()
