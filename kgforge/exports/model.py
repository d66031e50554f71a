"""What an export works with: a dialogue to write (from a goal or a real dialogue) and a real dialogue as read."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from kgforge.core.jsonio import dumps_bytes


class GoldTriple(NamedTuple):
    """One triple a real dialogue is annotated with, as written, and where it sits in the record: the
    keys of its container (``("knowledge", 3)``, ``("messages", 2, "attrs", 0)``) and of its tail in it
    (``2``, ``"attrvalue"``)."""

    head: str
    relation: str
    tail: str
    where: tuple[str | int, ...]
    tail_key: str | int
    message: int | None = None  # KdConv: the message it is annotated on


@dataclass
class SourceDialogue:
    """A real dialogue read from a dataset file: the record exactly as read, with what grounding needs."""

    line: int
    layout: str  # its layout's kind, e.g. kdconv or duconv-session
    record: dict[str, Any]
    topic_names: list[str]  # the topics it declares: DuConv's goal START A B, KdConv's name, DuRecDial's 『』
    texts: list[str]  # its utterances in order (a sample: the history, then the response)
    gold: list[GoldTriple]
    path: list[list[str]] = field(default_factory=list)  # DuConv's goal path triples, as written
    segmented: bool = False  # its strings are word-segmented (DuConv, DuRecDial LIC-2020 resource files)


@dataclass(frozen=True)
class TripleShape:
    """How a format wants a dialogue's subgraph handed to it: each triple as written, as a ``[head,
    relation, tail]`` list or as a dict with ``keys`` (KdConv's ``name``, ``attrname``, ``attrvalue``);
    in one list (``knowledge``) or grouped by the message that first names the triple's topic
    (``by_message``); and, for formats that write IRIs and labels, the rows themselves (``rows``)."""

    keys: tuple[str, str, str] | None = None
    by_message: bool = False
    rows: bool = False


@dataclass
class Dialogue:
    """One dialogue to export: its id, topics and the subgraph chosen for it, as the layout writes it:
    ``knowledge`` (every triple, in order), ``goal_path`` (the goal's triples, in the goal's order) and, for
    real dialogues, ``by_message``; ``triples`` and ``path`` hold the rows themselves (IRIs, labels, role,
    source graph) when the format asks for them. A real dialogue also carries itself (``source``)."""

    dialogue_id: str
    kind: str
    topics: list[str]
    topic_labels: list[str]
    topic_types: list[str | None]
    knowledge: list[Any] = field(default_factory=list)
    goal_path: list[list[str]] = field(default_factory=list)
    by_message: dict[int, list[Any]] = field(default_factory=dict)
    triples: list[dict[str, Any]] = field(default_factory=list)
    path: list[dict[str, Any]] = field(default_factory=list)
    goal_id: str | None = None
    seed: int | None = None
    sequence: list[dict[str, Any]] | None = None
    profile: dict[str, Any] | None = None
    profile_en: dict[str, Any] | None = None  # a DuRecDial goal's profile in English (keys and values)
    profile_entities: dict[str, str] | None = None  # a name in ``profile`` -> the entity it names
    situation: dict[str, Any] | None = None  # a DuRecDial goal's: {"text", "date", "time", "place", "topic", "en"}
    source: SourceDialogue | None = None


def dialogue_ids(records: list[Any], prefix: str) -> list[str]:
    """Stable ids from each record's content; a repeated record gets ``-2``, ``-3``, …"""
    ids: list[str] = []
    seen: dict[str, int] = {}
    for record in records:
        text = dumps_bytes(record, sort_keys=True)
        base = f"{prefix}-" + hashlib.sha256(text).hexdigest()[:16]
        seen[base] = seen.get(base, 0) + 1
        ids.append(base if seen[base] == 1 else f"{base}-{seen[base]}")
    return ids


def value_at(record: Any, where: tuple[str | int, ...]) -> Any:
    for key in where:
        record = record[key]
    return record
