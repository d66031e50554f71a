"""``kgforge export --format durecdial --lang zh,en``: one export in several languages, as DuRecDial 2.0 is one
corpus in two — made from new goals (:func:`export_parallel`) or from DuRecDial 2.0's own twin files
(:func:`export_parallel_dialogues`: each session as it was in each language, the graph's facts beside it).
The format names this module as its :class:`~kgforge.exports.registry.ParallelExport`;
:mod:`kgforge.exports.parallel` imports it by that name when a parallel export runs.

The subgraph of every goal is chosen once, in the first language, and the same rows are then written in each
language from that language's labels (``rdfs:label@en`` of the same entity, the schema's relation names in
it), so the twins hold the same dialogues under the same ids and the same triples in the same order — only
the words differ. They are written in DuRecDial 2.0's layout under its own file names (``zh_dev.txt`` and
``en_dev.txt`` for ``--out dev.txt``), each with its manifest and ids file as any export has.

Beside them go the five task files of DuRecDial 2.0's generation baselines (mBART, XNLG): ``EN→EN``,
``ZH→ZH``, ``ZH→EN``, ``EN→ZH`` and the multilingual set (both monolingual sets together). A sample holds the
source side (``user_profile``, ``situation``, ``goal``, ``knowledge``, ``history``) in the source language and
the ``response`` in the target language, with ``src_lang``/``tgt_lang`` and the mBART language ids
(``src_lang_id``, ``tgt_lang_id``: ``zh_CN``, ``en_XX``) the baselines prefix the input and force as the first
decoded token. New goals have no conversation yet: each gives one sample with an empty history and an empty
response, the input a model generates the opening from. ``OUT.parallel.json`` pairs it all and records the
one-for-one check of ids and triple counts.

Each twin is labelled as a single-language export in its language is (:class:`Context.in_language`: the same
chain, and the same literal forms — a value's reviewed translation beside it, :func:`literal_forms`), and its
goal records pass the same language check (:mod:`kgforge.exports.in_language`). A twin in a language some
entity or relation has no label in, or some value no form in, is refused, naming them (``kgforge translate``
fills labels), unless ``allow_mixed``: then the first language's stands in and each is listed in the manifest;
or ``skip_invalid``: then the dialogues that need them are left out of every twin and listed. The user profile
and situation are the goal's own in each language where the goal generator gives them in it (``profile_en``;
``situation["en"]``); one it gives in Chinese only fails the language check like any other text.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.files import sha256_file
from kgforge.core.jsonio import json_lines
from kgforge.core.output import OutputFile
from kgforge.datasets.durecdial.export import POOL, as_lic2020
from kgforge.exports.assemble import (
    DIALOGUE_CHECKS,
    GOAL_CHECKS,
    Assembled,
    CheckReport,
    Context,
    assemble,
    check_report,
    label_problems,
)
from kgforge.exports.dialogues import read_dialogues
from kgforge.exports.grounding import ground
from kgforge.exports.labels import Labels, Render
from kgforge.exports.new_goals import grounded_goals, language_problems
from kgforge.exports.options import ExportOptions
from kgforge.exports.parallel import ParallelExportReport, ParallelRequest
from kgforge.exports.registry import format_named
from kgforge.exports.writing import finish, layout_problems
from kgforge.goals.record import read_goals
from kgforge.sources.dialogue_layouts import session_triples

LAYOUT = "v2"  # DuRecDial 2.0's own: the parallel corpus's layout
CUT = "lic2020"  # real twins may also be cut to the competition layout, which the LIC-2020 goal planner reads
MBART_IDS = {"zh": "zh_CN", "en": "en_XX"}  # mBART-50's language codes
LABEL_COLUMNS = ["s_label", "p_label", "o_label"]
SOURCE_FIELDS = ("user_profile", "situation", "goal", "knowledge")
FIRST_GOAL = re.compile(r"\s*\[1\]\s*([^(（\-]+?)\s*(?:[(（]|-->|$)")


PARALLEL_FIELDS = {"domain", "languages", "twins", "tasks", "records", "triples", "mixed_labels"}


@dataclass(frozen=True)
class _Run:
    """One parallel export's settings, fixed before anything is read: the format and layout checked, the
    languages (the first chooses the rows), where the twins go, and when it started."""

    domain: str
    fmt: Any
    layout: Any
    options: ExportOptions
    languages: list[str]
    out: OutputFile  # the name the twins are written beside (``zh_OUT``, ``en_OUT``) and OUT.parallel.json
    allow_mixed: bool  # a label missing in a language is taken from the first one (listed), not refused
    started: float  # time.perf_counter() at the start: the manifests' seconds

    @classmethod
    def start(cls, asked: ParallelRequest, dialogues: bool = False) -> _Run:
        """The run's settings, or why the export cannot be made (before anything is read)."""
        started = time.perf_counter()
        fmt, layout = _checked(asked.options, dialogues)
        out = asked.snapshot.paths.output(asked.out)
        return cls(asked.snapshot.domain, fmt, layout, asked.options, asked.languages, out, asked.allow_mixed, started)


