"""FilmTalk in ``kgforge eval``: every assistant turn is a response, its gold knowledge the turn's ``facts``."""

from __future__ import annotations

from pathlib import Path

from kgforge.core.jsonio import iter_json_lines
from kgforge.evaluation.inputs import Dialogue, EvalLayout, Slots, register_layout, response_frame
from kgforge.sources.dialogue_layouts import checked_records
from kgforge_filmtalk.layout import KIND, is_dialogue, problem


def read_filmtalk(path: Path) -> Slots:
    rows, dialogues = [], []
    for line, record in checked_records(path, iter_json_lines(path), KIND, problem=problem).records:
        turns = record["turns"]
        facts = [tuple(f) for turn in turns for f in turn.get("facts", [])]
        key = str(record.get("id", line))
        for j, turn in enumerate(turns):
            if turn.get("speaker") == "assistant":
                gold = [list(f) for f in turn.get("facts", [])]
                row = {"id": f"{key}:{j}", "line": line, "text": turn["text"], "gold": turn["text"]}
                rows.append({**row, "dialogue": len(dialogues), "dialogue_key": key, "gold_knowledge": gold, "turn": j})
        utterances = [turn["text"] for turn in turns]
        dialogues.append(Dialogue(key, [record["topic"]], list(dict.fromkeys(facts)), [], utterances))
    return Slots(path, KIND, response_frame(rows), dialogues, has_gold=True)


register_layout("filmtalk", EvalLayout(read_filmtalk, is_dialogue, priority=15, description="FilmTalk dialogues"))
