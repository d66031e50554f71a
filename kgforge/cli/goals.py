"""`kgforge goals`: sample conversation goals, or check real DuConv goals against the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape

from kgforge.api import Domain, GoalCheckReport, KgforgeError, parse_hops, registry
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    FRACTION,
    HOP_RANGE,
    LANGUAGE,
    NON_NEGATIVE,
    NOTHING_HALF_WRITTEN,
    OUT_FILE,
    POSITIVE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    err_console,
    one_of,
    reads_inputs,
    show_mapping,
    when_interrupted,
)

STYLES = registry("goal style")


HOPS = HOP_RANGE


# The options of `kgforge goals`, in the order --help lists them (the command's signature keeps it).
GoalCountOption = Annotated[int | None, typer.Option("--n", parser=POSITIVE, help="Number of goals to sample.")]
GoalsOutOption = Annotated[Path | None, typer.Option("--out", "-o", callback=OUT_FILE, help="Goals JSONL to write.")]
OneStepRatioOption = Annotated[
    float, typer.Option(parser=FRACTION, help="Share of one-step goals (the rest two-step).")
]
HopsOption = Annotated[
    str | None,
    typer.Option(
        parser=HOPS,
        help="KdConv-style topic transitions over N or LOW..HIGH hops (implies --style kdconv), e.g. 1..3.",
    ),
]
StyleOption = Annotated[
    str | None,
    typer.Option(
        parser=one_of(STYLES.names()),
        help="duconv (one-/two-step), kdconv (1–3 hop paths) or durecdial (goal sequences).",
    ),
]
ProfilesOption = Annotated[
    Path | None,
    typer.Option(
        help="DuRecDial user profiles (JSON lines) whose liked "
        "stars the sequences are about (--style durecdial; "
        "default: drawn from the graph and a template)."
    ),
]
TransitionsOption = Annotated[
    Path | None,
    typer.Option(
        help="--style durecdial: goal-type transitions, a table "
        "(.tsv) or DuRecDial sessions to count (default: the "
        "shipped table)."
    ),
]
ProfileTemplateOption = Annotated[
    Path | None, typer.Option(help="--style durecdial: profile and situation template (TOML).")
]
TopicOption = Annotated[
    list[str] | None,
    typer.Option(
        "--topic",
        metavar="NAME",
        help="Only goals whose first topic is this entity: a label, an alternative label or an IRI (repeat it "
        "for several; every style).",
    ),
]
GoalSeedOption = Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Same seed, same goals.")]
GoalLanguageOption = Annotated[
    str | None, typer.Option(parser=LANGUAGE, help="Label language (default: the schema's).")
]
ValidateOption = Annotated[
    Path | None,
    typer.Option("--validate", help="Check the goals of these DuConv sessions against the graph instead."),
]


@app.command("goals")
@when_interrupted(NOTHING_HALF_WRITTEN)
@reads_inputs
def goals_command(
    domain: DomainArgument,
    n: GoalCountOption = None,
    out: GoalsOutOption = None,
    one_step_ratio: OneStepRatioOption = 0.5,
    hops: HopsOption = None,
    style: StyleOption = None,
    profiles: ProfilesOption = None,
    transitions: TransitionsOption = None,
    profile_template: ProfileTemplateOption = None,
    topic: TopicOption = None,
    seed: GoalSeedOption = 0,
    lang: GoalLanguageOption = None,
    validate_file: ValidateOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Sample reproducible, stratified conversation goals (or --validate real DuConv goals)."""
    kg = Domain(domain, workdir)
    if validate_file is not None:
        checked = kg.check_goals(validate_file)
        emit_json(checked.as_dict()) if json_out else show_goal_check(checked)
        return
    if out is None or n is None:
        raise KgforgeError("give --n N and --out FILE to sample goals, or --validate FILE to check real ones")
    chosen_style = style or ("kdconv" if hops else "durecdial" if profiles else "duconv")
    report = kg.goals(
        n,
        out,
        style=chosen_style,
        seed=seed,
        one_step_ratio=one_step_ratio,
        hops=parse_hops(hops) if hops else (1, 3),
        language=lang,
        profiles=profiles,
        transitions=transitions,
        profile_template=profile_template,
        topics=topic or (),
    ).as_dict()
    _warn_about_sample(report)
    emit_json(report) if json_out else show_mapping(f"goals of {domain}", _sample_summary(report))


def _warn_about_sample(report: dict[str, Any]) -> None:
    """On stderr, so that it shows beside --json too: goals the graph could not give, and names written in
    another language than asked for."""
    for note in report["shortfall"] + sequence_notes(report):
        err_console.print(f"[yellow]warning[/]: {escape(note)}", soft_wrap=True)
    mixed = report.get("labels") or {}
    if mixed.get("mixed_count"):
        shown = ", ".join(f"{label}" for label in list(mixed["mixed"].values())[:5])
        err_console.print(
            f"[yellow]warning[/]: {mixed['mixed_count']:,} names have no {mixed['language']} label and "
            f"are written as the graph has them ({escape(shown)}); `kgforge translate` proposes "
            "labels",
            soft_wrap=True,
        )


def _sample_summary(report: dict[str, Any]) -> dict[str, Any]:
    """The report's plain figures, then the goals per kind, goal type and first topic, one line each."""
    return (
        {k: v for k, v in report.items() if not isinstance(v, (dict, list))}
        | {"kinds": ", ".join(f"{k} {v}" for k, v in report["kinds"].items())}
        | (
            {"goal types": ", ".join(f"{k} {v}" for k, v in report["goal_types"].items())}
            if "goal_types" in report
            else {}
        )
        | ({"topics": ", ".join(f"{k} = {v}" for k, v in report["topics"].items())} if "topics" in report else {})
    )


def sequence_notes(report: dict) -> list[str]:
    """What a DuRecDial sequence sample could not give: goal types never drawn, English labels missing."""
    notes = [f"goal type {kind} not drawn: {why}" for kind, why in report.get("goal_types_not_drawn", {}).items()]
    if report.get("english_fallback_goals"):
        notes.append(
            f"{report['english_fallback_goals']:,} goals name something without an English label: its "
            "Chinese label stands in the English fields (each goal's lang_fallback lists them)"
        )
    return notes


def show_goal_check(checked: GoalCheckReport) -> None:
    """Counts per goal kind, then one line per goal the graph does not give (line number, what is wrong)."""
    recall = "-" if checked.recall is None else f"{checked.recall:.1%}"
    console.print(
        f"{checked.file}: {checked.goals:,} goals, {checked.goals_in_graph:,} with every triple in the graph, "
        f"{checked.found:,} of those found by the goal queries (recall {recall})",
        markup=False,
        soft_wrap=True,
    )
    for kind, counts in checked.by_kind.items():
        console.print(
            f"  {kind:<10} {counts['goals']:>6,} goals, {counts['goals_in_graph']:>6,} in the graph, "
            f"{counts['found']:>6,} found, {counts['materialised']:>6,} materialised",
            markup=False,
            soft_wrap=True,
        )
    for problem in checked.problems:
        console.print(f"  line {problem.line} ({problem.kind}): {problem.reason}", markup=False, soft_wrap=True)
    shown = sum(1 for p in checked.problems if p.kind != "unreadable")
    unshown = checked.goals - checked.found - shown
    if unshown > 0:
        console.print(f"  … {unshown:,} more goals not found; --json lists the first 50 misses", markup=False)
