"""`kgforge qa generate`: conversational factoid QA from the graph, as ConvKGYarn spins it.

A *yarn* is one conversation's facts: a seed entity and up to ``turns`` of its selected facts (one
predicate per turn, predicates of a group asked together; with ``related``, the last turn is about
the entity most similar to the seed by inner product of the trained embeddings). Each yarn is then
rendered in every chosen configuration (interaction × phenomena) with every template variant: by
default the paper's grid, 3 variants each, so each fact yields 24 questions (voice: original,
deixis, disfluency, deixis+disfluency; text: original, deixis, typos, deixis+typos).

Rules: the first turn never uses deixis, nor does a turn whose subject differs from the previous
turn's; a multi-valued fact has a list answer; a qualified fact names a qualifier in the question,
never one that equals the turn's own answer. Records stream to disk (temporary files renamed at the
end), so memory does not grow with the output; the same seed gives byte-identical files.
"""

from __future__ import annotations

import hashlib
import json
import random
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import IO, Any

import numpy as np
import polars as pl

from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.files import package_versions, sha256_file
from kgforge.core.output import OutputFile, output_file
from kgforge.core.progress import iterate
from kgforge.core.records import Record, omitted_when_none
from kgforge.qa.graph import QAGraph
from kgforge.qa.phenomena import add_disfluency, add_typo
from kgforge.qa.select import TypeSelection
from kgforge.qa.templates import TemplateSet, TypeWords

PHENOMENA = ("deixis", "disfluency", "typos")
_json = json.encoder.encode_basestring  # a str as a JSON string, non-ASCII kept (json.dumps' own, in C)
NOISE = {"voice": "disfluency", "text": "typos"}  # the phenomenon each interaction adds besides deixis


@dataclass(frozen=True)
class Config:
    interaction: str
    deixis: bool = False
    disfluency: bool = False
    typos: bool = False
    name: str = field(init=False)

    def __post_init__(self) -> None:
        parts = [p for p in PHENOMENA if getattr(self, p)]
        object.__setattr__(self, "name", f"{self.interaction}-{'+'.join(parts) or 'original'}")


def configurations(interactions: tuple[str, ...], phenomena: tuple[str, ...] | None) -> list[Config]:
    """``phenomena`` None: the paper's grid per interaction; otherwise exactly that combination
    (an empty tuple: the original questions only)."""
    configs = []
    for interaction in interactions:
        noise = NOISE[interaction]
        if phenomena is None:
            configs += [
                Config(interaction),
                Config(interaction, deixis=True),
                Config(interaction, **{noise: True}),
                Config(interaction, deixis=True, **{noise: True}),
            ]
            continue
        wrong = [p for p in phenomena if p in NOISE.values() and p != noise]
        if wrong:
            home = "voice" if wrong[0] == "disfluency" else "text"
            raise ArgumentError(
                "--" + wrong[0],
                f"{wrong[0]} belong to {home} interactions, not {interaction}: add --interaction {home}",
            )
        configs.append(Config(interaction, **{p: True for p in phenomena}))
    return configs


@dataclass
class GenerateOptions:
    n: int = 100  # conversations (yarns), each rendered in every configuration and variant
    turns: int = 5
    seed: int = 0
    interactions: tuple[str, ...] = ("voice", "text")
    phenomena: tuple[str, ...] | None = None
    variants: int = 3
    related: bool = False
    model: str = "default"


@dataclass
class Unit:
    """One turn's fact: what is asked about whom, and its answer."""

    subject: str
    subject_label: str
    type: str
    kind: str  # simple | complex | qualified | group
    predicates: tuple[str, ...]
    predicate_labels: tuple[str, ...]
    predicate_keys: tuple[str, ...]
    asks: str
    answers: list[dict[str, Any]]
    qualifier: dict[str, Any] | None = None
    related: bool = False
    static_json: str = ""  # the record's answer and fact fields, serialised once for all renderings

    @property
    def answer_texts(self) -> list[str]:
        return [a["text"] for a in self.answers]


