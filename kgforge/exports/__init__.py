"""`kgforge export`: one subgraph per dialogue, in each dataset's layout, checked before it is written.

Two inputs: goals sampled by ``kgforge goals`` (``export_goals``), or existing KdConv dialogues whose
topics are their start ``name`` and the entities their utterances mention (``export_dialogues``).
All dialogues are handled together as polars frames (one pass over the graph, not one query per
dialogue). Before anything is written every dialogue is checked: its goal path lies in the graph and
inside its subgraph, every topic has facts, no subgraph is empty, and every entity and relation label
is in the requested language. A dialogue that fails stops the export (``skip_invalid`` drops it
instead and reports it). Beside the output go ``<out>.manifest.json`` (store hash = build id plus the
sha256 of each graph's quads, schema version, seeds, options, checks) and ``<out>.ids.txt`` (the
stable dialogue id of each record, in order, for layouts that have no id field).
"""

from __future__ import annotations

import hashlib
import importlib
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import polars as pl

from kgforge import __version__
from kgforge.build import sha256_file
from kgforge.errors import KgforgeError
from kgforge.exports.formats import FORMATS, GENERIC_SCHEMA_VERSION, Dialogue, write_export
from kgforge.exports.labels import Labels
from kgforge.exports.subgraph import SubgraphOptions, select_subgraphs
from kgforge.gc_pause import paused_gc
from kgforge.goals import read_goals
from kgforge.schema import Schema, load_schema
from kgforge.store import DomainPaths, domain_paths, published_build, read_manifest, write_json_atomic
from kgforge.tables import GraphTables, read_tables
from kgforge.vocab import ONTO

RELATED = ONTO + "related"
TOPIC_SCHEMA = {"dialogue": pl.Int64, "position": pl.Int64, "topic": pl.String}
PATH_SCHEMA = {"dialogue": pl.Int64, "s": pl.String, "p": pl.String, "o": pl.String, "o_is_entity": pl.Boolean}


class ExportCheckError(KgforgeError):
    """Some dialogues failed the checks; nothing was written."""


@dataclass(frozen=True)
class ExportOptions:
    fmt: str
    language: str | None = None
    budget: int | None = None  # facts per topic; None: 7 for goals, all facts for existing dialogues
    layout: str = "conversation"  # DuConv: conversation (train/dev) or sample (history/response)
    segmented: bool = True  # DuConv: strings cut into words with single spaces, as the real data has them
    include_text: bool = True
    skip_invalid: bool = False
    add_related: str | None = None  # model bundle name under models/

    def __post_init__(self) -> None:
        if self.fmt not in FORMATS:
            raise KgforgeError(f"unknown --format {self.fmt!r}: choose one of {', '.join(FORMATS)}")
        if self.budget is not None and self.budget < 0:
            raise KgforgeError(f"--budget must be 0 or more facts per topic, got {self.budget}")


@dataclass
class Context:
    paths: DomainPaths
    manifest: dict[str, Any]
    schema: Schema
    tables: GraphTables
    labels: Labels

    @classmethod
    def open(cls, domain: str, workdir: Path | str | None, language: str | None,
             tables: GraphTables | None = None) -> "Context":
        paths = domain_paths(domain, workdir)
        build = published_build(paths)
        manifest = read_manifest(paths, build)
        schema = load_schema(manifest["schema"]["path"])
        tables = tables or read_tables(paths, build=build)
        return cls(paths, manifest, schema, tables, Labels(tables, schema, language or schema.language))


# ---------------------------------------------------------------- goals → dialogues