@dataclass(frozen=True)
class _Twins:
    """The records of every language, rendered from the same rows; what each language wrote in another one
    (``allow_mixed``); and the dialogues left out of every twin (``skip_invalid``), with why."""

    made: dict[str, tuple[Context, list[Record]]]  # language -> its context and (record id, record) pairs
    mixed: dict[str, list[dict[str, str]]]  # language -> IRIs written with the first language's label
    rejected: list[dict[str, Any]]
    mixed_values: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # language -> values as they are
    mixed_text: dict[str, list[dict[str, str]]] = field(default_factory=dict)  # language -> other text as it is


@dataclass(frozen=True)
class _Made:
    """One twin's records, and those its layout's readers or its language check refuse (record id, problems)."""

    records: list[Record]
    refused: list[dict[str, Any]] = field(default_factory=list)


def export_parallel(asked: ParallelRequest) -> ParallelExportReport:
    """Twins of the export of the goals file ``asked.source``, one per language in ``asked.languages`` (two or
    more), the task files and ``OUT.parallel.json``; returns that manifest."""
    run = _Run.start(asked)
    fmt, layout = run.fmt, run.layout
    snapshot, goals_file, options, languages = asked.snapshot, asked.source, asked.options, asked.languages
    first = Context.open(snapshot, languages[0])
    goals = list(read_goals(goals_file))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals to export")
    grounded = grounded_goals(goals)
    assembled = assemble(
        first, grounded, options.subgraph(fmt, first.schema, goals=True), options.add_related, goal_checks=True
    )
    checks = check_report(assembled.problems, grounded.ids, options.skip_invalid, GOAL_CHECKS)

    def records(ctx: Context, relabelled: Assembled, language: str) -> _Made:
        return _goal_twin(ctx, fmt, layout, relabelled)

    source = {"goals_file": str(goals_file), "goals_sha256": sha256_file(goals_file)}
    twins = _twins(run, first, assembled, records, _checks_rejected(assembled, checks))
    return _publish(run, twins, checks, source, {}, pool="knowledge")


