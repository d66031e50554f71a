"""Shape checks the dataset formats share: what their readers unpack without asking."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kgforge.core.jsonio import dumps_bytes
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue, GoldTriple
from kgforge.exports.registry import Layout
from kgforge.sources.dialogue_layouts import is_triple

LINE_BREAKERS = ("\t", "\n", "\r")  # the readers write tab-separated text, one sample a line


def strings_in(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, list):
        for item in value:
            yield from strings_in(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from strings_in(item)


def line_breaks_problem(record: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    """A tab or line break inside a string would split the readers' one-sample-a-line text files."""
    if not any(escape in dumps_bytes([record.get(key) for key in keys]) for escape in (b"\\t", b"\\n", b"\\r")):
        return None  # JSON escapes every tab and line break: none in the encoded text, none in the strings
    for key in keys:
        for text in strings_in(record.get(key)):
            if any(c in text for c in LINE_BREAKERS):
                return f"a string in '{key}' holds a tab or line break, which splits the readers' text lines: {text[:40]!r}"
    return None


def knowledge_gold(record: dict[str, Any], key: str = "knowledge") -> list[GoldTriple]:
    return [GoldTriple(t[0], t[1], t[2], (key, i), 2) for i, t in enumerate(record.get(key) or []) if is_triple(t)]


def session_or_samples(
    dialogue: Dialogue,
    layout: Layout,
    render: Render,
    pool_key: str,
    history_prefix: tuple[str, ...] = (),
    first_turn: int = 0,
) -> list[dict[str, Any]]:
    """A real session with its retrieved facts under ``pool_key``: as it was, or cut into samples as the
    baselines' ``convert_session_to_sample.py`` cut it (``history = prefix + conversation[:j]``,
    ``response = conversation[j]`` for every other j from ``first_turn``). The source record is shared,
    never changed."""
    assert dialogue.source is not None  # a real dialogue, read from its source
    record, pool = dialogue.source.record, dialogue.knowledge
    if layout.kind == dialogue.source.layout:
        return [{**record, pool_key: pool}]
    conversation = record["conversation"]
    return [
        {
            "goal": record["goal"],
            "knowledge": record["knowledge"],
            "history": [*history_prefix, *conversation[:j]],
            "response": conversation[j],
            pool_key: pool,
        }
        for j in range(first_turn, len(conversation), 2)
    ]
