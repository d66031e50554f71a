"""`kgforge goals`: conversation goals sampled from a built domain, and real goals checked against it.

Goal kinds, each defined by a query in ``queries/`` and sampled here column-wise with polars:

* ``one_step`` — DuConv ``[["START", A, B], [A, r, B]]`` (or ``[B, r, A]``): an entity-valued fact
  (``goal_one_step.rq``);
* ``two_step`` — DuConv ``[["START", A, B], [A, r, X], [B, r, X]]``: an associated pair from
  ``kgforge derive`` (``associated_pairs.rq``; by definition ``goal_two_step.rq``);
* ``path`` — KdConv-style transitions T1 -r1- T2 -r2- T3 over 1–3 hops (``transition_{k}hop.rq``);
* ``sequence`` — DuRecDial goal sequences drawn from the goal-type transitions of real sessions, each
  with a user profile and a situation (the style its dataset room registers).

Sampling is reproducible for a seed (the candidate frames are sorted before seeded random keys are
drawn), has no duplicate topic pair, never orders the whole graph at random in SPARQL, and is
stratified by relation: every relation gets an equal share, and what a small relation cannot fill
goes to the others.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.gc_pause import paused_gc
from kgforge.core.output import OutputFile
from kgforge.core.records import Record, flattened_record, omitted_when_none
from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions, resolve_topics, style_summary
from kgforge.goals.record import Goal, write_goals
from kgforge.goals.styles import read_profiles, shortfall
from kgforge.store.snapshot import Snapshot

# ---------------------------------------------------------------- sampling entry point


def sample_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None = None) -> list[Goal]:
    """The style's goals; with ``options.topics`` (IRIs) only those whose first topic is one of them (the built-in
    styles draw only those; a plug-in style's others are left out here)."""
    goals = STYLES.get(options.style)(graph, options, profiles)
    if options.topics:
        goals = [goal for goal in goals if goal.topics and goal.topics[0] in set(options.topics)]
    return goals


@dataclass(frozen=True)
class MixedNames(Record):
    """The names the goals had to write in another language than the graph's (none of its own on the chain
    of kgforge.store.languages), so that no goal file mixes languages unsaid."""

    language: str
    mixed_count: int
    mixed: dict[str, str]  # the first 50: IRI -> the name written

    @classmethod
    def of(cls, graph: GoalGraph) -> MixedNames:
        return cls(graph.language, len(graph.mixed), dict(sorted(graph.mixed.items())[:50]))


@dataclass(frozen=True)
class GoalsReport(Record):
    """What ``kgforge goals`` sampled from one build and wrote."""

    domain: str
    out: Path  # the goals file (JSON lines, one :class:`kgforge.goals.record.Goal` each)
    goals: int  # goals written
    requested: int
    shortfall: tuple[str, ...]  # why the goals differ from what was asked for, one sentence each
    seed: int
    style: str
    kinds: dict[str, int]  # goal kind -> goals
    relations: dict[str, int]  # label of each goal's first relation -> goals, most first
    topic_types: dict[str, int]  # topic type -> topics
    build_id: str  # the build the goals were sampled from
    labels: MixedNames  # the names written in another language than asked
    profiles: int | None = omitted_when_none()  # user profiles read (``--profiles``)
    profiles_unreadable: tuple[dict[str, Any], ...] | None = omitted_when_none()  # {"line", "reason"} each
    topics: dict[str, str] | None = omitted_when_none()  # --topic: each name given -> the entity it stands for
    # what the style says of its goals (its registered ``summary``: goal types drawn, what could not be drawn), its
    # fields at the report's level; None for a style that says nothing
    style_summary: Record | None = flattened_record()


def generate(
    snapshot: Snapshot, options: GoalOptions, out: Path | OutputFile, profiles_file: Path | None = None
) -> GoalsReport:
    domain = snapshot.domain
    out = snapshot.paths.output(out)
    graph = GoalGraph.load(snapshot, options.language)
    asked = resolve_topics(graph, options.topics) if options.topics else None
    options = replace(options, topics=tuple(dict.fromkeys((asked or {}).values())))
    profiles, unreadable = read_profiles(profiles_file) if profiles_file else (None, [])
    with paused_gc():
        goals = sample_goals(graph, options, profiles)
        if not goals:  # an empty file would pass for a result
            why = shortfall({}, options, graph)[:-1] or ["nothing in the graph qualifies"]
            raise KgforgeError(f"no goal could be sampled from {domain!r}: {'; '.join(why)}")
        written = write_goals(goals, out)
    kinds: dict[str, int] = {}
    relations: dict[str, int] = {}
    types: dict[str, int] = {}
    for goal in goals:
        kinds[goal.kind] = kinds.get(goal.kind, 0) + 1
        if goal.path:  # a DuRecDial sequence about one food has no linking fact
            rel = graph.label(goal.path[0].p)
            relations[rel] = relations.get(rel, 0) + 1
        for t in goal.topic_types or ():
            types[str(t)] = types.get(str(t), 0) + 1
    summary = style_summary(graph, options, goals)
    return GoalsReport(
        domain,
        out.path,
        written,
        options.n,
        tuple(shortfall(kinds, options, graph)),
        options.seed,
        options.style,
        kinds,
        dict(sorted(relations.items(), key=lambda kv: -kv[1])),
        types,
        graph.build_id,
        MixedNames.of(graph),
        len(profiles) if profiles is not None else None,
        tuple(unreadable) if profiles is not None else None,
        asked,
        summary,
    )
