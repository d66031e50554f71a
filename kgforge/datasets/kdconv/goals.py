"""KdConv's goal style: transition paths of one to three hops from a topic."""

from __future__ import annotations

from typing import Any

from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions
from kgforge.goals.record import Goal
from kgforge.goals.styles import sample_paths


@STYLES.register("kdconv", description="KdConv-style transition paths over --hops (1-3) hops")
def kdconv_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None) -> list[Goal]:
    return sample_paths(graph, options.n, options.hops, options.seed, set(), options.topics)
