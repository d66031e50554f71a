"""DuRecDial's goal style: goal sequences drawn from real sessions' goal-type transitions, with a user profile and
a situation."""

from __future__ import annotations

from typing import Any

from kgforge.core.errors import ArgumentError
from kgforge.goals.durecdial import GoalTransitions
from kgforge.goals.graph import STYLES, GoalGraph, GoalOptions
from kgforge.goals.record import Goal
from kgforge.goals.sequences import Template, sample_durecdial


@STYLES.register(
    "durecdial",
    description="DuRecDial goal sequences drawn from real sessions' goal-type transitions, "
    "with a user profile and a situation",
)
def durecdial_goals(graph: GoalGraph, options: GoalOptions, profiles: list[dict[str, Any]] | None) -> list[Goal]:
    if profiles and options.topics:
        raise ArgumentError("--topic", "--profiles already choose the star each sequence is about: give one of them")
    transitions = GoalTransitions.load(options.transitions)
    template = Template.read(options.profile_template)
    return sample_durecdial(graph, options.n, options.seed, transitions, profiles, template, options.topics)
