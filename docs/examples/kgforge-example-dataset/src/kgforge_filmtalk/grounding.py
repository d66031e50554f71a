"""FilmTalk's grounder: each turn's facts found in the graph (kgforge's matcher, focused on the dialogue's topic),
scored against the turn's gold ``facts``; written back as JSON lines with ``predicted_facts`` and ``claims``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_lines
from kgforge.grounding import DialogueMatcher, GroundingIndex, MatchOptions, Tally
from kgforge.grounding.matching import as_claim
from kgforge.grounding.registry import GroundCounts, Grounder, register
from kgforge.sources.dialogue_layouts import Checked, checked_records
from kgforge_filmtalk.layout import KIND, problem


@dataclass
class FilmTalkGrounding:
    dialogues: list[dict[str, Any]]
    turns: int
    predicted: int
    gold_turns: int
    tally: Tally
    claims: Counter[str]


def read_dialogues(path: Path, skip_invalid: bool = False) -> Checked:
    return checked_records(path, iter_json_lines(path), KIND, skip_invalid, problem=problem)


def ground_filmtalk(
    index: GroundingIndex, dialogues: Iterable[dict[str, Any]], options: MatchOptions
) -> FilmTalkGrounding:
    result = FilmTalkGrounding([], 0, 0, 0, Tally(Counter()), Counter())
    for dialogue in dialogues:
        matcher = DialogueMatcher(index, [dialogue["topic"]], options)
        turns = []
        for turn in dialogue["turns"]:
            found, said = matcher.message(turn["text"])
            facts = [[index.label(s.fact.subject), s.fact.relation, s.fact.value] for s in found]
            result.turns += 1
            result.predicted += len(facts)
            result.claims.update(c.status for c in said)
            if "facts" in turn:
                result.gold_turns += 1
                result.tally.add({tuple(f) for f in facts}, {tuple(f) for f in turn["facts"]})
            turns.append({**turn, "predicted_facts": facts, "claims": [as_claim(index, c) for c in said]})
        result.dialogues.append({**dialogue, "turns": turns})
    return result


def _counts(result: FilmTalkGrounding) -> GroundCounts:
    return GroundCounts(result.turns, result.predicted, result.gold_turns, result.tally, result.claims)


register(
    "filmtalk",
    Grounder(read_dialogues, ground_filmtalk, "dialogues", array=False, counts=_counts, description="FilmTalk turns"),
)
