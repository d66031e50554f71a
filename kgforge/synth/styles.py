"""The styles of ``kgforge synth``, one small table: per style its goal kinds, the export format whose knowledge
it drafts from, its speakers, its output layouts (and the real readers' kind of each), and its functions — goal
fields, prompt values, who opens, the goal-reached check, the output record and the templated realiser's plan.
Each style's code is its own module (``duconv``, ``kdconv``, ``durecdial``), so that it can move beside the rest
of its dataset's code."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from kgforge.core.errors import ArgumentError
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.goals.record import Goal
from kgforge.synth import duconv, durecdial, kdconv
from kgforge.synth.model import GoalMaterial, Turn, TurnCheck
from kgforge.synth.realise import Exchange


@dataclass(frozen=True)
class OutputLayout:
    """How a style's dialogues are written: the real readers' kind, word-segmented or not, one JSON array
    (KdConv) or JSON lines."""

    name: str
    reader_kind: str
    segmented: bool = False
    array: bool = False


@dataclass(frozen=True)
class SynthStyle:
    name: str
    goal_kinds: tuple[str, ...]
    export_format: str
    roles: tuple[str, str]
    layouts: dict[str, OutputLayout]  # the first is the default
    marks_goals: bool  # each turn names the goal (1-based) it serves (DuRecDial)
    goal_fields: Callable[[GoalMaterial, Dialogue, Goal, Render, str], None]
    prompt_values: Callable[[GoalMaterial], dict[str, Any]]
    opener: Callable[[GoalMaterial], str]
    reached: Callable[[GoalMaterial, list[Turn]], str | None]
    record: Callable[[GoalMaterial, list[Turn], list[TurnCheck], str], dict[str, Any]]
    plan: Callable[[GoalMaterial], list[Exchange]]

    @property
    def default_layout(self) -> str:
        return next(iter(self.layouts))

    def layout(self, name: str | None) -> str:
        chosen = name or self.default_layout
        if chosen not in self.layouts:
            raise ArgumentError("--layout", f"{chosen!r} is no {self.name} layout (one of {', '.join(self.layouts)})")
        return chosen


def _style(name: str, module: ModuleType, layouts: tuple[OutputLayout, ...], marks_goals: bool = False) -> SynthStyle:
    return SynthStyle(
        name,
        module.KINDS,
        name,
        module.ROLES,
        {layout.name: layout for layout in layouts},
        marks_goals,
        module.goal_fields,
        module.prompt_values,
        module.opener,
        module.reached,
        module.record,
        module.plan,
    )


STYLES = {
    "duconv": _style("duconv", duconv, (OutputLayout("session", "duconv-session", segmented=True),)),
    "kdconv": _style("kdconv", kdconv, (OutputLayout("dialogues", "kdconv", array=True),)),
    "durecdial": _style(
        "durecdial",
        durecdial,
        (
            OutputLayout("lic2020", "durecdial-lic2020"),
            OutputLayout("v2", "durecdial2"),
            OutputLayout("acl2020", "durecdial-acl2020"),
        ),
        marks_goals=True,
    ),
}


def layout_names() -> tuple[str, ...]:
    """Every style's output layouts, each once, in the order the styles list them (``synth --layout``)."""
    return tuple(dict.fromkeys(name for style in STYLES.values() for name in style.layouts))


def style_named(name: str) -> SynthStyle:
    if name not in STYLES:
        raise ArgumentError("--style", f"{name!r} is no synth style (one of {', '.join(STYLES)})")
    return STYLES[name]
