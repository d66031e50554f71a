"""FilmTalk as an export format: its dialogues read (``export --dialogues``, ``corpus``) and written back with the
graph's facts about each turn's topics beside the turn's own ``facts``."""

from __future__ import annotations

from typing import Any

from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, GoldTriple, SourceDialogue, TripleShape
from kgforge.exports.registry import Format, Layout, register
from kgforge_filmtalk.layout import KIND, is_dialogue, problem

POOL = "retrieved_facts"
DIALOGUES = Layout("dialogues", KIND, "JSON lines: id, topic, turns[].text, turns[].facts", needs_conversation=True)


@register
class FilmTalk(Format):
    name = "filmtalk"
    description = "FilmTalk dialogues (JSON lines; the example dataset plug-in)"
    layouts = (DIALOGUES,)
    reads_dialogues = True
    type_facts = False
    shape = TripleShape(by_message=True)

    def detect(self, record: Any) -> Layout | None:
        return DIALOGUES if is_dialogue(record) else None

    def source_dialogue(self, record: Any, line: int, layout: Layout) -> SourceDialogue | str:
        found = problem(KIND, record)
        if found:
            return found
        turns = record["turns"]
        gold = [
            GoldTriple(h, r, t, ("turns", i, "facts", k), 2, i)
            for i, turn in enumerate(turns)
            for k, (h, r, t) in enumerate(turn.get("facts", []))
        ]
        texts = [turn["text"] for turn in turns]
        return SourceDialogue(line, layout.kind, record, topic_names=[record["topic"]], texts=texts, gold=gold)

    def dialogue_records(self, dialogue: Dialogue, layout: Layout, render: Render) -> list[dict[str, Any]]:
        assert dialogue.source is not None
        record = dialogue.source.record
        last = len(record["turns"]) - 1
        pools: dict[int, list[Any]] = {}
        for turn, facts in dialogue.by_message.items():
            pools.setdefault(min(turn, last), []).extend(facts)
        turns = [{**turn, POOL: pools[t]} if pools.get(t) else turn for t, turn in enumerate(record["turns"])]
        return [{**record, "turns": turns}]

    def check(self, record: dict[str, Any], layout: Layout) -> list[str]:
        found = problem(KIND, record)
        return [found] if found else []