def export_parallel_dialogues(asked: ParallelRequest) -> ParallelExportReport:
    """Real DuRecDial 2.0 twins (``zh_X.txt`` and ``en_X.txt``, line for line the same sessions; ``asked.source``
    the first language's) exported together: each session as it was in each language, the graph's facts about
    its topics chosen once and written in each language (``retrieved_knowledge``), one dialogue id for both, and
    the task files cut from the conversations."""
    run = _Run.start(asked, dialogues=True)
    fmt, layout = run.fmt, run.layout
    snapshot, options, languages = asked.snapshot, asked.options, asked.languages
    files = twin_files(Path(asked.source), languages)
    sources = {
        language: read_dialogues(path, fmt.layout(LAYOUT).kind, options.skip_invalid)
        for language, path in files.items()
    }
    read_rejected = [r for source in sources.values() for r in source.rejected]
    main, lines, unpaired = _parallel_lines(sources, files, options.skip_invalid)
    first = Context.open(snapshot, languages[0])
    grounding = ground(first, main, first.class_iris())
    assembled = assemble(
        first,
        grounding.grounded,
        options.subgraph(fmt, first.schema, goals=False),
        options.add_related,
        goal_checks=False,
    )
    checks = check_report(assembled.problems, main.ids, options.skip_invalid, DIALOGUE_CHECKS)
    number = {dialogue_id: i for i, dialogue_id in enumerate(main.ids)}

    def records(ctx: Context, relabelled: Assembled, language: str) -> _Made:
        render = Render.for_frame(ctx.labels, relabelled.passing(), False, fmt.type_relation, ctx.manifest.build_id)
        dialogues = relabelled.dialogues(ctx.labels, render, fmt.shape)
        twin = lines[language]
        return _Made(
            [
                (
                    d.dialogue_id,
                    {**_in_layout(twin[main.dialogues[number[d.dialogue_id]].line].record, layout), POOL: d.knowledge},
                )
                for d in dialogues
            ]
        )

    source = {
        "dialogues_files": {k: str(v) for k, v in files.items()},
        "dialogues_sha256": {k: sha256_file(v) for k, v in files.items()},
    }
    rejected = read_rejected + unpaired + _checks_rejected(assembled, checks)
    twins = _twins(run, first, assembled, records, rejected)
    own = {language: [len(session_triples(record)) for _, record in made] for language, (_, made) in twins.made.items()}
    differ = [twins.made[languages[0]][1][i][0] for i, counts in enumerate(zip(*own.values())) if len(set(counts)) > 1]
    return _publish(run, twins, checks, source, {"own_knowledge_counts_differ": differ}, pool=POOL)


Record = tuple[str, dict[str, Any]]


def _in_layout(record: dict[str, Any], layout: Any) -> dict[str, Any]:
    return as_lic2020(record) if layout.name == CUT else record


def _checked(options: ExportOptions, dialogues: bool = False) -> tuple[Any, Any]:
    """The format and layout of a parallel export (DuRecDial 2.0's; real twins also in the LIC-2020
    competition layout the goal planner reads), or why there is none (the languages and the format were checked
    by :func:`kgforge.exports.parallel.writer`, which handed the run here)."""
    fmt = format_named(options.fmt)
    layout = fmt.layout(options.layout or LAYOUT)
    allowed = (LAYOUT, CUT) if dialogues else (LAYOUT,)
    if layout.name not in allowed:
        raise KgforgeError(
            f"a parallel export is written in DuRecDial 2.0's layout (--layout {LAYOUT}"
            + (f"; real twins also --layout {CUT}" if dialogues else "")
            + f"), not {layout.name}"
        )
    return fmt, layout


def twin_files(path: Path, languages: list[str]) -> dict[str, Path]:
    """DuRecDial 2.0 names its twins ``zh_dev.txt`` and ``en_dev.txt``: the file given and the others beside it."""
    first, _, rest = path.name.partition("_")
    if first != languages[0] or not rest:
        raise KgforgeError(
            f"{path}: a parallel export of real dialogues reads DuRecDial 2.0's twins, named "
            f"{languages[0]}_NAME and {'/'.join(f'{lang}_NAME' for lang in languages[1:])} side by side; "
            f"give the {languages[0]} one"
        )
    files = {language: path.with_name(f"{language}_{rest}") for language in languages}
    absent = [str(p) for p in files.values() if not p.is_file()]
    if absent:
        raise KgforgeError(f"no twin of {path}: {', '.join(absent)} not found")
    return files


def _parallel_lines(
    sources: dict[str, Any], files: dict[str, Path], skip_invalid: bool
) -> tuple[Any, dict[str, dict[int, Any]], list[dict[str, Any]]]:
    """The first twin's sessions that every twin holds on the same line with a conversation of the same length,
    each twin's dialogues by line, and the sessions left out because a twin lacks them (``skip_invalid``;
    otherwise the first such line is an error)."""
    by_line = {language: {d.line: d for d in source.dialogues} for language, source in sources.items()}
    languages = list(sources)
    main = sources[languages[0]]
    unpaired: dict[int, str] = {}
    for language in languages[1:]:
        for line, dialogue in by_line[languages[0]].items():
            twin = by_line[language].get(line)
            if twin is None:
                problem = (
                    f"{files[language]}:{line}: no session beside {files[languages[0]]}:{line}; the "
                    "twins must hold the same sessions line for line"
                )
            elif len(twin.texts) != len(dialogue.texts):
                problem = (
                    f"{files[language]}:{line}: {len(twin.texts)} utterances against "
                    f"{len(dialogue.texts)} in {files[languages[0]]}:{line}: not the same session"
                )
            else:
                continue
            if not skip_invalid:
                raise KgforgeError(problem + " (give --skip-invalid to write the others)")
            unpaired.setdefault(line, problem)
    if unpaired:
        kept = [i for i, d in enumerate(main.dialogues) if d.line not in unpaired]
        main = replace(main, dialogues=[main.dialogues[i] for i in kept], ids=[main.ids[i] for i in kept])
    rejected = [{"file": str(files[languages[0]]), "line": line, "reason": why} for line, why in unpaired.items()]
    return main, by_line, rejected


