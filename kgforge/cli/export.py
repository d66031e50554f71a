"""`kgforge export`: per-dialogue subgraphs in DuConv, KdConv, DuRecDial or generic JSONL/Parquet layout."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    FOLDER,
    LANGUAGE,
    NON_NEGATIVE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    emit_json,
    one_of,
    show_mapping,
)
from kgforge.core.errors import KgforgeError
from kgforge.exports import ExportOptions, export_goals
from kgforge.exports.dialogues import export_dialogues
from kgforge.exports.formats import FORMATS


@app.command("export")
def export_command(
    domain: DomainArgument,
    fmt: Annotated[str, typer.Option("--format", parser=one_of(FORMATS), help=f"One of {', '.join(FORMATS)}.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="File to write (plus OUT.manifest.json, OUT.ids.txt).")],
    goals: Annotated[Path | None, typer.Option(help="Goals JSONL from `kgforge goals`.")] = None,
    dialogues: Annotated[Path | None, typer.Option(help="Existing KdConv dialogues ({train,dev,test}.json).")] = None,
    budget: Annotated[int | None, typer.Option(parser=NON_NEGATIVE,
                                               help="Facts per topic besides its type fact and the goal path "
                                                    "(default 7 for goals, all for --dialogues).")] = None,
    lang: Annotated[str | None, typer.Option(parser=LANGUAGE, help="Label language (default: the schema's).")] = None,
    layout: Annotated[str, typer.Option(parser=one_of(("conversation", "sample")),
                                        help="DuConv layout: conversation (train/dev) or sample "
                                             "(history/response, as the test files).")] = "conversation",
    segment: Annotated[bool, typer.Option(help="DuConv: cut every string into words joined by single spaces, as the "
                                               "real files are (jieba); --no-segment keeps labels whole.")] = True,
    no_text: Annotated[bool, typer.Option("--no-text", help="Leave free-text facts (comments, Information) out.")] = False,
    skip_invalid: Annotated[bool, typer.Option("--skip-invalid", help="Write the dialogues that pass the checks "
                                                                     "and report the others.")] = False,
    add_related: Annotated[str | None, typer.Option(parser=FOLDER,
                                                    help="Add each topic's top related entity from the model "
                                                         "bundle models/NAME (`kgforge embed`).")] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """One checked subgraph per goal or dialogue, with stable ids and an export manifest."""
    if (goals is None) == (dialogues is None):
        raise KgforgeError("give either --goals FILE (from `kgforge goals`) or --dialogues FILE (KdConv)")
    options = ExportOptions(fmt=fmt, language=lang, budget=budget, layout=layout, segmented=segment,
                            include_text=not no_text,
                            skip_invalid=skip_invalid, add_related=add_related)
    if goals is not None:
        report = export_goals(domain, goals, options, out, workdir)
    else:
        report = export_dialogues(domain, dialogues, options, out, workdir)
    if json_out:
        emit_json(report)
        return
    show_mapping(f"exported {domain}", {k: v for k, v in report.items() if isinstance(v, (int, float, str))})
