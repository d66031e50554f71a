"""`kgforge demo`: every stage of the pipeline on the bundled offline demo domain.

The demo domain (``schemas/demo.toml``) is a small film knowledge base in KdConv's
``kb_<domain>.json`` format that ships with kgforge, so the demo needs no network and no data.
"""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol

import pyoxigraph as ox

from kgforge.api import (
    Domain,
    EvalOptions,
    KgforgeError,
    SplitPart,
    build_candidates,
    corpus_stats,
    evaluate,
    split_corpus,
    write_card,
)
from kgforge.core.files import write_text_atomic
from kgforge.demo.crowd import collect_scripted
from kgforge.demo.site import demo_crawl
from kgforge.demo.wikidata_dump import write_demo_dump
from kgforge.grounding.scoring import GroundScore, Tally, attr_key
from kgforge.store.query import term_text

DOMAIN = "demo"
# Eight short dialogues about the demo KB's films and people, in KdConv's layout, every message's gold
# ``attrs`` a fact of schemas/demo/kb_demo.json: the input of the ground, corpus and eval steps.
DIALOGUES = Path(__file__).parent / "dialogues.json"
# The "system" the eval step scores: the gold responses with one value changed in these messages
# (dialogue, message, value said, value put instead), each a fact the graph contradicts.
WRONG_VALUES = ((0, 1, "陈凯歌", "张艺谋"), (3, 1, "姜文", "王家卫"), (5, 3, "2000", "2003"))


class Reporter(Protocol):
    """Where the demo tells what each step did; the demo itself never prints."""

    def section(self, name: str | None) -> None: ...

    def table(self, title: str, values: Mapping[str, Any]) -> None: ...

    def note(self, title: str | None, text: str) -> None: ...


class Quiet:
    """A Reporter that keeps what it is told to itself: for running single steps (as the explorer's tests do)."""

    def section(self, name: str | None) -> None:
        pass

    def table(self, title: str, values: Mapping[str, Any]) -> None:
        pass

    def note(self, title: str | None, text: str) -> None:
        pass


QUIET = Quiet()


def step_build(workdir: Path, tell: Reporter = QUIET) -> None:
    summary = Domain(DOMAIN, workdir).build(progress=True).as_dict()
    tell.table(
        f"build {DOMAIN}",
        {"quads": summary["total_quads"], "records": summary["records_ok"], "quarantined": summary["records_bad"]},
    )


def step_stats(workdir: Path, tell: Reporter = QUIET) -> None:
    stats = Domain(DOMAIN, workdir).stats().as_dict()
    tell.table("stats", {k: v for k, v in stats.items() if not isinstance(v, dict)})
    tell.table("entities by type", stats["entities_by_type"])


def step_query(workdir: Path, tell: Reporter = QUIET) -> None:
    tell.note("query", "queries/entity_facts.rq --bind name@zh=霸王别姬")
    result = Domain(DOMAIN, workdir).query("entity_facts", timeout=30, name=ox.Literal("霸王别姬", language="zh"))
    for row in result.rows:
        tell.note(None, f"  {term_text(row['relation'])}: {term_text(row['value'])}")


def step_crawl(workdir: Path, tell: Reporter = QUIET) -> None:
    tell.note("crawl", "a Douban-shaped demo site served on 127.0.0.1, then build the film domain from it")
    result = demo_crawl(workdir)
    counts = result.crawl.as_dict()
    tell.table("crawl douban_movie", {k: v for k, v in counts.items() if isinstance(v, int)})
    tell.table("build film --source crawl:douban_movie", {"quads": result.build.total_quads})


def step_wikidata(workdir: Path, tell: Reporter = QUIET) -> None:
    dump = write_demo_dump(workdir / "demo-wikidata.json.bz2")
    tell.note("import wikidata", f"{dump} seeded with the demo's film names, 1 hop")
    kg = Domain(DOMAIN, workdir)
    result = kg.import_dump(dump, seed_labels=True, hops=1, progress=True)
    tell.table("wikidata", {"quads": result.source["quads"], "store quads": result.total_quads})
    report = kg.link().as_dict()
    tell.table(
        "link (owl:sameAs by zh/en label with type checks)", {k: v for k, v in report.items() if isinstance(v, int)}
    )