def _checks_rejected(assembled: Assembled, checks: CheckReport) -> list[dict[str, Any]]:
    """The dialogues the first language's checks left out (``--skip-invalid``), as rejected records."""
    ids = assembled.grounded.ids
    return [{"dialogue_id": ids[i], "reason": "; ".join(p)} for i, p in sorted(assembled.problems.items())]


def _twins(run: _Run, first: Context, assembled: Assembled, records: Any, rejected: list[dict[str, Any]]) -> _Twins:
    """The records in each language, from the rows chosen once (labelled again in each language). A dialogue
    naming something with no label (or value with no form) in a language, or whose record a language's check
    refuses, is refused, or with ``skip_invalid`` left out of every twin, so the twins stay one for one;
    ``allow_mixed`` writes the first language's instead and lists it."""
    languages, skip = run.languages, run.options.skip_invalid
    rows = assembled.passing().drop(LABEL_COLUMNS)  # the dialogues that passed, to be labelled in each language
    labelled: dict[str, tuple[Context, pl.DataFrame]] = {}
    failed: dict[int, list[str]] = {}
    for language in languages:
        ctx = first if language == languages[0] else first.in_language(language, run.allow_mixed)
        frame = ctx.labels.frame_columns(rows)
        if language != languages[0]:  # the first language's are the export checks' business
            for dialogue, found in label_problems(ctx.labels, frame).items():
                failed.setdefault(dialogue, []).extend(f"{language}: {p}" for p in found)
        labelled[language] = (ctx, frame)
    if failed and not skip:
        raise KgforgeError(_missing_message({lang: ctx.labels for lang, (ctx, _) in labelled.items()}, languages))
    problems = {**assembled.problems, **failed}
    made = {
        language: records(ctx, Assembled(frame, problems, assembled.grounded), language)
        for language, (ctx, frame) in labelled.items()
    }
    refused: dict[str, list[str]] = {}
    for language, twin in made.items():
        for item in twin.refused:
            refused.setdefault(item["record_id"], []).extend(f"{language}: {p}" for p in item["problems"])
    if refused and not skip:
        record_id, found = next(iter(refused.items()))
        raise KgforgeError(
            f"{len(refused)} records cannot be written in every language, nothing was written (give --allow-mixed "
            f"to write text in another language, listed, or --skip-invalid to write the others): {record_id}: "
            f"{found[0]}"
        )
    ids = assembled.grounded.ids
    rejected = rejected + [{"dialogue_id": ids[i], "reason": "; ".join(p)} for i, p in sorted(failed.items())]
    rejected += [{"dialogue_id": record_id, "reason": "; ".join(p)} for record_id, p in refused.items()]
    twins = {
        language: (labelled[language][0], [r for r in twin.records if r[0] not in refused])
        for language, twin in made.items()
    }
    others = [(language, labelled[language][0].labels) for language in languages[1:]]
    return _Twins(
        twins,
        {lang: _listed(labels.mixed, "iri", "label_used") for lang, labels in others if labels.mixed},
        rejected,
        {lang: _listed(labels.values_mixed, "value", "relation") for lang, labels in others if labels.values_mixed},
        {lang: _listed(labels.text_mixed, "text", "where") for lang, labels in others if labels.text_mixed},
    )


def _listed(found: dict[str, str], key: str, value: str) -> list[dict[str, str]]:
    return [{key: k, value: v} for k, v in sorted(found.items())]