@dataclass
class Yarn:
    index: int
    seed_entity: str
    units: list[Unit]
    id: str = ""


@dataclass
class Material:
    """What rendering needs, prepared once: the graph's words and the selection per type."""

    graph: QAGraph
    selections: dict[str, TypeSelection]
    templates: TemplateSet
    type_words: dict[str, TypeWords] = field(default_factory=dict)

    def words(self, type_id: str) -> TypeWords:
        if type_id not in self.type_words:
            self.type_words[type_id] = self.templates.type_words(type_id, self.graph.type_label(type_id))
        return self.type_words[type_id]


# ---------------------------------------------------------------- facts → units


def selected_frame(selections: dict[str, TypeSelection]) -> pl.DataFrame:
    rows = [(t, p, i) for t, s in selections.items() for i, p in enumerate(s.selected)]
    return pl.DataFrame(rows, schema={"type": pl.String, "p": pl.String, "rank": pl.Int64}, orient="row")


def eligible_subjects(graph: QAGraph, selections: dict[str, TypeSelection]) -> list[str]:
    """Entities with at least one fact under a selected predicate of their type, sorted."""
    facts = graph.facts.join(selected_frame(selections), on=["type", "p"], how="semi")
    return facts.select("s").unique().sort("s")["s"].to_list()


def build_units(material: Material, subjects: list[str]) -> dict[str, list[Unit]]:
    """Every askable unit of each subject, in a stable order."""
    graph = material.graph
    facts = graph.facts.filter(pl.col("s").is_in(subjects)).join(
        selected_frame(material.selections), on=["type", "p"], how="inner"
    )
    names = graph.names.select(o="iri", names="names")
    facts = facts.join(names, on="o", how="left").with_columns(
        names=pl.when(pl.col("o_is_entity")).then(pl.col("names")).otherwise(pl.concat_list(pl.col("o")))
    )
    grouped = (
        facts.sort("s", "rank", "o", "o_datatype", "o_lang")
        .group_by("s", "p", "type", maintain_order=True)
        .agg(
            answers=pl.struct(
                value="o", is_entity="o_is_entity", text="o_text", names="names", datatype="o_datatype", lang="o_lang"
            )
        )
    )
    asks = _asks_by_predicate(material)
    units: dict[str, list[Unit]] = {}
    by_subject_predicate: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for s, p, type_id, answers in grouped.iter_rows():
        for answer in answers:
            answer["predicate"] = p
        by_subject_predicate[(s, p)] = answers
        kind = "complex" if len(answers) > 1 else "simple"
        units.setdefault(s, []).append(_unit(material, s, type_id, kind, (p,), answers, asks))
    _add_groups(material, units, by_subject_predicate, asks)
    _add_qualified(material, units, by_subject_predicate, asks, subjects)
    return units


def _asks_by_predicate(material: Material) -> dict[str, str]:
    return {p["predicate"]: p.get("asks", "what") for s in material.selections.values() for p in s.predicates}


def _unit(
    material: Material,
    subject: str,
    type_id: str,
    kind: str,
    predicates: tuple[str, ...],
    answers: list[dict[str, Any]],
    asks: dict[str, str],
    qualifier: dict[str, Any] | None = None,
) -> Unit:
    labels = material.graph.predicate_labels
    keys = tuple(_predicate_keys(predicates))
    return Unit(
        subject,
        material.graph.labels.get(subject, subject),
        type_id,
        kind,
        predicates,
        tuple(labels[p] for p in predicates),
        keys,
        asks.get(predicates[0], "what"),
        answers,
        qualifier,
    )


def _predicate_keys(predicates: tuple[str, ...]) -> list[str]:
    """How templates may name the predicate(s): IRI, schema relation id or Wikidata id (director, P57);
    a group joins them with '+' in sorted order (birth_date+birth_place)."""
    shorts = [p.rsplit("/", 1)[-1] for p in predicates]
    if len(predicates) == 1:
        return [predicates[0], shorts[0]]
    return ["+".join(sorted(predicates)), "+".join(sorted(shorts))]


