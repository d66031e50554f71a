"""DuConv in ``kgforge release``: a grounded session's utterances as turns, the leader (the bot) first; the facts
the session's knowledge each utterance was found to state."""

from __future__ import annotations

from typing import Any

from kgforge.release.layouts import (
    ReleaseLayout,
    Turn,
    alternating,
    goal_field,
    register_layout,
    triples,
)


def duconv_turns(record: dict[str, Any]) -> list[Turn]:
    """DuConv's leader (the bot, who is given the goal) speaks first: the baselines' samples are its turns."""
    knowledge = record.get("knowledge") or []
    rows = record.get("grounding") or []
    texts = record["conversation"]
    speakers = alternating("bot", "user", len(texts))
    turns = []
    for i, (speaker, text) in enumerate(zip(speakers, texts)):
        row = rows[i] if i < len(rows) else {}
        stated = triples(knowledge[k] for k in row.get("knowledge", ()) if 0 <= k < len(knowledge))
        turns.append(Turn(speaker, str(text), stated, "grounder", tuple(row.get("claims") or ())))
    return turns


register_layout(
    ReleaseLayout(
        "duconv-session",
        "duconv",
        "duconv",
        ".jsonl",
        "duconv-session",
        duconv_turns,
        goal_field,
        "proactive goal-driven dialogue (DuConv)",
    )
)
