"""`kgforge qa predicates|select|templates|generate` and `kgforge qa-eval`: conversational QA from the graph."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from kgforge.api import (
    DEFAULT_KEY_ENV,
    ArgumentError,
    Domain,
    LLMSettings,
    QAGenerateOptions,
    SelectorOptions,
    qa_configurations,
    qa_evaluate,
)
from kgforge.cli._app import (
    DEFAULT_WORKDIR,
    FOLDER,
    FRACTION,
    HTTP_URL,
    LANGUAGE,
    NON_NEGATIVE,
    OUT_DIR,
    OUT_FILE,
    POSITIVE,
    POSITIVE_NUMBER,
    DomainArgument,
    JsonOption,
    WorkdirOption,
    app,
    console,
    emit_json,
    long_running,
    one_of,
    show_mapping,
    whole_number,
)

qa_app = typer.Typer(no_args_is_help=True, help="Conversational factoid QA datasets from the graph (ConvKGYarn).")
app.add_typer(qa_app, name="qa")

LangOption = Annotated[
    str | None, typer.Option("--lang", parser=LANGUAGE, help="Question language (default: the schema's).")
]
LlmUrl = Annotated[str | None, typer.Option("--llm-url", parser=HTTP_URL, help="OpenAI-compatible endpoint (…/v1).")]
LlmModel = Annotated[str | None, typer.Option("--llm-model", help="Model name sent to the endpoint.")]
LlmKeyEnv = Annotated[str, typer.Option("--llm-key-env", help="Environment variable holding the API key.")]


def _llm(url: str | None, model: str | None, key_env: str) -> LLMSettings | None:
    """The model asked, where --llm-url or --llm-model is given (then both must be)."""
    return None if url is None and model is None else _required_llm(url, model, key_env)


def _required_llm(url: str | None, model: str | None, key_env: str) -> LLMSettings:
    if not url or not model:
        raise typer.BadParameter("give both the endpoint and the model", param_hint="--llm-url/--llm-model")
    return LLMSettings(url, model, key_env)


@qa_app.command("predicates")
def predicates_command(
    domain: DomainArgument,
    lang: LangOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """F(t): the predicates of each type, with coverage, specificity and object diversity."""
    report = Domain(domain, workdir).qa_predicates(language=lang)
    if json_out:
        emit_json(report.as_dict())
        return
    for type_id, entry in report.types.items():
        console.print(f"[bold]{entry['label']}[/] ({type_id}): {entry['entities']:,} entities")
        for p in entry["predicates"]:
            console.print(
                f"  {p['label'] or p['predicate']:<28} coverage {p['coverage']:.3f}  specificity "
                f"{p['specificity']:.3f}  diversity {p['diversity']:.3f}  asks {p['asks']}"
            )


@qa_app.command("select")
def select_command(
    domain: DomainArgument,
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            callback=OUT_FILE,
            help="Selection file to write (JSON; edit it and pass it to `qa generate --selection`).",
        ),
    ],
    lang: LangOption = None,
    min_coverage: Annotated[float, typer.Option(parser=FRACTION, help="Least share of a type's entities.")] = 0.05,
    min_score: Annotated[float, typer.Option(parser=FRACTION, help="Least (coverage+specificity+diversity)/3.")] = 0.3,
    max_predicates: Annotated[int, typer.Option(parser=POSITIVE, help="Most predicates kept per type.")] = 20,
    llm_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_key_env: LlmKeyEnv = DEFAULT_KEY_ENV,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """G(t, preds): keep each type's interesting predicates (statistical, or judged by an LLM)."""
    report = Domain(domain, workdir).qa_select(
        out,
        language=lang,
        options=SelectorOptions(min_coverage, min_score, max_predicates),
        llm=_llm(llm_url, llm_model, llm_key_env),
    )
    if json_out:
        emit_json(report.as_dict())
        return
    for type_id, entry in report.types.items():
        console.print(
            f"  {type_id:<24} {entry['selected']}/{entry['of']} predicates ({entry['selector']}), "
            f"groups {entry['groups'] or '-'}"
        )
    console.print(f"selection written to {out}")