def _add_groups(
    material: Material,
    units: dict[str, list[Unit]],
    by_subject_predicate: dict[tuple[str, str], list[dict[str, Any]]],
    asks: dict[str, str],
) -> None:
    """A subject that has every predicate of a group gets one unit asking them together, instead of one
    unit per predicate."""
    for subject, subject_units in units.items():
        type_id = subject_units[0].type
        for group in material.selections[type_id].groups:
            if all((subject, p) in by_subject_predicate for p in group):
                answers = [a for p in group for a in by_subject_predicate[(subject, p)]]
                subject_units[:] = [u for u in subject_units if u.predicates[0] not in group]
                subject_units.append(_unit(material, subject, type_id, "group", tuple(group), answers, asks))


def _add_qualified(
    material: Material,
    units: dict[str, list[Unit]],
    by_subject_predicate: dict[tuple[str, str], list[dict[str, Any]]],
    asks: dict[str, str],
    subjects: list[str],
) -> None:
    """One qualified unit per (subject, predicate) that has a usable qualifier: the answer is every
    object whose statement carries that qualifier value, which must not be one of those objects."""
    qualifiers = material.graph.qualifiers.filter(pl.col("s").is_in(subjects)).sort("s", "p", "q", "q_value", "o")
    labels = material.graph.predicate_labels
    done: set[tuple[str, str]] = set()
    for (s, p, q, q_value, q_text), rows in qualifiers.group_by(
        "s", "p", "q", "q_value", "q_text", maintain_order=True
    ):
        answers = [a for a in by_subject_predicate.get((s, p), []) if a["value"] in set(rows["o"].to_list())]
        if not answers or (s, p) in done or any(q_value == a["value"] or q_text in a["names"] for a in answers):
            continue
        done.add((s, p))
        qualifier = {"predicate": q, "predicate_label": labels[q], "value": q_value, "text": q_text}
        units[s].append(_unit(material, s, units[s][0].type, "qualified", (p,), answers, asks, qualifier))


def seal(unit: Unit) -> Unit:
    """Serialise the unit's answer and fact fields once; every rendering reuses them."""
    fact = {
        "subject": unit.subject,
        "subject_label": unit.subject_label,
        "type": unit.type,
        "kind": unit.kind,
        "predicates": list(unit.predicates),
        "predicate_labels": list(unit.predicate_labels),
        "qualifiers": [unit.qualifier] if unit.qualifier else [],
        "related": unit.related,
    }
    static = {"answers": unit.answers, "answer_texts": unit.answer_texts, "fact": fact}
    unit.static_json = json.dumps(static, ensure_ascii=False, separators=(",", ":"))[1:-1]
    return unit


# ---------------------------------------------------------------- yarns


Partners = Callable[[list[str], list[str]], dict[str, str]]  # (seeds, candidates) -> seed: related entity


def spin_yarns(
    material: Material, options: GenerateOptions, partners: Partners | None = None
) -> tuple[list[Yarn], dict[str, int]]:
    """``options.n`` yarns from seeds drawn without replacement (cycling when there are fewer
    eligible entities than yarns), reproducibly for ``options.seed``. ``partners`` gives each seed
    its related entity (with ``options.related``)."""
    eligible = eligible_subjects(material.graph, material.selections)
    if not eligible:
        raise KgforgeError(
            "no entity has a fact under a selected predicate: check the selection "
            "(`kgforge qa predicates`) and the question language"
        )
    rng = np.random.default_rng(options.seed)
    order: list[str] = []
    while len(order) < options.n:
        order += [eligible[i] for i in rng.permutation(len(eligible))]
    seeds = order[: options.n]
    related = partners(sorted(set(seeds)), eligible) if partners is not None else {}
    wanted = sorted(set(seeds) | set(related.values()))
    units = build_units(material, wanted)
    picker = random.Random(options.seed)
    yarns, skipped = [], {"seeds_without_units": 0}
    for index, seed_entity in enumerate(seeds):
        partner = related.get(seed_entity)
        partner_units = units.get(partner, []) if partner else []
        chosen = _pick_units(units.get(seed_entity, []), max(1, options.turns - (1 if partner_units else 0)), picker)
        if partner_units and chosen:
            chosen.append(replace(picker.choice(partner_units), related=True))
        if not chosen:
            skipped["seeds_without_units"] += 1
            continue
        yarn = Yarn(index, seed_entity, [seal(replace(u)) for u in chosen])
        yarn.id = _yarn_id(material.graph.paths.domain, options.seed, index, yarn.units)
        yarns.append(yarn)
    return yarns, skipped