def step_embed(workdir: Path, tell: Reporter = QUIET) -> None:
    kg = Domain(DOMAIN, workdir)  # its embed and related load torch only when called
    evaluation = kg.embed(model="RotatE", dim=32, epochs=60, progress=True).evaluation
    assert evaluation is not None  # the bundled domain has a test split
    tell.table(
        f"embed RotatE ({evaluation['label']}, {evaluation['triples']} test triples)",
        {k: evaluation[k] for k in ("mrr", "hits_at_1", "hits_at_10")},
    )
    answer = kg.related("霸王别姬", k=5)
    tell.note("related", "霸王别姬: " + ", ".join(str(r["label"]) for r in answer.results))


def step_derive(workdir: Path, tell: Reporter = QUIET) -> None:
    report = Domain(DOMAIN, workdir).derive()
    tell.table("derive: associated two-hop triples", {"pairs": report.pairs, "quads": report.quads})
    for name, counts in sorted(report.relations.items(), key=lambda kv: -kv[1]["pairs"])[:5]:
        tell.note(None, f"  {name}: {counts['pairs']} pairs")


def step_goals(workdir: Path, tell: Reporter = QUIET) -> None:
    out = workdir / DOMAIN / "exports" / "goals.jsonl"
    report = Domain(DOMAIN, workdir).goals(n=20, out=out, seed=0)
    tell.table(f"goals → {out}", {"goals": report.goals, **report.kinds})
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    tell.note(None, "  first goal: " + json.dumps(first.get("goal", first.get("path")), ensure_ascii=False))


def step_export(workdir: Path, tell: Reporter = QUIET) -> None:
    goals = workdir / DOMAIN / "exports" / "goals.jsonl"
    out = workdir / DOMAIN / "exports" / "test.duconv.jsonl"
    report = Domain(DOMAIN, workdir).export(goals, out, fmt="duconv", layout="sample", add_related="default")
    tell.table(
        f"export new goals as DuConv test samples → {out}",
        {k: v for k, v in report.as_dict().items() if isinstance(v, int)},
    )
    tell.note(None, "  first line: " + out.read_text(encoding="utf-8").splitlines()[0][:300] + " …")


def _fraction(value: float | None) -> str:
    """Three decimals as text: the reporter's tables would round a float to one."""
    return "n/a" if value is None else f"{value:.3f}"


def _exports(workdir: Path) -> Path:
    folder = workdir / DOMAIN / "exports"
    folder.mkdir(parents=True, exist_ok=True)  # a step may run alone (the explorer's tests do)
    return folder


def _bundled_dialogues() -> list[dict[str, Any]]:
    return json.loads(DIALOGUES.read_text(encoding="utf-8"))


def _scores_against_gold(gold: list[dict[str, Any]], grounded: list[dict[str, Any]]) -> GroundScore:
    """Micro precision, recall and F1 of the grounded file's attrs against the bundled gold attrs, compared as
    ``kgforge ground`` compares them (matching form, each triple once per message)."""
    tally = Tally(Counter())
    for gold_dialogue, found in zip(gold, grounded, strict=True):
        for said, predicted in zip(gold_dialogue["messages"], found["messages"], strict=True):
            tally.add({attr_key(a) for a in predicted["attrs"]}, {attr_key(a) for a in said.get("attrs", [])})
    return tally.scores().micro


def step_ground(workdir: Path, tell: Reporter = QUIET) -> None:
    gold = _bundled_dialogues()
    bare = _exports(workdir) / "dialogues.bare.json"  # the gold attrs taken off: the grounder predicts them all
    write_text_atomic(
        bare,
        json.dumps(
            [{**d, "messages": [{"message": m["message"]} for m in d["messages"]]} for d in gold], ensure_ascii=False
        ),
    )
    report = Domain(DOMAIN, workdir).ground(bare, _exports(workdir) / "dialogues.grounded.json")
    micro = _scores_against_gold(gold, json.loads(report.out.read_text(encoding="utf-8")))
    tell.table(
        f"ground {DIALOGUES.name} without its attrs → {report.out}",
        {
            "messages": report.messages,
            "attrs predicted": report.attrs_predicted,
            "tp": micro.tp,
            "fp": micro.fp,
            "fn": micro.fn,
            "precision": _fraction(micro.precision),
            "recall": _fraction(micro.recall),
            "f1": _fraction(micro.f1),
        },
    )
    tell.table("claims", report.claims)


