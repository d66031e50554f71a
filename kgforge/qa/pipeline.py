"""The qa stage's library functions, one per command: F(t), G(t, preds), LLM templates, generation."""

from __future__ import annotations

import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record
from kgforge.llm import LLMClient, LLMReport, LLMSettings
from kgforge.qa.generate import GenerateOptions, Material, Partners, QAGenerateReport, generate
from kgforge.qa.graph import QAGraph
from kgforge.qa.predicates import TypePredicates, predicate_table, predicates_report, together
from kgforge.qa.prompts import (
    MAX_PREDICATES_PER_CALL,
    keep_check,
    selection_messages,
    template_messages,
    templates_check,
)
from kgforge.qa.select import (
    SelectorOptions,
    TypeSelection,
    read_selection,
    regroup,
    statistical_selection,
    write_selection,
)
from kgforge.qa.templates import (
    ANY,
    bundled_template_text,
    check_template,
    load_templates,
    template_entries_toml,
)
from kgforge.store.layout import DomainPaths
from kgforge.store.snapshot import Snapshot

# Reasons of the statistical selector that an LLM may overrule (the others are never questions).
_JUDGEMENT_CALLS = ("kept", "coverage", "score", "beyond")


def qa_client(llm: LLMSettings, paths: DomainPaths) -> LLMClient:
    """A client caching in ``raw/llm-cache`` and quarantining in ``quarantine/qa-llm.jsonl`` of the domain."""
    return llm.client_at(paths.raw / "llm-cache", Quarantine(paths.quarantine / "qa-llm.jsonl"))


def open_graph(snapshot: Snapshot, language: str | None = None) -> QAGraph:
    return QAGraph.load(snapshot, language)


@dataclass(frozen=True)
class QAPredicatesReport(Record):
    """F(t) (``kgforge qa predicates``): per type id its label, entity count and predicates, each with coverage,
    specificity, diversity and how it is asked."""

    domain: str
    language: str
    types: dict[str, TypePredicates]  # type id -> label, entities, predicates


@dataclass(frozen=True)
class QASelectionReport(Record):
    """The selection file written by ``kgforge qa select``: per type how many predicates were kept, of how
    many, grouped how and chosen by which selector."""

    domain: str
    out: str
    language: str
    types: dict[str, dict[str, Any]]  # type id -> selected, of, groups, selector
    llm: LLMReport | None  # endpoint, model, calls, cache hits, rejected replies (None: statistical)


@dataclass(frozen=True)
class QATemplatesReport(Record):
    """The template file written by ``kgforge qa templates``."""

    domain: str
    out: str
    pairs: int  # (type, predicate) pairs the model was asked about
    entries: int  # template entries that passed the checks
    templates_refused: int  # templates refused (in the quarantine file)
    llm: LLMReport  # endpoint, model, calls, cache hits, rejected replies


def predicates(snapshot: Snapshot, language: str | None = None) -> QAPredicatesReport:
    """F(t) of every type of ``snapshot``'s build, with each predicate's numbers."""
    graph = open_graph(snapshot, language)
    return QAPredicatesReport(snapshot.domain, graph.language, predicates_report(predicate_table(graph)))


def select_predicates(
    graph: QAGraph, options: SelectorOptions | None = None, llm: LLMClient | None = None
) -> dict[str, TypeSelection]:
    """G(t, preds) for every type: statistical, then (with ``llm``) judged by the model, at most
    ``MAX_PREDICATES_PER_CALL`` predicates a call; a bad reply keeps the statistical choice."""
    options = options or SelectorOptions()
    table = predicate_table(graph)
    share = partial(together, graph)
    selections = statistical_selection(table, graph.type_predicates, graph.language, share, options)
    if llm is None:
        return selections
    examples = dict(zip(zip(table["type"].to_list(), table["predicate"].to_list()), table["example"].to_list()))
    for type_id, chosen in selections.items():
        open_to_judgement = [p for p in chosen.predicates if p["reason"].startswith(_JUDGEMENT_CALLS)]
        for start in range(0, len(open_to_judgement), MAX_PREDICATES_PER_CALL):
            chunk = [
                (f"p{i + 1}", {**p, "example": examples.get((type_id, p["predicate"]))})
                for i, p in enumerate(open_to_judgement[start : start + MAX_PREDICATES_PER_CALL])
            ]
            keep = llm.ask(
                selection_messages(chosen.label, graph.language, chunk),
                keep_check({k for k, _ in chunk}),
                f"select {type_id} predicates {start + 1}-{start + len(chunk)}",
            )
            for key, offered in chunk:
                target = next(p for p in chosen.predicates if p["predicate"] == offered["predicate"])
                if keep is None:
                    target["reason"] += " (LLM reply quarantined: statistical choice kept)"
                else:
                    target["selected"] = key in keep
                    target["reason"] = "LLM kept" if key in keep else "LLM dropped"
        chosen.selector = "llm"
    regroup(selections, share, options.group_together)
    return selections


