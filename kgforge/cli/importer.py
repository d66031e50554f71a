"""`kgforge import wikidata|xlore` (add a knowledge-base source to a domain) and `kgforge link`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from kgforge.api import Domain, choices
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    REBUILD_DISCARDED,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    bars_wanted,
    console,
    emit_json,
    one_of,
    show_mapping,
    when_interrupted,
)

IMPORT_ENGINES = choices("dump engine")


import_app = typer.Typer(no_args_is_help=True, help="Add a Wikidata or XLORE source to a domain's store.")
app.add_typer(import_app, name="import")

DomainOption = Annotated[
    str, typer.Option("--domain", "-d", parser=DOMAIN, help="Domain whose store receives the source.")
]
SeedOption = Annotated[list[str], typer.Option("--seed", help="Seed entity (QID, or XLORE instance id); repeatable.")]
SeedNameOption = Annotated[
    list[str], typer.Option("--seed-name", help="Seed by exact zh/en label or alias; repeatable.")
]
SeedLabelsOption = Annotated[
    bool,
    typer.Option(
        "--seed-labels",
        help="Seed with the labels of the domain's own start entities (its head type, e.g. films); "
        "names matching several entities are reported, never guessed.",
    ),
]
HopsOption = Annotated[
    int | None, typer.Option(parser=NON_NEGATIVE, help="Expand seeds this many hops (default: schema or 3).")
]
CapOption = Annotated[
    int | None,
    typer.Option(
        "--fanout-cap",
        parser=NON_NEGATIVE,
        help="Follow at most this many neighbours per node (0: no cap; default: schema or 200).",
    ),
]
WorkersOption = Annotated[
    int | None, typer.Option(parser=NON_NEGATIVE, help="Parsing processes (0: in this process; ray: tasks at a time).")
]
EngineOption = Annotated[
    str,
    typer.Option(
        parser=one_of(IMPORT_ENGINES),
        help="local (a process pool here) or ray (Ray tasks; pip install 'kgforge\\[ray]').",
    ),
]
AddressOption = Annotated[
    str | None,
    typer.Option(
        help="The Ray cluster to run on (auto, ray://host:port); default: a Ray started here for this import."
    ),
]
NoResumeOption = Annotated[bool, typer.Option("--no-resume", help="Start the passes again instead of resuming.")]


def _report(result: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json(result)
        return
    source = result["source"]
    note = (
        f", [yellow]{source['quarantined']} quarantined[/] → {source['quarantine_file']}"
        if source["quarantined"]
        else ""
    )
    console.print(f"  {source['kind']}:{source['path']}: {source['quads']:,} quads{note}")
    show_mapping(
        f"imported into {result['domain']} ({result['build_id']})",
        {"store quads": result["total_quads"], **source["counts"]},
    )


IMPORT_HINT = (
    "interrupted: the published store is unchanged; rerun the same command to resume the import from its "
    "last checkpoint"
)
IMPORT_AFTER_DISK_FULL = "rerun the same command: the import resumes from its last checkpoint"


@import_app.command("wikidata")
@when_interrupted(IMPORT_HINT, after_disk_full=IMPORT_AFTER_DISK_FULL)
def import_wikidata(
    dump: Annotated[
        Path,
        typer.Argument(help="latest-all.json[.gz|.bz2], latest-all.ttl, a truthy .nt dump, or an entity JSON file."),
    ],
    domain: DomainOption,
    seed: SeedOption = [],
    seed_class: Annotated[
        list[str],
        typer.Option(
            "--seed-class",
            help="Seed with every instance (P31) of this class or its subclasses (P279*, from the dump).",
        ),
    ] = [],
    seed_name: SeedNameOption = [],
    seed_labels: SeedLabelsOption = False,
    hops: HopsOption = None,
    fanout_cap: CapOption = None,
    workers: WorkersOption = None,
    engine: EngineOption = "local",
    address: AddressOption = None,
    keep_deprecated: Annotated[
        bool,
        typer.Option(
            "--keep-deprecated",
            help="Write deprecated-rank statements to raw/wikidata/deprecated-<dump>.jsonl (they never become facts).",
        ),
    ] = False,
    no_resume: NoResumeOption = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Import a Wikidata dump (truthy statements, qualifiers, zh/en labels), optionally only the N-hop
    neighbourhood of seeds. A killed import resumes from its last checkpoint when run again."""
    report = Domain(domain, workdir).import_dump(
        dump,
        kind="wikidata",
        seeds=seed,
        seed_names=seed_name,
        seed_labels=seed_labels,
        seed_classes=seed_class,
        hops=hops,
        fanout_cap=fanout_cap,
        workers=workers,
        engine=engine,
        address=address,
        resume=not no_resume,
        keep_deprecated=keep_deprecated,
        progress=bars_wanted(json_out),
    )
    _report(report.as_dict(), json_out)


@import_app.command("xlore")
@when_interrupted(IMPORT_HINT, after_disk_full=IMPORT_AFTER_DISK_FULL)
def import_xlore(
    dump: Annotated[Path, typer.Argument(help="An XLORE dump file, or a folder of xlore.*.ttl files.")],
    domain: DomainOption,
    seed: SeedOption = [],
    seed_name: SeedNameOption = [],
    seed_labels: SeedLabelsOption = False,
    hops: HopsOption = None,
    fanout_cap: CapOption = None,
    workers: WorkersOption = None,
    engine: EngineOption = "local",
    address: AddressOption = None,
    no_resume: NoResumeOption = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Import XLORE dump files, optionally only the N-hop neighbourhood of seeds (KdConv's recipe: 3 hops). Each
    file is parsed in parallel passes (a process pool, or Ray tasks); a killed import resumes from its checkpoints."""
    report = Domain(domain, workdir).import_dump(
        dump,
        kind="xlore",
        seeds=seed,
        seed_names=seed_name,
        seed_labels=seed_labels,
        hops=hops,
        fanout_cap=fanout_cap,
        workers=workers,
        engine=engine,
        address=address,
        resume=not no_resume,
        progress=bars_wanted(json_out),
    )
    _report(report.as_dict(), json_out)


@app.command("link")
@when_interrupted(REBUILD_DISCARDED)
def link_command(
    domain: DomainArgument, workdir: WorkdirOption = DEFAULT_WORKDIR, json_out: JsonOption = False
) -> None:
    """Link dataset/crawled entities to their Wikidata/XLORE counterparts (owl:sameAs) by zh/en label and
    alias with type checks; ambiguous matches are listed in <domain>/links-report.json, never guessed."""
    report = Domain(domain, workdir).link().as_dict()
    if json_out:
        emit_json(report)
        return
    show_mapping(f"linked {domain}", {k: v for k, v in report.items() if k != "ambiguous_examples"})
    for name, candidates in list(report["ambiguous_examples"].items())[:10]:
        console.print(f"  ambiguous: {name} → {', '.join(candidates)}")
