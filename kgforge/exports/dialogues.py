"""Subgraphs of existing KdConv dialogues, retrieved from the graph (not copied from gold ``attrs``).

A dialogue's topics are its start ``name`` and every entity its utterances mention (an exact name
match, Aho-Corasick over all entity labels, names shorter than two characters left out). Each topic
brings its facts; each fact is attached to the message that first names its topic, so a message's
``attrs`` are the knowledge retrievable at that turn. ``attr_coverage`` says how much of the gold
annotation the retrieval holds: the share of the dialogues' annotated ``attrs`` triples found in
their exported subgraphs (annotated triples that are not in the graph at all are also counted apart).
KdConv names are matched as written (NFC and trimmed only).
"""

from __future__ import annotations

import hashlib
import time
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.gc_pause import paused_gc
from kgforge.core.jsonio import iter_json_container
from kgforge.core.text import normalise_label
from kgforge.exports import (
    PATH_SCHEMA,
    TOPIC_SCHEMA,
    Context,
    ExportOptions,
    _assemble,
    _finish,
)
from kgforge.exports.subgraph import SubgraphOptions
from kgforge.goals.graph import EntityIndex

MIN_NAME_CHARS = 2
ALL_FACTS = 10**6


def read_kdconv_dialogues(path: Path) -> list[dict[str, Any]]:
    """The dialogues of a KdConv ``{train,dev,test}.json``; a malformed one is an error with its line."""
    dialogues = []
    for record in iter_json_container(path, list):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        value = record.value
        if not (isinstance(value, dict) and isinstance(value.get("messages"), list)
                and all(isinstance(m, dict) and isinstance(m.get("message", ""), str) for m in value["messages"])):
            raise InputError(f"{path}:{record.line}: not a KdConv dialogue (needs 'name' and a 'messages' list "
                             "of objects with a 'message' string)")
        dialogues.append(dict(value, _line=record.line))
    if not dialogues:
        raise InputError(f"{path}: no dialogue in the file")
    return dialogues


def dialogue_ids(dialogues: list[dict[str, Any]], prefix: str = "kdconv") -> list[str]:
    """Stable ids from each dialogue's content; a repeated dialogue gets ``-2``, ``-3``, …"""
    ids, seen = [], {}
    for d in dialogues:
        text = "\x1e".join([str(d.get("name", ""))] + [m.get("message", "") for m in d["messages"]])
        base = f"{prefix}-" + hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


class Mentions:
    """Finds the entities a text names, by exact match of their (unsegmented) labels."""

    def __init__(self, index: EntityIndex) -> None:
        self.index = index
        self.patterns = sorted(name for name in index.names if len(name) >= MIN_NAME_CHARS)

    def find(self, texts: list[str]) -> list[list[str]]:
        if not self.patterns:
            return [[] for _ in texts]
        found = pl.Series(texts, dtype=pl.String).str.extract_many(self.patterns, overlapping=True).to_list()
        out = []
        for names in found:
            iris: list[str] = []
            for name in names or []:
                for iri in self.index.lookup(name):
                    if iri not in iris:
                        iris.append(iri)
            out.append(iris)
        return out


def gold_attrs(dialogue: dict[str, Any]) -> list[tuple[str, str, str]]:
    triples = []
    for message in dialogue["messages"]:
        for attr in message.get("attrs") or []:
            if isinstance(attr, dict) and all(isinstance(attr.get(k), str) for k in ("name", "attrname", "attrvalue")):
                triples.append((attr["name"], attr["attrname"], attr["attrvalue"]))
    return list(dict.fromkeys(triples))


@paused_gc()
def export_dialogues(domain: str, dialogues_file: Path, options: ExportOptions, out: Path,
                     workdir: Path | str | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    if options.fmt not in ("kdconv", "jsonl", "parquet"):
        raise KgforgeError(f"--dialogues exports KdConv dialogues as kdconv, jsonl or parquet, not {options.fmt!r}")
    ctx = Context.open(domain, workdir, options.language)
    dialogues = read_kdconv_dialogues(dialogues_file)
    ids = dialogue_ids(dialogues)
    index = EntityIndex.from_tables(ctx.tables, segmented=False)
    mentions = Mentions(index)
    topic_rows, messages = [], {}
    for i, d in enumerate(dialogues):
        found = mentions.find([m.get("message", "") for m in d["messages"]])
        start = index.lookup(str(d.get("name", "")))
        found[0] = list(dict.fromkeys(start + (found[0] if found else [])))
        ordered = list(dict.fromkeys(iri for names in found for iri in names))
        topic_rows += [(i, pos, iri) for pos, iri in enumerate(ordered)]
        messages[i] = [{"message": m.get("message", ""), "topics": names} for m, names in zip(d["messages"], found)]
    topics = pl.DataFrame(topic_rows, schema=TOPIC_SCHEMA, orient="row")
    budget = ALL_FACTS if options.budget is None else options.budget
    meta = {i: {"kind": "kdconv-dialogue"} for i in range(len(dialogues))}
    exported, checks = _assemble(ctx, topics, pl.DataFrame(schema=PATH_SCHEMA), ids, meta,
                                 SubgraphOptions(budget, options.include_text), options, messages)
    coverage = attr_coverage(ctx, dialogues, ids, exported)
    extra = {"dialogues_file": str(dialogues_file), "dialogues_in_file": len(dialogues),
             "topics_per_dialogue": round(topics.height / len(dialogues), 2), **coverage}
    return _finish(ctx, exported, checks, options, out, extra, started)


def attr_coverage(ctx: Context, dialogues: list[dict[str, Any]], ids: list[str], exported: list) -> dict[str, Any]:
    """Share of the gold ``attrs`` triples present in each dialogue's exported subgraph."""
    by_id = {d.dialogue_id: d for d in exported}
    facts = ctx.tables.facts
    known = set(zip(facts["s"].to_list(), facts["p"].to_list(), facts["o"].to_list()))
    index = EntityIndex.from_tables(ctx.tables, segmented=False)
    total = covered = absent = 0
    for dialogue, dialogue_id in zip(dialogues, ids):
        exported_dialogue = by_id.get(dialogue_id)
        have = {(t["s"], t["p"], t["o"]) for t in exported_dialogue.triples} if exported_dialogue else set()
        for name, attrname, value in gold_attrs(dialogue):
            total += 1
            keys = _attr_keys(ctx, index, name, attrname, value)
            covered += any(k in have for k in keys)
            absent += not any(k in known for k in keys)
    return {"attrs": total, "attrs_covered": covered, "attrs_not_in_graph": absent,
            "attr_coverage": round(covered / total, 4) if total else None,
            "attr_coverage_of_attrs_in_graph": round(covered / (total - absent), 4) if total > absent else None}


def _attr_keys(ctx: Context, index: EntityIndex, name: str, attrname: str, value: str) -> list[tuple[str, str, str]]:
    p = ctx.schema.relation_for(attrname).iri
    objects = index.lookup(value) + [value, normalise_label(value, segmented=False)]
    return [(s, p, o) for s in index.lookup(name) for o in objects]
