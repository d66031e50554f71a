"""DuRecDial's corpus statistics: sub-dialogues and their goal types, recommendations, the users' accepted and
rejected items."""

from __future__ import annotations

from collections import Counter

from kgforge.corpus.stats import (
    ACCEPTED,
    REJECTED,
    STATISTICS,
    RecommendationFigures,
    mean,
    profile_entries,
    sub_dialogue_types,
)
from kgforge.exports.model import SourceDialogue


def recommendation_figures(dialogues: list[SourceDialogue]) -> RecommendationFigures:
    goals = [sub_dialogue_types(d.record) for d in dialogues]
    types = Counter(t for g in goals for t in g)
    profiles = [d.record["user_profile"] for d in dialogues if isinstance(d.record.get("user_profile"), dict)]
    n = len(dialogues)
    return RecommendationFigures(
        knowledge_per_dialogue=mean(sum(len(d.gold) for d in dialogues), n),
        sub_dialogues=sum(len(g) for g in goals),
        sub_dialogues_per_dialogue=mean(sum(len(g) for g in goals), n),
        goal_types=dict(types.most_common()),
        recommended=sum(n for t, n in types.items() if t.endswith("推荐") or t.lower().endswith("recommendation"))
        if types
        else None,
        accepted=profile_entries(profiles, ACCEPTED) if profiles else None,
        rejected=profile_entries(profiles, REJECTED) if profiles else None,
    )


STATISTICS.register(
    "durecdial",
    recommendation_figures,
    description="DuRecDial: sub-dialogues, goal types, recommendations",
    kinds=("durecdial", "durecdial2"),
    field="durecdial",
)
