"""`kgforge translate` and `kgforge align`: labels in another language, proposed, reviewed and aligned."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge import Domain
from kgforge.api import DEFAULT_KEY_ENV, MAX_LABEL_CHARS, MAX_LITERAL_CHARS, TranslationApplied, TranslationProposals
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    HTTP_URL,
    LANGUAGE,
    OUT_FILE,
    POSITIVE,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    show_mapping,
)


@app.command("translate")
def translate_command(
    domain: DomainArgument,
    lang: Annotated[str, typer.Option("--lang", parser=LANGUAGE, help="The language to give labels in.")] = "en",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            callback=OUT_FILE,
            help="Review file to write (TSV), one row a name or value, keyed by the name with its IRI beside: "
            "every proposal says keep = review; set keep to yes on each label you accept (edit `label` where it "
            "is wrong), no on the others, then --apply it. Without --llm-url: the to-do list (--list).",
        ),
    ] = None,
    todo: Annotated[
        bool,
        typer.Option(
            "--list",
            help="Write --out as a to-do list for translators, no model asked: a row for each name and value "
            "lacking a label in --lang (fill in `label`, set keep to yes); names with an alias in --lang come "
            "proposed (keep = review).",
        ),
    ] = False,
    apply: Annotated[
        Path | None,
        typer.Option(
            "--apply",
            help="Load the rows a person set to keep = yes as the graph translated/LANG (provenance `translated`).",
        ),
    ] = None,
    llm_url: Annotated[
        str | None, typer.Option("--llm-url", parser=HTTP_URL, help="OpenAI-compatible endpoint (…/v1).")
    ] = None,
    llm_model: Annotated[str | None, typer.Option("--llm-model", help="Model name sent to the endpoint.")] = None,
    llm_key_env: Annotated[
        str, typer.Option("--llm-key-env", help="Environment variable holding the API key.")
    ] = DEFAULT_KEY_ENV,
    max_chars: Annotated[
        int,
        typer.Option(
            parser=POSITIVE,
            help="Longest literal value offered for translation (longer ones are sentences, not names).",
        ),
    ] = MAX_LITERAL_CHARS,
    limit: Annotated[int | None, typer.Option(parser=POSITIVE, help="Most items asked for in this run.")] = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Propose labels in --lang for entities, relations, types and short values that lack one (an LLM, cached),
    or list them for translators (--list), into a review file; --apply loads the reviewed file as its own graph."""
    kg = Domain(domain, workdir)
    if apply is not None and out is None:
        if todo:
            raise typer.BadParameter("--list writes a review file: give it with --out", param_hint="--list")
        applied = kg.apply_translations(apply, lang)
        emit_json(applied.as_dict()) if json_out else _show_applied(applied, domain, apply)
        return
    if out is None or apply is not None:  # neither given, or both
        raise typer.BadParameter(
            "give --out FILE to propose labels, or --apply FILE to load a reviewed file", param_hint="--out/--apply"
        )
    if todo or not (llm_url or llm_model):
        if todo and (llm_url or llm_model):
            raise typer.BadParameter("--list asks no model: leave out --llm-url and --llm-model", param_hint="--list")
        listed = kg.translation_list(lang, out, max_chars=max_chars)
        emit_json(listed.as_dict()) if json_out else _show_proposed(listed, domain)
        return
    if not llm_url or not llm_model:
        raise typer.BadParameter("give both the endpoint and the model", param_hint="--llm-url/--llm-model")
    proposed = kg.translate(
        lang, out, llm_url=llm_url, llm_model=llm_model, llm_key_env=llm_key_env, max_chars=max_chars, limit=limit
    )
    emit_json(proposed.as_dict()) if json_out else _show_proposed(proposed, domain)


def _show_applied(applied: TranslationApplied, domain: str, review: Path) -> None:
    show_mapping(
        f"translations into {applied.language} for {domain}",
        {
            "graph": applied.graph,
            "quads": applied.quads,
            "rows not kept": applied.skipped,
            "rows still to review": applied.unreviewed,
            "build": applied.build_id,
        }
        | {f"{kind} labels": n for kind, n in applied.loaded.items()},
    )
    if applied.unreviewed:
        console.print(
            f"{applied.unreviewed} rows still say keep = review and were not applied: set keep to yes on "
            f"those you accept and --apply {review} again",
            markup=False,
            soft_wrap=True,
        )


def _show_proposed(proposed: TranslationProposals, domain: str) -> None:
    lang = proposed.language
    counts = {f"{'entities' if kind == 'entity' else kind + 's'} lacking one": n for kind, n in proposed.items.items()}
    if not proposed.asked_model:
        show_mapping(
            f"to translate into {lang} for {domain} (no model asked)",
            counts | {"to fill in": proposed.unanswered, "aliases proposed (keep = review)": proposed.candidates},
        )
        console.print(
            f"fill in `label` and set keep to yes on each row you translate in {proposed.out} (an alias row: yes "
            f"if it is the name), then: kgforge translate {domain} --lang {lang} --apply {proposed.out}",
            markup=False,
            soft_wrap=True,
        )
        return
    show_mapping(
        f"labels proposed in {lang} for {domain}",
        counts
        | {
            "proposed (keep = review)": proposed.proposed,
            "of them aliases the graph has": proposed.candidates,
            "unanswered": proposed.unanswered,
            "labels refused": proposed.refused,
            "left for a later run": proposed.llm["left_for_later"],
            "requests": proposed.llm["calls"],
            "cached replies": proposed.llm["cache_hits"],
        },
    )
    if proposed.refused:
        console.print(
            f"{proposed.refused} labels refused as proposals (a control character, newline or bidi override, or "
            f"over {MAX_LABEL_CHARS} characters): their rows are left for you to fill in; the labels are in "
            f"{proposed.quarantine}",
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"review {proposed.out}: set keep to yes on each label you accept, then: kgforge translate {domain} "
        f"--lang {lang} --apply {proposed.out}",
        markup=False,
        soft_wrap=True,
    )


@app.command("align")
def align_command(
    domain: DomainArgument,
    lang: Annotated[str, typer.Option("--lang", parser=LANGUAGE, help="The other language.")] = "en",
    write: Annotated[
        bool,
        typer.Option(
            "--write",
            help="Publish the name matches as owl:sameAs (graph "
            "derived/aligned/LANG), which exports and goals then use.",
        ),
    ] = False,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Align the domain's names with those in --lang across sources, with type checks; list the ambiguous and
    the missing ones (all of them in <domain>/align-LANG.json)."""
    report = Domain(domain, workdir).align(lang, write=write)
    if json_out:
        emit_json(report.as_dict())
        return
    show_mapping(
        f"{report.base_language}/{report.language} names of {domain}",
        {
            "entities": report.entities,
            "named in both": report.both,
            "linked (owl:sameAs)": report.linked,
            "matched by name": report.matched,
            "refused by type": report.type_rejected,
            "ambiguous": len(report.ambiguous),
        }
        | {f"missing in {lang_}": len(names) for lang_, names in report.missing.items()}
        | {"report": str(report.report_file), "graph": report.graph or "-"},
    )
    for name, candidates in list(report.ambiguous.items())[:10]:
        console.print(f"  ambiguous: {name} → {', '.join(candidates)}", markup=False)
