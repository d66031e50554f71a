"""The shared middle of every export: the domain opened once, each dialogue's subgraph chosen and
labelled column-wise, and every dialogue checked before anything is written."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from kgforge.core.errors import KgforgeError
from kgforge.core.records import Record, omitted_when_none
from kgforge.core.schema import Schema
from kgforge.core.vocab import ONTO
from kgforge.exports.labels import Labels, Render
from kgforge.exports.model import Dialogue, TripleShape
from kgforge.exports.subgraph import SubgraphOptions, select_subgraphs
from kgforge.goals.graph import class_nodes
from kgforge.store.layout import DomainPaths
from kgforge.store.manifest import Manifest
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables
from kgforge.store.workdir import where

RELATED = ONTO + "related"
TOPIC_SCHEMA = {"dialogue": pl.Int64, "position": pl.Int64, "topic": pl.String}
PATH_SCHEMA = {"dialogue": pl.Int64, "s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean}
GOAL_CHECKS = (
    "goal path in the graph",
    "goal path inside the subgraph",
    "every topic has facts",
    "every topic has its type fact (formats that state types)",
    "no empty subgraph",
    "entity and relation labels in the requested language",
)
DIALOGUE_CHECKS = ("entity and relation labels in the requested language",)
TEXTS = ["s_text", "p_text", "o_text"]
ROW_COLUMNS = ["s", "p", "o", "o_is_entity", "s_label", "p_label", "o_label", "role", "graph"]


class ExportCheckError(KgforgeError):
    """Some dialogues failed the checks; nothing was written."""


@dataclass
class Context:
    snapshot: Snapshot  # the build the export reads (an earlier one: ``snapshot.kept(build_id)``)
    paths: DomainPaths
    manifest: Manifest
    schema: Schema
    tables: GraphTables
    labels: Labels
    links: tuple[tuple[str, str], ...] = ()  # the build's owl:sameAs pairs, which lend labels

    @classmethod
    def open(
        cls, snapshot: Snapshot, language: str | None, tables: GraphTables | None = None, allow_mixed: bool = False
    ) -> Context:
        """The snapshot's build, its tables (or ``tables``, which must be that build's: the explorer's, derived
        graphs included) labelled in ``language`` (default: the schema's; entities linked by ``owl:sameAs`` lend
        theirs; ``allow_mixed`` writes another language's where none is)."""
        schema = snapshot.schema
        tables = tables or snapshot.tables()
        links = snapshot.same_as_pairs()
        labels = Labels(tables, schema, language or schema.language, links, allow_mixed)
        return cls(snapshot, snapshot.paths, snapshot.manifest, schema, tables, labels, links)

    def in_language(self, language: str, allow_mixed: bool) -> Context:
        """The same build labelled in ``language`` by the same chain (a parallel export's other twins)."""
        return replace(self, labels=Labels(self.tables, self.schema, language, self.links, allow_mixed))

    def class_iris(self) -> set[str]:
        return class_nodes(self.schema, self.tables)


@dataclass
class Grounded:
    """What the dialogues are about: ``topics`` (dialogue, position, topic IRI; for real dialogues also the
    ``message`` that first names the topic) and goal ``paths`` (dialogue, s, p, o, o_is_entity), for
    dialogues numbered 0..len(ids)-1."""

    topics: pl.DataFrame
    paths: pl.DataFrame
    ids: list[str]
    meta: dict[int, dict[str, Any]]


@dataclass
class Assembled:
    """Every dialogue's labelled subgraph rows, and the problems of those that failed the checks."""

    rows: pl.DataFrame
    problems: dict[int, list[str]]
    grounded: Grounded

    def passing(self) -> pl.DataFrame:
        return self.rows.filter(~pl.col("dialogue").is_in(list(self.problems)))

    def dialogues(self, labels: Labels, render: Render, shape: TripleShape) -> list[Dialogue]:
        """The dialogues that passed, their triples written by ``render`` in the ``shape`` the format wants.
        Built from whole columns (a million triples: Python lists from column lists beat polars' nested
        conversions several times over)."""
        frame = render.columns(self.passing().sort("dialogue", "order"))
        dialogues = frame["dialogue"].to_list()
        written = _written(frame, shape.keys)
        parts: dict[str, dict[int, Any]] = {} if shape.by_message else {"knowledge": _by_dialogue(dialogues, written)}
        paths = frame.with_row_index("at").filter(pl.col("role") == "path").sort("dialogue", "rank")
        path_texts = _written(paths, None)
        parts["goal_path"] = _by_dialogue(paths["dialogue"].to_list(), path_texts)
        if shape.by_message:
            by_message: dict[int, dict[int, list[Any]]] = {}
            for dialogue, message, item in zip(dialogues, frame["message"].to_list(), written):
                by_message.setdefault(dialogue, {}).setdefault(message or 0, []).append(item)
            parts["by_message"] = by_message
        if shape.rows:
            rows = _row_dicts(frame)
            parts["triples"] = _by_dialogue(dialogues, rows)
            parts["path"] = _by_dialogue(paths["dialogue"].to_list(), [rows[i] for i in paths["at"].to_list()])
        types = frame.filter(pl.col("role") == "type").unique(["dialogue", "s"], keep="first")
        topic_types = {(d, s): o for d, s, o in types.select("dialogue", "s", "o_label").iter_rows()}
        return _dialogues(labels, parts, topic_types, self.grounded, self.problems)


def _written(frame: pl.DataFrame, keys: tuple[str, str, str] | None) -> list[Any]:
    """Each row's strings as written: ``[head, relation, tail]``, or a dict with ``keys``."""
    heads, relations, tails = (frame[c].to_list() for c in TEXTS)
    if keys is None:
        return [[s, p, o] for s, p, o in zip(heads, relations, tails)]
    first, second, third = keys
    return [{first: s, second: p, third: o} for s, p, o in zip(heads, relations, tails)]


def _row_dicts(frame: pl.DataFrame) -> list[dict[str, Any]]:
    columns = [frame[c].to_list() for c in ROW_COLUMNS]
    return [dict(zip(ROW_COLUMNS, values)) for values in zip(*columns)]


def _by_dialogue(dialogues: list[int], items: list[Any]) -> dict[int, list[Any]]:
    """Items grouped by the dialogue of their row (rows come sorted by dialogue)."""
    grouped: dict[int, list[Any]] = {}
    for dialogue, item in zip(dialogues, items):
        grouped.setdefault(dialogue, []).append(item)
    return grouped


def assemble(
    ctx: Context, grounded: Grounded, sub_options: SubgraphOptions, add_related: str | None, goal_checks: bool
) -> Assembled:
    """Each dialogue's subgraph, labelled and checked. Goals are checked in full (``GOAL_CHECKS``); a real
    dialogue only needs labels in the language, since it is kept whatever the graph holds (one whose
    topics the graph lacks gets no retrieved facts)."""
    topics, paths = grounded.topics, grounded.paths
    problems: dict[int, list[str]] = {}
    sub = select_subgraphs(topics, paths, ctx.tables, ctx.schema, sub_options, ctx.labels.chosen)
    if add_related:
        related = _related_rows(ctx, topics, add_related)
        if not related.is_empty():
            sub = pl.concat(
                [
                    sub,
                    related.with_columns(
                        order=pl.lit(1 << 40, pl.Int64) + pl.col("position"), graph=pl.lit(None, pl.String)
                    ).select(sub.columns),
                ],
                how="vertical",
            ).sort("dialogue", "order")
    if "message" in topics.columns:
        sub = sub.join(
            topics.select("dialogue", "position", "message").unique(["dialogue", "position"]),
            on=["dialogue", "position"],
            how="left",
        )
    base = ctx.tables.domain_facts()
    if goal_checks:
        _goal_problems(problems, topics, paths, sub, base, sub_options)
        present = set(sub["dialogue"].unique().to_list())
        for i in range(len(grounded.ids)):
            if i not in present:
                problems.setdefault(i, []).append("empty subgraph")
    labelled = ctx.labels.frame_columns(sub.with_columns(pl.col("o_is_entity").fill_null(True)))
    for dialogue, found in label_problems(ctx.labels, labelled).items():
        problems.setdefault(dialogue, []).extend(found)
    return Assembled(labelled, problems, grounded)


def label_problems(labels: Labels, labelled: pl.DataFrame) -> dict[int, list[str]]:
    """The dialogues of ``labelled`` (rows :meth:`Labels.frame_columns` labelled) that name something with no
    label in the language (an entity, relation or type) or state a literal value with no form in it, each
    with the first such thing; none when ``labels`` writes another language's instead (``allow_mixed``)."""
    missing = labels.missing
    problems: dict[int, list[str]] = {}
    if missing:
        unlabelled = labelled.filter(
            pl.col("s").is_in(list(missing))
            | pl.col("p").is_in(list(missing))
            | (pl.col("o_is_entity") & pl.col("o").is_in(list(missing)))
        )
        _note(
            problems,
            unlabelled.unique("dialogue", keep="first", maintain_order=True),
            lambda r: _lacking(labels, next(x for x in (r["s"], r["p"], r["o"]) if x in missing)),
        )
    if labels.values_missing and not labels.allow_mixed:
        lacking = labelled.filter(labels.lacking_values(labelled))
        _note(
            problems,
            lacking.unique("dialogue", keep="first", maintain_order=True).filter(
                ~pl.col("dialogue").is_in(list(problems))
            ),
            lambda r: _lacking_value(labels, r["o"], r["p"]),
        )
    return problems


def _lacking(labels: Labels, iri: str) -> str:
    other = labels.fallback.get(iri)
    has = f" (it has {other!r})" if other and other != iri else ""
    return (
        f"no {labels.language} label for {iri}{has}: `kgforge translate` proposes one, --allow-mixed writes "
        "the other language's"
    )


def _lacking_value(labels: Labels, value: str, relation: str) -> str:
    shown = value if len(value) <= 40 else value[:40] + "…"
    named = labels.relations.get(relation) or labels.fallback.get(relation, relation)
    return (
        f"no {labels.language} form of the value {shown!r} ({named}): `kgforge translate "
        "--list` lists the short ones for translation, --no-text leaves free text out, --allow-mixed writes it "
        "as it is"
    )


def _goal_problems(
    problems: dict[int, list[str]],
    topics: pl.DataFrame,
    paths: pl.DataFrame,
    sub: pl.DataFrame,
    base: pl.DataFrame,
    options: SubgraphOptions,
) -> None:
    _note(
        problems,
        paths.join(base.select("s", "p", "o").unique(), on=["s", "p", "o"], how="anti"),
        lambda r: f"goal path triple not in the graph: {r['s']} {r['p']} {r['o']} (goals made on another build?)",
    )
    _note(
        problems,
        paths.join(sub, on=["dialogue", "s", "p", "o"], how="anti"),
        lambda r: f"goal path triple outside the subgraph: {r['s']} {r['p']} {r['o']}",
    )
    mentioned = pl.concat(
        [sub.select("dialogue", topic="s"), sub.filter(pl.col("o_is_entity")).select("dialogue", topic="o")]
    ).unique()
    _note(
        problems,
        topics.join(mentioned, on=["dialogue", "topic"], how="anti"),
        lambda r: f"topic {r['topic']} has no fact in the graph",
    )
    if options.type_facts:
        typed = sub.filter(pl.col("role") == "type").select("dialogue", topic="s").unique()
        _note(
            problems,
            topics.join(typed, on=["dialogue", "topic"], how="anti"),
            lambda r: f"topic {r['topic']} has no type fact (a 领域 fact or an rdf:type of the schema)",
        )


def _note(problems: dict[int, list[str]], rows: pl.DataFrame, message: Callable[[dict[str, Any]], str]) -> None:
    for row in rows.iter_rows(named=True):
        problems.setdefault(row["dialogue"], []).append(message(row))


def _dialogues(
    labels: Labels,
    parts: dict[str, dict[int, Any]],
    topic_types: dict[tuple[int, str], str],
    grounded: Grounded,
    problems: dict[int, list[str]],
) -> list[Dialogue]:
    ordered = grounded.topics.sort("dialogue", "position").group_by("dialogue", maintain_order=True).agg("topic")
    topic_lists = dict(zip(ordered["dialogue"].to_list(), ordered["topic"].to_list()))
    out = []
    for i, dialogue_id in enumerate(grounded.ids):
        if i in problems:
            continue
        topics = topic_lists.get(i, [])
        info = grounded.meta.get(i, {})
        out.append(
            Dialogue(
                dialogue_id=dialogue_id,
                kind=info.get("kind", "dialogue"),
                topics=topics,
                topic_labels=[labels.entity(t) for t in topics],
                topic_types=info.get("topic_types") or [topic_types.get((i, t)) for t in topics],
                **{name: values.get(i, {} if name == "by_message" else []) for name, values in parts.items()},
                goal_id=info.get("goal_id"),
                seed=info.get("seed"),
                sequence=info.get("sequence"),
                profile=info.get("profile"),
                profile_en=info.get("profile_en"),
                profile_entities=info.get("profile_entities"),
                situation=info.get("situation"),
                source=info.get("source"),
            )
        )
    return out


@dataclass(frozen=True)
class CheckFailure(Record):
    """A dialogue (or goal) the export's checks refused, and why."""

    dialogue_id: str
    problems: tuple[str, ...]


@dataclass(frozen=True)
class CheckReport(Record):
    """The checks' part of an export's report (and manifest): how many were checked, failed and skipped."""

    dialogues_checked: int
    failed: int
    skipped: int  # left out (``--skip-invalid``)
    checks: tuple[str, ...]  # what was checked
    failures: tuple[CheckFailure, ...]  # the first 50
    # a goals export: what its layout's readers need, and the records refused by it or by the language check
    layout_checks: str | None = omitted_when_none()
    layout_failures: tuple[dict[str, Any], ...] | None = omitted_when_none()  # {"record_id", "problems"} each
    language_failures: tuple[dict[str, Any], ...] | None = omitted_when_none()


def check_report(
    problems: dict[int, list[str]], ids: list[str], skip_invalid: bool, checks: tuple[str, ...]
) -> CheckReport:
    """The checks' part of the report; raises ``ExportCheckError`` when some failed and the caller
    did not ask to skip them."""
    failed = [CheckFailure(ids[i], tuple(p)) for i, p in sorted(problems.items())]
    report = CheckReport(len(ids), len(failed), len(failed) if skip_invalid else 0, checks, tuple(failed[:50]))
    if failed and not skip_invalid:
        examples = "; ".join(f"{f.dialogue_id}: {f.problems[0]}" for f in failed[:5])
        raise ExportCheckError(
            f"{len(failed)} of {len(ids)} dialogues failed the export checks, nothing was "
            f"written (give --skip-invalid to write the others): {examples}"
        )
    return report


# ---------------------------------------------------------------- related entities from a trained embedding


def _related_rows(ctx: Context, topics: pl.DataFrame, model: str) -> pl.DataFrame:
    """Each topic's top related entity in the model bundle ``models/<model>`` (``kgforge embed``), as a
    ``kg:related`` triple; topics the model does not know get none. A clear error, not a crash, when the
    related stage or the bundle is missing."""
    open_index = related_index_opener()
    bundle = ctx.paths.models / model
    if not (bundle / "bundle.json").exists():
        raise KgforgeError(
            f"--add-related {model}: no model bundle at {where(bundle)}; train one with "
            f"`kgforge embed {ctx.paths.domain}` (bundle name {model!r})"
        )
    index = open_index(ctx.paths, model)
    known = [t for t in topics["topic"].unique().sort().to_list() if t in index.bundle.iri_to_id]
    best = {}
    if known:
        for topic, found in zip(known, index.top([index.bundle.iri_to_id[t] for t in known], k=1)):
            if found:
                best[topic] = index.iris[found[0][0]]
    rows = [(d, pos, t, RELATED, best[t], True, "related", 0) for d, pos, t in topics.iter_rows() if t in best]
    schema = {
        "dialogue": pl.Int64,
        "position": pl.Int64,
        "s": pl.String,
        "p": pl.String,
        "o": pl.String,
        "o_is_entity": pl.Boolean,
        "role": pl.String,
        "rank": pl.Int64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row")


def related_index_opener() -> Callable[..., Any]:
    """``kgforge.embed.related.open_index(paths, model)``: the embedding stage's nearest-entity index."""
    try:
        module = importlib.import_module("kgforge.embed.related")
    except ModuleNotFoundError:
        raise KgforgeError(
            "--add-related needs the `kgforge related` stage (module kgforge.embed.related), which this "
            "installation does not have"
        ) from None
    opener = getattr(module, "open_index", None)
    if not callable(opener):
        raise KgforgeError(
            "--add-related: kgforge.embed.related has no open_index(paths, model); this kgforge's "
            "related stage is incompatible with export"
        )
    return opener