def _pick_units(units: list[Unit], turns: int, rng: random.Random) -> list[Unit]:
    """Up to ``turns`` units, never the same predicate twice."""
    shuffled = rng.sample(units, len(units))
    chosen: list[Unit] = []
    used: set[str] = set()
    for unit in shuffled:
        if len(chosen) == turns:
            break
        if used.isdisjoint(unit.predicates):
            chosen.append(unit)
            used.update(unit.predicates)
    return chosen


def _yarn_id(domain: str, seed: int, index: int, units: list[Unit]) -> str:
    key = json.dumps([domain, seed, index, [[u.subject, *u.predicates, u.kind] for u in units]], ensure_ascii=False)
    return "qa-" + hashlib.sha256(key.encode("utf-8")).hexdigest()[:16]


# ---------------------------------------------------------------- rendering


@dataclass
class Turn:
    question: str
    clean: str
    deixis: bool
    disfluency: str | None
    typo: dict[str, Any] | None


def render(material: Material, yarn: Yarn, config: Config, variant: int, seed: int) -> list[Turn]:
    """One yarn's questions in one configuration and template variant (reproducible on its own)."""
    rng = random.Random(f"{seed}/{yarn.id}/{config.name}/{variant}")
    templates = material.templates
    chinese = templates.language.startswith("zh")
    turns: list[Turn] = []
    previous: Unit | None = None
    for number, unit in enumerate(yarn.units):
        deixis = config.deixis and number > 0 and previous is not None and previous.subject == unit.subject
        texts = templates.texts(
            unit.kind, config.interaction, "deixis" if deixis else "name", unit.type, unit.predicate_keys
        )
        text = _template(texts, variant, previous, unit)
        words = material.words(unit.type)
        values = {
            "subject": unit.subject_label,
            "ref": words.refs[variant % len(words.refs)],
            "type": words.name,
            "predicate": unit.predicate_labels[0],
            "predicates": ("和" if chinese else " and ").join(unit.predicate_labels),
            "wh": templates.wh[unit.asks],
            "qualifier_predicate": (unit.qualifier or {}).get("predicate_label", ""),
            "qualifier": (unit.qualifier or {}).get("text", ""),
            "previous": previous.answers[0]["text"] if previous else "",
        }
        question = text.format_map(values)
        if not chinese:
            question = question[:1].upper() + question[1:]
        clean, typo, disfluency = question, None, None
        if config.typos:
            typed = add_typo(question, rng, chinese)
            if typed is not None:
                question, found = typed
                typo = found.as_dict(clean)
        if config.disfluency:
            false_start = _false_start(material, unit, values["ref"] if deixis else unit.subject_label, rng, chinese)
            question, disfluency = add_disfluency(question, rng, templates.disfluency, false_start, chinese)
        turns.append(Turn(question, clean, deixis, disfluency, typo))
        previous = unit
    return turns


def _template(texts: list[str], variant: int, previous: Unit | None, unit: Unit) -> str:
    """The variant's template; one naming the previous turn's answer is passed over when there is none
    or when it would give this turn's own answer away."""
    for offset in range(len(texts)):
        text = texts[(variant + offset) % len(texts)]
        if "{previous}" not in text:
            return text
        if previous is not None and previous.answers[0]["text"] not in {n for a in unit.answers for n in a["names"]}:
            return text
    return texts[variant % len(texts)].replace("{previous}", "").lstrip("，。,. ")


