"""KdConv's corpus statistics (its paper's Table 3: the gold knowledge of the dialogues), and what the corpus
commands read of its dialogues: every message after the first is a response, a sample carries the dialogue's
``name`` and the message's ``attrs``, and the attrs mark each message's topics (Fig. 2, Table 4)."""

from __future__ import annotations

from typing import Any

from kgforge.core.jsonio import JsonObject
from kgforge.corpus.reading import CorpusLayout, register_corpus_layout
from kgforge.corpus.stats import STATISTICS, knowledge_figures


def sample_fields(record: dict[str, Any], j: int) -> JsonObject:
    """A sample of message ``j``: the dialogue's ``name`` and the message's gold ``attrs`` (written with it)."""
    return {"name": record.get("name"), "attrs": record["messages"][j].get("attrs") or []}


STATISTICS.register(
    "knowledge",
    knowledge_figures,
    description="KdConv Table 3: the gold knowledge of the dialogues",
    kinds=("kdconv",),
    field="knowledge",
)
register_corpus_layout("kdconv", CorpusLayout(fields=sample_fields, topics_per_turn=True))
