"""`kgforge corpus stats|split|candidates|card`: dialogue statistics, splits, retrieval candidates and a
datasheet (docs/corpus.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kgforge.api import (
    CorpusStats,
    build_candidates,
    choices,
    corpus_stats,
    parse_ratios,
    split_corpus,
    write_card,
)
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    OUT_DIR,
    OUT_FILE,
    Checked,
    JsonOption,
    SkipInvalidOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    long_running,
    one_of,
    reads_inputs,
    show_mapping,
    whole_number,
)

BY = choices("split by")
METHODS = choices("candidate method")


corpus_app = typer.Typer(
    no_args_is_help=True, help="Dialogue statistics, splits, retrieval candidates and a datasheet."
)
app.add_typer(corpus_app, name="corpus")

FileArgument = Annotated[
    Path, typer.Argument(help="A dialogue file: KdConv, DuConv sessions or samples, DuRecDial (any LIC-2020 layout).")
]
LayoutOption = Annotated[
    str | None,
    typer.Option(
        "--format",
        parser=one_of(choices("input layout")),
        help="The file's layout kind (kdconv, duconv-session, …); default: detected from its first record.",
    ),
]
SeedOption = Annotated[
    int, typer.Option("--seed", parser=NON_NEGATIVE, help="Random seed: the same seed, the same bytes.")
]


RATIOS = Checked(str, lambda value, _: parse_ratios(value), "ratios such as 8:1:1")


@corpus_app.command("stats")
@reads_inputs
@long_running
def stats_command(
    file: FileArgument,
    domain: Annotated[
        str | None,
        typer.Option(
            parser=DOMAIN, help="A domain whose graph grounds the dialogues (grounded figures: see docs/corpus.md)."
        ),
    ] = None,
    by_split: Annotated[
        Path | None,
        typer.Option("--by-split", metavar="DIR", help="Also each split file that `corpus split` wrote in DIR."),
    ] = None,
    transitions: Annotated[
        bool,
        typer.Option(
            "--transitions",
            help="Also KdConv Fig. 2 (dialogues with >= k topics "
            "in the first n turns) and Table 4 (top topic "
            "transitions by hops, as relation paths: needs "
            "--domain).",
        ),
    ] = False,
    plot: Annotated[
        Path | None,
        typer.Option(
            "--plot",
            metavar="DIR",
            callback=OUT_DIR,
            help="Draw those two as PNG files in DIR (implies --transitions).",
        ),
    ] = None,
    input_layout: LayoutOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Dialogues, utterances, tokens, characters and knowledge per dialogue (KdConv Table 3, DuConv Table 1)."""
    stats = corpus_stats(
        file,
        input_layout=input_layout,
        by_split=by_split,
        domain=domain,
        workdir=workdir,
        transitions=transitions,
        plot=plot,
    )
    if json_out:
        emit_json(stats.as_dict())
        return
    _show(file.name, stats)
    for name, part in stats.splits.items():
        _show(f"{file.name} / {name}", part)
    _show_transitions(stats)
    for figure in stats.figures:
        console.print(f"wrote {Path(figure).absolute()}", markup=False, soft_wrap=True)
    for note in stats.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)


def _show_transitions(stats: CorpusStats) -> None:
    figures = stats.transitions
    if figures is None:  # not asked for
        return
    console.print(
        f"[bold]topic transitions[/] {figures.transitions:,} ({figures.distinct_transitions:,} distinct); "
        f"by hops: {', '.join(f'{h} {n:,}' for h, n in sorted(figures.by_hops.items()))}"
    )
    for hops, top in figures.top_paths.items():
        for path, n in top:
            console.print(f"  {hops} hop(s)  {n:>6,}  {path}", markup=False)
    if figures.topics_within_turns is not None:
        for k, counts in figures.topics_within_turns.items():
            shown = ", ".join(f"n={n} {c:,}" for n, c in enumerate(counts, 1) if n in (2, 4, 8, 12, 16, len(counts)))
            console.print(f"  dialogues with >= {k} topics in the first n turns: {shown}", markup=False)


def _show(title: str, stats: CorpusStats) -> None:
    flat: dict[str, Any] = {
        k: v
        for k, v in stats.as_dict().items()
        if not isinstance(v, (dict, list, tuple)) and v is not None and k != "file"
    }
    show_mapping(title, flat)
    for name in ("knowledge", "grounded", "duconv", "durecdial"):
        part = getattr(stats, name)
        if part is not None:
            show_mapping(
                f"  {name}",
                {
                    k: (", ".join(f"{t} {n}" for t, n in v.items()) if isinstance(v, dict) else v)
                    for k, v in part.__dict__.items()
                    if v is not None
                },
            )
    for name, value in stats.as_dict().get("extra", {}).items():  # plug-in statistics
        show_mapping(f"  {name}", value if isinstance(value, dict) else {name: value})


