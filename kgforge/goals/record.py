"""A goal as a typed record, and the one reader and writer of goal files (JSONL, one goal a line).

``kgforge goals`` writes them, ``kgforge export --goals`` and the explorer read them. A line that is not
JSON, or not a goal, is an error naming the file and the line; nothing is skipped silently.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.jsonio import iter_json_lines
from kgforge.core.output import OutputFile, output_file

_REQUIRED = ("goal_id", "kind", "topics", "path")
_OPTIONAL = ("seed", "topic_labels", "topic_types", "goal")
_STEP_KEYS = ("s", "p", "o")


@dataclass(frozen=True)
class GoalStep:
    """One fact of a goal's path: subject, relation and object IRIs (the object is a literal's text when
    ``o_is_entity`` is False) and their labels, as DuConv's goal triples show them."""

    s: str
    p: str
    o: str
    o_is_entity: bool | None = None  # None: the goal file did not say (a hand-written goal)
    labels: list[str] | None = None  # [subject, relation, object] labels
    extra: Mapping[str, Any] = field(default_factory=dict)  # keys another tool added to the step, kept as they are

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> GoalStep:
        known = {key: data[key] for key in ("s", "p", "o", "o_is_entity", "labels") if key in data}
        return cls(**known, extra={k: v for k, v in data.items() if k not in known})

    def to_dict(self) -> dict[str, Any]:
        step: dict[str, Any] = {"s": self.s, "p": self.p, "o": self.o}
        if self.o_is_entity is not None:
            step["o_is_entity"] = self.o_is_entity
        if self.labels is not None:
            step["labels"] = self.labels
        return step | dict(self.extra)


class GoalRecordError(ValueError):
    """What makes a JSON value not a goal (the reader adds the file and line)."""


@dataclass(frozen=True)
class Goal:
    """One goal: its stable id, kind (``one_step``, ``two_step``, ``path``, ``sequence``), topics (IRIs),
    and path, one :class:`GoalStep` per fact. ``topic_labels``,
    ``topic_types`` and ``goal`` (DuConv's ``[["START", A, B], [A, r, B], …]`` in labels) are for readers;
    ``extra`` keeps what a style adds (``hops``, ``sequence``, ``profile``, …)."""

    goal_id: str
    kind: str
    topics: list[str]
    path: list[GoalStep]
    seed: int | None = None
    topic_labels: list[str] | None = None
    topic_types: list[str | None] | None = None
    goal: list[list[str]] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Any) -> Goal:
        if not isinstance(data, dict) or not set(_REQUIRED) <= set(data):
            raise GoalRecordError(
                f"not a kgforge goal (needs {', '.join(_REQUIRED)}); make one with "
                "`kgforge goals DOMAIN --n N --out FILE`"
            )
        if not isinstance(data["topics"], list) or not all(isinstance(t, str) for t in data["topics"]):
            raise GoalRecordError("topics: expected a list of entity IRIs")
        if not isinstance(data["path"], list) or not all(
            isinstance(step, dict) and set(_STEP_KEYS) <= set(step) for step in data["path"]
        ):
            raise GoalRecordError("path: expected a list of steps, each with s, p and o")
        known = {key: data[key] for key in (*_REQUIRED, *_OPTIONAL) if key in data}
        known["path"] = [GoalStep.from_dict(step) for step in data["path"]]
        return cls(**known, extra={k: v for k, v in data.items() if k not in known})

    def to_dict(self) -> dict[str, Any]:
        values = {
            "goal_id": self.goal_id,
            "kind": self.kind,
            "seed": self.seed,
            "topics": self.topics,
            "topic_labels": self.topic_labels,
            "topic_types": self.topic_types,
            "path": [step.to_dict() for step in self.path],
            "goal": self.goal,
        }
        return {k: v for k, v in values.items() if v is not None or k not in _OPTIONAL} | dict(self.extra)


def read_goals(path: Path) -> Iterator[Goal]:
    """The goals of a goal file; a line that is not JSON or not a goal is an error naming file and line."""
    for record in iter_json_lines(path):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        try:
            yield Goal.from_dict(record.value)
        except GoalRecordError as exc:
            raise InputError(f"{path}:{record.line}: {exc}") from None


def write_goals(goals: Iterable[Goal], out: Path | OutputFile) -> int:
    """Write ``goals`` to ``out`` (all of them or, if interrupted, the file as it was); returns how many."""
    count = 0
    with output_file(out).open() as handle:
        for goal in goals:
            handle.write(json.dumps(goal.to_dict(), ensure_ascii=False) + "\n")
            count += 1
    return count
