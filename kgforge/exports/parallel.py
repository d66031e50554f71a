"""``kgforge export --lang zh,en``: one export in several languages, as DuRecDial 2.0 is one corpus in two.

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

A twin in a language some entity or relation has no label in is refused, naming them (``kgforge translate``
fills labels), unless ``allow_mixed``: then the label of the first language stands in and every such IRI is
listed in the manifest. The user profile and situation are the goal's own in each language where the goal
generator gives them in it (``profile_en``; ``situation["en"]``); a profile it gives in one language only stays
in it, and the manifest counts those (``profiles_not_in_language``).
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from kgforge.core.errors import KgforgeError
from kgforge.core.files import sha256_file, write_json_atomic, write_text_atomic
from kgforge.core.jsonio import dumps_bytes
from kgforge.exports.assemble import (
    GOAL_CHECKS,
    Assembled,
    Context,
    assemble,
    check_report,
)
from kgforge.exports.formats.durecdial import situation_text
from kgforge.exports.labels import Labels, Render
from kgforge.exports.new_goals import grounded_goals
from kgforge.exports.options import ExportOptions
from kgforge.exports.registry import format_named
from kgforge.exports.writing import finish, layout_problems
from kgforge.goals.record import read_goals
from kgforge.store.layout import domain_paths

LAYOUT = "v2"  # DuRecDial 2.0's own: the parallel corpus's layout
MBART_IDS = {"zh": "zh_CN", "en": "en_XX"}  # mBART-50's language codes
LABEL_COLUMNS = ["s_label", "p_label", "o_label"]
SOURCE_FIELDS = ("user_profile", "situation", "goal", "knowledge")


def export_parallel(domain: str, goals_file: Path, options: ExportOptions, languages: list[str], out: Path,
                    workdir: Path | str | None = None, allow_mixed: bool = False) -> dict[str, Any]:
    """Twins of ``goals_file``'s export, one per language in ``languages`` (two or more), the task files and
    ``OUT.parallel.json``; returns that manifest."""
    started = time.perf_counter()
    if len(set(languages)) < 2:
        raise KgforgeError(f"--lang {','.join(languages)}: a parallel export needs two different languages")
    fmt = format_named(options.fmt)
    if fmt.name != "durecdial":
        raise KgforgeError(f"--lang {','.join(languages)} writes DuRecDial 2.0's parallel layout: give --format "
                           f"durecdial, not {options.fmt}")
    layout = fmt.layout(options.layout or LAYOUT)
    if layout.name != LAYOUT:
        raise KgforgeError(f"a parallel export is written in DuRecDial 2.0's layout (--layout {LAYOUT}), "
                           f"not {layout.name}")
    out = domain_paths(domain, workdir).output(out)
    first = Context.open(domain, workdir, languages[0])
    goals = list(read_goals(goals_file))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals to export")
    grounded = grounded_goals(goals)
    by_id = dict(zip(grounded.ids, goals))
    assembled = assemble(first, grounded, options.subgraph(fmt, first.schema, goals=True), options.add_related,
                         goal_checks=True)
    checks = check_report(assembled.problems, grounded.ids, options.skip_invalid, GOAL_CHECKS)
    rows = assembled.passing().drop(LABEL_COLUMNS)  # the dialogues that passed, to be labelled in each language
    twins, mixed, profiles_not_in_language = {}, {}, {}
    for language in languages:
        ctx = first if language == languages[0] else replace(first, labels=Labels(first.tables, first.schema, language))
        records, missing = _records(ctx, fmt, layout, Assembled(ctx.labels.frame_columns(rows), assembled.problems,
                                                                grounded), options)
        fallback = [record_id for record_id, record in records if not _goal_sides(record, by_id[record_id], language,
                                                                                  languages[0])]
        if missing:
            mixed[language] = missing
        if fallback:
            profiles_not_in_language[language] = fallback
        twins[language] = (ctx, records)
    if mixed and not allow_mixed:
        raise KgforgeError(_missing_message(mixed, first.labels))
    counts = {language: [(record_id, len(record["knowledge"])) for record_id, record in records]
              for language, (_, records) in twins.items()}
    if len({tuple(c) for c in counts.values()}) != 1:  # one selection rendered twice: a bug if they differ
        raise KgforgeError(f"the twins differ in ids or triple counts: {_first_difference(counts)}")
    files = {}
    for language, (ctx, records) in twins.items():
        path = out.with_name(f"{language}_{out.name}")
        extra = {"goals_file": str(goals_file), "goals_sha256": sha256_file(goals_file),
                 "dialogues": len(records), "triples": sum(n for _, n in counts[language]), "checks": checks,
                 "parallel_manifest": str(_manifest_path(out)), "mixed_labels": mixed.get(language, [])}
        finish(ctx, fmt, layout, records, replace(options, language=language), path, extra, started)
        files[language] = str(path)
    tasks = write_tasks(out, {language: records for language, (_, records) in twins.items()}, languages)
    manifest = {"domain": domain, "format": fmt.name, "layout": layout.name, "layout_kind": layout.kind,
                "languages": languages, "twins": files, "tasks": tasks, "records": len(counts[languages[0]]),
                "ids_match": True, "triple_counts_match": True,
                "triples": sum(n for _, n in counts[languages[0]]), "checks": checks,
                "mixed_labels": mixed, "allow_mixed": allow_mixed,
                "profiles_not_in_language": {k: len(v) for k, v in profiles_not_in_language.items()}, "build_id": first.manifest.build_id,
                "seconds": round(time.perf_counter() - started, 3)}
    write_json_atomic(_manifest_path(out), manifest)
    return {**manifest, "out": str(out), "parallel_manifest": str(_manifest_path(out))}


def _records(ctx: Context, fmt: Any, layout: Any, assembled: Assembled, options: ExportOptions
             ) -> tuple[list[tuple[str, dict[str, Any]]], list[dict[str, str]]]:
    """The records in ``ctx``'s language, and the IRIs that had no label in it (each with the label used)."""
    render = Render.for_frame(ctx.labels, assembled.passing(), False, fmt.type_relation, ctx.manifest.build_id)
    dialogues = assembled.dialogues(ctx.labels, render, fmt.shape)
    records = [(d.dialogue_id, record) for d in dialogues for record in fmt.goal_records(d, layout, render)]
    unusable = layout_problems(fmt, layout, records)
    if unusable:
        example = unusable[0]
        raise KgforgeError(f"{len(unusable)} records would not be read as {layout.kind}, nothing was written: "
                           f"{example['record_id']}: {example['problems'][0]}")
    missing = [{"iri": iri, "label_used": ctx.labels.fallback.get(iri, iri)} for iri in sorted(ctx.labels.missing)]
    return records, missing


