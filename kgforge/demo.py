"""`kgforge demo`: every stage of the pipeline on the bundled offline demo domain.

The demo domain (``schemas/demo.toml``) is a small film knowledge base in KdConv's
``kb_<domain>.json`` format that ships with kgforge, so the demo needs no network and no data.
"""

from __future__ import annotations

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


STEPS: list[tuple[str, Callable[[Path], None]]] = [
    ("build", step_build),
    ("stats", step_stats),
    ("query", step_query),
    ("crawl", step_crawl),
    ("wikidata", step_wikidata),
    ("embed", step_embed),
]


def run_demo(workdir: Path) -> None:
    for name, step in STEPS:
        console.rule(f"[bold]{name}")
        step(workdir)
    console.rule()
    console.print(f"demo finished; the store and every output are under {workdir / DOMAIN}")