@qa_app.command("templates")
def templates_command(
    domain: DomainArgument,
    out: Annotated[Path, typer.Option("--out", "-o", callback=OUT_FILE, help="Template file to write (TOML).")],
    llm_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_key_env: LlmKeyEnv = DEFAULT_KEY_ENV,
    selection: Annotated[Path | None, typer.Option(help="Selection file (default: a statistical selection).")] = None,
    limit: Annotated[int, typer.Option(parser=POSITIVE, help="Most (type, predicate) pairs asked for.")] = 50,
    lang: LangOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Ask an LLM for templates of the selected predicates; keep those that pass the checks."""
    report = (
        Domain(domain, workdir)
        .qa_templates(
            out, _required_llm(llm_url, llm_model, llm_key_env), language=lang, selection=selection, limit=limit
        )
        .as_dict()
    )
    emit_json(report) if json_out else show_mapping(
        f"templates for {domain}", {k: v for k, v in report.items() if not isinstance(v, dict)}
    )


@qa_app.command("generate")
@long_running
def generate_command(
    domain: DomainArgument,
    out: Annotated[
        Path, typer.Option("--out", "-o", callback=OUT_FILE, help="kgforge JSONL, one question turn a line.")
    ],
    convquestions: Annotated[
        Path | None, typer.Option(callback=OUT_FILE, help="Also write ConvQuestions-shaped JSON lines here.")
    ] = None,
    interaction: Annotated[
        str, typer.Option(parser=one_of(("both", "voice", "text")), help="voice, text or both.")
    ] = "both",
    deixis: Annotated[
        bool, typer.Option("--deixis", help="Only the configuration with deixis (and the other phenomena given).")
    ] = False,
    disfluency: Annotated[bool, typer.Option("--disfluency", help="... with disfluencies (voice).")] = False,
    typos: Annotated[bool, typer.Option("--typos", help="... with typos (text).")] = False,
    original: Annotated[
        bool,
        typer.Option(
            "--original",
            help="Only the questions without phenomena. Without any of these flags: the paper's full grid.",
        ),
    ] = False,
    related: Annotated[
        bool,
        typer.Option("--related", help="Last turn about the entity most similar to the seed (trained embeddings)."),
    ] = False,
    model: Annotated[str, typer.Option("--model", parser=FOLDER, help="Embedding bundle for --related.")] = "default",
    turns: Annotated[int, typer.Option(parser=whole_number(1), help="Turns per conversation.")] = 5,
    n: Annotated[
        int,
        typer.Option("--n", parser=POSITIVE, help="Conversations (each rendered in every configuration and variant)."),
    ] = 100,
    variants: Annotated[
        int, typer.Option(parser=whole_number(1), help="Template variants per configuration (the paper: 3).")
    ] = 3,
    seed: Annotated[int, typer.Option(parser=NON_NEGATIVE, help="Same seed, same files.")] = 0,
    selection: Annotated[
        Path | None, typer.Option(help="Selection file (`kgforge qa select`; default: a statistical selection).")
    ] = None,
    templates: Annotated[
        Path | None, typer.Option(help="Template file (default: the bundled zh/en templates).")
    ] = None,
    lang: LangOption = None,
    workdir: WorkdirOption = DEFAULT_WORKDIR,
    json_out: JsonOption = False,
) -> None:
    """Conversational QA turns from the graph: 24 questions per fact over the paper's configurations."""
    chosen = tuple(p for p, on in (("deixis", deixis), ("disfluency", disfluency), ("typos", typos)) if on)
    if original and chosen:
        raise typer.BadParameter("cannot be combined with --deixis, --disfluency or --typos", param_hint="--original")
    phenomena = () if original else (chosen or None)
    interactions = ("voice", "text") if interaction == "both" else (interaction,)
    try:  # refused before anything runs, as a bad argument
        qa_configurations(interactions, phenomena)
    except ArgumentError as exc:
        raise typer.BadParameter(exc.problem, param_hint=exc.what) from None
    options = QAGenerateOptions(
        n=n,
        turns=turns,
        seed=seed,
        interactions=interactions,
        phenomena=phenomena,
        variants=variants,
        related=related,
        model=model,
    )
    report = (
        Domain(domain, workdir)
        .qa_generate(out, options, language=lang, selection=selection, templates=templates, convquestions=convquestions)
        .as_dict()
    )
    emit_json(report) if json_out else show_mapping(
        f"qa {domain} → {out}",
        {k: v for k, v in report.items() if isinstance(v, (int, float, str)) and k not in ("out_sha256",)},
    )


@app.command("qa-eval")
def qa_eval_command(
    predictions: Annotated[Path, typer.Argument(help='JSON lines {"id": turn id, "prediction": text, list or null}.')],
    gold: Annotated[Path, typer.Argument(help="The turns file of `kgforge qa generate`.")],
    llm_url: LlmUrl = None,
    llm_model: LlmModel = None,
    llm_key_env: LlmKeyEnv = DEFAULT_KEY_ENV,
    cache: Annotated[
        Path | None, typer.Option(callback=OUT_DIR, help="LLM judge cache folder (default: next to PREDICTIONS).")
    ] = None,
    timeout: Annotated[float, typer.Option(parser=POSITIVE_NUMBER, help="LLM request timeout (s).")] = 120.0,
    json_out: JsonOption = False,
) -> None:
    """Score predictions turn by turn (alias-aware), per turn and per conversation, by configuration."""
    report = qa_evaluate(predictions, gold, _llm(llm_url, llm_model, llm_key_env), cache=cache, timeout=timeout)
    if json_out:
        emit_json(report.as_dict())
        return
    for title, rows in (("alias", report.alias), ("LLM judge", report.llm_judge or {})):
        if not rows:
            continue
        console.print(f"[bold]{title}[/]  {'configuration':<26} {'turns':>7} {'turn acc':>9} {'conv acc':>9} {'NA':>7}")
        for config, row in rows.items():
            if isinstance(row, dict) and "turns" in row:
                console.print(
                    f"  {'':<{len(title)}}{config:<26} {row['turns']:>7} {row['turn_accuracy']:>9.4f} "
                    f"{row['conversation_accuracy']:>9.4f} {row['na_ratio']:>7.4f}"
                )
    if report.rejected_prediction_lines:
        console.print(
            f"[yellow]{report.rejected_prediction_lines} prediction lines rejected[/]: {report.rejected_file}"
        )