def step_corpus(workdir: Path, tell: Reporter = QUIET) -> None:
    stats = corpus_stats(DIALOGUES)
    tell.table(
        f"corpus stats {DIALOGUES.name}",
        {
            "dialogues": stats.dialogues,
            "utterances": stats.utterances,
            "tokens per utterance": _fraction(stats.tokens_per_utterance),
            "triples per dialogue": _fraction(stats.knowledge.triples_per_dialogue if stats.knowledge else None),
        },
    )
    folder = _exports(workdir) / "split"
    split = split_corpus(DIALOGUES, folder, ratios=(6, 1, 1), by="topic", seed=0)
    tell.table(
        f"corpus split --by topic --ratios 6:1:1 --seed 0 → {folder}",
        {part.name: _split_line(part) for part in split.parts},
    )
    test, train = (folder / f"{name}{DIALOGUES.suffix}" for name in ("test", "train"))
    candidates = build_candidates(test, train, folder / "test.candidates.jsonl", k=5, seed=0)
    tell.table(
        f"corpus candidates test from the train pool → {candidates.out}",
        {"samples": candidates.samples, "k": candidates.k},
    )
    card = write_card([DIALOGUES], DOMAIN, _exports(workdir) / "dialogues.card.md", workdir=workdir, split=folder)
    tell.note(None, f"  datasheet → {card.out} ({len(card.sources)} sources)")


def _split_line(part: SplitPart) -> str:
    if part.topic_leakage is None:  # train: the split the others' leakage is measured against
        return f"{part.dialogues} dialogues"
    return (
        f"{part.dialogues} dialogues, topic leakage {_fraction(part.topic_leakage)}, "
        f"triple leakage {_fraction(part.triple_leakage)}"
    )


def _wrong_system(out: Path) -> Path:
    """The gold responses (every message after a dialogue's first, as eval reads KdConv) with WRONG_VALUES."""
    responses = [[m["message"] for m in d["messages"][1:]] for d in _bundled_dialogues()]
    for dialogue, message, said, wrong in WRONG_VALUES:
        text = responses[dialogue][message - 1]
        if said not in text:
            raise KgforgeError(f"{DIALOGUES}: dialogue {dialogue} message {message} does not say {said!r}")
        responses[dialogue][message - 1] = text.replace(said, wrong)
    write_text_atomic(out, "".join(r + "\n" for rs in responses for r in rs))
    return out


def step_eval(workdir: Path, tell: Reporter = QUIET) -> None:
    system = _wrong_system(_exports(workdir) / "system.txt")
    options = EvalOptions(metrics=("bleu4", "f1", "distinct2", "k_precision", "k_recall"), goal_metrics=True)
    per_response = _exports(workdir) / "system.eval.jsonl"
    report = evaluate(system, gold=DIALOGUES, domain=DOMAIN, workdir=workdir, out=per_response, options=options)
    tell.table(
        f"eval {system.name} ({len(WRONG_VALUES)} values changed) against {DIALOGUES.name} and the graph",
        {k: _fraction(v) for k, v in report.metrics.items()},
    )
    flagged = sum(
        1 for line in per_response.read_text(encoding="utf-8").splitlines() if json.loads(line)["hallucinations"]
    )
    assert report.knowledge is not None and report.goals is not None  # asked for: a domain and goal_metrics
    knowledge = report.knowledge.as_dict()
    tell.table(
        f"knowledge against the graph → {per_response}",
        {
            **{k: knowledge[k] for k in ("fact_mentions", "true", "gold", "hallucinations")},
            "responses with a hallucination": flagged,
        },
    )
    summary = report.goals["summary"]
    tell.table(
        "goal metrics (--goal-metrics)",
        {
            "dialogues": summary["dialogues"],
            "triples used": _fraction(summary["triples_used"]),
            "properties used": _fraction(summary["properties_used"]),
            **{f"turns using {band} facts": _fraction(share) for band, share in summary["info_bands"].items()},
        },
    )