def select(
    snapshot: Snapshot,
    out: Path,
    language: str | None = None,
    options: SelectorOptions | None = None,
    llm: LLMSettings | None = None,
) -> QASelectionReport:
    """Write the selection file of ``snapshot``'s build (edit it, then pass it to ``generate`` with
    ``selection``)."""
    domain = snapshot.domain
    graph = open_graph(snapshot, language)
    target = graph.paths.output(out)
    client = qa_client(llm, graph.paths) if llm else None
    try:
        selections = select_predicates(graph, options, client)
    finally:
        if client is not None:
            client.close()
    write_selection(target, domain, graph.language, selections)
    return QASelectionReport(
        domain=domain,
        out=str(target),
        language=graph.language,
        types={
            t: {"selected": len(s.selected), "of": len(s.predicates), "groups": s.groups, "selector": s.selector}
            for t, s in selections.items()
        },
        llm=client.stats() if client else None,
    )


def llm_templates(
    snapshot: Snapshot,
    out: Path,
    llm: LLMSettings,
    language: str | None = None,
    selection: Path | None = None,
    limit: int = 50,
) -> QATemplatesReport:
    """A template file: the bundled set plus, for up to ``limit`` selected (type, predicate) pairs of
    ``snapshot``'s build, the model's templates that pass the checks (placeholders, no answer given away)."""
    graph = open_graph(snapshot, language)
    target = graph.paths.output(out)
    selections = read_selection(selection) if selection else select_predicates(graph)
    client = qa_client(llm, graph.paths)
    entries, rejected = [], 0
    pairs = [(t, p["predicate"], p["label"]) for t, s in selections.items() for p in s.predicates if p["selected"]]
    try:
        for type_id, predicate, label in pairs[:limit]:
            reply = client.ask(
                template_messages(graph.type_label(type_id), label, graph.language),
                templates_check,
                f"templates {type_id} {predicate}",
            )
            if reply is None:
                continue
            answers = graph.facts.filter(pl.col("type") == type_id, pl.col("p") == predicate).select("o_text").unique()
            for interaction, by_reference in reply.items():
                for reference, texts in by_reference.items():
                    good = []
                    for text in texts:
                        problem = _template_problem(text, reference, answers)
                        if problem is None:
                            good.append(text)
                            continue
                        rejected += 1
                        client.reject(f"templates {type_id} {predicate}", f"template refused: {problem}", text)
                    if good:
                        entries.append(
                            {
                                "kind": "simple",
                                "interaction": interaction,
                                "reference": reference,
                                "type": type_id,
                                "predicate": predicate,
                                "texts": good,
                            }
                        )
    finally:
        client.close()
    text = (
        bundled_template_text(graph.language) + "\n# ---------------------------------------------------------------- "
        f"written by {llm.model} (kgforge qa templates), checked\n\n"
        + (template_entries_toml(entries) if entries else "")
    )
    with target.part() as part:
        part.write_text(text, encoding="utf-8")
        load_templates(part)  # the file must load as it will be used
    return QATemplatesReport(
        domain=snapshot.domain,
        out=str(target),
        pairs=len(pairs[:limit]),
        entries=len(entries),
        templates_refused=rejected,
        llm=client.stats(),
    )


def _template_problem(text: str, reference: str, answers: pl.DataFrame) -> str | None:
    """Why a model's template cannot be used: the file checks, or one of the predicate's answers (of two
    characters or more) written into it."""
    problem = check_template(text, "simple", reference, ANY if "{predicate}" in text else "specific")
    if problem:
        return problem
    leaked = answers.filter(
        pl.col("o_text").str.len_chars() >= 2, pl.lit(text).str.contains(pl.col("o_text"), literal=True)
    )
    return f"gives an answer away ({leaked['o_text'][0]!r})" if leaked.height else None


def embedding_partners(paths: DomainPaths, model: str) -> Partners:
    """Each seed's related entity from the model bundle ``models/<model>`` (see kgforge.qa.related)."""

    def partners(seeds: list[str], candidates: list[str]) -> dict[str, str]:
        # lazy: loads torch; only --related pays for it
        from kgforge.qa.related import most_similar

        return most_similar(paths, model, seeds, candidates)

    return partners


def generate_dataset(
    snapshot: Snapshot,
    out: Path,
    options: GenerateOptions,
    language: str | None = None,
    selection: Path | None = None,
    templates: Path | None = None,
    convquestions: Path | None = None,
) -> QAGenerateReport:
    """``kgforge qa generate``: read ``snapshot``'s graph, select (or read the selection), spin and write."""
    started = time.perf_counter()
    graph = open_graph(snapshot, language)
    target = graph.paths.output(out)
    conv_target = graph.paths.output(convquestions, what="--convquestions") if convquestions else None
    manifest = target.sidecar(".manifest.json")
    template_set = load_templates(templates, graph.language)
    read = time.perf_counter()
    selections = read_selection(selection) if selection else select_predicates(graph)
    selected = time.perf_counter()
    unknown = sorted(set(selections) - set(graph.entity_types["type"].unique().to_list()))
    if len(unknown) == len(selections):
        raise KgforgeError(
            f"the selection names none of the domain's types ({', '.join(unknown[:5])}): was it "
            f"written for another domain?"
        )
    material = Material(graph, {t: s for t, s in selections.items() if t not in unknown}, template_set)
    partners = embedding_partners(graph.paths, options.model) if options.related else None
    spun = generate(material, options, target, conv_target, partners)
    # read: the build's tables; select: F(t) and G (typing entities included); then yarns, rendering
    report = replace(
        spun,
        timings={"read_s": round(read - started, 3), "select_s": round(selected - read, 3), **spun.timings},
        seconds_total=round(time.perf_counter() - started, 3),
    )
    manifest.write_json(report.as_dict())
    return report
