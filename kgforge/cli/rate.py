"""`kgforge rate`: human rating sheets for a rubric (blinded, shuffled) and the filled sheets read back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from kgforge.api import (
    ArgumentError,
    RatingReport,
    choices,
    figure_text,
    import_ratings,
    make_sheets,
    p_text,
    parse_system,
    registry,
)
from kgforge.cli._app import NON_NEGATIVE, OUT_DIR, POSITIVE, JsonOption, app, console, emit_json, one_of, reads_inputs
from kgforge.cli._pairing import DialoguesOption, GoldOption

LANGUAGES = choices("rating language")
RUBRICS = registry("rating rubric")
SHEET_FORMATS = choices("sheet format")


rate_app = typer.Typer(no_args_is_help=True, help="Human rating sheets: write them for a rubric, read them back.")
app.add_typer(rate_app, name="rate")


@rate_app.command("rubrics")
def rubrics_command(json_out: JsonOption = False) -> None:
    """The bundled rubrics: unit, aspects and scales."""
    found = [
        {
            "name": r.name,
            "unit": r.obj.unit,
            "level": r.obj.level,
            "source": r.obj.source,
            "aspects": {a.key: list(a.scale) for a in r.obj.aspects},
        }
        for r in RUBRICS
    ]
    if json_out:
        emit_json(found)
        return
    table = Table("rubric", "unit", "aspects (scale)", box=None, pad_edge=False)
    for r in found:
        aspects = ", ".join(f"{k} {min(v):g}..{max(v):g}" for k, v in r["aspects"].items())
        table.add_row(r["name"], r["unit"], escape(aspects))
    console.print(table)


@rate_app.command("sheet")
@reads_inputs
def sheet_command(
    rubric: Annotated[str, typer.Argument(help="A bundled rubric (see `kgforge rate rubrics`) or your own .toml.")],
    system: Annotated[
        list[str], typer.Option("--system", help="A system's responses or dialogues, NAME=FILE (repeat it).")
    ],
    out: Annotated[
        Path, typer.Option("--out", "-o", callback=OUT_DIR, help="Folder for the sheets, instructions.md and key.json.")
    ],
    annotators: Annotated[
        int | None, typer.Option(parser=POSITIVE, help="Sheets to write (default: the rubric's, else 3).")
    ] = None,
    seed: Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Seed of the sample and the shuffles.")] = 0,
    sample: Annotated[
        int | None,
        typer.Option(
            parser=POSITIVE, help="Rate this many inputs (drawn with the seed), every system's output for each."
        ),
    ] = None,
    lang: Annotated[str, typer.Option(parser=one_of(LANGUAGES), help="Language of the instructions.")] = "zh",
    sheet_format: Annotated[
        str, typer.Option("--format", parser=one_of(SHEET_FORMATS), help="Sheet file format.")
    ] = "csv",
    gold: GoldOption = None,
    dialogues: DialoguesOption = None,
    json_out: JsonOption = False,
) -> None:
    """Blinded, shuffled rating sheets, one per annotator; the key to un-blind them stays beside them."""
    systems = {}
    for spec in system:
        try:
            _, name, path = parse_system(spec)
        except ArgumentError as exc:
            raise typer.BadParameter(exc.problem, param_hint="--system") from None
        systems[name] = path
    made = make_sheets(
        rubric,
        systems,
        out,
        annotators=annotators,
        seed=seed,
        sample=sample,
        language=lang,
        sheet_format=sheet_format,
        gold=gold,
        dialogues=dialogues,
    )
    if json_out:
        emit_json(made.__dict__)
        return
    console.print(
        f"[bold]{made.items:,} items[/] ({made.sampled_units:,} inputs × {len(made.systems)} systems, "
        f"rubric {made.rubric}) in {len(made.sheets)} sheets under {escape(made.folder)}"
    )
    if made.without_context:
        console.print(
            f"[yellow]{made.without_context:,} of {made.items:,} items show no context or knowledge[/]: give "
            "--gold (or --dialogues) with the dialogue file the responses answer"
        )
    console.print(
        f"give the annotators the sheets and {escape(made.instructions)}; keep {escape(made.key)} "
        "(it names the systems)"
    )


@rate_app.command("import")
def import_command(
    folder: Annotated[Path, typer.Argument(help="The folder `rate sheet` wrote (or its key.json).")],
    sheets: Annotated[
        list[Path] | None,
        typer.Argument(
            help="Filled sheets (CSV, TSV or XLSX) in the key's annotator order (default: the folder's sheets)."
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            help="Write every rating un-blinded (.jsonl: system, id, annotator, scores), the file "
            "`kgforge eval --human` reads.",
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Read filled sheets back: per-system means, agreement (Fleiss' kappa, Krippendorff's alpha, percent),
    paired significance (t-test, Wilcoxon, sign test)."""
    report = import_ratings(folder, sheets or None, out)
    if json_out:
        emit_json(report.to_dict())
    else:
        show_ratings(report)


def show_ratings(report: RatingReport) -> None:
    console.print(
        f"[bold]{report.rubric}[/]: {report.ratings:,} ratings of {report.items:,} items by "
        f"{len(report.annotators)} annotators ({report.missing} cells left empty)"
    )
    if report.means:
        table = Table("system", "aspect", "mean", "inputs", box=None, pad_edge=False)
        for row in report.means:
            table.add_row(escape(row["system"]), escape(row["aspect"]), figure_text(row["mean"], False), str(row["n"]))
        console.print(table)
    agree = Table("aspect", "Fleiss kappa", "Krippendorff alpha", "all agree", "2+ agree", box=None, pad_edge=False)
    for aspect, found in report.agreement.items():
        agree.add_row(
            escape(aspect),
            *[figure_text(found[k], False) for k in ("fleiss_kappa", "krippendorff_alpha")],
            *[figure_text(found[k], True) for k in ("all_agree", "at_least_two_agree")],  # shares of the items
        )
    console.print(agree)
    if report.significance:
        tests = Table(
            "aspect", "a", "b", "n", "mean a", "mean b", "t-test p", "Wilcoxon p", "sign p", box=None, pad_edge=False
        )
        for row in report.significance:
            tests.add_row(
                escape(row["aspect"]),
                escape(row["a"]),
                escape(row["b"]),
                str(row["n"]),
                *[figure_text(row[k], False) for k in ("mean_a", "mean_b")],
                *[p_text(row[k]) for k in ("t_p", "wilcoxon_p", "sign_p")],
            )
        console.print(tests)
    if report.preferences:
        prefs = Table("aspect", "a", "b", "a wins", "b wins", "ties", "sign p", box=None, pad_edge=False)
        for row in report.preferences:
            prefs.add_row(
                escape(row["aspect"]),
                escape(row["a"]),
                escape(row["b"]),
                str(row["wins"]),
                str(row["losses"]),
                str(row["ties"]),
                p_text(row["sign_p"]),
            )
        console.print(prefs)
    if report.scores_file:
        console.print(f"every rating un-blinded (for eval --human): {escape(report.scores_file)}")
