"""`kgforge release DOMAIN …`, `kgforge release check DIR` and `kgforge audit sample|import` (docs/release.md)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from typer.core import TyperGroup

from kgforge.api import Domain, ReleaseCheck, audit_import, check_release, choices, parse_ratios
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    NON_NEGATIVE,
    POSITIVE,
    Checked,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    one_of,
    show_mapping,
    when_interrupted,
)

if TYPE_CHECKING:  # typer's own copy of click (0.29 on), read by the type checker only (see _lazy)
    from typer._click import Context


class _MakeUnlessChecking(TyperGroup):
    """`kgforge release DOMAIN …` makes a release (the `make` command, named or not), `kgforge release check DIR` checks
    one (a domain named check is released with `kgforge release make check …`). ``--dialogues A B C`` takes the
    files up to the next option, as `--dialogues A --dialogues B --dialogues C`."""

    def parse_args(self, ctx: Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["make", *args]
        return super().parse_args(ctx, _spread("--dialogues", args))


def _spread(option: str, args: list[str]) -> list[str]:
    out: list[str] = []
    taking = False
    for arg in args:
        if arg == option:
            taking = True
            continue
        if taking and arg.startswith("-"):
            taking = False
        out += [option, arg] if taking else [arg]
    return out


release_app = typer.Typer(
    cls=_MakeUnlessChecking,
    no_args_is_help=True,
    help="Release dialogues grounded in a domain as a dataset folder (HF card, Croissant, turn table); check one.",
)
app.add_typer(release_app, name="release")
audit_app = typer.Typer(
    no_args_is_help=True, help="A hand audit of the graph's accuracy: a sample to rate, the ratings read."
)
app.add_typer(audit_app, name="audit")

BY = choices("split by")
KG_CHOICES = choices("release kg")
ORIGINS = choices("dialogue origin")
RATIOS = Checked(str, lambda value, _: parse_ratios(value), "ratios such as 8:1:1")
LICENCE_HELP = "An SPDX licence for the release (CC-BY-4.0, CC-BY-NC-SA-4.0, …) that every source allows."


@release_app.command("make")
@when_interrupted(
    "interrupted: nothing was written where --out points (the release is made beside it and renamed at the end); "
    "rerun the same command"
)
def make_command(
    domain: DomainArgument,
    dialogues: Annotated[
        list[Path],
        typer.Option("--dialogues", help="Dialogue files of one layout (KdConv, DuConv sessions, DuRecDial)."),
    ],
    out: Annotated[Path, typer.Option("--out", help="The release folder: new, or an earlier release (replaced).")],
    name: Annotated[str | None, typer.Option(help="The card's name (default: the folder's).")] = None,
    split: Annotated[
        Path | None, typer.Option("--split", metavar="DIR", help="Split files `kgforge corpus split` wrote.")
    ] = None,
    ratios: Annotated[
        str | None, typer.Option(parser=RATIOS, help="Or split here: train:dev:test, e.g. 8:1:1.")
    ] = None,
    by: Annotated[
        str, typer.Option(parser=one_of(BY), help="With --ratios: keep topics apart, or by dialogue.")
    ] = "topic",
    seed: Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Seed of the --ratios split.")] = 0,
    kg: Annotated[
        str,
        typer.Option(parser=one_of(KG_CHOICES), help="kg/: the facts the dialogues use, the whole domain, or none."),
    ] = "used",
    audit: Annotated[
        Path | None, typer.Option(help="AUDIT.json of `kgforge audit import`, quoted in the card.")
    ] = None,
    licence: Annotated[str | None, typer.Option(help=LICENCE_HELP)] = None,
    origin: Annotated[
        str, typer.Option(parser=one_of(ORIGINS), help="Where the dialogues come from: a dataset, a crowd, an LLM.")
    ] = "dataset",
    llm_model: Annotated[
        str | None, typer.Option("--llm-model", help="The language model that wrote them (--origin llm).")
    ] = None,
    skip_invalid: Annotated[
        bool, typer.Option("--skip-invalid", help="Leave out (and count) records that are not dialogues of the domain.")
    ] = False,
    workers: Annotated[int | None, typer.Option(parser=POSITIVE, help="Processes grounding the dialogues.")] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Release dialogues grounded in DOMAIN as a dataset folder (`kgforge release DOMAIN …`: `make` may be left out).

    Each split in the dialogues' own layout and as one turn table, a Hugging Face card, croissant.json, kg/ and
    the sha256 of every file; made beside --out and renamed into place (docs/release.md)."""
    report = Domain(domain, workdir).release(
        dialogues,
        out,
        name=name,
        split=split,
        ratios=ratios,
        by=by,
        seed=seed,
        kg=kg,
        audit=audit,
        licence=licence,
        origin=origin,
        model=llm_model,
        skip_invalid=skip_invalid,
        workers=workers,
    )
    if json_out:
        emit_json(report.as_dict())
        return
    data = report.as_dict()
    show_mapping(
        f"released {domain} to {report.out}",
        {
            k: ("yes" if v else "no") if isinstance(v, bool) else v
            for k, v in data.items()
            if not isinstance(v, dict | list | tuple) and v is not None and k != "out"
        },
    )
    for split_made in report.splits:
        console.print(
            f"  {split_made.name}: {split_made.dialogues:,} dialogues, {split_made.turns:,} turns "
            f"({split_made.layout_file}, {split_made.turns_file})",
            markup=False,
        )
    console.print("verdicts: " + ", ".join(f"{k} {v:,}" for k, v in report.verdicts.items()), markup=False)
    for note in report.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)


