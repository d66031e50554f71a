"""Corpus statistic ``questions``: how many utterances ask something, per file."""

from __future__ import annotations

from typing import Any


def questions(dialogues: list[Any]) -> dict[str, Any]:
    """Utterances that end with a question mark."""
    texts = [text for dialogue in dialogues for text in dialogue.texts]
    asked = sum(1 for text in texts if text.rstrip().endswith(("?", "？", "吗")))
    return {"questions": asked, "share": asked / len(texts) if texts else None}


questions.kinds = ("kdconv",)  # the corpus kinds it applies to (a prefix such as "durecdial" takes them all)
