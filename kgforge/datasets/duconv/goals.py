"""DuConv's goal style: one-step and two-step goals between two topics."""

from __future__ import annotations

from typing import Any

from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions
from kgforge.goals.record import Goal
from kgforge.goals.styles import require_topics, sample_one_step, sample_two_step


@STYLES.register("duconv", description="DuConv one-step and two-step goals (--one-step-ratio)")
def duconv_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None) -> list[Goal]:
    """``--one-step-ratio`` of one-step goals, the rest two-step; what one-step cannot fill goes to two-step
    (unless the ratio is 1: only one-step goals were asked for)."""
    require_topics(graph)
    taken: set[str] = set()
    goals = sample_one_step(graph, round(options.n * options.one_step_ratio), options.seed, taken, options.topics)
    if options.n > len(goals) and options.one_step_ratio < 1:
        goals += sample_two_step(graph, options.n - len(goals), options.seed, taken, options.topics)
    return goals
