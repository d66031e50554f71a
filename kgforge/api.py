"""The public Python API: one ``Domain`` object per knowledge graph, one method per pipeline stage.

    from kgforge import Domain

    kg = Domain("travel", workdir="kg")
    kg.build(sources=["kdconv:kb_travel.json"])
    kg.stats().triples
    kg.query("goal_two_step", a="故宫", limit=10).rows   # a shipped query by name, an entity by its label
    kg.tables().facts                       # polars
    kg.derive(); kg.goals(n=100, out="goals.jsonl"); kg.export("goals.jsonl", fmt="duconv", out="train.jsonl")
    kg.embed(model="RotatE", dim=64); kg.related("故宫", k=5)
    kg.corpus_card(["dev.json"], out="card.md")  # and, on any dialogue file: corpus_stats, split_corpus, build_candidates

Each method runs the same library function as the CLI command of that name and returns a typed report
(a frozen dataclass) whose ``as_dict()`` is exactly what the command prints with ``--json``. Values reach
SPARQL as substitutions (``**bindings``: a plain ``str`` is read by where its variable stands, an entity's
label or a literal, see :mod:`kgforge.store.labels`; ``pyoxigraph`` terms pass through), never pasted into
the query text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.build.refresh import SourceDecision
from kgforge.build.transaction import DroppedGraph, build, parse_source
from kgforge.core.checks import language_tag
from kgforge.core.schema import SourceSpec, load_schema
from kgforge.derive import derive
from kgforge.core.errors import ArgumentError
from kgforge.corpus import (
    CandidatesReport,
    CardReport,
    CorpusStats,
    SplitReport,
    build_candidates,
    corpus_stats,
    split_corpus,
    write_card,
)
from kgforge.exports import ExportOptions, export_dialogues, export_goals
from kgforge.goals.check import validate
from kgforge.grounding import GroundOptions, MatchOptions, ground_file
from kgforge.goals.generate import generate
from kgforge.goals.graph import GoalOptions
from kgforge.stats import domain_stats
from kgforge.languages import (
    AlignmentReport,
    TranslationApplied,
    TranslationProposals,
    align_languages,
    apply_translations,
    propose_translations,
)
from kgforge.languages.translate import MAX_LITERAL_CHARS
from kgforge.qa.llm import DEFAULT_KEY_ENV
from kgforge.qa.pipeline import LLMSettings
from kgforge.store.catalog import DomainInfo, list_domains
from kgforge.store.diff import GraphDiff, diff_builds
from kgforge.store.labels import check_required, labelled_rows, resolve_bindings, row_labels
from kgforge.store.layout import DomainPaths, domain_paths, read_manifest
from kgforge.store.query import DEFAULT_TIMEOUT, QueryRunner, load_query
from kgforge.store.tables import GraphTables, read_tables


@dataclass(frozen=True)
class Report:
    """What a stage did, as the CLI's ``--json`` prints it (``as_dict()``); subclasses name the fields a
    reader usually wants."""

    domain: str
    data: dict[str, Any] = field(repr=False)

    def as_dict(self) -> dict[str, Any]:
        return self.data


@dataclass(frozen=True)
class BuildReport(Report):
    build_id: str = ""
    total_quads: int = 0
    records_ok: int = 0
    records_bad: int = 0
    dropped: tuple[DroppedGraph, ...] = ()  # graphs a stage had added that this rebuild left out
    decisions: tuple[SourceDecision, ...] = ()  # each source: its graph kept or imported again, and why
    published: bool = True  # False when nothing changed, so the published build stays as it was


@dataclass(frozen=True)
class StatsReport(Report):
    entities: int = 0
    relations: int = 0
    triples: int = 0


@dataclass(frozen=True)
class QueryReport(Report):
    kind: str = "select"
    variables: tuple[str, ...] = ()
    rows: tuple[dict[str, Any], ...] = ()  # SELECT: variable -> pyoxigraph term
    boolean: bool | None = None
    labels: dict[str, str] = field(default_factory=dict)  # IRI -> label, for the IRIs in ``rows``
    truncated: bool = False  # ``limit`` held rows back
    more_rows: int | None = None  # how many, when counting them was cheap
    triples: tuple[Any, ...] = ()  # CONSTRUCT/DESCRIBE: pyoxigraph triples

    def label(self, term: Any) -> str | None:
        """The label beside an IRI of ``rows``, or None."""
        return self.labels.get(term.value) if isinstance(term, ox.NamedNode) else None


@dataclass(frozen=True)
class DeriveReport(Report):
    pairs: int = 0
    quads: int = 0


@dataclass(frozen=True)
class GoalsReport(Report):
    out: Path = Path()
    goals: int = 0


@dataclass(frozen=True)
class GoalProblem:
    """One goal of a checked file that the graph does not give: its line and what is wrong."""

    line: int
    kind: str  # one_step, two_step, other (…), or unreadable
    reason: str


@dataclass(frozen=True)
class GoalCheckReport(Report):
    file: Path = Path()
    goals: int = 0
    goals_in_graph: int = 0
    found: int = 0
    recall: float | None = None
    problems: tuple[GoalProblem, ...] = ()  # unreadable lines, then goals not in the graph, then misses (capped)


@dataclass(frozen=True)
class DiffReport(Report):
    """Facts added, removed and changed per graph between two builds (:mod:`kgforge.store.diff`)."""

    from_build: str = ""
    to_build: str = ""
    graphs: tuple[GraphDiff, ...] = ()
    out: Path | None = None  # the RDF Patch of the differing quads, when asked for

    @property
    def changed_graphs(self) -> tuple[GraphDiff, ...]:
        return tuple(g for g in self.graphs if g.differs)


@dataclass(frozen=True)
class ExportReport(Report):
    out: Path = Path()
    format: str = ""
    layout: str = ""
    records: int = 0
    files: tuple[Path, ...] = ()  # everything written: OUT, its manifest, ids and (if any) rejected records
    rejected: int = 0


@dataclass(frozen=True)
class GroundScore:
    """Precision, recall and F1 of predicted against gold annotations (None where undefined)."""

    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class GroundReport(Report):
    out: Path = Path()
    format: str = ""
    messages: int = 0
    attrs_predicted: int = 0
    gold_messages: int = 0  # messages whose gold annotation was kept and scored
    micro: GroundScore | None = None
    per_relation: dict[str, GroundScore] = field(default_factory=dict)
    claims: dict[str, int] = field(default_factory=dict)  # supported / contradicted / unsupported


@dataclass(frozen=True)
class EmbedReport(Report):
    model: str = ""
    evaluation: dict[str, Any] = field(default_factory=dict)
    bundle: Path | None = None  # None on a node other than 0 of a multi-node run
    figures: tuple[Path, ...] = ()  # the loss and validation curves


@dataclass(frozen=True)
class RelatedReport(Report):
    entity: str = ""
    results: tuple[dict[str, Any], ...] = ()


def _term(value: Any) -> ox.NamedNode | ox.Literal | ox.BlankNode | str:
    return value if isinstance(value, (ox.NamedNode, ox.Literal, ox.BlankNode)) else str(value)


class Domain:
    """One domain's knowledge graph under ``workdir`` (default: ``$KGFORGE_WORKDIR``, else ``./kg``), as the CLI sees it."""

    def __init__(self, name: str, workdir: Path | str | None = None) -> None:
        self.paths: DomainPaths = domain_paths(name, workdir)
        self.name = self.paths.domain
        self.workdir = self.paths.workdir

    def __repr__(self) -> str:
        return f"Domain({self.name!r}, workdir={str(self.workdir)!r})"

    def build(self, sources: Iterable[str | SourceSpec] = (), *, schema: str | None = None,
              schema_sources: bool = True, progress: bool = False, full: bool = False) -> BuildReport:
        """Import the sources (``"kind:path"`` strings or SourceSpecs; plus the schema's own unless
        ``schema_sources=False``) into a fresh build and publish it atomically. ``schema`` defaults to the
        domain's own (``kgforge init``), else a shipped one, else one inferred from the sources. Sources
        that did not change since the published build keep their graphs (``full=True`` imports them all)."""
        specs = [s if isinstance(s, SourceSpec) else parse_source(s) for s in sources]
        result = build(self.name, specs, self.workdir, schema=load_schema(schema) if schema else None,
                       show_progress=progress, use_schema_sources=schema_sources, full=full)
        summary = result.as_dict()
        return BuildReport(self.name, summary, summary["build_id"], summary["total_quads"], summary["records_ok"],
                           summary["records_bad"], tuple(result.dropped), tuple(result.decisions),
                           result.published)

    def stats(self) -> StatsReport:
        data = domain_stats(self.name, self.workdir)
        return StatsReport(self.name, data, data.get("entities", 0), data.get("relations", 0), data.get("triples", 0))

    def query(self, query: str, /, *, timeout: float = DEFAULT_TIMEOUT, limit: int = 0, allow_service: bool = False,
              waiting: Callable[[float], None] | None = None, label_language: str | None = None,
              **bindings: Any) -> QueryReport:
        """Run ``query`` (SPARQL text, or the name of a shipped query such as ``"goal_two_step"``) on the
        published store with ``bindings`` substituted for its variables. A ``str`` binding is a plain value:
        the entity it labels where the variable stands as a subject, else a literal (the rule in
        :mod:`kgforge.store.labels`); pyoxigraph terms pass through. ``limit`` keeps the first rows (0: all);
        ``waiting(seconds)`` is called while a query runs. Rows come with the labels of their IRIs, in
        ``label_language`` (default: the domain's), which is also tried first for plain values."""
        sparql = load_query(query)
        check_required(sparql, bindings, query)
        language = language_tag(label_language, "label_language") if label_language else self.language()
        with QueryRunner(self.paths) as runner:
            terms = resolve_bindings(runner, sparql, {k: _term(v) for k, v in bindings.items()}, language, self.name)
            result = runner.query(sparql, terms, timeout=timeout, allow_service=allow_service, limit=limit,
                                  waiting=waiting)
            labels = row_labels(runner, result.rows, language)
        columns, rows = labelled_rows(result.variables, result.rows, labels)
        data = {"kind": result.kind, "variables": columns, "boolean": result.boolean, "rows": rows,
                "truncated": result.truncated, "more_rows": result.more_rows}
        return QueryReport(self.name, data, result.kind, tuple(result.variables), tuple(result.rows), result.boolean,
                           labels, result.truncated, result.more_rows, tuple(result.triples or ()))

    def language(self) -> str:
        """The language of the domain's labels (its schema's ``language``)."""
        return load_schema(read_manifest(self.paths).schema.path).language

    def translate(self, language: str, out: Path | str, *, llm_url: str, llm_model: str,
                  llm_key_env: str = DEFAULT_KEY_ENV, max_chars: int = MAX_LITERAL_CHARS,
                  limit: int | None = None) -> TranslationProposals:
        """Ask an OpenAI-compatible endpoint for labels in ``language`` of what lacks one, and write them to the
        review file ``out`` (TSV) for a person to edit; nothing enters the graph until
        :meth:`apply_translations` (see :mod:`kgforge.languages.translate`)."""
        return propose_translations(self.name, language, out, LLMSettings(llm_url, llm_model, llm_key_env),
                                    self.workdir, max_chars, limit)

    def apply_translations(self, review_file: Path | str, language: str) -> TranslationApplied:
        """Load the kept rows of a reviewed translation file as the graph ``graph/translated/<language>``."""
        return apply_translations(self.name, review_file, language, self.workdir)

    def align(self, language: str = "en", *, write: bool = False) -> AlignmentReport:
        """Align the domain's names with those in ``language`` across sources (type-checked), listing the
        ambiguous and missing ones; ``write`` publishes the name matches as ``owl:sameAs``."""
        return align_languages(self.name, language, self.workdir, write)

    def tables(self, *, include_derived: bool = False) -> GraphTables:
        """The graph as polars tables: ``facts``, ``labels``, ``types``, ``relations``."""
        return read_tables(self.paths, include_derived)

    def derive(self, *, max_group: int | None = None, max_pairs: int | None = None,
               seed: int | None = None) -> DeriveReport:
        data = derive(self.name, self.workdir, max_group=max_group, seed=seed, max_pairs=max_pairs)
        return DeriveReport(self.name, data, data["pairs"], data["quads"])

    def goals(self, n: int, out: Path | str, *, style: str = "duconv", seed: int = 0, one_step_ratio: float = 0.5,
              hops: tuple[int, int] = (1, 3), language: str | None = None,
              profiles: Path | str | None = None) -> GoalsReport:
        options = GoalOptions(n=n, seed=seed, one_step_ratio=one_step_ratio, style=style, hops=hops, language=language)
        data = generate(self.name, options, Path(out), self.workdir, Path(profiles) if profiles else None)
        return GoalsReport(self.name, data, Path(data["out"]), data["goals"])

    def check_goals(self, sessions: Path | str) -> GoalCheckReport:
        """Check the goals of real DuConv sessions (JSON lines) against the graph: in it, and found by the goal
        queries; each goal that is not is a :class:`GoalProblem`."""
        data = validate(self.name, Path(sessions), self.workdir)
        problems = [GoalProblem(b["line"], "unreadable", b["reason"]) for b in data["unreadable"]]
        problems += [GoalProblem(r["line"], r["kind"], r["reason"])
                     for r in data["not_in_graph_examples"] + data["misses"]]
        return GoalCheckReport(self.name, data, Path(data["file"]), data["goals"], data["goals_in_graph"],
                               data["found"], data["recall"], tuple(problems))

    def diff(self, *, from_build: str | None = None, to_build: str | None = None,
             out: Path | str | None = None) -> DiffReport:
        """What changed from build ``from_build`` (default: the one before the published build) to ``to_build``
        (default: the published build); with ``out``, the differing quads as an RDF Patch."""
        result = diff_builds(self.paths, from_build, to_build, Path(out) if out else None)
        graphs = [dict(vars(g)) for g in result.graphs]
        data = {"domain": self.name, "from_build": result.from_build, "to_build": result.to_build,
                "added": result.added, "removed": result.removed, "changed": result.changed,
                "graphs": graphs, "out": result.out}
        return DiffReport(self.name, data, result.from_build, result.to_build, result.graphs,
                          Path(result.out) if result.out else None)

    def export(self, goals: Path | str | None, out: Path | str, *, fmt: str, dialogues: Path | str | None = None,
               **options: Any) -> ExportReport:
        """Per-dialogue subgraphs in dataset format ``fmt`` (see ExportOptions) for the new goals in ``goals``
        (from :meth:`goals`), or for the real ``dialogues`` (``goals=None``)."""
        if (goals is None) == (dialogues is None):
            raise ArgumentError("export", "give either goals (from `kgforge goals`) or dialogues (real dialogues)")
        settings, out = ExportOptions(fmt=fmt, **options), Path(out)
        data = (export_goals(self.name, Path(goals), settings, out, self.workdir) if goals is not None else
                export_dialogues(self.name, Path(dialogues), settings, out, self.workdir))
        files = [out, out.with_name(out.name + ".manifest.json"), Path(data["ids_file"])]
        files += [Path(data["rejected_file"])] if data.get("rejected_file") else []
        return ExportReport(self.name, data, out, data["format"], data["layout"], data["records"], tuple(files),
                            data.get("dialogues_rejected", data.get("checks", {}).get("skipped", 0)) or 0)

    def corpus_stats(self, dialogues: Path | str, **options: Any) -> CorpusStats:
        """:func:`kgforge.corpus.corpus_stats` of a dialogue file, with its topics against this domain's graph."""
        return corpus_stats(dialogues, domain=self.name, workdir=self.workdir, **options)

    def corpus_card(self, dialogues: Iterable[Path | str], out: Path | str, **options: Any) -> CardReport:
        """:func:`kgforge.corpus.write_card`: the datasheet of dialogue files built against this domain."""
        return write_card(dialogues, self.name, out, workdir=self.workdir, **options)

    def ground(self, dialogues: Path | str, out: Path | str, *, fmt: str = "kdconv",
               options: MatchOptions = MatchOptions()) -> GroundReport:
        """The facts each message of ``dialogues`` states and its claims, written to ``out``; scored against the
        gold annotations the input has (see docs/grounding.md)."""
        data = ground_file(self.name, Path(dialogues), Path(out), self.workdir, GroundOptions(fmt, options))
        scores = data["scores"] or {}
        return GroundReport(self.name, data, Path(out), fmt, data["messages"], data["attrs_predicted"],
                            data["gold_messages"], GroundScore(**scores["micro"]) if scores else None,
                            {r: GroundScore(**v) for r, v in scores.get("per_relation", {}).items()}, data["claims"])

    def embed(self, *, name: str = "default", resume: bool = False, progress: bool = False,
              **config: Any) -> EmbedReport:
        """Train a PyKEEN model (``config``: EmbedConfig fields such as model, dim, epochs) into
        ``models/<name>``; the loss and validation curves go to ``models/<name>-training.png``."""
        from kgforge.embed import (  # lazy: torch and PyKEEN take seconds to load
            EmbedConfig,
            embed,
        )

        data = embed(self.name, self.workdir, EmbedConfig(**config), name=name, resume=resume, progress=progress)
        return EmbedReport(self.name, data, data.get("model", config.get("model", "")), data.get("evaluation", {}),
                           Path(data["bundle"]) if data.get("bundle") else None,
                           tuple(Path(f) for f in data.get("figures", [])))

    def related(self, entity: str, *, k: int = 10, model: str = "default", exclude_neighbours: bool = False,
                type_: str | None = None, device: str = "auto") -> RelatedReport:
        """The ``k`` entities nearest ``entity`` (a label or IRI) in the model bundle ``models/<model>``."""
        from kgforge.embed.related import related  # lazy: loads torch

        data = related(self.name, entity, self.workdir, k=k, model=model, exclude_neighbours=exclude_neighbours,
                       type_=type_, device=device)
        return RelatedReport(self.name, data, entity, tuple(data["results"]))


__all__ = ["BuildReport", "CandidatesReport", "CardReport", "CorpusStats", "DeriveReport", "DiffReport", "Domain",
           "DomainInfo", "DroppedGraph", "EmbedReport", "ExportReport", "GoalCheckReport", "GoalProblem", "GoalsReport",
           "GroundReport", "GroundScore", "QueryReport", "RelatedReport", "Report", "SplitReport", "StatsReport",
           "build_candidates", "corpus_stats", "list_domains", "split_corpus", "write_card"]
