"""`kgforge synth`: dialogues drafted from goals (by a model, or offline by templates), every turn verified against
the graph, repaired or dropped."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from kgforge.api import Domain, SynthOptions, choices
from kgforge.cli import _app
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    LANGUAGE,
    NON_NEGATIVE,
    POSITIVE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    emit_json,
    err_console,
    in_words,
    one_of,
    show_mapping,
    when_interrupted,
)

STYLES = choices("synth style")
LAYOUTS = choices("synth layout")
INTERRUPTED = (
    "interrupted: no file was left half-written (each is replaced whole); every reply so far is cached: rerun the "
    "same command to go on without asking again"
)


@app.command("synth")
@when_interrupted(INTERRUPTED)
def synth_command(
    domain: DomainArgument,
    goals: Annotated[Path, typer.Option("--goals", help="Goals JSONL from `kgforge goals` (of this style).")],
    out: Annotated[Path, typer.Option("--out", "-o", help="Dialogue file to write (the style's own layout).")],
    style: Annotated[str, typer.Option("--style", parser=one_of(STYLES), help=in_words(STYLES) + ".")],
    layout: Annotated[
        str | None,
        typer.Option(
            "--layout", parser=one_of(LAYOUTS), help="The style's layout; DuRecDial: lic2020 (default), v2 or acl2020."
        ),
    ] = None,
    lang: Annotated[
        str | None, typer.Option("--lang", parser=LANGUAGE, help="zh or en (default: the schema's).")
    ] = None,
    n: Annotated[int | None, typer.Option("--n", parser=POSITIVE, help="Only the first N goals.")] = None,
    llm_url: _app.LlmUrlOption = None,
    llm_model: _app.LlmModelOption = None,
    llm_key_env: _app.LlmKeyEnvOption = None,
    concurrency: Annotated[int, typer.Option("--concurrency", parser=POSITIVE, help="Requests in flight.")] = 4,
    max_tries: Annotated[
        int, typer.Option("--max-tries", parser=POSITIVE, help="Requests per draft, per failing turn, per goal.")
    ] = 3,
    seed: Annotated[
        int, typer.Option("--seed", parser=NON_NEGATIVE, help="Sent with every request; picks phrases.")
    ] = 0,
    prompts: Annotated[
        Path | None, typer.Option("--prompts", help="Prompt templates of your own for the style (TOML).")
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the requests and prompt characters it would send; send nothing.")
    ] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Draft a dialogue per goal (a model, or templates offline), verify every turn against the graph, repair or drop."""
    kg = Domain(domain, workdir)
    options = SynthOptions(
        style,
        layout=layout,
        language=lang,
        n=n,
        llm_url=llm_url,
        llm_model=llm_model,
        concurrency=concurrency,
        max_tries=max_tries,
        seed=seed,
        prompts=prompts,
        progress=not json_out,
    )
    options = replace(options, key_env=llm_key_env) if llm_key_env else options
    if dry_run:
        plan = kg.synth_plan(goals, out, options)
        emit_json(plan.as_dict()) if json_out else show_mapping(
            f"synth {domain} --dry-run (nothing sent)", plan.as_dict()
        )
        return
    report = kg.synth(goals, out, options)
    data = report.as_dict()
    if report.mixed_labels:
        err_console.print(
            f"[yellow]warning[/]: {report.mixed_labels:,} names have no {report.language} label and are written as the "
            "graph has them; `kgforge translate` proposes labels",
            soft_wrap=True,
        )
    if report.dropped:
        err_console.print(
            f"[yellow]warning[/]: {report.dropped:,} of {report.goals:,} goals dropped "
            f"({', '.join(f'{k} {v}' for k, v in report.drops.items())}); each with its reason in "
            f"{escape(str(report.rejected))}",
            soft_wrap=True,
        )
    if json_out:
        emit_json(data)
        return
    show_mapping(f"synth {domain} → {report.out}", {k: v for k, v in data.items() if not isinstance(v, dict)})
    for key in ("drops", "bad_replies", "verdicts"):
        if data[key]:
            show_mapping(key, data[key])
