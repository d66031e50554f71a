"""DuRecDial's goal style: goal sequences drawn from real sessions' goal-type transitions, with a user profile and
a situation."""

from __future__ import annotations

from typing import Any

from kgforge.core.errors import ArgumentError
from kgforge.datasets.durecdial.goal_types import GoalTransitions
from kgforge.datasets.durecdial.sequences import Material, SequenceSummary, Template, sample_durecdial, summary
from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions
from kgforge.goals.record import Goal


def sequence_summary(graph: GoalGraph, options: GoalOptions, goals: list[Goal]) -> SequenceSummary:
    """The goals report's figures of the sequences drawn: goal types, transitions used, what could not be drawn."""
    return summary(goals, GoalTransitions.load(options.transitions), Material.of(graph).missing())


@STYLES.register(
    "durecdial",
    description="DuRecDial goal sequences drawn from real sessions' goal-type transitions, "
    "with a user profile and a situation",
    summary=sequence_summary,
    distinct="sequence of goal types and topics",
)
def durecdial_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None) -> list[Goal]:
    if profiles and options.topics:
        raise ArgumentError("--topic", "--profiles already choose the star each sequence is about: give one of them")
    transitions = GoalTransitions.load(options.transitions)
    template = Template.read(options.profile_template)
    return sample_durecdial(graph, options.n, options.seed, transitions, profiles, template, options.topics)