@paused_gc()
def export_goals(domain: str, goals_file: Path, options: ExportOptions, out: Path,
                 workdir: Path | str | None = None, tables: GraphTables | None = None) -> dict[str, Any]:
    started = time.perf_counter()
    ctx = Context.open(domain, workdir, options.language, tables)
    goals = list(read_goals(goals_file))
    if not goals:
        raise KgforgeError(f"{goals_file}: no goals to export")
    topics = pl.DataFrame([(i, pos, t) for i, g in enumerate(goals) for pos, t in enumerate(g["topics"])],
                          schema=TOPIC_SCHEMA, orient="row")
    paths_frame = pl.DataFrame([(i, t["s"], t["p"], t["o"], bool(t["o_is_entity"]))
                                for i, g in enumerate(goals) for t in g["path"]], schema=PATH_SCHEMA, orient="row")
    ids = [f"dlg-{g['goal_id'].removeprefix('g-')}" for g in goals]
    budget = 7 if options.budget is None else options.budget
    meta = {i: {"kind": g["kind"], "goal_id": g["goal_id"], "seed": g.get("seed"), "sequence": g.get("sequence"),
                "profile": g.get("profile"), "topic_types": g.get("topic_types")} for i, g in enumerate(goals)}
    dialogues, checks = _assemble(ctx, topics, paths_frame, ids, meta, SubgraphOptions(budget, options.include_text),
                                  options, {})
    extra = {"goals_file": str(goals_file), "goals_sha256": sha256_file(goals_file),
             "seeds": sorted({g.get("seed") for g in goals if g.get("seed") is not None})}
    return _finish(ctx, dialogues, checks, options, out, extra, started)


# ---------------------------------------------------------------- shared assembly


def _assemble(ctx: Context, topics: pl.DataFrame, paths_frame: pl.DataFrame, ids: list[str],
              meta: dict[int, dict[str, Any]], sub_options: SubgraphOptions, options: ExportOptions,
              messages: dict[int, list[dict[str, Any]]]) -> tuple[list[Dialogue], dict[str, Any]]:
    base = ctx.tables.domain_facts()
    problems: dict[int, list[str]] = {}
    related_rows = _related_rows(ctx, topics, options.add_related) if options.add_related else None
    sub = select_subgraphs(topics, paths_frame, ctx.tables, ctx.schema,
                           replace(sub_options, language=ctx.labels.language))
    if related_rows is not None and not related_rows.is_empty():
        sub = pl.concat([sub, related_rows.with_columns(order=pl.lit(10**6, pl.Int64) + pl.col("position"))
                         .select(sub.columns)], how="vertical").sort("dialogue", "order")
    graphs = base.select("s", "p", "o", "graph").unique(["s", "p", "o"], keep="first")
    sub = sub.join(graphs, on=["s", "p", "o"], how="left")
    _note(problems, paths_frame.join(base.select("s", "p", "o").unique(), on=["s", "p", "o"], how="anti"),
          lambda r: f"goal path triple not in the graph: {r['s']} {r['p']} {r['o']} (goals made on another build?)")
    _note(problems, paths_frame.join(sub, on=["dialogue", "s", "p", "o"], how="anti"),
          lambda r: f"goal path triple outside the subgraph: {r['s']} {r['p']} {r['o']}")
    mentioned = pl.concat([sub.select("dialogue", topic="s"), sub.filter(pl.col("o_is_entity"))
                           .select("dialogue", topic="o")]).unique()
    _note(problems, topics.join(mentioned, on=["dialogue", "topic"], how="anti"),
          lambda r: f"topic {r['topic']} has no fact in the graph")
    present = set(sub["dialogue"].unique().to_list())
    for i in range(len(ids)):
        if i not in present:
            problems.setdefault(i, []).append("empty subgraph")
    labelled = ctx.labels.frame_columns(sub.with_columns(pl.col("o_is_entity").fill_null(True)))
    missing = ctx.labels.missing
    if missing:
        unlabelled = labelled.filter(pl.col("s").is_in(list(missing)) | pl.col("p").is_in(list(missing))
                                     | (pl.col("o_is_entity") & pl.col("o").is_in(list(missing))))
        _note(problems, unlabelled.unique("dialogue", keep="first"),
              lambda r: f"no {ctx.labels.language} label for {next(x for x in (r['s'], r['p'], r['o']) if x in missing)}")
    topic_lists = _topic_lists(topics, ctx)
    dialogues = _dialogues(labelled, paths_frame, topic_lists, ids, meta, messages, problems)
    checks = _check_report(problems, ids, options.skip_invalid)
    return dialogues, checks


