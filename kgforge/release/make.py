"""``kgforge release``: a folder that the Hugging Face Hub, ``datasets``, Croissant validators and the seeds'
baselines all read (docs/release.md).

The release is made in a folder beside ``--out`` and renamed into place at the end: a refused input (one line
naming the file and line) or a killed run leaves nothing where it was asked to write.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.checks import choice, whole
from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.files import atomic_path, sha256_file, write_json_atomic, write_text_atomic
from kgforge.core.gc_pause import paused_gc
from kgforge.core.jsonio import JsonObject
from kgforge.core.limits import read_whole_text
from kgforge.core.records import Record
from kgforge.core.version import __version__
from kgforge.corpus.card import render, source_lines
from kgforge.corpus.reading import Corpus, tokens_for
from kgforge.corpus.stats import file_stats
from kgforge.exports.dialogues import read_dialogues
from kgforge.exports.model import dialogue_ids
from kgforge.grounding import kept
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.normalise import form
from kgforge.release.audit import AUDIT_MARK
from kgforge.release.card import CardInput, readme
from kgforge.release.croissant import MEDIA, CroissantInput, LayoutColumn, croissant
from kgforge.release.folder import check_out
from kgforge.release.kg import KG_CHOICES, KgFiles, write_kg
from kgforge.release.layouts import LAYOUTS, ReleaseLayout
from kgforge.release.licences import LicenceChoice, choose_licence
from kgforge.release.manifest import write_manifest
from kgforge.release.rai import ORIGINS, RaiInput, rai_fields
from kgforge.release.splits import Assignment, assign_splits, combined
from kgforge.release.turns import VERDICTS, FactResolver, ground_turns, turn_rows
from kgforge.store.snapshot import Snapshot


@dataclass(frozen=True)
class ReleaseOptions:
    name: str | None = None  # the card's pretty name; default: the output folder's name
    split: Path | None = None  # a folder `kgforge corpus split` wrote
    ratios: tuple[int, ...] | str | None = None  # or seeded ratios (train:dev:test)
    by: str = "topic"  # with ratios: topic or dialogue
    seed: int = 0
    kg: str = "used"  # used | full | none
    audit: Path | None = None  # AUDIT.json of `kgforge audit import`
    licence: str | None = None  # an SPDX id every source allows; default: the most restrictive source's
    origin: str = "dataset"  # where the dialogues come from: dataset | crowd | llm
    model: str | None = None  # the language model (origin llm)
    skip_invalid: bool = False  # leave out records that are not dialogues, or of another domain (counted)
    workers: int | None = None  # grounding processes


@dataclass(frozen=True)
class ReleaseSplit:
    name: str
    dialogues: int
    turns: int
    layout_file: str  # inside the release
    turns_file: str


@dataclass(frozen=True)
class ReleaseReport(Record):
    """What ``kgforge release`` wrote."""

    domain: str
    build_id: str
    out: str
    name: str
    layout: str
    config: str
    licence: str
    licence_chosen_by: str  # sources (the most restrictive) or --licence
    unchecked_licences: tuple[str, ...]  # sources of unknown licence
    splits: tuple[ReleaseSplit, ...]
    dialogues: int
    turns: int
    verdicts: dict[str, int]
    gold_turns: int  # turns whose facts are the dataset's own annotation
    facts_stated: int
    facts_in_graph: int
    kg_file: str | None
    kg_statements: int
    audit: str | None
    files: int
    skipped: int  # records left out with --skip-invalid
    replaced: bool  # an earlier release was replaced
    seconds: float
    notes: tuple[str, ...]


@dataclass
class _Input:
    """The release's dialogues as read and checked, and what they go with."""

    layout: ReleaseLayout
    corpus: Corpus
    files: list[Path]
    assignment: Assignment
    skipped: int
    notes: list[str]


