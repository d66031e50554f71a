"""DuConv's corpus statistics (its paper's Table 1): knowledge per dialogue and the goals' kinds."""

from __future__ import annotations

from collections import Counter

from kgforge.corpus.reading import CorpusLayout, register_corpus_layout
from kgforge.corpus.stats import STATISTICS, GoalFigures, mean
from kgforge.exports.model import SourceDialogue

DUCONV_KINDS = ("duconv-session", "duconv-sample")
GOAL_KINDS = {2: "one-step", 3: "two-step"}  # START plus one or two path triples


def goal_figures(dialogues: list[SourceDialogue]) -> GoalFigures:
    kinds = Counter(GOAL_KINDS.get(len(d.record["goal"]), "other") for d in dialogues)
    return GoalFigures(
        knowledge_per_dialogue=mean(sum(len(d.record["knowledge"]) for d in dialogues), len(dialogues)),
        goal_kinds=dict(kinds.most_common()),
    )


STATISTICS.register(
    "duconv",
    goal_figures,
    description="DuConv Table 1: knowledge per dialogue and goal kinds",
    kinds=DUCONV_KINDS,
    field="duconv",
)


register_corpus_layout("duconv-session", CorpusLayout(lambda record, n: range(0, n, 2)))  # the bot speaks first
