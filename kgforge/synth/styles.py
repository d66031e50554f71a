"""The styles of ``kgforge synth``, one small table: per style its goal kinds, the export format whose knowledge
it drafts from, its speakers, its output layouts (and the real readers' kind of each), and its functions — goal
fields, prompt values, who opens, the goal-reached check, the output record and the templated realiser's plan.
Each style lives in its dataset's room (its ``synth`` part, :mod:`kgforge.core.datasets`), which registers it
with :func:`register_style`; a plug-in registers one through the entry-point group ``kgforge.synth_styles``."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.errors import ArgumentError
from kgforge.core.registry import Registry, instances_of
from kgforge.exports.labels import Render
from kgforge.exports.model import Dialogue
from kgforge.goals.record import Goal
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
    prompts: Path  # the bundled prompt templates (TOML, a table per language)

    @property
    def default_layout(self) -> str:
        return next(iter(self.layouts))

    def layout(self, name: str | None) -> str:
        chosen = name or self.default_layout
        if chosen not in self.layouts:
            raise ArgumentError("--layout", f"{chosen!r} is no {self.name} layout (one of {', '.join(self.layouts)})")
        return chosen


def layouts(*found: OutputLayout) -> dict[str, OutputLayout]:
    """A style's output layouts by name, the first the default."""
    return {layout.name: layout for layout in found}


STYLES: Registry[SynthStyle] = Registry(
    "synth style",
    modules=lambda: room_parts("synth"),
    entry_point_group="kgforge.synth_styles",
    plugin=instances_of(SynthStyle, lambda name, style: f"{name} dialogues ({', '.join(style.layouts)})"),
)


def register_style(style: SynthStyle) -> SynthStyle:
    """Make ``style`` what ``kgforge synth --style NAME`` drafts."""
    STYLES.register(style.name, style, description=f"{style.name} dialogues ({', '.join(style.layouts)})")
    return style


def register_module_style(module_name: str, *found: OutputLayout, marks_goals: bool = False) -> SynthStyle:
    """Register the style a dataset room's synth module defines: its ``KINDS``, ``ROLES`` and the functions every
    style has (``goal_fields``, ``prompt_values``, ``opener``, ``reached``, ``record``, ``plan``), named after the
    room and drafting from its export format, its prompts in the room's ``prompts/synth.toml``."""
    module = sys.modules[module_name]
    name = module_name.split(".")[-2]  # the room: kgforge.datasets.<name>.synth
    prompts = Path(str(module.__file__)).with_name("prompts") / "synth.toml"
    made = SynthStyle(
        name,
        module.KINDS,
        name,
        module.ROLES,
        layouts(*found),
        marks_goals,
        module.goal_fields,
        module.prompt_values,
        module.opener,
        module.reached,
        module.record,
        module.plan,
        prompts,
    )
    return register_style(made)


def layout_names() -> tuple[str, ...]:
    """Every style's output layouts, each once, in the order the styles list them (``synth --layout``)."""
    return tuple(dict.fromkeys(name for entry in STYLES for name in entry.obj.layouts))


def style_named(name: str) -> SynthStyle:
    if name not in STYLES:
        raise ArgumentError("--style", f"{name!r} is no synth style (one of {', '.join(STYLES.names())})")
    return STYLES.get(name)