@paused_gc()  # the index, the dialogues and the table: millions of objects without cycles (as kgforge ground pauses it)
def make_release(
    snapshot: Snapshot,
    dialogues: list[Path | str] | tuple[Path | str, ...],
    out: Path | str,
    options: ReleaseOptions = ReleaseOptions(),
) -> ReleaseReport:
    """Release the ``dialogues`` (files of one layout) grounded in ``snapshot``'s build into ``out``."""
    started = time.perf_counter()
    _check_options(options)
    domain = snapshot.domain
    target = check_out(Path(out), snapshot.paths.root)
    out = target.path
    sources = source_lines(snapshot.manifest)
    licence = choose_licence({s.graph: s.licence for s in sources}, options.licence)
    audit = read_audit(options.audit, domain) if options.audit is not None else None
    index = kept.load_index(snapshot)
    given = _read_input([Path(f) for f in dialogues], index, domain, options)
    options = replace(options, name=options.name or out.resolve().name)
    private: tuple[str, ...] = (
        str(snapshot.workdir.resolve()),
        str(Path.home()),
        str(Path.cwd()),
        str(out.resolve().parent),
    )
    private += tuple(str(f.resolve().parent) for f in given.files)
    replaced = out.exists()  # an earlier release (check_out refused anything else), replaced whole
    with target.staged() as stage:
        report = _write(stage, snapshot, index, given, options, licence, audit, private)
    return ReleaseReport(
        **{**report, "out": str(out), "replaced": replaced, "seconds": round(time.perf_counter() - started, 2)}
    )


def _check_options(options: ReleaseOptions) -> None:
    choice(options.kg, "--kg", KG_CHOICES)
    choice(options.origin, "--origin", ORIGINS)
    whole(options.seed, "--seed", minimum=0)
    if options.origin == "llm" and not options.model:
        raise ArgumentError("--llm-model", "name the language model that wrote the dialogues (--origin llm)")


