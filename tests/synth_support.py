"""Shared pieces of the synth tests: the three seed domains built from the shared samples with goals made by
`kgforge goals`, the scripted chat server (benchmarks/scripted_llm.py), and independent checks of what a run
released: every fact the graph holds as a sentence the scripted model would say, and the turns of an output."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from benchmarks.scripted_llm import bare
from kgforge import Domain
from tests.conftest import run_cli, shared_file

STYLE_DOMAINS = {"duconv": "duconv", "kdconv": "travel", "durecdial": "durecdial"}


@dataclass(frozen=True)
class Seed:
    """A domain built from a shared sample, with goals of its style."""

    workdir: Path
    domain: str
    style: str
    goals: Path


def build_seed(root: Path, style: str, n: int = 40) -> Seed:
    workdir = root / "kg"
    domain = STYLE_DOMAINS[style]
    source = {
        "duconv": f"duconv:{shared_file('duconv/dev.head250.jsonl')}",
        "kdconv": f"kdconv:{shared_file('kdconv/travel/kb_travel.json')}",
        "durecdial": f"durecdial:{shared_file('durecdial/lic2020_baseline_resource_dev.txt')}",
    }[style]
    run_cli("build", domain, "--source", source, "--workdir", str(workdir))
    if style == "duconv":
        run_cli("derive", domain, "--workdir", str(workdir))
    goals = root / f"{style}.goals.jsonl"
    run_cli("goals", domain, "--style", style, "--n", str(n), "--out", str(goals), "--workdir", str(workdir))
    return Seed(workdir, domain, style, goals)


def released_turns(path: Path, style: str) -> list[list[str]]:
    """Each released dialogue's turns as said (DuRecDial's ``[k]`` and DuConv's word cuts taken out)."""
    text = path.read_text(encoding="utf-8")
    if style == "kdconv":
        return [[bare(m["message"]) for m in d["messages"]] for d in json.loads(text)]
    sessions = [json.loads(line) for line in text.splitlines()]
    return [[re.sub(r"^\[\d+\]", "", bare(u)) for u in s["conversation"]] for s in sessions]


def true_sentences(workdir: Path, domain: str) -> set[str]:
    """``{head}的{relation}是{tail}。`` for every fact of the graph, under every name of head and tail: a planted
    value that the graph happens to hold is no wrong value."""
    tables = Domain(domain, workdir).tables()
    names = tables.labels.select("iri", "label").group_by("iri").agg("label")
    relations = tables.relations.select(p="iri", relation=pl.coalesce("zh", "en", "iri"))
    facts = tables.facts.join(relations, on="p").join(names.rename({"iri": "s", "label": "heads"}), on="s")
    facts = facts.join(names.rename({"iri": "o", "label": "tails"}), on="o", how="left")
    out = set()
    for heads, relation, tails, value in facts.select("heads", "relation", "tails", "o").iter_rows():
        for head in heads:
            for tail in tails or [value]:
                out.add(f"{bare(head)}的{bare(relation)}是{bare(tail)}。".replace(" ", ""))
    return out