def _goal_sides(record: dict[str, Any], goal: Any, language: str, first: str) -> bool:
    """Writes the goal's user profile and situation in ``language`` into ``record`` where the goal has them
    (``profile_en`` beside ``profile``; a situation ``{"text", "en": {"text"}}``); False when the profile is
    not in that language, so it stays in the first one (the manifest counts them)."""
    record["situation"] = situation_text(goal.extra.get("situation"), language) or record.get("situation", "")
    if language == first or not record.get("user_profile"):
        return True
    translated = goal.extra.get(f"profile_{language[:2]}")
    if isinstance(translated, dict):
        record["user_profile"] = translated
        return True
    return False


def _missing_message(mixed: dict[str, list[dict[str, str]]], labels: Labels) -> str:
    parts = []
    for language, missing in mixed.items():
        named = ", ".join(f"{labels.entity(m['iri'])} <{m['iri']}>" for m in missing[:10])
        more = f" and {len(missing) - 10} more" if len(missing) > 10 else ""
        count = "1 entity or relation has" if len(missing) == 1 else f"{len(missing)} entities or relations have"
        parts.append(f"{count} no {language} label: {named}{more}")
    return ("; ".join(parts) + ". Nothing was written: add the labels (`kgforge translate` proposes them for "
            "review), or give --allow-mixed to write the first language's label in their place")


def _first_difference(counts: dict[str, list[tuple[str, int]]]) -> str:
    languages = list(counts)
    for pairs in zip(*(counts[lang] for lang in languages)):
        if len(set(pairs)) > 1:
            return ", ".join(f"{lang}: {p}" for lang, p in zip(languages, pairs))
    return ", ".join(f"{lang}: {len(counts[lang])} records" for lang in languages)


def _manifest_path(out: Path) -> Path:
    return out.with_name(out.name + ".parallel.json")


# ---------------------------------------------------------------- the five task layouts


def task_samples(source: dict[str, Any], target: dict[str, Any], record_id: str, src: str, tgt: str
                 ) -> list[dict[str, Any]]:
    """One sample per response of a record pair (the twins' records of one dialogue): the source side from
    ``source`` (language ``src``), the response from ``target`` (language ``tgt``). A record without a
    conversation gives one sample with an empty history and response."""
    src_turns, tgt_turns = source.get("conversation") or [], target.get("conversation") or []
    positions = range(len(tgt_turns)) if tgt_turns else [0]
    samples = []
    for j in positions:
        samples.append({"id": f"{record_id}/{j}" if tgt_turns else record_id, "task": f"{src}-{tgt}",
                        "src_lang": src, "tgt_lang": tgt, "src_lang_id": MBART_IDS.get(src, src),
                        "tgt_lang_id": MBART_IDS.get(tgt, tgt), **{k: source.get(k) for k in SOURCE_FIELDS},
                        "history": list(src_turns[:j]), "response": tgt_turns[j] if tgt_turns else ""})
    return samples


def write_tasks(out: Path, twins: dict[str, list[tuple[str, dict[str, Any]]]], languages: list[str]) -> dict[str, Any]:
    """``OUT.<src>-<tgt>.jsonl`` for every ordered pair of the languages, both directions and each language to
    itself, and ``OUT.multilingual.jsonl`` (every language to itself); returns each file with its samples."""
    by_id = {language: dict(records) for language, records in twins.items()}
    ids = [record_id for record_id, _ in twins[languages[0]]]
    tasks: dict[str, Any] = {}
    monolingual: list[dict[str, Any]] = []
    for src in languages:
        for tgt in languages:
            samples = [s for i in ids for s in task_samples(by_id[src][i], by_id[tgt][i], i, src, tgt)]
            tasks[f"{src}-{tgt}"] = _write_samples(out.with_name(f"{out.name}.{src}-{tgt}.jsonl"), samples)
            if src == tgt:
                monolingual += samples
    tasks["multilingual"] = _write_samples(out.with_name(f"{out.name}.multilingual.jsonl"), monolingual)
    return tasks


def _write_samples(path: Path, samples: list[dict[str, Any]]) -> dict[str, Any]:
    write_text_atomic(path, "".join(dumps_bytes(s).decode() + "\n" for s in samples))
    return {"file": str(path), "samples": len(samples)}