def read_audit(path: Path, domain: str) -> JsonObject:
    """An ``AUDIT.json`` of ``kgforge audit import`` of this domain."""
    if not Path(path).exists():
        raise InputError(f"{path}: no such file")
    try:
        audit = json.loads(read_whole_text(path, "audit"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not JSON ({exc})") from None
    if not isinstance(audit, dict) or audit.get(AUDIT_MARK) != 1:
        raise InputError(f"{path}:1: not an audit written by `kgforge audit import`")
    if audit.get("domain") != domain:
        raise InputError(f"{path}:1: an audit of domain {audit.get('domain')!r}, not of {domain!r}")
    return audit


def _read_input(files: list[Path], index: GroundingIndex, domain: str, options: ReleaseOptions) -> _Input:
    if not files:
        raise ArgumentError("--dialogues", "give at least one dialogue file")
    read = [read_dialogues(f, None, options.skip_invalid) for f in files]
    kinds = {s.layout.kind for s in read}
    if len(kinds) > 1:
        raise InputError(
            f"{files[-1]}: the dialogue files are of several layouts ({', '.join(sorted(kinds))}); give one"
        )
    kind = kinds.pop()
    if kind not in LAYOUTS:
        raise InputError(f"{files[0]}: a release takes whole dialogues ({', '.join(LAYOUTS.names())}), not {kind}")
    skipped = sum(len(s.rejected) for s in read)
    corpus, origins = combined(files, read)
    kept_at = _of_domain(corpus, origins, index, domain, options.skip_invalid)
    if len(kept_at) < len(corpus.dialogues):
        skipped += len(corpus.dialogues) - len(kept_at)
        corpus.source.dialogues[:] = [corpus.dialogues[i] for i in kept_at]
        origins = [origins[i] for i in kept_at]
    assignment = assign_splits(
        corpus, origins, folder=options.split, ratios=options.ratios, by=options.by, seed=options.seed
    )
    notes = [f"{skipped:,} records left out (--skip-invalid): not dialogues of the layout, or of another domain"]
    return _Input(LAYOUTS.get(kind), corpus, files, assignment, skipped, notes if skipped else [])


def _of_domain(
    corpus: Corpus, origins: list[tuple[Path, int]], index: GroundingIndex, domain: str, skip: bool
) -> list[int]:
    """The dialogues of the domain: each that names topics (declared, or heads of its gold triples) must have one
    the graph names; one that names none of the graph's is of another domain (an error, or left out)."""
    names = index.entities_of
    kept_at = []
    for i, dialogue in enumerate(corpus.dialogues):
        topics = list(dict.fromkeys([*dialogue.topic_names, *(t.head for t in dialogue.gold)]))
        if not topics or any(form(t) in names for t in topics):
            kept_at.append(i)
        elif not skip:
            path, line = origins[i]
            shown = ", ".join(topics[:3])
            raise InputError(
                f"{path}:{line}: none of this dialogue's topics ({shown}) is in domain {domain}'s graph: dialogues of "
                "another domain? (nothing was written; --skip-invalid leaves such dialogues out)"
            )
    return kept_at


def _write(
    stage: Path,
    snapshot: Snapshot,
    index: GroundingIndex,
    given: _Input,
    options: ReleaseOptions,
    licence: LicenceChoice,
    audit: dict[str, Any] | None,
    private: tuple[str, ...],
) -> dict[str, Any]:
    """Everything but the rename: the layout files, the turn table, kg/, the card, croissant.json, release.json."""
    layout, corpus, assignment = given.layout, given.corpus, given.assignment
    order = [i for members in assignment.members for i in members]
    layout_files = _layout_files(stage, layout, corpus, assignment)
    records = [corpus.dialogues[i].record for i in order]
    grounded, topics_missing = ground_turns(index, layout, records, options.workers)
    ids = dialogue_ids([d.record for d in corpus.dialogues], layout.kind)
    rows = {}
    at = 0
    for name, members in zip(assignment.names, assignment.members):
        part = grounded[at : at + len(members)]
        at += len(members)
        rows[name] = turn_rows(part, [ids[i] for i in members], [corpus.dialogues[i].topic_names for i in members])
    resolver = FactResolver(index, snapshot.tables())
    stated = [t for r in rows.values() for t in r.stated]
    for triple in stated:
        resolver.resolve(triple)
    resolver.resolve_rest()
    resolved = [resolver.resolve(t) for t in stated]
    used = resolver.rows()
    fact_ids = dict(zip(map(tuple, used.select("s", "p", "o").rows()), used["fact_id"].to_list()))
    frames = {name: r.frame(resolver, fact_ids) for name, r in rows.items()}
    turn_files = _turn_files(stage, frames)
    sources = source_lines(snapshot.manifest)
    kg = write_kg(stage, options.kg, snapshot, sources, used)
    if audit is not None:
        write_json_atomic(stage / "audit.json", audit)
    summary = _summary(snapshot, given, frames, resolved, topics_missing, licence, kg, audit, options)
    splits = tuple(
        ReleaseSplit(name, len(members), frames[name].height, layout_files[name], turn_files[name])
        for name, members in zip(assignment.names, assignment.members)
    )
    _describe(stage, snapshot, given, splits, summary, licence, kg, audit, options, sources)
    files = write_manifest(stage, summary | {"splits": [vars(s) for s in splits]}, private)
    return summary | {"splits": splits, "files": files}


def _layout_files(stage: Path, layout: ReleaseLayout, corpus: Corpus, assignment: Assignment) -> dict[str, str]:
    """Each split in the layout's own container, each record exactly as read (what the baselines train on)."""
    source = corpus.source
    written = {}
    for name, members in zip(assignment.names, assignment.members):
        inside = f"{layout.config}/{name}{layout.suffix}"
        with atomic_path(stage / inside) as part:
            source.fmt.write([corpus.dialogues[i].record for i in members], part, source.layout)
        written[name] = inside
    return written


def _turn_files(stage: Path, frames: dict[str, pl.DataFrame]) -> dict[str, str]:
    """Each split's turn table as JSON Lines (what the card's `turns` config names: `datasets` reads every config of a
    folder with one builder, and the layout's files are JSON) and as Parquet (what croissant.json reads)."""
    written = {}
    for name, frame in frames.items():
        with atomic_path(stage / "turns" / f"{name}.parquet") as part:
            frame.write_parquet(part, statistics=False)
        with atomic_path(stage / "turns" / f"{name}.jsonl") as part:
            frame.write_ndjson(part)
        written[name] = f"turns/{name}.jsonl"  # the `turns` config's: the Hub loads one file format for every config
    return written


def _summary(
    snapshot: Snapshot,
    given: _Input,
    frames: dict[str, pl.DataFrame],
    resolved: list[Any],
    topics_missing: list[str],
    licence: LicenceChoice,
    kg: KgFiles,
    audit: dict[str, Any] | None,
    options: ReleaseOptions,
) -> dict[str, Any]:
    verdicts = Counter[str]()
    for frame in frames.values():
        verdicts.update(frame["verdict"].to_list())
    notes = list(given.notes) + list(given.assignment.report.get("notes", []))
    missing = sum(1 for r in resolved if r is None)
    if missing:
        notes.append(
            f"{missing:,} of {len(resolved):,} facts stated by the turns are not facts of the graph (no fact_id)"
        )
    if topics_missing:
        notes.append(f"{len(topics_missing):,} dialogues' topics are not in the graph (their focus is from mentions)")
    total = audit["accuracy"] if audit else None
    return {
        "domain": snapshot.domain,
        "build_id": snapshot.build_id,
        "name": options.name or "",
        "layout": given.layout.kind,
        "config": given.layout.config,
        "licence": licence.licence,
        "licence_chosen_by": licence.chosen_by,
        "unchecked_licences": licence.unchecked,
        "dialogues": len(given.corpus.dialogues),
        "turns": sum(f.height for f in frames.values()),
        "verdicts": {v: verdicts.get(v, 0) for v in VERDICTS},
        "gold_turns": sum(int((f["facts_from"] == "gold").sum()) for f in frames.values()),
        "facts_stated": len(resolved),
        "facts_in_graph": len(resolved) - missing,
        "kg_file": kg.file,
        "kg_statements": kg.statements,
        "audit": f"{total['correct']} of {total['items']} correct" if total else None,
        "skipped": given.skipped,
        "notes": tuple(notes),
    }


def _describe(
    stage: Path,
    snapshot: Snapshot,
    given: _Input,
    splits: tuple[ReleaseSplit, ...],
    summary: dict[str, Any],
    licence: LicenceChoice,
    kg: KgFiles,
    audit: dict[str, Any] | None,
    options: ReleaseOptions,
    sources: list[Any],
) -> None:
    """README.md (the dataset card and the datasheet), then croissant.json (which lists README.md's sha256)."""
    layout = given.layout
    languages = tuple(
        sorted({lang for s in splits for lang in _languages(stage / s.turns_file.replace(".jsonl", ".parquet"))})
    ) or ("zh",)
    files = [stage / s.layout_file for s in splits]
    source = given.corpus.source
    tokens = tokens_for(given.corpus)  # one cache of jieba's cuts for every split
    stats = [
        file_stats(Corpus(f, replace(source, dialogues=[given.corpus.dialogues[i] for i in members])), tokens)
        for f, members in zip(files, given.assignment.members)
    ]  # the dialogues as read, not the files read again: they are those records
    shown_sources = [type(s)(s.graph, s.kind, Path(s.path).name, s.sha256, s.quads, s.licence) for s in sources]
    datasheet = render(
        snapshot.manifest, files, stats, shown_sources, given.assignment.report, lambda f: str(f.relative_to(stage))
    )
    card = CardInput(
        options.name or snapshot.domain,
        snapshot.domain,
        snapshot.build_id,
        __version__,
        layout.kind,
        layout.config,
        layout.task,
        licence,
        languages,
        tuple((s.name, s.dialogues, s.turns, s.layout_file, s.turns_file) for s in splits),
        summary["verdicts"],
        summary["facts_stated"],
        summary["facts_in_graph"],
        kg.file,
        kg.statements,
        {"dataset": "a released dataset", "crowd": "a crowd (kgforge's collection server)"}.get(
            options.origin, f"a language model ({options.model})"
        ),
        audit,
        datasheet,
        summary["notes"],
    )
    write_text_atomic(stage / "README.md", readme(card))
    rai = RaiInput(
        options.origin,
        options.model,
        __version__,
        layout.grounder,
        layout.kind,
        tuple(shown_sources),
        tuple((f.name, sha) for f, sha in zip(given.files, _digests(given.files))),
        _limitations(summary, licence, given.assignment),
        audit,
        summary["gold_turns"] > 0,
    )
    write_json_atomic(stage / "croissant.json", _croissant(stage, snapshot, given, card, rai_fields(rai)))


def _croissant(stage: Path, snapshot: Snapshot, given: _Input, card: CardInput, rai: dict[str, Any]) -> dict[str, Any]:
    """croissant.json's document: every file written so far (README.md included) with its sha256."""
    layout = given.layout
    created = snapshot.manifest.created
    return croissant(
        CroissantInput(
            card.name,
            f"{card.name}: {layout.task}, grounded in the knowledge graph of kgforge domain {snapshot.domain} "
            f"(build {snapshot.build_id}); a turn table with the same columns for every dataset beside the "
            f"dataset's own layout ({layout.config}).",
            card.licence.url or f"{card.licence.licence}: see README.md",
            "1.0.0",
            created[:10] if created else time.strftime("%Y-%m-%d"),
            card.languages,
            ("knowledge-grounded dialogue", "knowledge graph", layout.config),
            {str(p.relative_to(stage)): digest for p, digest in _every_file(stage)},
            "turns/*.parquet",
            layout.config,
            f"{layout.config}/*{layout.suffix}",
            MEDIA[layout.suffix],
            _layout_columns(given.corpus),
            rai,
        )
    )


def _languages(path: Path) -> list[str]:
    return pl.scan_parquet(path).select(pl.col("language").unique()).collect()["language"].to_list()


def _digests(files: list[Path]) -> list[str]:
    return [sha256_file(f) for f in files]


def _every_file(folder: Path) -> list[tuple[Path, str]]:
    return [(p, sha256_file(p)) for p in sorted(folder.rglob("*")) if p.is_file()]


def _layout_columns(corpus: Corpus) -> tuple[LayoutColumn, ...]:
    """The top-level keys of the layout's records, in the order first seen (a list where the first record
    holding the key has a list there)."""
    seen: dict[str, bool] = {}
    for dialogue in corpus.dialogues:
        for key, value in dialogue.record.items():
            seen.setdefault(key, isinstance(value, list))
    return tuple(
        LayoutColumn(key, array, f"the records' `{key}`, as the layout writes it") for key, array in seen.items()
    )


def _limitations(summary: dict[str, Any], licence: LicenceChoice, assignment: Assignment) -> tuple[str, ...]:
    turns = summary["turns"] or 1
    verdicts = summary["verdicts"]
    found = [
        "Facts and verdicts come from surface matching of names and values (kgforge's grounder): a fact said in "
        "other words is missed, and a claim the graph does not cover is unsupported, not wrong.",
        f"{verdicts['contradicted'] / turns:.1%} of turns contradict the graph and {verdicts['unsupported'] / turns:.1%} "
        "make claims it does not support.",
    ]
    if summary["facts_stated"] > summary["facts_in_graph"]:
        found.append(
            f"{summary['facts_stated'] - summary['facts_in_graph']:,} of {summary['facts_stated']:,} facts stated by "
            "the turns are not facts of the graph."
        )
    for part in assignment.report["parts"]:
        if part.get("topic_leakage"):
            found.append(f"{part['topic_leakage']:.1%} of {part['name']} dialogues share a topic with train.")
    if licence.unchecked:
        found.append(f"The licence of {', '.join(licence.unchecked)} is unknown.")
    return tuple(found + list(summary["notes"]))
