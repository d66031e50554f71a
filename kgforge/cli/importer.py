"""`kgforge import wikidata|xlore` (add a knowledge-base source to a domain) and `kgforge link`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from kgforge.build.domain_import import import_into_domain
from kgforge.build.link import link_domain, start_entity_names
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    DOMAIN,
    NON_NEGATIVE,
    REBUILD_DISCARDED,
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
from kgforge.sources.wikidata.engines import ENGINES
from kgforge.sources.wikidata.framing import TURTLE_DIRECTIVES, DumpReader

import_app = typer.Typer(no_args_is_help=True, help="Add a Wikidata or XLORE source to a domain's store.")
app.add_typer(import_app, name="import")

DomainOption = Annotated[str, typer.Option("--domain", "-d", parser=DOMAIN,
                                           help="Domain whose store receives the source.")]
SeedOption = Annotated[list[str], typer.Option("--seed", help="Seed entity (QID, or XLORE instance id); repeatable.")]
SeedNameOption = Annotated[list[str], typer.Option("--seed-name", help="Seed by exact zh/en label or alias; repeatable.")]
SeedLabelsOption = Annotated[bool, typer.Option(
    "--seed-labels", help="Seed with the labels of the domain's own start entities (its head type, e.g. films); "
                          "names matching several entities are reported, never guessed.")]
HopsOption = Annotated[int | None, typer.Option(parser=NON_NEGATIVE, help="Expand seeds this many hops (default: "
                                                                          "schema or 3).")]
CapOption = Annotated[int | None, typer.Option("--fanout-cap", parser=NON_NEGATIVE, help="Follow at most this many "
                                               "neighbours per node (0: no cap; default: schema or 200).")]
WorkersOption = Annotated[int | None, typer.Option(parser=NON_NEGATIVE, help="Parsing processes (0: in this "
                                                                             "process; ray: tasks at a time).")]
EngineOption = Annotated[str, typer.Option(parser=one_of(ENGINES.names()), help="local (a process pool here) or ray "
                                           "(Ray tasks; pip install 'kgforge\\[ray]').")]
AddressOption = Annotated[Optional[str], typer.Option(help="The Ray cluster to run on (auto, ray://host:port); "
                                                           "default: a Ray started here for this import.")]
NoResumeOption = Annotated[bool, typer.Option("--no-resume", help="Start the passes again instead of resuming.")]


def _selection(domain: str, workdir: Path, seeds: list[str], names: list[str], seed_labels: bool,
               hops: int | None, cap: int | None) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if seeds:
        options["seeds"] = seeds
    named: dict[str, str | None] = {name: None for name in names}
    if seed_labels:
        named.update(start_entity_names(domain, workdir))
    if named:
        options["seed_names"] = named
    if hops is not None:
        options["hops"] = hops
    if cap is not None:
        options["fanout_cap"] = cap
    return options


def _passes(options: dict[str, Any], workers: int | None, engine: str, address: str | None,
            no_resume: bool) -> dict[str, Any]:
    """``options`` with how the dump passes run (:class:`~kgforge.sources.wikidata.passes.PassOptions`)."""
    if workers is not None:
        options["workers"] = workers
    if engine != "local" or address:
        options.update(engine=engine, address=address)
    if no_resume:
        options["resume"] = False
    return options


def _report(result: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json(result)
        return
    source = result["source"]
    note = f", [yellow]{source['quarantined']} quarantined[/] → {source['quarantine_file']}" if source["quarantined"] else ""
    console.print(f"  {source['kind']}:{source['path']}: {source['quads']:,} quads{note}")
    show_mapping(f"imported into {result['domain']} ({result['build_id']})",
                 {"store quads": result["total_quads"], **source["counts"]})


def _dump_kind(path: Path) -> str:
    """``wikidata-nt`` (truthy N-Triples), ``wikidata-ttl`` (full RDF, Turtle) or ``wikidata`` (JSON), by the
    first line that is not blank or a comment."""
    for _, _, raw in DumpReader(path, decompressor="python"):
        text = raw.strip()
        if text and not text.startswith(b"#"):
            if text.startswith(b"<"):
                return "wikidata-nt"
            return "wikidata-ttl" if text.startswith(TURTLE_DIRECTIVES) else "wikidata"
    return "wikidata"


IMPORT_HINT = ("interrupted: the published store is unchanged; rerun the same command to resume the import from its "
               "last checkpoint")
IMPORT_AFTER_DISK_FULL = "rerun the same command: the import resumes from its last checkpoint"


@import_app.command("wikidata")
@when_interrupted(IMPORT_HINT, after_disk_full=IMPORT_AFTER_DISK_FULL)
def import_wikidata(
    dump: Annotated[Path, typer.Argument(help="latest-all.json[.gz|.bz2], latest-all.ttl, a truthy .nt dump, "
                                              "or an entity JSON file.")],
    domain: DomainOption,
    seed: SeedOption = [],
    seed_class: Annotated[list[str], typer.Option(
        "--seed-class", help="Seed with every instance (P31) of this class or its subclasses (P279*, from the dump).")] = [],
    seed_name: SeedNameOption = [],
    seed_labels: SeedLabelsOption = False,
    hops: HopsOption = None,
    fanout_cap: CapOption = None,
    workers: WorkersOption = None,
    engine: EngineOption = "local",
    address: AddressOption = None,
    keep_deprecated: Annotated[bool, typer.Option(
        "--keep-deprecated", help="Write deprecated-rank statements to raw/wikidata/deprecated-<dump>.jsonl "
                                  "(they never become facts).")] = False,
    no_resume: NoResumeOption = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Import a Wikidata dump (truthy statements, qualifiers, zh/en labels), optionally only the N-hop
    neighbourhood of seeds. A killed import resumes from its last checkpoint when run again."""
    options = _selection(domain, workdir, seed, seed_name, seed_labels, hops, fanout_cap)
    if seed_class:
        options["seed_classes"] = seed_class
    _passes(options, workers, engine, address, no_resume)
    if keep_deprecated:
        options["keep_deprecated"] = True
    kind = _dump_kind(dump)
    _report(import_into_domain(domain, kind, dump, options, workdir, show_progress=not json_out), json_out)


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
    options = _passes(_selection(domain, workdir, seed, seed_name, seed_labels, hops, fanout_cap), workers, engine,
                      address, no_resume)
    _report(import_into_domain(domain, "xlore", dump, options, workdir, show_progress=not json_out), json_out)


@app.command("link")
@when_interrupted(REBUILD_DISCARDED)
def link_command(domain: DomainArgument, workdir: WorkdirOption = DEFAULT_WORKDIR,
                 json_out: JsonOption = False) -> None:
    """Link dataset/crawled entities to their Wikidata/XLORE counterparts (owl:sameAs) by zh/en label and
    alias with type checks; ambiguous matches are listed in <domain>/links-report.json, never guessed."""
    report = link_domain(domain, workdir)
    if json_out:
        emit_json(report)
        return
    show_mapping(f"linked {domain}", {k: v for k, v in report.items() if k != "ambiguous_examples"})
    for name, candidates in list(report["ambiguous_examples"].items())[:10]:
        console.print(f"  ambiguous: {name} → {', '.join(candidates)}")