def _publish(
    run: _Run, twins: _Twins, checks: CheckReport, source: dict[str, Any], extra: dict[str, Any], pool: str
) -> ParallelExportReport:
    """Checks the twins one for one (ids, and the triples of ``pool`` in each record), writes them, the task
    files and ``OUT.parallel.json``."""
    languages, out, mixed = run.languages, run.out, twins.mixed
    counts = {
        language: [(record_id, len(record[pool])) for record_id, record in made]
        for language, (_, made) in twins.made.items()
    }
    if len({tuple(c) for c in counts.values()}) != 1:  # one selection rendered twice: a bug if they differ
        raise KgforgeError(f"the twins differ in ids or triple counts: {_first_difference(counts)}")
    manifest_file = _manifest_file(out)  # checked, with the twins' names, before anything is written
    targets = {language: out.beside(f"{language}_{out.path.name}") for language in twins.made}
    files = {}
    for language, (ctx, made) in twins.made.items():
        path = targets[language]
        written = {
            **source,
            "dialogues": len(made),
            "triples": sum(n for _, n in counts[language]),
            "checks": checks.as_dict(),
            "parallel_manifest": str(manifest_file),
            "mixed_labels": mixed.get(language, []),
            "mixed_values": twins.mixed_values.get(language, []),
            "mixed_text": twins.mixed_text.get(language, []),
            "dialogues_rejected": len(twins.rejected),
        }
        options = replace(run.options, language=language)
        finish(ctx, run.fmt, run.layout, made, options, path, written, run.started, twins.rejected)
        files[language] = str(path)
    tasks = _write_tasks(out, {language: made for language, (_, made) in twins.made.items()}, languages)
    first = twins.made[languages[0]][0]
    manifest = {
        "domain": run.domain,
        "format": run.fmt.name,
        "layout": run.layout.name,
        "layout_kind": run.layout.kind,
        "languages": languages,
        "twins": files,
        "tasks": tasks,
        "records": len(counts[languages[0]]),
        "ids_match": True,
        "triple_counts_match": True,
        "triples_counted": pool,
        "triples": sum(n for _, n in counts[languages[0]]),
        "checks": checks.as_dict(),
        **source,
        "mixed_labels": mixed,
        "mixed_values": twins.mixed_values,
        "mixed_text": twins.mixed_text,
        "allow_mixed": run.allow_mixed,
        "dialogues_rejected": len(twins.rejected),
        "rejected": twins.rejected[:50],
        **extra,
        "build_id": first.manifest.build_id,
        "seconds": round(time.perf_counter() - run.started, 3),
    }
    manifest_file.write_json(manifest)
    return ParallelExportReport(
        run.domain,
        tuple(languages),
        {k: Path(v) for k, v in files.items()},
        tasks,
        manifest["records"],
        manifest["triples"],
        mixed,
        out.path,
        manifest_file.path,
        {k: v for k, v in manifest.items() if k not in PARALLEL_FIELDS},
    )


def _goal_twin(ctx: Context, fmt: Any, layout: Any, assembled: Assembled) -> _Made:
    """The goal records in ``ctx``'s language, and those its layout's readers or its language check refuse."""
    render = Render.for_frame(ctx.labels, assembled.passing(), False, fmt.type_relation, ctx.manifest.build_id)
    dialogues = assembled.dialogues(ctx.labels, render, fmt.shape)
    records = [(d.dialogue_id, record) for d in dialogues for record in fmt.goal_records(d, layout, render)]
    return _Made(records, language_problems(records, ctx.labels, fmt) + layout_problems(fmt, layout, records))


def _missing_message(labels: dict[str, Labels], languages: list[str]) -> str:
    parts = []
    first = labels[languages[0]]
    for language in languages[1:]:
        missing, values = sorted(labels[language].missing), sorted(labels[language].values_missing.items())
        if missing:
            named = ", ".join(f"{first.entity(iri)} <{iri}>" for iri in missing[:10])
            more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
            count = "1 entity or relation has" if len(missing) == 1 else f"{len(missing)} entities or relations have"
            parts.append(f"{count} no {language} label: {named}{more}")
        if values:
            named = ", ".join(f"{value} ({first.relation(relation)})" for value, relation in values[:10])
            more = f" and {len(values) - 10} more" if len(values) > 10 else ""
            count = "1 value has" if len(values) == 1 else f"{len(values)} values have"
            parts.append(f"{count} no {language} form: {named}{more}")
    return (
        "; ".join(parts) + ". Nothing was written: add the labels (`kgforge translate` proposes them for "
        "review), give --allow-mixed to write the first language's in their place, or --skip-invalid to leave "
        "out the dialogues that need them"
    )


