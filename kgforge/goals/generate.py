"""`kgforge goals`: conversation goals sampled from a built domain, and real goals checked against it.

Goal kinds, each defined by a query in ``queries/`` and sampled here column-wise with polars:

* ``one_step`` — DuConv ``[["START", A, B], [A, r, B]]`` (or ``[B, r, A]``): an entity-valued fact
  (``goal_one_step.rq``);
* ``two_step`` — DuConv ``[["START", A, B], [A, r, X], [B, r, X]]``: an associated pair from
  ``kgforge derive`` (``associated_pairs.rq``; by definition ``goal_two_step.rq``);
* ``path`` — KdConv-style transitions T1 -r1- T2 -r2- T3 over 1–3 hops (``transition_{k}hop.rq``);
* ``sequence`` — DuRecDial-style goal sequences 问答(star) → 关于明星的聊天(star) → 电影推荐(film) → 再见
  over topics a user profile likes.

Sampling is reproducible for a seed (the candidate frames are sorted before seeded random keys are
drawn), has no duplicate topic pair, never orders the whole graph at random in SPARQL, and is
stratified by relation: every relation gets an equal share, and what a small relation cannot fill
goes to the others.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge.core.gc_pause import paused_gc
from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions
from kgforge.goals.record import Goal, write_goals
from kgforge.core.errors import KgforgeError
from kgforge.goals.styles import read_profiles, shortfall
from kgforge.store.layout import (
    domain_paths,
)

# ---------------------------------------------------------------- sampling entry point


def sample_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None = None
                 ) -> list[Goal]:
    return STYLES.get(options.style)(graph, options, profiles)


def mixed_report(graph: GoalGraph) -> dict[str, Any]:
    """The names the goals had to write in another language than the graph's (none of its own on the chain
    of kgforge.store.languages), so that no goal file mixes languages unsaid."""
    return {"language": graph.language, "mixed_count": len(graph.mixed),
            "mixed": dict(sorted(graph.mixed.items())[:50])}


def generate(domain: str, options: GoalOptions, out: Path, workdir: Path | str | None = None,
             profiles_file: Path | None = None) -> dict[str, Any]:
    paths = domain_paths(domain, workdir)
    out = paths.output(out)
    graph = GoalGraph.load(paths, options.language)
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
        rel = graph.label(goal.path[0]["p"])
        relations[rel] = relations.get(rel, 0) + 1
        for t in goal.topic_types or ():
            types[str(t)] = types.get(str(t), 0) + 1
    return {"domain": domain, "out": str(out), "goals": written, "requested": options.n,
            "shortfall": shortfall(kinds, options, graph),
            "seed": options.seed, "style": options.style, "kinds": kinds,
            "relations": dict(sorted(relations.items(), key=lambda kv: -kv[1])), "topic_types": types,
            "build_id": graph.build_id, "labels": mixed_report(graph)} | (
            {"profiles": len(profiles), "profiles_unreadable": unreadable} if profiles is not None else {})

