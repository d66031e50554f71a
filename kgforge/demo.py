"""`kgforge demo`: every stage of the pipeline on the bundled offline demo domain.

The demo domain (``schemas/demo.toml``) is a small film knowledge base in KdConv's
``kb_<domain>.json`` format that ships with kgforge, so the demo needs no network and no data.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyoxigraph as ox

from kgforge.build import build
from kgforge.commands._app import console, show_mapping
from kgforge.crawl.demo import demo_crawl
from kgforge.query import QueryRunner, term_text
from kgforge.resources import query_text
from kgforge.stats import domain_stats
from kgforge.store import domain_paths

DOMAIN = "demo"


def step_build(workdir: Path) -> None:
    summary = build(DOMAIN, workdir=workdir).as_dict()
    show_mapping(f"build {DOMAIN}", {"quads": summary["total_quads"], "records": summary["records_ok"],
                                    "quarantined": summary["records_bad"]})


def step_stats(workdir: Path) -> None:
    stats = domain_stats(DOMAIN, workdir)
    show_mapping("stats", {k: v for k, v in stats.items() if not isinstance(v, dict)})
    show_mapping("entities by type", stats["entities_by_type"])


def step_query(workdir: Path) -> None:
    console.print("[bold]query[/] queries/entity_facts.rq --bind name@zh=霸王别姬")
    with QueryRunner(domain_paths(DOMAIN, workdir)) as runner:
        result = runner.query(query_text("entity_facts"), {"name": ox.Literal("霸王别姬", language="zh")}, timeout=30)
    for row in result.rows:
        console.print(f"  {term_text(row['relation'])}: {term_text(row['value'])}")


def step_crawl(workdir: Path) -> None:
    console.print("[bold]crawl[/] a Douban-shaped demo site served on 127.0.0.1, then build the film domain from it")
    result = demo_crawl(workdir)
    counts = result["crawl"]
    show_mapping("crawl douban_movie", {k: v for k, v in counts.items() if isinstance(v, int)})
    show_mapping("build film --source crawl:douban_movie", {"quads": result["build"]["total_quads"]})


def step_wikidata(workdir: Path) -> None:
    from kgforge.linking import link_domain, start_entity_names
    from kgforge.wikidata.demo import write_demo_dump
    from kgforge.wikidata.domain_import import import_into_domain

    dump = write_demo_dump(workdir / "demo-wikidata.json.bz2")
    console.print(f"[bold]import wikidata[/] {dump} seeded with the demo's film names, 1 hop")
    options = {"seed_names": start_entity_names(DOMAIN, workdir), "hops": 1}
    result = import_into_domain(DOMAIN, "wikidata", dump, options, workdir, show_progress=True)
    show_mapping("wikidata", {"quads": result["source"]["quads"], "store quads": result["total_quads"]})
    report = link_domain(DOMAIN, workdir)
    show_mapping("link (owl:sameAs by zh/en label with type checks)",
                 {k: v for k, v in report.items() if isinstance(v, int)})


def step_embed(workdir: Path) -> None:
    from kgforge.embed import EmbedConfig, embed
    from kgforge.related import related

    summary = embed(DOMAIN, workdir, EmbedConfig(model="RotatE", dim=32, epochs=60), progress=True)
    evaluation = summary["evaluation"]
    show_mapping(f"embed RotatE ({evaluation['label']}, {evaluation['triples']} test triples)",
                 {k: evaluation[k] for k in ("mrr", "hits_at_1", "hits_at_10")})
    answer = related(DOMAIN, "霸王别姬", workdir, k=5)
    console.print("[bold]related[/] 霸王别姬: " + ", ".join(str(r["label"]) for r in answer["results"]))


def step_derive(workdir: Path) -> None:
    from kgforge.derive import derive

    report = derive(DOMAIN, workdir)
    show_mapping("derive: associated two-hop triples", {"pairs": report["pairs"], "quads": report["quads"]})
    for name, counts in sorted(report["relations"].items(), key=lambda kv: -kv[1]["pairs"])[:5]:
        console.print(f"  {name}: {counts['pairs']} pairs")


def step_goals(workdir: Path) -> None:
    from kgforge.goals import GoalOptions, generate

    out = workdir / DOMAIN / "exports" / "goals.jsonl"
    report = generate(DOMAIN, GoalOptions(n=20, seed=0), out, workdir)
    show_mapping(f"goals → {out}", {"goals": report["goals"], **report["kinds"]})
    first = json.loads(out.read_text(encoding="utf-8").splitlines()[0])
    console.print("  first goal: " + json.dumps(first.get("goal", first.get("path")), ensure_ascii=False))


def step_export(workdir: Path) -> None:
    from kgforge.exports import ExportOptions, export_goals

    goals = workdir / DOMAIN / "exports" / "goals.jsonl"
    out = workdir / DOMAIN / "exports" / "test.duconv.jsonl"
    report = export_goals(DOMAIN, goals, ExportOptions(fmt="duconv", layout="sample", add_related="default"), out,
                          workdir)
    show_mapping(f"export new goals as DuConv test samples → {out}",
                 {k: v for k, v in report.items() if isinstance(v, int)})
    console.print("  first line: " + out.read_text(encoding="utf-8").splitlines()[0][:300] + " …")


STEPS: list[tuple[str, Callable[[Path], None]]] = [
    ("build", step_build),
    ("stats", step_stats),
    ("query", step_query),
    ("crawl", step_crawl),
    ("wikidata", step_wikidata),
    ("derive", step_derive),
    ("goals", step_goals),
    ("embed", step_embed),
    ("export", step_export),
]


def run_demo(workdir: Path) -> None:
    for name, step in STEPS:
        console.rule(f"[bold]{name}")
        step(workdir)
    console.rule()
    console.print(f"demo finished; the store and every output are under {workdir / DOMAIN}")
