"""Goals made ready to draft: each goal's knowledge chosen and written exactly as the export of that goal writes
it (the same subgraph, budgets and order, :mod:`kgforge.exports.assemble`), in the seed's triple shape, with the
rows' IRIs kept for verification and the style's goal fields (DuConv's goal list, DuRecDial's goal string,
profile and situation)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from kgforge.core.errors import KgforgeError
from kgforge.exports.assemble import Context, assemble
from kgforge.exports.labels import Render
from kgforge.exports.model import TripleShape
from kgforge.exports.new_goals import grounded_goals
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import format_named
from kgforge.goals.record import Goal
from kgforge.store.snapshot import Snapshot
from kgforge.synth.model import GoalMaterial
from kgforge.synth.styles import SynthStyle


@dataclass
class Materials:
    """The goals made ready (in the goals file's order), the goals that could not be (number → why), how a
    turn's text is written in the layout (``segment``: DuConv's and the resource files' word cuts), and the
    names written in another language than asked (IRI → label)."""

    ready: list[GoalMaterial]
    unusable: dict[int, str]
    segment: Callable[[str], str]
    mixed_labels: dict[str, str]
    build_id: str


def prepare(snapshot: Snapshot, goals: list[Goal], style: SynthStyle, layout: str, language: str) -> Materials:
    """Every goal's knowledge and goal fields for ``style`` in ``layout`` and ``language``; a name the graph has
    in another language only is written as it has it (listed in ``mixed_labels``)."""
    check_goals(snapshot, goals, style)
    fmt = format_named(style.export_format)
    ctx = Context.open(snapshot, language, allow_mixed=True)
    options = ExportOptions(fmt=style.export_format, language=language).subgraph(fmt, ctx.schema, goals=True)
    assembled = assemble(ctx, grounded_goals(goals), options, None, goal_checks=True)
    segmented = style.layouts[layout].segmented
    render = Render.for_frame(ctx.labels, assembled.passing(), segmented, fmt.type_relation, ctx.manifest.build_id)
    dialogues = {d.dialogue_id: d for d in assembled.dialogues(ctx.labels, render, TripleShape(rows=True))}
    ready = []
    for number, goal in enumerate(goals):
        dialogue = dialogues.get(f"dlg-{goal.goal_id.removeprefix('g-')}")
        if dialogue is None or number in assembled.problems:
            continue
        material = GoalMaterial(
            number,
            goal.goal_id,
            dialogue.dialogue_id,
            language,
            list(dialogue.topics),
            [render.name(iri, label) for iri, label in zip(dialogue.topics, dialogue.topic_labels)],
            list(dialogue.topic_labels),
            dialogue.knowledge,
            dialogue.triples,
            seed=goal.seed or 0,
        )
        style.goal_fields(material, dialogue, goal, render, layout)
        ready.append(material)
    unusable = {number: "; ".join(problems) for number, problems in sorted(assembled.problems.items())}
    return Materials(ready, unusable, render.text, dict(ctx.labels.mixed), ctx.manifest.build_id)


def check_goals(snapshot: Snapshot, goals: list[Goal], style: SynthStyle) -> None:
    """One line naming what is wrong when the goals are of another style or another domain."""
    kinds = sorted({goal.kind for goal in goals} - set(style.goal_kinds))
    if kinds:
        made_by = {"one_step": "duconv", "two_step": "duconv", "path": "kdconv", "sequence": "durecdial"}
        other = made_by.get(kinds[0], kinds[0])
        raise KgforgeError(
            f"the goals are {other}-style ({kinds[0]} goals), not {style.name}: give --style {other}, or make "
            f"{style.name} goals with `kgforge goals {snapshot.domain} --style {style.name}`"
        )
    known = set(snapshot.tables().labels["iri"].to_list())
    topics = [topic for goal in goals for topic in goal.topics]
    foreign = [topic for topic in topics if topic not in known]
    if topics and len(foreign) * 2 > len(topics):
        raise KgforgeError(
            f"the goals were made on another domain: {len(foreign):,} of their {len(topics):,} topics are not "
            f"entities of {snapshot.domain!r} (e.g. {foreign[0]})"
        )