def _note(problems: dict[int, list[str]], rows: pl.DataFrame, message: Callable[[dict[str, Any]], str]) -> None:
    for row in rows.iter_rows(named=True):
        problems.setdefault(row["dialogue"], []).append(message(row))


def _topic_lists(topics: pl.DataFrame, ctx: Context) -> dict[int, list[str]]:
    ordered = topics.sort("dialogue", "position").group_by("dialogue", maintain_order=True).agg("topic")
    return dict(zip(ordered["dialogue"].to_list(), ordered["topic"].to_list()))


def _dialogues(labelled: pl.DataFrame, paths_frame: pl.DataFrame, topic_lists: dict[int, list[str]],
               ids: list[str], meta: dict[int, dict[str, Any]], messages: dict[int, list[dict[str, Any]]],
               problems: dict[int, list[str]]) -> list[Dialogue]:
    rows: dict[int, list[dict[str, Any]]] = {}
    for row in labelled.sort("dialogue", "order").iter_rows(named=True):
        rows.setdefault(row["dialogue"], []).append(row)
    path_keys: dict[int, list[tuple]] = {}
    for d, s, p, o, _ in paths_frame.iter_rows():
        path_keys.setdefault(d, []).append((s, p, o))
    out = []
    for i, dialogue_id in enumerate(ids):
        if i in problems:
            continue
        triples = rows.get(i, [])
        by_key = {(t["s"], t["p"], t["o"]): t for t in triples}
        topics = topic_lists.get(i, [])
        labels = {t["s"]: t["s_label"] for t in triples} | {t["o"]: t["o_label"] for t in triples if t["o_is_entity"]}
        info = meta.get(i, {})
        out.append(Dialogue(
            dialogue_id=dialogue_id, kind=info.get("kind", "dialogue"), topics=topics,
            topic_labels=[labels.get(t, t) for t in topics], topic_types=info.get("topic_types") or
            [_topic_type(triples, t) for t in topics],
            path=[by_key[k] for k in path_keys.get(i, [])], triples=triples, goal_id=info.get("goal_id"),
            seed=info.get("seed"), sequence=info.get("sequence"), profile=info.get("profile"),
            messages=messages.get(i),
        ))
    return out


def _topic_type(triples: list[dict[str, Any]], topic: str) -> str | None:
    for t in triples:
        if t["s"] == topic and t["role"] == "type":
            return t["o_label"]
    return None


def _check_report(problems: dict[int, list[str]], ids: list[str], skip_invalid: bool) -> dict[str, Any]:
    failed = [{"dialogue_id": ids[i], "problems": p} for i, p in sorted(problems.items())]
    report = {"dialogues_checked": len(ids), "failed": len(failed), "skipped": len(failed) if skip_invalid else 0,
              "checks": ["goal path in the graph", "goal path inside the subgraph", "every topic has facts",
                         "no empty subgraph", "entity and relation labels in the requested language"],
              "failures": failed[:50]}
    if failed and not skip_invalid:
        examples = "; ".join(f"{f['dialogue_id']}: {f['problems'][0]}" for f in failed[:5])
        raise ExportCheckError(f"{len(failed)} of {len(ids)} dialogues failed the export checks, nothing was "
                               f"written (give --skip-invalid to write the others): {examples}")
    return report


# ---------------------------------------------------------------- the issue-6 hook


