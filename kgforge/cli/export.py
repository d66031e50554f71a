"""`kgforge export`: per-dialogue subgraphs in DuConv, KdConv, DuRecDial, a crowdsourcing sheet or generic
JSONL/Parquet layout; `kgforge export-formats` lists them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kgforge.api import Domain, ExportOptions, ExportReport, KgforgeError, ParallelExportReport, choices, registry
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    FOLDER,
    LANGUAGES,
    NON_NEGATIVE,
    NOTHING_CHANGED,
    NOTHING_HALF_WRITTEN,
    OUT_FILE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    in_words,
    long_running,
    one_of,
    reads_inputs,
    registered,
    when_interrupted,
)

FORMATS = registry("export format")


def _formats() -> dict[str, Any]:
    """Every export format (a ``kgforge.exports.registry.Format``) by its name, sorted: the registry's."""
    return {entry.name: entry.obj for entry in FORMATS}


def _goal_layouts() -> str:
    """``duconv: sample; …``: the layouts new goals can be written in, of each format that has a choice (read from
    the registered formats, so a plug-in's format is listed too)."""
    return "; ".join(
        f"{name}: {', '.join(lay.name for lay in fmt.layouts if not lay.needs_conversation)}"
        for name, fmt in _formats().items()
        if len(fmt.layouts) > 1 and any(not lay.needs_conversation for lay in fmt.layouts)
    )


def _cut_layouts() -> str:
    return ", ".join(dict.fromkeys(lay.name for fmt in _formats().values() for lay in fmt.layouts if lay.cut_from))


# The options of `kgforge export`, in the order --help lists them (the command's signature keeps it).
ExportFormatOption = Annotated[
    str,
    typer.Option(
        "--format",
        parser=registered(FORMATS),
        help=f"{in_words(FORMATS.names())} (`kgforge export-formats` lists their layouts).",
    ),
]
ExportOutOption = Annotated[
    Path,
    typer.Option("--out", "-o", callback=OUT_FILE, help="File to write (plus OUT.manifest.json, OUT.ids.txt)."),
]
NewGoalsOption = Annotated[Path | None, typer.Option(help="New goals (JSON lines from `kgforge goals`).")]
RealDialoguesOption = Annotated[
    Path | None,
    typer.Option(
        help="Real dialogues: DuConv sessions or samples, KdConv "
        "{train,dev,test}.json, DuRecDial sessions or samples "
        "(LIC-2020, ACL 2020 release, DuRecDial 2.0 zh/en)."
    ),
]
ExportLayoutOption = Annotated[
    str | None,
    typer.Option(
        parser=one_of(choices("export layout")),
        help="Layout of the format. Goals: one without a conversation "
        f"({_goal_layouts()}; v2 with --lang zh,en). Dialogues: their own "
        f"(the default) or the samples cut from them ({_cut_layouts()}).",
    ),
]
InputLayoutOption = Annotated[
    str | None,
    typer.Option(
        parser=one_of(choices("input layout")),
        help="--dialogues: the layout the file is in, when it cannot be "
        "told from its records (e.g. durecdial-lic2020).",
    ),
]
RefreshAttrsOption = Annotated[
    bool,
    typer.Option(
        "--refresh-attrs",
        help="--dialogues: rewrite gold values the graph now states otherwise; every change goes to OUT.refresh.jsonl.",
    ),
]
ChangedSinceOption = Annotated[
    str | None,
    typer.Option(
        "--changed-since",
        metavar="BUILD",
        help="Write only the dialogues or goals whose records differ "
        "from the same export of BUILD (a kept build; see "
        "`kgforge diff`).",
    ),
]
BudgetOption = Annotated[
    int | None,
    typer.Option(
        parser=NON_NEGATIVE,
        help="Facts per topic besides its type fact and the goal path "
        "(default 7 for the first topic and 4 for the others; real "
        "dialogues: the format's).",
    ),
]
ExportLanguagesOption = Annotated[
    str | None,
    typer.Option(
        parser=LANGUAGES,
        help="Label language (default: the schema's); "
        "two joined by a comma (zh,en) write a parallel corpus: twins "
        "in DuRecDial 2.0's layout, its five task files and a "
        "manifest pairing them (--format durecdial; --goals, or "
        "--dialogues zh_NAME with en_NAME beside it).",
    ),
]
AllowMixedOption = Annotated[
    bool,
    typer.Option(
        "--allow-mixed",
        help="Where an entity or relation has no label in "
        "--lang (or in a twin's language), or a value or other text has no form in it, "
        "write another language's (listed in the report, the manifest and OUT.mixed.jsonl) instead of refusing.",
    ),
]
SegmentOption = Annotated[
    bool,
    typer.Option(
        help="Word-segmented layouts (DuConv): cut strings into words as the "
        "real files are; --no-segment keeps labels whole."
    ),
]
NoTextOption = Annotated[bool, typer.Option("--no-text", help="Leave free-text facts (comments, Information) out.")]
ExportSkipInvalidOption = Annotated[
    bool,
    typer.Option(
        "--skip-invalid", help="Write the dialogues that pass the checks and list the others in OUT.rejected.jsonl."
    ),
]
AddRelatedOption = Annotated[
    str | None,
    typer.Option(
        parser=FOLDER,
        help="Add each topic's top related entity from the model bundle models/NAME (`kgforge embed`).",
    ),
]