@corpus_app.command("split")
@reads_inputs
@long_running
def split_command(
    file: FileArgument,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            callback=OUT_DIR,
            help="Folder for train/dev/test files (in the input's layout) and split.report.json.",
        ),
    ],
    ratios: Annotated[
        str, typer.Option(parser=RATIOS, metavar="A:B:C", help="train:dev:test (or train:test) as whole numbers.")
    ] = "8:1:1",
    by: Annotated[
        str,
        typer.Option(
            parser=one_of(BY),
            help="dialogue: each dialogue on its own; topic: every topic in "
            "one split only (dialogues that share one move together).",
        ),
    ] = "dialogue",
    seed: SeedOption = 0,
    input_layout: LayoutOption = None,
    skip_invalid: SkipInvalidOption = False,
    json_out: JsonOption = False,
) -> None:
    """Seeded, reproducible splits in the input's layout, each with a topic and triple leakage report."""
    report = split_corpus(
        file, out, ratios=ratios, by=by, seed=seed, input_layout=input_layout, skip_invalid=skip_invalid
    )
    if json_out:
        emit_json(report.as_dict())
        return
    console.print(
        f"{report.dialogues:,} dialogues by {report.by} (seed {report.seed}), {report.units:,} units, "
        f"largest {report.largest_unit}; topics in more than one split: {report.topic_overlap}",
        markup=False,
    )
    for p in report.parts:
        leak = (
            ""
            if p.topic_leakage is None
            else f"  topic leakage {p.topic_leakage:.3f}  triple leakage {p.triple_leakage:.3f}"
        )
        console.print(
            f"  {p.name:<6} {p.dialogues:>7,}  share {p.share:.3f} (asked {p.share_asked:.3f}){leak}  {p.file}",
            markup=False,
            soft_wrap=True,
        )
    for note in report.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    console.print(f"report: {report.report_file}", markup=False, soft_wrap=True)


@corpus_app.command("candidates")
@reads_inputs
@long_running
def candidates_command(
    file: FileArgument,
    pool: Annotated[Path, typer.Option("--pool", help="Training dialogues whose utterances are the candidate pool.")],
    out: Annotated[
        Path, typer.Option("--out", "-o", callback=OUT_FILE, help="JSON lines: each sample with its 'candidate' list.")
    ],
    method: Annotated[
        str, typer.Option(parser=one_of(METHODS), help="random (DuConv's baseline) or bm25 (KdConv's).")
    ] = "random",
    k: Annotated[
        int, typer.Option("--k", parser=whole_number(2), help="Candidates per sample, the gold included.")
    ] = 10,
    seed: SeedOption = 0,
    input_layout: LayoutOption = None,
    skip_invalid: SkipInvalidOption = False,
    json_out: JsonOption = False,
) -> None:
    """The gold response plus k-1 others per sample, as DuConv's construct_candidate.py writes them."""
    report = build_candidates(
        file, pool, out, method=method, k=k, seed=seed, input_layout=input_layout, skip_invalid=skip_invalid
    )
    if json_out:
        emit_json(report.as_dict())
        return
    show_mapping(
        f"candidates ({report.method}, k={report.k})",
        {k_: v for k_, v in report.as_dict().items() if k_ not in ("method", "k", "notes")},
    )
    for note in report.notes:
        console.print(f"note: {note}", markup=False, soft_wrap=True)
    if report.unmatched_queries:
        console.print(
            f"note: {report.unmatched_queries} samples' queries share no word with the pool; their "
            "candidates are BM25's arbitrary order",
            markup=False,
        )
    if report.dialogues_without_samples:
        console.print(f"note: {report.dialogues_without_samples} dialogues gave no sample (no response)", markup=False)


@corpus_app.command("card")
@reads_inputs
@long_running
def card_command(
    files: Annotated[list[Path], typer.Argument(help="The dialogue files of the release.")],
    domain: Annotated[str, typer.Option(parser=DOMAIN, help="The domain the dialogues are grounded in.")],
    out: Annotated[Path, typer.Option("--out", "-o", callback=OUT_FILE, help="Markdown file to write.")],
    split: Annotated[
        Path | None, typer.Option(metavar="DIR", help="A folder written by `corpus split` for the first file.")
    ] = None,
    input_layout: LayoutOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """A Markdown datasheet: statistics, sources with provenance and licence, split and leakage, build id."""
    report = write_card(files, domain, out, workdir=workdir, split=split, input_layout=input_layout)
    if json_out:
        emit_json(report.as_dict())
        return
    console.print(
        f"wrote {report.out} (build {report.build_id}, {len(report.sources)} sources)", markup=False, soft_wrap=True
    )
    if report.unknown_licences:
        console.print(f"note: {report.unknown_licences} sources state no licence; the card says so", markup=False)