def _related_rows(ctx: Context, topics: pl.DataFrame, model: str) -> pl.DataFrame:
    """Each topic's top related entity in the model bundle ``models/<model>`` (``kgforge embed``), as a
    ``kg:related`` triple; topics the model does not know get none. A clear error, not a crash, when the
    related stage or the bundle is missing."""
    open_index = related_index_opener()
    bundle = ctx.paths.models / model
    if not (bundle / "bundle.json").exists():
        raise KgforgeError(f"--add-related {model}: no model bundle at {bundle}; train one with "
                           f"`kgforge embed {ctx.paths.domain}` (bundle name {model!r})")
    index = open_index(ctx.paths, model)
    known = [t for t in topics["topic"].unique().sort().to_list() if t in index.bundle.iri_to_id]
    best = {}
    if known:
        for topic, found in zip(known, index.top([index.bundle.iri_to_id[t] for t in known], k=1)):
            if found:
                best[topic] = index.iris[found[0][0]]
    rows = [(d, pos, t, RELATED, best[t], True, "related", 0) for d, pos, t in topics.iter_rows() if t in best]
    schema = {"dialogue": pl.Int64, "position": pl.Int64, "s": pl.String, "p": pl.String, "o": pl.String,
              "o_is_entity": pl.Boolean, "role": pl.String, "rank": pl.Int64}
    return pl.DataFrame(rows, schema=schema, orient="row")


def related_index_opener() -> Callable[..., Any]:
    """``kgforge.related.open_index(paths, model)``: the issue-6 stage's nearest-entity index."""
    try:
        module = importlib.import_module("kgforge.related")
    except ModuleNotFoundError:
        raise KgforgeError("--add-related needs the `kgforge related` stage (module kgforge.related), which this "
                           "installation does not have") from None
    opener = getattr(module, "open_index", None)
    if not callable(opener):
        raise KgforgeError("--add-related: kgforge.related has no open_index(paths, model); this kgforge's "
                           "related stage is incompatible with export")
    return opener


# ---------------------------------------------------------------- writing and the manifest


def store_hash(manifest: dict[str, Any]) -> str:
    """One hash for the store a dialogue was cut from: its build id and each graph's quads sha256."""
    digest = hashlib.sha256(manifest["build_id"].encode())
    for graph, entry in sorted(manifest["graphs"].items()):
        digest.update(f"\n{graph}\t{entry.get('sha256', '')}".encode())
    return digest.hexdigest()


def _finish(ctx: Context, dialogues: list[Dialogue], checks: dict[str, Any], options: ExportOptions, out: Path,
            extra: dict[str, Any], started: float) -> dict[str, Any]:
    if not dialogues:
        raise ExportCheckError("no dialogue passed the export checks; nothing was written")
    build_id = ctx.manifest["build_id"]
    written = write_export(dialogues, options.fmt, out, build_id, ctx.labels.language, options.layout,
                           options.segmented)
    ids_file = out.with_name(out.name + ".ids.txt")
    ids_file.write_text("".join(d.dialogue_id + "\n" for d in dialogues), encoding="utf-8")
    manifest = {
        "format": options.fmt, "domain": ctx.paths.domain, "out": str(out), "dialogues": written,
        "triples": sum(len(d.triples) for d in dialogues), "ids_file": str(ids_file),
        "out_sha256": sha256_file(out), "store_hash": store_hash(ctx.manifest), "build_id": build_id,
        "graphs": {g: e.get("sha256") for g, e in ctx.manifest["graphs"].items()},
        "schema": {k: ctx.manifest["schema"].get(k) for k in ("name", "version", "sha256")},
        "generic_schema_version": GENERIC_SCHEMA_VERSION, "language": ctx.labels.language,
        "options": asdict(options), "checks": checks, "kgforge": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"), **extra,
    }
    write_json_atomic(out.with_name(out.name + ".manifest.json"), manifest)
    report = {k: v for k, v in manifest.items() if k not in ("graphs",)}
    report["seconds"] = round(time.perf_counter() - started, 3)
    return report