@release_app.command("check")
@when_interrupted("interrupted: nothing was changed (this command only reads)")
def check_command(
    folder: Annotated[Path, typer.Argument(metavar="DIR", help="A folder `kgforge release` wrote.")],
    mirrors: Annotated[
        Path | None,
        typer.Option(envvar="READERS_MIRRORS", help="run-readers' mirrors of the seeds' repositories."),
    ] = None,
    readers: Annotated[
        Path | None,
        typer.Option(envvar="KGFORGE_RUN_READERS", help="The run-readers program (default: on the PATH)."),
    ] = None,
    records: Annotated[
        bool | None,
        typer.Option(
            "--records/--no-records", help="Read every turn record back with mlcroissant (default: small tables)."
        ),
    ] = None,
    json_out: JsonOption = False,
) -> None:
    """Check a release: checksums, the card's header, Croissant validity, every file readable, the seeds' readers."""
    report = check_release(folder, mirrors=mirrors, readers=readers, records=records)
    if json_out:
        emit_json(report.as_dict())
    else:
        _show_check(report)
    if not report.ok:
        raise typer.Exit(1)


def _show_check(report: ReleaseCheck) -> None:
    for line in report.checks:
        mark = {"ok": "[green]ok[/]", "failed": "[red]failed[/]"}.get(line.status, "[yellow]not run[/]")
        console.print(f"{line.check:<10} {mark}  {escape(line.detail)}", soft_wrap=True)
    for problem in report.problems:
        console.print(f"  {escape(problem)}", soft_wrap=True)
    console.print("[bold]release ok[/]" if report.ok else "[bold red]release check failed[/]")


@audit_app.command("sample")
@when_interrupted("interrupted: no file was left half-written (each is replaced whole); rerun the same command")
def sample_command(
    domain: DomainArgument,
    n: Annotated[int, typer.Option("--n", parser=POSITIVE, help="Triples to sample.")],
    out: Annotated[Path, typer.Option("--out", help="The rating sheet: .csv, .tsv or .xlsx.")],
    by: Annotated[str | None, typer.Option(parser=one_of(("relation",)), help="Stratify by relation.")] = None,
    seed: Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Seed of the sample.")] = 0,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """A seeded sample of the graph's facts as a rating sheet: the triple, its labels, its source and provenance."""
    sheet = Domain(domain, workdir).audit_sample(n, out, by=by, seed=seed)
    if json_out:
        emit_json(sheet.as_dict())
        return
    console.print(
        f"{sheet.items:,} of {sheet.facts:,} facts of {domain} (build {sheet.build_id}) in {escape(sheet.out)}; give "
        "each rater a copy, then `kgforge audit import` their sheets"
    )


@audit_app.command("import")
@when_interrupted("interrupted: no file was left half-written (each is replaced whole); rerun the same command")
def import_command(
    sheets: Annotated[list[Path], typer.Argument(metavar="SHEET...", help="The raters' filled copies of the sheet.")],
    out: Annotated[Path, typer.Option("--out", help="AUDIT.json: what `kgforge release --audit` quotes.")],
    json_out: JsonOption = False,
) -> None:
    """Read the raters' sheets: accuracy overall and per relation with Wilson 95% intervals, Fleiss' kappa."""
    report = audit_import(sheets, out)
    if json_out:
        emit_json(report.as_dict())
        return
    total = report.accuracy
    console.print(
        f"[bold]{total.correct} of {total.items} correct[/] ({_pct(total.accuracy)}, Wilson 95% "
        f"{_pct(total.low)}–{_pct(total.high)}); {report.raters} rater(s)"
        + (f", Fleiss' kappa {report.fleiss_kappa:.3f}" if report.fleiss_kappa is not None else "")
    )
    for row in report.per_relation:
        console.print(
            f"  {row.relation}: {row.correct}/{row.items} {_pct(row.accuracy)} [{_pct(row.low)}, {_pct(row.high)}]",
            markup=False,
        )
    console.print(f"wrote {escape(report.out)}")


def _pct(value: Any) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"
