"""What the server runs of the pipeline's stages for one published build: its graph tables (a build pruned
mid-read is reported as moved), the SERVICE and update checks of a query, goal sampling around one topic,
the export's subgraph of those goals, and related entities from an embedding bundle."""

from __future__ import annotations

import json
import re
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError, StoreMissingError
from kgforge.core.resources import query_dirs
from kgforge.derive import PAIR_NODE
from kgforge.exports import ExportOptions, export_goals
from kgforge.goals.generate import sample_goals
from kgforge.goals.graph import GoalGraph, GoalOptions
from kgforge.goals.record import Goal, write_goals
from kgforge.store.layout import DomainPaths
from kgforge.store.query import uses_service
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables

__all__ = [
    "VersionMoved",
    "goal_graph",
    "goal_subgraphs",
    "has_related_model",
    "has_service_clause",
    "is_update",
    "related_entities",
    "sample_topic_goals",
    "shipped_queries",
    "tables_of",
    "topic_goal_kinds",
]


class VersionMoved(KgforgeError):
    """The build whose tables were being read was removed meanwhile (two rebuilds within one read)."""


def tables_of(snapshot: Snapshot) -> GraphTables:
    """The graph tables (derived graphs included) of the snapshot's build: its own quads files, whatever is
    published meanwhile. A build pruned during the read is reported as moved, so the request retries on the
    new one."""
    try:
        return snapshot.tables(include_derived=True)
    except (OSError, StoreMissingError) as exc:
        if snapshot.store_dir.is_dir():
            raise
        raise VersionMoved(f"{snapshot.build_id} was removed while its tables were read: {exc}") from None


def has_service_clause(text: str) -> bool:
    """``kgforge query``'s SERVICE check (a parse), after a cheap look for the word: Oxigraph reads the
    keyword only as written (no ``\\u`` escapes outside strings and IRIs), so a query without the
    letters ``service`` in any case has no SERVICE clause, and most queries are never parsed twice."""
    return _SERVICE_LETTERS.search(text) is not None and uses_service(text)


_SERVICE_LETTERS = re.compile("service", re.IGNORECASE)


def is_update(text: str) -> bool:
    """Whether ``text`` parses as a SPARQL update (rdflib's parser; nothing is executed)."""
    from pyparsing import ParseBaseException
    from rdflib.plugins.sparql.parser import parseUpdate

    try:
        parseUpdate(text)
    except (ParseBaseException, RecursionError, ValueError):
        return False
    return True


def shipped_queries() -> dict[str, str]:
    """The ``queries/*.rq`` files, name → text, first folder first (as ``kgforge query --file`` finds them)."""
    found: dict[str, str] = {}
    for folder in query_dirs():
        for path in sorted(folder.glob("*.rq")):
            found.setdefault(path.stem, path.read_text(encoding="utf-8"))
    return found


# ---------------------------------------------------------------- goals and the export's subgraph


def goal_graph(snapshot: Snapshot) -> GoalGraph:
    """The goal material of the snapshot's build: read once per build served."""
    return GoalGraph.load(snapshot)


def sample_topic_goals(graph: GoalGraph, topic: str, n: int, seed: int) -> list[Goal]:
    """Up to ``n`` DuConv-style goals with ``topic`` as one of the two topics, half one-step and half
    two-step as ``kgforge goals`` samples them, by its own sampler over the facts that involve the topic;
    one-step only when no associated pair names the topic (``kgforge derive`` has not run, or found none
    for it): the fallback ``kgforge goals --one-step-ratio 1`` would take. Which entities may be topics
    (enough facts, typed, not a class) is judged on the whole ``graph``, as ``kgforge goals`` judges it.
    No fact involving ``topic``: no goal (the explorer answers 404 before asking)."""
    tables = _topic_tables(graph.tables, topic)
    if tables.facts.is_empty():
        return []
    graph = replace(graph, tables=tables)
    pairs = _has_pairs(tables)
    try:
        options = GoalOptions(n=n, seed=seed) if pairs else GoalOptions(n=n, seed=seed, one_step_ratio=1.0)
        return sample_goals(graph, options)
    except KgforgeError:  # the pairs it has were all filtered out (stop relations, not topics): one-step then
        return sample_goals(graph, GoalOptions(n=n, seed=seed, one_step_ratio=1.0))


def topic_goal_kinds(tables: GraphTables, topic: str) -> tuple[bool, bool]:
    """Whether the graph holds ``topic`` at all (a fact or a label), and whether an associated pair
    (``kgforge derive``) names it, so two-step goals can be sampled for it."""
    involved = _topic_tables(tables, topic)
    held = not involved.facts.is_empty() or not tables.labels.filter(pl.col("iri") == topic).is_empty()
    return held, _has_pairs(involved)


def _has_pairs(tables: GraphTables) -> bool:
    return not tables.facts.filter(pl.col("s").str.starts_with(PAIR_NODE)).is_empty()


def _topic_tables(tables: GraphTables, topic: str) -> GraphTables:
    """``tables`` with only the facts that involve ``topic``: its own, those pointing at it, and the
    associated-pair nodes naming it (so the sampler's candidates all have ``topic`` as a topic)."""
    facts = tables.facts
    pair_nodes = facts.filter(pl.col("s").str.starts_with(PAIR_NODE), pl.col("o") == topic)["s"]
    involved = facts.filter((pl.col("s") == topic) | (pl.col("o") == topic) | pl.col("s").is_in(pair_nodes.implode()))
    return GraphTables(facts=involved, labels=tables.labels, types=tables.types, relations=tables.relations)


def goal_subgraphs(snapshot: Snapshot, tables: GraphTables, goals: list[Goal]) -> list[dict[str, Any]]:
    """What ``kgforge export --format jsonl`` writes for ``goals``: one record per goal, its path and every
    triple of its subgraph with labels, role and source graph. The export itself runs (into a temporary
    folder), so the view shows exactly what an export would write."""
    with tempfile.TemporaryDirectory(prefix="kgforge-serve-") as folder:
        goals_file, out = Path(folder) / "goals.jsonl", Path(folder) / "subgraphs.jsonl"
        write_goals(goals, goals_file)
        export_goals(snapshot, goals_file, ExportOptions(fmt="jsonl", skip_invalid=True), out, tables=tables)
        return [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]


# ---------------------------------------------------------------- related entities (kgforge embed)


def has_related_model(paths: DomainPaths, model: str = "default") -> bool:
    return (paths.models / model / "bundle.json").is_file()


def related_entities(
    paths: DomainPaths, iri: str, k: int = 10, model: str = "default"
) -> list[tuple[str, str | None, float]]:
    """[(iri, label, score)] nearest to ``iri`` in the domain's embedding bundle. torch is imported here,
    on first use, so a server whose domain has no bundle never loads it."""
    # lazy: torch, loaded on demand
    from kgforge.embed.related import top_related

    return top_related(paths, iri, k=k, model=model)