@app.command("export")
@when_interrupted(NOTHING_HALF_WRITTEN)
@reads_inputs
@long_running
def export_command(
    domain: DomainArgument,
    fmt: ExportFormatOption,
    out: ExportOutOption,
    goals: NewGoalsOption = None,
    dialogues: RealDialoguesOption = None,
    layout: ExportLayoutOption = None,
    input_layout: InputLayoutOption = None,
    refresh_attrs: RefreshAttrsOption = False,
    changed_since: ChangedSinceOption = None,
    budget: BudgetOption = None,
    lang: ExportLanguagesOption = None,
    allow_mixed: AllowMixedOption = False,
    segment: SegmentOption = True,
    no_text: NoTextOption = False,
    skip_invalid: ExportSkipInvalidOption = False,
    add_related: AddRelatedOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """One checked subgraph per goal or dialogue, with stable ids, an export manifest and a coverage report."""
    if (goals is None) == (dialogues is None):
        raise KgforgeError("give either --goals FILE (from `kgforge goals`) or --dialogues FILE (real dialogues)")
    if goals is not None and (input_layout or refresh_attrs):
        raise KgforgeError("--input-layout and --refresh-attrs are for --dialogues")
    languages = lang.split(",") if lang else []
    if len(languages) > 1:
        if refresh_attrs or changed_since:
            raise KgforgeError("--refresh-attrs and --changed-since are not for a parallel export (--lang zh,en)")
        options = ExportOptions(
            fmt, layout, budget=budget, include_text=not no_text, skip_invalid=skip_invalid, add_related=add_related
        )
        parallel = Domain(domain, workdir).export_parallel(
            goals, out, options, languages=languages, dialogues=dialogues, allow_mixed=allow_mixed
        )
        emit_json(parallel.as_dict()) if json_out else show_parallel(parallel)
        return
    options = ExportOptions(
        fmt,
        layout,
        language=languages[0] if languages else None,
        budget=budget,
        segmented=segment,
        include_text=not no_text,
        skip_invalid=skip_invalid,
        add_related=add_related,
        input_layout=input_layout,
        refresh_attrs=refresh_attrs,
        changed_since=changed_since,
        allow_mixed=allow_mixed,
    )
    report = Domain(domain, workdir).export(goals, out, options, dialogues=dialogues)
    emit_json(report.as_dict()) if json_out else show_export(report)


def show_export(report: ExportReport) -> None:
    """What was written and how much of the input made it; the manifest itself stays in the file (and --json)."""
    data = report.as_dict()
    console.print(
        f"exported {report.domain} as {report.format} {report.layout}: {report.records:,} records, "
        f"{data.get('triples', data.get('gold_in_retrieved', 0)):,} triples in {data['seconds']:.1f} s",
        markup=False,
    )
    for path in report.files:
        console.print(f"  wrote {path}", markup=False, soft_wrap=True)
    labels = data.get("labels") or {}
    if labels.get("mixed_count"):
        shown = ", ".join(f"{iri} ({label})" for iri, label in list(labels["mixed"].items())[:5])
        console.print(
            f"  {labels['mixed_count']:,} names written in another language than {labels['language']} "
            f"(--allow-mixed): {shown}",
            markup=False,
            soft_wrap=True,
        )
    for key, what in (("values_mixed", "values with no {} form"), ("text_mixed", "other texts in no {} form")):
        if labels.get(f"{key}_count"):
            shown = ", ".join(repr(text) for text in list(labels[key])[:5])
            console.print(
                f"  {labels[f'{key}_count']:,} {what.format(labels['language'])} written as they are "
                f"(--allow-mixed): {shown}",
                markup=False,
                soft_wrap=True,
            )
    if "exported_share" in data:  # real dialogues
        share = "-" if data["exported_share"] is None else f"{data['exported_share']:.1%}"
        attr = "-" if data["attr_coverage"] is None else f"{data['attr_coverage']:.1%}"
        console.print(
            f"  coverage: {data['dialogues']:,} of {data['dialogues_in']:,} dialogues exported ({share}), "
            f"{report.rejected:,} rejected; gold triples in the graph {data['gold_in_graph']:,} of "
            f"{data['gold_triples']:,}, retrieved {attr}{_not_in_language(labels)}",
            markup=False,
            soft_wrap=True,
        )
    else:
        checked = data.get("checks", {})
        console.print(
            f"  coverage: {report.records:,} of {checked.get('dialogues_checked', report.records):,} goals "
            f"exported, {report.rejected:,} rejected by the checks{_not_in_language(labels)}",
            markup=False,
            soft_wrap=True,
        )
    if since := data.get("changed_since"):
        console.print(
            f"  changed since build {since['build']}: {since['records_changed']:,} records written, "
            f"{since['records_unchanged']:,} unchanged left out",
            markup=False,
            soft_wrap=True,
        )


def _not_in_language(labels: dict) -> str:
    """``; 3 names, 12 values and 1 other text not in en (--allow-mixed)``: what the coverage line adds when
    an export wrote something in another language than it was asked for, else nothing."""
    counts = [labels.get(key) or 0 for key in ("mixed_count", "values_mixed_count", "text_mixed_count")]
    if not any(counts):
        return ""
    names, values, texts = (
        f"{n:,} {word}{'s' if n != 1 else ''}" for n, word in zip(counts, ("name", "value", "other text"))
    )
    return f"; {names}, {values} and {texts} not in {labels['language']} (--allow-mixed)"


def show_parallel(report: ParallelExportReport) -> None:
    console.print(
        f"exported {report.domain} in {', '.join(report.languages)}: {report.records:,} records of "
        f"{report.triples:,} triples each, ids and triple counts matching one for one",
        markup=False,
    )
    for language, path in report.twins.items():
        console.print(f"  {language}: {path}", markup=False, soft_wrap=True)
    for task, written in report.tasks.items():
        console.print(f"  {task}: {written['file']} ({written['samples']:,} samples)", markup=False, soft_wrap=True)
    for language in report.languages[1:]:
        counts = [
            len(found.get(language, []))
            for found in (report.mixed_labels, *(report.details.get(key, {}) for key in ("mixed_values", "mixed_text")))
        ]
        if any(counts):
            console.print(
                f"  {language}: {counts[0]:,} IRIs without a {language} label written in {report.languages[0]}, "
                f"{counts[1]:,} values and {counts[2]:,} other texts with no {language} form written as they are "
                "(--allow-mixed; listed in the manifest)",
                markup=False,
                soft_wrap=True,
            )
    if report.details.get("dialogues_rejected"):
        console.print(
            f"  {report.details['dialogues_rejected']:,} dialogues left out of every twin (--skip-invalid; listed "
            "in each twin's .rejected.jsonl)",
            markup=False,
            soft_wrap=True,
        )
    console.print(f"  manifest: {report.manifest}", markup=False, soft_wrap=True)


@app.command("export-formats")
@when_interrupted(NOTHING_CHANGED)
def export_formats_command(json_out: JsonOption = False) -> None:
    """The export formats, their layouts, and which ones take new goals (no conversation needed)."""
    listing = {
        name: {
            "description": fmt.description,
            "reads_dialogues": fmt.reads_dialogues,
            "layouts": [
                {
                    "layout": layout.name,
                    "kind": layout.kind,
                    "for_goals": not layout.needs_conversation,
                    "description": layout.description,
                }
                for layout in fmt.layouts
            ],
        }
        for name, fmt in _formats().items()
    }
    if json_out:
        emit_json(listing)
        return
    for name, entry in listing.items():
        console.print(f"[bold]{name}[/]  {entry['description']}")
        for layout in entry["layouts"]:
            goals = "new goals: yes" if layout["for_goals"] else "new goals: no "
            console.print(f"  --layout {layout['layout']:<16} {layout['kind']:<26} {goals}  {layout['description']}")