def step_synth(workdir: Path, tell: Reporter = QUIET) -> None:
    goals = workdir / DOMAIN / "exports" / "goals.jsonl"
    out = _exports(workdir) / "synth.duconv.jsonl"
    report = Domain(DOMAIN, workdir).synth(goals, out, style="duconv")
    tell.table(
        f"synth the goals as DuConv sessions, offline (templated, no model) → {out}",
        {
            "dialogues": report.dialogues,
            "dropped": report.dropped,
            "turns": report.turns,
            "knowledge turns": report.knowledge_turns,
            "verified share": _fraction(report.verified_share),
        },
    )
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    tell.note(None, "  first dialogue: " + " / ".join(first["conversation"][:4]) + " …")


def step_collect(workdir: Path, tell: Reporter = QUIET) -> None:
    from kgforge.collect import export_collection, prepare_collection  # lazy: start-up

    folder, out = _exports(workdir) / "collection", _exports(workdir) / "collected.duconv.txt"
    if folder.exists():  # a fresh collection each run, else its workers would chat again under the next goals
        shutil.rmtree(folder)
        tell.note(None, f"  the last run's collection ({folder}) was removed: the demo's workers start afresh")
    made = prepare_collection(DOMAIN, _exports(workdir) / "goals.jsonl", "duconv", folder, workdir=workdir, workers=4)
    checks = collect_scripted(folder, workdir, sessions=2)
    exported = export_collection(folder, "duconv", out)
    tell.table(
        f"collect: two scripted workers a session, through the collection's own calls → {out}",
        {
            "goals in the folder": made.goals,
            "sessions finished": exported.sessions,
            "checks passed": sum(c.passed for c in checks),
            "turns": exported.turns,
            "facts clicked": exported.facts_clicked,
            "facts the judge found stated": sum(c.facts_stated for c in checks),
        },
    )
    tell.note(None, f"  `kgforge collect {DOMAIN} --goals … --out {folder}` serves the same folder to people")


def step_release(workdir: Path, tell: Reporter = QUIET) -> None:
    from kgforge.release import check_release  # lazy: start-up

    out = _exports(workdir) / "release"
    report = Domain(DOMAIN, workdir).release(
        [_exports(workdir) / "synth.duconv.jsonl"], out, ratios="8:1:1", by="dialogue", origin="llm", model="templated"
    )
    checked = check_release(out)
    tell.table(
        f"release the synthesized sessions → {out}",
        {
            "splits": ", ".join(f"{s.name} {s.dialogues}" for s in report.splits),
            "turns": report.turns,
            "licence": f"{report.licence} ({report.licence_chosen_by})",
            "KG statements": report.kg_statements,
            **{f"release check: {line.check}": f"{line.status} ({line.detail})" for line in checked.checks},
        },
    )
    for problem in checked.problems:
        tell.note(None, f"  release check: {problem}")


STEPS: list[tuple[str, Callable[[Path, Reporter], None]]] = [
    ("build", step_build),
    ("stats", step_stats),
    ("query", step_query),
    ("crawl", step_crawl),
    ("wikidata", step_wikidata),
    ("derive", step_derive),
    ("goals", step_goals),
    ("embed", step_embed),
    ("export", step_export),
    ("ground", step_ground),
    ("corpus", step_corpus),
    ("eval", step_eval),
    # the dataset-making steps last: each writes only its own files, so the other steps' outputs are as they were
    ("synth", step_synth),
    ("collect", step_collect),
    ("release", step_release),
]


def run_demo(workdir: Path, tell: Reporter) -> None:
    """Run every step, telling ``tell`` what each found (the CLI prints it; a notebook may collect it)."""
    for name, step in STEPS:
        tell.section(name)
        step(workdir, tell)
    tell.section(None)
    tell.note(None, f"demo finished; the store and every output are under {workdir / DOMAIN}")
