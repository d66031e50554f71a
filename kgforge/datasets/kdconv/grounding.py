"""KdConv's grounder: each message's facts found among the graph's candidates (the learned choice decides),
scored against the message's gold ``attrs``; the file is written back as the JSON array it came as.

A file is a JSON array of dialogues (``{"name": topic, "messages": [{"message": …, "attrs": […]}]}``). Each
dialogue is grounded with its topic in focus (a topic the graph does not name is reported, once a dialogue); its
messages are grounded, written and scored as :mod:`kgforge.grounding.messages` says: ``attrs`` in KdConv's own
shape where the input has none, ``predicted_attrs`` beside the gold where it has, and each message's ``claims``.
Scores: micro precision, recall and F1 over all messages of annotated dialogues, and the same per relation.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgforge.core.jsonio import iter_json_container
from kgforge.datasets.kdconv.layouts import KDCONV
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DEFAULT_OPTIONS, DialogueMatcher, MatchOptions
from kgforge.grounding.messages import MessagesGrounding, ground_messages
from kgforge.grounding.registry import GroundCounts, Grounder, register
from kgforge.sources.dialogue_layouts import Checked, checked_records


def read_dialogues(path: Path, skip_invalid: bool = False) -> Checked:
    """The dialogues of a KdConv file; a record that is not one is an error naming its line, or with
    ``skip_invalid`` set aside (:func:`kgforge.sources.dialogue_layouts.checked_records`)."""
    return checked_records(path, iter_json_container(path, list), KDCONV, skip_invalid)


def ground_kdconv(
    index: GroundingIndex, dialogues: Iterable[dict[str, Any]], options: MatchOptions = DEFAULT_OPTIONS
) -> MessagesGrounding:
    """``dialogues`` grounded against ``index``, each with its topic (``name``) in focus."""
    result = MessagesGrounding()
    for dialogue in dialogues:
        topics = [dialogue["name"]] if isinstance(dialogue.get("name"), str) else []
        matcher = DialogueMatcher(index, topics, options)
        if topics and not matcher.topics:
            result.topics_not_in_graph.append(topics[0])
        result.dialogues.append({**dialogue, "messages": ground_messages(index, matcher, dialogue["messages"], result)})
    return result


def _counts(result: MessagesGrounding) -> GroundCounts:
    return GroundCounts(
        result.messages,
        result.predicted,
        result.gold_messages,
        result.tally,
        result.claims,
        tuple(result.topics_not_in_graph),
    )


register(
    "kdconv",
    Grounder(
        read_dialogues,
        ground_kdconv,
        "dialogues",
        array=True,
        counts=_counts,
        uses_model=True,
        description="KdConv dialogues (a JSON array): each message's facts, scored against its attrs",
    ),
)