def _first_difference(counts: dict[str, list[tuple[str, int]]]) -> str:
    languages = list(counts)
    for pairs in zip(*(counts[lang] for lang in languages)):
        if len(set(pairs)) > 1:
            return ", ".join(f"{lang}: {p}" for lang, p in zip(languages, pairs))
    return ", ".join(f"{lang}: {len(counts[lang])} records" for lang in languages)


def _manifest_file(out: OutputFile) -> OutputFile:
    return out.sidecar(".parallel.json")


# ---------------------------------------------------------------- the five task layouts


def task_samples(
    source: dict[str, Any], target: dict[str, Any], record_id: str, src: str, tgt: str
) -> list[dict[str, Any]]:
    """One sample per recommender response of a record pair (the twins' records of one dialogue): the source
    side from ``source`` (language ``src``; its knowledge as the session's triple list), the response from
    ``target`` (language ``tgt``). A record without a conversation gives one sample with an empty history and
    response."""
    src_turns, tgt_turns = source.get("conversation") or [], target.get("conversation") or []
    positions = bot_turns(source) if tgt_turns else [0]
    fields = {k: source.get(k) for k in SOURCE_FIELDS} | {"knowledge": session_triples(source)}
    samples = []
    for j in positions:
        samples.append(
            {
                "id": f"{record_id}/{j}" if tgt_turns else record_id,
                "task": f"{src}-{tgt}",
                "src_lang": src,
                "tgt_lang": tgt,
                "src_lang_id": MBART_IDS.get(src, src),
                "tgt_lang_id": MBART_IDS.get(tgt, tgt),
                **fields,
                "history": list(src_turns[:j]),
                "response": tgt_turns[j] if tgt_turns else "",
            }
        )
    return samples


def bot_turns(session: dict[str, Any]) -> list[int]:
    """The recommender's utterances, the responses a model is trained to generate: DuRecDial 2.0's loaders
    have it speak first when the first goal is a greeting (``Greetings`` / ``寒暄``), second otherwise."""
    types = session.get("goal_type_list") or []
    first = str(types[0]) if types else _first_goal_type(session.get("goal"))
    greeting = first.strip() in ("Greetings", "寒暄")
    return list(range(0 if greeting else 1, len(session.get("conversation") or []), 2))


def _first_goal_type(goal: Any) -> str:
    """``寒暄`` in ``[1]寒暄(…)-->[2]…`` (the competition layout has no goal_type_list)."""
    found = FIRST_GOAL.match(goal) if isinstance(goal, str) else None
    return found.group(1) if found else ""


def _write_tasks(
    out: OutputFile, twins: dict[str, list[tuple[str, dict[str, Any]]]], languages: list[str]
) -> dict[str, Any]:
    """``OUT.<src>-<tgt>.jsonl`` for every ordered pair of the languages, both directions and each language to
    itself, and ``OUT.multilingual.jsonl`` (every language to itself); returns each file with its samples."""
    by_id = {language: dict(records) for language, records in twins.items()}
    ids = [record_id for record_id, _ in twins[languages[0]]]
    tasks: dict[str, Any] = {}
    monolingual: list[dict[str, Any]] = []
    for src in languages:
        for tgt in languages:
            samples = [s for i in ids for s in task_samples(by_id[src][i], by_id[tgt][i], i, src, tgt)]
            tasks[f"{src}-{tgt}"] = _write_samples(out.sidecar(f".{src}-{tgt}.jsonl"), samples)
            if src == tgt:
                monolingual += samples
    tasks["multilingual"] = _write_samples(out.sidecar(".multilingual.jsonl"), monolingual)
    return tasks


def _write_samples(target: OutputFile, samples: list[dict[str, Any]]) -> dict[str, Any]:
    target.write_bytes(json_lines(samples))
    return {"file": str(target), "samples": len(samples)}
