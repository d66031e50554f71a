"""FilmTalk's own corpus figure: how many turns use knowledge."""

from __future__ import annotations

from kgforge.corpus.stats import STATISTICS
from kgforge.exports.model import SourceDialogue


@STATISTICS.register(
    "filmtalk-knowledge-turns", description="FilmTalk: the share of turns that use a fact", kinds=("filmtalk",)
)
def knowledge_turns(dialogues: list[SourceDialogue]) -> float | None:
    turns = sum(len(d.texts) for d in dialogues)
    return sum(len({g.message for g in d.gold}) for d in dialogues) / turns if turns else None