def _false_start(material: Material, unit: Unit, who: str, rng: random.Random, chinese: bool) -> str | None:
    """The entity with another of its type's predicates, for a takeback (never an answer)."""
    others = [p for p in material.selections[unit.type].selected if p not in unit.predicates]
    if not others:
        return None
    label = material.graph.predicate_labels.get(rng.choice(others))
    if not label:
        return None
    return f"{who}的{label}" if chinese else f"What's the {label} of {who}"


# ---------------------------------------------------------------- writing


class Writers:
    """The output files, written to temporary names and renamed into place when complete."""

    def __init__(self, out: OutputFile, convquestions: OutputFile | None) -> None:
        self.targets = [target.stream(buffering=1 << 20) for target in (out, convquestions) if target is not None]

    @property
    def turns(self) -> IO[str]:
        return self.targets[0].handle

    @property
    def convquestions(self) -> IO[str] | None:
        return self.targets[1].handle if len(self.targets) > 1 else None

    def finish(self) -> None:
        for target in self.targets:
            target.commit()

    def abandon(self) -> None:
        for target in self.targets:
            target.discard()


def turn_lines(material: Material, yarn: Yarn, config: Config, variant: int, turns: list[Turn]) -> list[str]:
    """The JSON lines of one rendering. Written by hand around the one string that varies (ids, config
    names and the domain are plain ASCII or already JSON), since this is the hot loop: one json.dumps
    per turn would cost a fifth of the run."""
    conversation = f"{yarn.id}-{config.name}-{variant}"
    head = (
        f'"conversation_id":"{conversation}","yarn_id":"{yarn.id}","domain":{_json(material.graph.paths.domain)},'
        f'"language":{_json(material.templates.language)},"config":"{config.name}",'
        f'"interaction":"{config.interaction}","variant":{variant},'
    )
    lines = []
    for number, (unit, turn) in enumerate(zip(yarn.units, turns)):
        phenomena = (
            f'{{"deixis":{"true" if turn.deixis else "false"},"disfluency":'
            f'{_json(turn.disfluency) if turn.disfluency else "null"},"typo":'
            f"{json.dumps(turn.typo, ensure_ascii=False, separators=(',', ':')) if turn.typo else 'null'}}}"
        )
        lines.append(
            f'{{"id":"{conversation}-t{number}",{head}"turn":{number},"question":{_json(turn.question)},'
            f'"phenomena":{phenomena},{unit.static_json}}}\n'
        )
    return lines


def convquestions_line(material: Material, yarn: Yarn, turns: list[Turn]) -> str:
    """One conversation with the fields of the ConvQuestions dataset card."""
    record = {
        "domain": material.graph.paths.domain,
        "seed_entity": yarn.seed_entity,
        "seed_entity_text": material.graph.labels.get(yarn.seed_entity, yarn.seed_entity),
        "questions": [t.question for t in turns],
        "answers": [[a["value"] for a in unit.answers] for unit in yarn.units],
        "answer_texts": ["; ".join(unit.answer_texts) for unit in yarn.units],
    }
    return json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n"


def preflight_output(
    material: Material, yarns: list[Yarn], configs: list[Config], options: GenerateOptions, out: Path
) -> None:
    """Refuse, before anything is written, a run whose file would not fit on the disk it goes to: every
    yarn is rendered ``len(configs) * options.variants`` times, so the size is known from the first
    rendering (``--variants 1000000`` is terabytes; variants past the templates' own texts repeat them)."""
    if not yarns or not configs:
        return
    sample = "".join(
        turn_lines(material, yarns[0], configs[0], 0, render(material, yarns[0], configs[0], 0, options.seed))
    )
    estimate = len(sample.encode("utf-8")) * len(yarns) * len(configs) * options.variants
    free = shutil.disk_usage(out.resolve().parent if out.parent.exists() else Path.cwd()).free
    if estimate > free:
        raise ArgumentError(
            "--variants",
            f"{len(yarns)} conversations x {len(configs)} configurations x "
            f"{options.variants} variants would write about {estimate / 1024**3:,.1f} GiB "
            f"to {out}, but {free / 1024**3:,.1f} GiB is free there; give fewer "
            "--variants or --n (the templates' own variants repeat past their count)",
        )


