"""DuRecDial's corpus statistics: sub-dialogues and their goal types, recommendations, the users' accepted and
rejected items."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from kgforge.corpus.reading import CorpusLayout, register_corpus_layout
from kgforge.corpus.stats import STATISTICS, RecommendationFigures, mean
from kgforge.exports.model import SourceDialogue

LIC_GOAL = re.compile(r"\s*\[(\d+)\]\s*([^(（]*)")  # one '-->' part: "[2] 电影 推荐 ( 『 苏州河 』 )"
ACCEPTED, REJECTED = "接受的", "没有接受的"  # user_profile keys: 接受的电影, 没有接受的音乐, …


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


def sub_dialogue_types(record: dict[str, Any]) -> list[str]:
    """The goal type of each sub-dialogue: a ``[k] type (『topic』)`` part of a goal string, or a run of turns
    with the same goal type in a per-turn goal list; spaces of segmentation removed (``电影 推荐`` → ``电影推荐``)."""
    goal = record.get("goal", record.get("goals"))  # the ACL 2020 release calls it goals
    if isinstance(goal, str):
        found = [LIC_GOAL.match(part) for part in goal.split("-->")]  # '......' (a sample's elided goals) matches none
        return [_unsegmented(m.group(2)) for m in found if m]
    types = [_unsegmented(step[0]) for step in goal or [] if isinstance(step, list) and step]
    return [t for i, t in enumerate(types) if t and (i == 0 or types[i - 1] != t)]


def _unsegmented(text: str) -> str:
    """A goal type without segmentation spaces (``电影 推荐`` → ``电影推荐``), English words kept apart
    (DuRecDial 2.0's ``Movie recommendation``)."""
    return re.sub(r"\s+", " ", _CJK_SPACE.sub("", text)).strip()


_CJK_SPACE = re.compile(r"(?<=[^\x00-\x7f])\s+|\s+(?=[^\x00-\x7f])")


def profile_entries(profiles: list[dict[str, Any]], prefix: str) -> int:
    total = 0
    for profile in profiles:
        for key, value in profile.items():
            if key.startswith(prefix):
                total += len(value) if isinstance(value, list) else 1 if str(value).strip() else 0
    return total


STATISTICS.register(
    "durecdial",
    recommendation_figures,
    description="DuRecDial: sub-dialogues, goal types, recommendations",
    kinds=("durecdial", "durecdial2"),
    field="durecdial",
)


# the resource layout's responses: every other utterance from the bot's first (``label``: who speaks first)
register_corpus_layout(
    "durecdial-resource", CorpusLayout(lambda record, n: range(0 if record.get("label") == "bot" else 1, n, 2))
)