@dataclass(frozen=True)
class QAGenerateReport(Record):
    """The conversational QA turns ``kgforge qa generate`` wrote (also in ``OUT.manifest.json``): what was
    spun, in which configurations, from which build and templates, and how long each part took."""

    domain: str
    out: str
    convquestions: str | None  # the ConvQuestions-shaped copy, when asked for
    yarns: int  # conversations spun (each rendered in every configuration and variant)
    facts: int
    fact_kinds: dict[str, int]  # simple, multi-answer, related, ... -> facts
    turns: int
    conversations: int  # renderings written
    questions_per_fact: int  # configurations x variants
    configurations: tuple[str, ...]
    related_turns: int  # turns about the seed's most similar entity (``related``)
    seeds_without_units: int  # seeds with no selected fact to ask about: skipped
    language: str
    templates: str  # the template file (or the bundled set) the questions came from
    options: dict[str, Any]  # the GenerateOptions, as given
    build_id: str
    out_sha256: str
    versions: dict[str, str]  # package -> version, for reproducing the file
    seconds: float  # spinning and writing
    timings: dict[str, float]  # read_s, select_s, yarns_s, render_write_s
    seconds_total: float | None = omitted_when_none()  # reading, selection and generation (``generate_dataset``)


def generate(
    material: Material,
    options: GenerateOptions,
    out: Path | OutputFile,
    convquestions: Path | OutputFile | None = None,
    partners: Partners | None = None,
) -> QAGenerateReport:
    """Spin ``options.n`` yarns and write every rendering; returns the report (also in OUT.manifest.json)."""
    started = time.perf_counter()
    out = output_file(out)
    convquestions = output_file(convquestions, what="--convquestions") if convquestions is not None else None
    manifest = out.sidecar(".manifest.json")
    configs = configurations(options.interactions, options.phenomena)
    yarns, skipped = spin_yarns(material, options, partners)
    spun = time.perf_counter()
    preflight_output(material, yarns, configs, options, out.path)
    writers = Writers(out, convquestions)
    counts = {"turns": 0, "conversations": 0}
    kinds: dict[str, int] = {}
    try:
        for yarn in iterate(yarns, "render conversations"):
            for unit in yarn.units:
                kinds[unit.kind] = kinds.get(unit.kind, 0) + 1
            for config in configs:
                for variant in range(options.variants):
                    turns = render(material, yarn, config, variant, options.seed)
                    writers.turns.writelines(turn_lines(material, yarn, config, variant, turns))
                    if writers.convquestions is not None:
                        writers.convquestions.write(convquestions_line(material, yarn, turns))
                    counts["turns"] += len(turns)
                    counts["conversations"] += 1
    except BaseException:
        writers.abandon()
        raise
    writers.finish()
    report = QAGenerateReport(
        domain=material.graph.paths.domain,
        out=str(out),
        convquestions=str(convquestions) if convquestions else None,
        yarns=len(yarns),
        facts=sum(kinds.values()),
        fact_kinds=kinds,
        turns=counts["turns"],
        conversations=counts["conversations"],
        questions_per_fact=len(configs) * options.variants,
        configurations=tuple(c.name for c in configs),
        related_turns=sum(u.related for y in yarns for u in y.units),
        seeds_without_units=skipped["seeds_without_units"],
        language=material.templates.language,
        templates=material.templates.source,
        options={
            **asdict(options),
            "interactions": list(options.interactions),
            "phenomena": list(options.phenomena) if options.phenomena is not None else None,
        },
        build_id=material.graph.manifest.build_id,
        out_sha256=sha256_file(out.path),
        versions=package_versions(),
        seconds=round(time.perf_counter() - started, 3),
        timings={"yarns_s": round(spun - started, 3), "render_write_s": round(time.perf_counter() - spun, 3)},
    )
    manifest.write_json(report.as_dict())
    return report
