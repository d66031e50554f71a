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

import importlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pyoxigraph as ox

from kgforge.core.checks import language_tag
from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import output_dir
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record, json_key
from kgforge.core.resources import query_description, shipped_queries
from kgforge.core.schema import DOMAIN_SCHEMA_FILE, SourceSpec, load_schema
from kgforge.publish.refresh import SourceDecision
from kgforge.publish.transaction import CheckReport, DroppedGraph, build, check_store, parse_source
from kgforge.sources.importer import sample_source, source_kinds
from kgforge.sources.schema_infer import infer_schema
from kgforge.store.catalog import DomainInfo, list_domains
from kgforge.store.diff import GraphDiff, diff_builds
from kgforge.store.labels import check_required, labelled_rows, resolve_bindings, row_labels
from kgforge.store.layout import DomainPaths, domain_paths, remove_leftovers
from kgforge.store.query import DEFAULT_TIMEOUT, QueryRunner, load_query, parse_binding
from kgforge.store.query import DEFAULT_TIMEOUT as QUERY_TIMEOUT
from kgforge.store.snapshot import Snapshot
from kgforge.store.tables import GraphTables
from kgforge.store.workdir import where as describe_workdir

# Start-up: every command imports this module, and `kgforge build` needs only the build and the store above.
# The stages' names load with their module on first use (``__getattr__`` at the end); a method imports the
# stage function it calls. Importing them all here cost every command about 0.4 s (docs/benchmarks.md).
_LAZY = {  # module -> the names the API takes from it
    "kgforge.publish.domain_import": ("ImportReport",),
    "kgforge.publish.link": ("LinkSummary",),
    "kgforge.corpus": (
        "BY",
        "CandidatesReport",
        "CardReport",
        "CorpusStats",
        "METHODS",
        "SplitPart",
        "SplitReport",
        "build_candidates",
        "corpus_stats",
        "parse_ratios",
        "split_corpus",
        "write_card",
    ),
    "kgforge.crawl": ("CrawlConfig", "SiteSpec", "load_spec", "site_names"),
    "kgforge.crawl.site_crawl": ("CrawlReport", "crawl_site"),
    "kgforge.derive": ("DeriveReport",),
    "kgforge.embed.related": ("RelatedReport",),
    "kgforge.embed.train": ("EmbedReport",),
    "kgforge.evaluation": (
        "EvalOptions",
        "EvalReport",
        "HitsReport",
        "KnowledgeOptions",
        "KnowledgeScore",
        "Leaderboard",
        "METRICS",
        "SEGMENTATIONS",
        "SelectionReport",
        "SelectionScores",
        "evaluate_systems",
        "hits_at",
        "parse_system",
        "score_selection",
        "systems_in_folder",
    ),
    "kgforge.evaluation.rating": ("RUBRICS", "RatingReport", "SHEET_FORMATS", "import_ratings", "make_sheets"),
    "kgforge.exports": ("ExportOptions", "ExportReport", "dialogue_kinds", "layout_names"),
    "kgforge.exports.parallel": ("ParallelExportReport",),
    "kgforge.goals.check": ("GoalCheckReport", "GoalProblem"),
    "kgforge.goals.generate": ("GoalsReport",),
    "kgforge.goals.graph": ("GoalOptions", "parse_hops"),
    "kgforge.grounding": ("GroundOptions", "GroundReport", "GroundScore", "MatchOptions"),
    "kgforge.languages": ("AlignmentReport", "TranslationApplied", "TranslationProposals"),
    "kgforge.languages.translate": ("MAX_LABEL_CHARS", "MAX_LITERAL_CHARS"),
    "kgforge.llm": ("DEFAULT_KEY_ENV", "LLMSettings"),
    "kgforge.qa": (
        "QAGenerateReport",
        "QAPredicatesReport",
        "QAScoreReport",
        "QASelectionReport",
        "QATemplatesReport",
        "SelectorOptions",
    ),
    "kgforge.stats": ("plot_stats",),
    "kgforge.store.rdf_export": ("RDF_FORMATS", "RdfExportReport"),
}
_RENAMED = {  # name in the API -> (module, name there)
    "EVAL_LAYOUTS": ("kgforge.evaluation", "LAYOUTS"),
    "EXPORT_FORMATS": ("kgforge.exports", "FORMATS"),
    "GOAL_STYLES": ("kgforge.goals.graph", "STYLES"),
    "GROUND_FORMATS": ("kgforge.grounding.run", "FORMATS"),
    "IMPORT_ENGINES": ("kgforge.sources.wikidata.engines", "ENGINES"),
    "QAGenerateOptions": ("kgforge.qa", "GenerateOptions"),
    "QA_KEY_ENV": ("kgforge.llm", "DEFAULT_KEY_ENV"),
    "RATING_LANGUAGES": ("kgforge.evaluation.rating", "LANGUAGES"),
    "StatsReport": ("kgforge.stats", "DomainStats"),
    "export_formats": ("kgforge.exports", "formats"),
    "qa_configurations": ("kgforge.qa.generate", "configurations"),
    "score_responses": ("kgforge.evaluation", "evaluate"),
}
_HOME = {name: (module, name) for module, names in _LAZY.items() for name in names} | _RENAMED

if TYPE_CHECKING:  # for type checkers and linters; at run time each loads on first use (``__getattr__`` below)
    from kgforge.corpus import (
        BY,
        METHODS,
        CandidatesReport,
        CardReport,
        CorpusStats,
        SplitPart,
        SplitReport,
        build_candidates,
        corpus_stats,
        parse_ratios,
        split_corpus,
        write_card,
    )
    from kgforge.crawl import CrawlConfig, SiteSpec, load_spec, site_names
    from kgforge.crawl.site_crawl import CrawlReport, crawl_site
    from kgforge.derive import DeriveReport
    from kgforge.embed.related import RelatedReport
    from kgforge.embed.train import EmbedReport
    from kgforge.evaluation import LAYOUTS as EVAL_LAYOUTS
    from kgforge.evaluation import (
        METRICS,
        SEGMENTATIONS,
        EvalOptions,
        EvalReport,
        HitsReport,
        KnowledgeOptions,
        KnowledgeScore,
        Leaderboard,
        SelectionReport,
        SelectionScores,
        evaluate_systems,
        hits_at,
        parse_system,
        score_selection,
        systems_in_folder,
    )
    from kgforge.evaluation import evaluate as score_responses
    from kgforge.evaluation.rating import LANGUAGES as RATING_LANGUAGES
    from kgforge.evaluation.rating import RUBRICS, SHEET_FORMATS, RatingReport, import_ratings, make_sheets
    from kgforge.exports import FORMATS as EXPORT_FORMATS
    from kgforge.exports import ExportReport, dialogue_kinds, layout_names
    from kgforge.exports import formats as export_formats
    from kgforge.exports.parallel import ParallelExportReport
    from kgforge.goals.check import GoalCheckReport, GoalProblem
    from kgforge.goals.generate import GoalsReport
    from kgforge.goals.graph import STYLES as GOAL_STYLES
    from kgforge.goals.graph import parse_hops
    from kgforge.grounding import GroundReport, GroundScore, MatchOptions
    from kgforge.grounding.run import FORMATS as GROUND_FORMATS
    from kgforge.languages import AlignmentReport, TranslationApplied, TranslationProposals
    from kgforge.languages.translate import MAX_LABEL_CHARS, MAX_LITERAL_CHARS
    from kgforge.llm import DEFAULT_KEY_ENV, LLMSettings
    from kgforge.llm import DEFAULT_KEY_ENV as QA_KEY_ENV
    from kgforge.publish.domain_import import ImportReport
    from kgforge.publish.link import LinkSummary
    from kgforge.qa import GenerateOptions as QAGenerateOptions
    from kgforge.qa import (
        QAGenerateReport,
        QAPredicatesReport,
        QAScoreReport,
        QASelectionReport,
        QATemplatesReport,
        SelectorOptions,
    )
    from kgforge.qa.generate import configurations as qa_configurations
    from kgforge.sources.wikidata.engines import ENGINES as IMPORT_ENGINES
    from kgforge.stats import DomainStats as StatsReport
    from kgforge.stats import plot_stats
    from kgforge.store.rdf_export import RDF_FORMATS, RdfExportReport


@dataclass(frozen=True)
class BuildReport(Record):
    """A build: what it imported, what it published (``published`` False: nothing changed, the published
    build stays), and what it dropped or kept of the build before."""

    domain: str
    build_id: str
    published: bool  # False when nothing changed, so the published build stays as it was
    store: str  # the build's Oxigraph folder
    schema: dict[str, Any]  # path, inferred
    total_quads: int
    graphs: dict[str, int]  # graph IRI -> quads
    timings: dict[str, float]  # import and load seconds
    sources: tuple[dict[str, Any], ...]  # each source's manifest entry, with its graph
    records_ok: int
    records_bad: int  # quarantined records
    dropped: tuple[DroppedGraph, ...] = json_key("dropped_graphs", default=())  # graphs a stage had added
    decisions: tuple[SourceDecision, ...] = json_key("refresh", default=())  # each source: kept or imported, why

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()  # each dropped graph and decision with the sentence the CLI shows
        data["dropped_graphs"] = [dict(vars(d), message=d.message) for d in self.dropped]
        data["refresh"] = [dict(vars(d), message=d.message) for d in self.decisions]
        return data


@dataclass(frozen=True)
class QueryReport(Record):
    """A query's answer: SELECT rows (pyoxigraph terms, with a label beside each IRI), an ASK boolean, or
    CONSTRUCT/DESCRIBE triples."""

    domain: str
    kind: str = "select"
    variables: tuple[str, ...] = ()
    rows: tuple[dict[str, Any], ...] = ()  # SELECT: variable -> pyoxigraph term
    boolean: bool | None = None
    labels: dict[str, str] = field(default_factory=dict)  # IRI -> label, for the IRIs in ``rows``
    truncated: bool = False  # ``limit`` held rows back
    more_rows: int | None = None  # how many, when counting them was cheap
    triples: tuple[Any, ...] = ()  # CONSTRUCT/DESCRIBE: pyoxigraph triples
    columns: tuple[str, ...] = ()  # ``variables`` with a label column beside each that holds IRIs
    labelled_rows: tuple[dict[str, Any], ...] = ()  # ``rows`` as text, labels beside IRIs (as --json prints)

    def label(self, term: Any) -> str | None:
        """The label beside an IRI of ``rows``, or None."""
        return self.labels.get(term.value) if isinstance(term, ox.NamedNode) else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "variables": list(self.columns),
            "boolean": self.boolean,
            "rows": list(self.labelled_rows),
            "truncated": self.truncated,
            "more_rows": self.more_rows,
        }


@dataclass(frozen=True)
class DiffReport(Record):
    """Facts added, removed and changed per graph between two builds (:mod:`kgforge.store.diff`)."""

    domain: str
    from_build: str
    to_build: str
    added: int
    removed: int
    changed: int
    graphs: tuple[GraphDiff, ...] = ()
    out: Path | None = None  # the RDF Patch of the differing quads, when asked for

    @property
    def changed_graphs(self) -> tuple[GraphDiff, ...]:
        return tuple(g for g in self.graphs if g.differs)


@dataclass(frozen=True)
class SchemaReport(Record):
    """The schema ``kgforge init`` inferred from sample data and wrote to ``schema``."""

    domain: str
    language: str
    records: int
    files: int
    relations: dict[str, dict[str, Any]]  # relation id -> kind, labels, datatype
    types: dict[str, str]
    type_relation: str | None
    settings: dict[str, dict[str, Any]]  # the [options.KIND] settings inferred per source kind
    schema: str
    samples: tuple[SourceSpec, ...] = field(default=(), repr=False, compare=False)

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()
        del data["samples"]
        return data


def evaluate(
    predictions: Path | str,
    *,
    gold: Path | str | None = None,
    dialogues: Path | str | None = None,
    domain: str | None = None,
    workdir: Path | str | None = None,
    human: Path | str | None = None,
    out: Path | str | None = None,
    options: EvalOptions | None = None,
    policy: ReadPolicy | None = None,
) -> EvalReport:
    """``kgforge eval``: score the responses in ``predictions`` (any layout of docs/evaluation.md) against
    ``gold``; with ``domain``, knowledge precision/recall against its graph; with ``human``, correlations with
    human scores; ``out``: the per-response file; ``policy``: the reading's limits and text policy."""

    def path(value: Path | str | None) -> Path | None:
        return None if value is None else Path(value)

    from kgforge.evaluation import EvalOptions  # lazy: start-up
    from kgforge.evaluation import evaluate as score_responses  # lazy: start-up

    with reading(policy):
        return score_responses(
            Path(predictions),
            gold=path(gold),
            dialogues=path(dialogues),
            domain=domain,
            workdir=workdir,
            human=path(human),
            out=path(out),
            options=options or EvalOptions(),
        )


def qa_evaluate(
    predictions: Path | str,
    gold: Path | str,
    llm: LLMSettings | None = None,
    *,
    cache: Path | str | None = None,
    timeout: float = 120.0,
) -> QAScoreReport:
    """``kgforge qa-eval``: score ``predictions`` (JSON lines of turn id and prediction) against the ``gold``
    turns, alias-aware; with ``llm``, an LLM judge beside it, its replies cached in ``cache`` (default: next
    to the predictions) and refused replies quarantined there."""
    from kgforge.qa import evaluate as qa_score_file  # lazy: start-up

    predictions = Path(predictions)
    client = None
    if llm is not None:
        named = Path(cache) if cache else predictions.with_name(predictions.name + ".llm-cache")
        folder = output_dir(named, what="--cache").make()  # a user's folder, checked; the cache names its files
        client = llm.client_at(folder, Quarantine(folder / "rejected.jsonl"), timeout)
    return qa_score_file(predictions, Path(gold), client)


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

    def build(
        self,
        sources: Iterable[str | SourceSpec] = (),
        *,
        schema: str | None = None,
        schema_sources: bool = True,
        progress: bool = False,
        full: bool = False,
    ) -> BuildReport:
        """Import the sources (``"kind:path"`` strings or SourceSpecs; plus the schema's own unless
        ``schema_sources=False``) into a fresh build and publish it atomically. ``schema`` defaults to the
        domain's own (``kgforge init``), else a shipped one, else one inferred from the sources. Sources
        that did not change since the published build keep their graphs (``full=True`` imports them all)."""
        specs = [s if isinstance(s, SourceSpec) else parse_source(s) for s in sources]
        result = build(
            self.name,
            specs,
            self.workdir,
            schema=load_schema(schema) if schema else None,
            show_progress=progress,
            use_schema_sources=schema_sources,
            full=full,
        )
        summary = result.as_dict()
        return BuildReport(
            self.name,
            result.build_id,
            result.published,
            result.store,
            result.schema,
            result.total_quads,
            result.graphs,
            result.timings,
            tuple(summary["sources"]),
            summary["records_ok"],
            summary["records_bad"],
            tuple(result.dropped),
            tuple(result.decisions),
        )

    def snapshot(self) -> Snapshot:
        """The published build now, resolved once: its manifest, schema, language and (read on first use,
        then kept) its tables. Hold it to read one build across several calls while builds are published."""
        return Snapshot.open(self.paths)

    def stats(self) -> StatsReport:
        """Entities, relations, triples and per-triple sizes of the published build (KdConv / DuConv Table 2)."""
        from kgforge.stats import domain_stats  # lazy: start-up

        return domain_stats(self.snapshot())

    def query(
        self,
        query: str,
        /,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        limit: int = 0,
        allow_service: bool = False,
        waiting: Callable[[float], None] | None = None,
        label_language: str | None = None,
        **bindings: Any,
    ) -> QueryReport:
        """Run ``query`` (SPARQL text, or the name of a shipped query such as ``"goal_two_step"``) on the
        published store with ``bindings`` substituted for its variables. A ``str`` binding is a plain value:
        the entity it labels where the variable stands as a subject, else a literal (the rule in
        :mod:`kgforge.store.labels`); pyoxigraph terms pass through. ``limit`` keeps the first rows (0: all);
        ``waiting(seconds)`` is called while a query runs. Rows come with the labels of their IRIs, in
        ``label_language`` (default: the domain's), which is also tried first for plain values."""
        sparql = load_query(query)
        check_required(sparql, bindings, query)
        snapshot = self.snapshot()
        language = language_tag(label_language, "label_language") if label_language else snapshot.language
        with QueryRunner(snapshot) as runner:
            terms = resolve_bindings(runner, sparql, {k: _term(v) for k, v in bindings.items()}, language, self.name)
            result = runner.query(
                sparql, terms, timeout=timeout, allow_service=allow_service, limit=limit, waiting=waiting
            )
            labels = row_labels(runner, result.rows, language)
        columns, rows = labelled_rows(result.variables, result.rows, labels)
        return QueryReport(
            self.name,
            result.kind,
            tuple(result.variables),
            tuple(result.rows),
            result.boolean,
            labels,
            result.truncated,
            result.more_rows,
            tuple(result.triples or ()),
            tuple(columns),
            tuple(rows),
        )

    def language(self) -> str:
        """The language of the domain's labels (its schema's ``language``)."""
        return self.snapshot().language

    def translate(
        self,
        language: str,
        out: Path | str,
        *,
        llm_url: str,
        llm_model: str,
        llm_key_env: str | None = None,
        max_chars: int | None = None,
        limit: int | None = None,
    ) -> TranslationProposals:
        """Ask an OpenAI-compatible endpoint for labels in ``language`` of what lacks one, and write them to the
        review file ``out`` (TSV) for a person to edit; nothing enters the graph until
        :meth:`apply_translations` (see :mod:`kgforge.languages.translate`). ``llm_key_env`` defaults to
        :data:`DEFAULT_KEY_ENV`, ``max_chars`` to :data:`MAX_LITERAL_CHARS`."""
        from kgforge.languages import propose_translations  # lazy: start-up
        from kgforge.languages.translate import MAX_LITERAL_CHARS  # lazy: start-up
        from kgforge.llm import DEFAULT_KEY_ENV, LLMSettings  # lazy: start-up

        settings = LLMSettings(llm_url, llm_model, llm_key_env or DEFAULT_KEY_ENV)
        chars = MAX_LITERAL_CHARS if max_chars is None else max_chars
        return propose_translations(self.name, language, out, settings, self.workdir, chars, limit)

    def apply_translations(self, review_file: Path | str, language: str) -> TranslationApplied:
        """Load the kept rows of a reviewed translation file as the graph ``graph/translated/<language>``."""
        from kgforge.languages import apply_translations  # lazy: start-up

        return apply_translations(self.name, review_file, language, self.workdir)

    def align(self, language: str = "en", *, write: bool = False) -> AlignmentReport:
        """Align the domain's names with those in ``language`` across sources (type-checked), listing the
        ambiguous and missing ones; ``write`` publishes the name matches as ``owl:sameAs``."""
        from kgforge.languages import align_languages  # lazy: start-up

        return align_languages(self.name, language, self.workdir, write)

    def tables(self, *, include_derived: bool = False) -> GraphTables:
        """The graph as polars tables: ``facts``, ``labels``, ``types``, ``relations``."""
        return self.snapshot().tables(include_derived)

    def derive(
        self, *, max_group: int | None = None, max_pairs: int | None = None, seed: int | None = None
    ) -> DeriveReport:
        """Associated two-hop triples (entities sharing a predicate and object) into their own named graph."""
        from kgforge.derive import derive  # lazy: start-up

        return derive(self.name, self.workdir, max_group=max_group, seed=seed, max_pairs=max_pairs)

    def goals(
        self,
        n: int,
        out: Path | str,
        *,
        style: str = "duconv",
        seed: int = 0,
        one_step_ratio: float = 0.5,
        hops: tuple[int, int] = (1, 3),
        language: str | None = None,
        profiles: Path | str | None = None,
        transitions: Path | str | None = None,
        profile_template: Path | str | None = None,
    ) -> GoalsReport:
        from kgforge.goals.generate import generate  # lazy: start-up
        from kgforge.goals.graph import GoalOptions  # lazy: start-up

        options = GoalOptions(
            n=n,
            seed=seed,
            one_step_ratio=one_step_ratio,
            style=style,
            hops=hops,
            language=language,
            transitions=Path(transitions) if transitions else None,
            profile_template=Path(profile_template) if profile_template else None,
        )
        out = self.paths.output(Path(out))  # a refused OUT is named before a missing store, as it always was
        return generate(self.snapshot(), options, out, Path(profiles) if profiles else None)

    def check_goals(self, sessions: Path | str) -> GoalCheckReport:
        """Check the goals of real DuConv sessions (JSON lines) against the graph: in it, and found by the goal
        queries; each goal that is not is a :class:`GoalProblem`."""
        from kgforge.goals.check import validate  # lazy: start-up

        return validate(self.snapshot(), Path(sessions))

    def diff(
        self, *, from_build: str | None = None, to_build: str | None = None, out: Path | str | None = None
    ) -> DiffReport:
        """What changed from build ``from_build`` (default: the one before the published build) to ``to_build``
        (default: the published build); with ``out``, the differing quads as an RDF Patch."""
        result = diff_builds(self.paths, from_build, to_build, Path(out) if out else None)
        return DiffReport(
            self.name,
            result.from_build,
            result.to_build,
            result.added,
            result.removed,
            result.changed,
            tuple(result.graphs),
            Path(result.out) if result.out else None,
        )

    def export(
        self,
        goals: Path | str | None,
        out: Path | str,
        *,
        fmt: str,
        dialogues: Path | str | None = None,
        policy: ReadPolicy | None = None,
        **options: Any,
    ) -> ExportReport:
        """Per-dialogue subgraphs in dataset format ``fmt`` (see ExportOptions) for the new goals in ``goals``
        (from :meth:`goals`), or for the real ``dialogues`` (``goals=None``), read with ``policy`` (the
        limits and text policy of :class:`~kgforge.core.limits.ReadPolicy`; None: the one in force)."""
        from kgforge.exports import ExportOptions, export_dialogues, export_goals  # lazy: start-up
        from kgforge.exports.registry import detect_layout  # lazy: start-up

        if (goals is None) == (dialogues is None):
            raise ArgumentError("export", "give either goals (from `kgforge goals`) or dialogues (real dialogues)")
        settings, out = ExportOptions(fmt=fmt, **options), self.paths.output(Path(out))
        with reading(policy):
            if dialogues is not None:  # an unreadable input is named before a missing store, as it always was
                detect_layout(Path(dialogues), settings.input_layout)
            snapshot = self.snapshot()
            return (
                export_goals(snapshot, Path(goals), settings, out)
                if goals is not None
                else export_dialogues(snapshot, Path(dialogues), settings, out)
            )

    def export_parallel(
        self,
        goals: Path | str | None,
        out: Path | str,
        *,
        languages: list[str],
        dialogues: Path | str | None = None,
        fmt: str = "durecdial",
        allow_mixed: bool = False,
        policy: ReadPolicy | None = None,
        **options: Any,
    ) -> ParallelExportReport:
        """The export of new ``goals``, or of real DuRecDial 2.0 twins (``dialogues``: the ``zh_NAME`` file, its
        ``en_NAME`` twin beside it), in every language of ``languages`` (``["zh", "en"]``): twin files with the
        same ids and triples, DuRecDial 2.0's five task files and a manifest pairing them (see
        :mod:`kgforge.exports.parallel`), read with ``policy`` (:class:`~kgforge.core.limits.ReadPolicy`)."""
        from kgforge.exports import ExportOptions, export_parallel, export_parallel_dialogues  # lazy: start-up

        if (goals is None) == (dialogues is None):
            raise ArgumentError("export", "give either goals (from `kgforge goals`) or dialogues (real dialogues)")
        settings = ExportOptions(fmt=fmt, language=languages[0], **options)
        with reading(policy):
            if goals is not None:
                return export_parallel(self.snapshot(), Path(goals), settings, list(languages), Path(out), allow_mixed)
            return export_parallel_dialogues(
                self.snapshot(), Path(dialogues), settings, list(languages), Path(out), allow_mixed
            )

    def corpus_stats(self, dialogues: Path | str, **options: Any) -> CorpusStats:
        """:func:`kgforge.corpus.corpus_stats` of a dialogue file, with its topics against this domain's graph."""
        from kgforge.corpus import corpus_stats  # lazy: start-up

        return corpus_stats(dialogues, domain=self.name, workdir=self.workdir, **options)

    def corpus_card(self, dialogues: Iterable[Path | str], out: Path | str, **options: Any) -> CardReport:
        """:func:`kgforge.corpus.write_card`: the datasheet of dialogue files built against this domain."""
        from kgforge.corpus import write_card  # lazy: start-up

        return write_card(dialogues, self.name, out, workdir=self.workdir, **options)

    def ground(
        self,
        dialogues: Path | str,
        out: Path | str,
        *,
        fmt: str = "kdconv",
        options: MatchOptions | None = None,
        workers: int | None = None,
        skip_invalid: bool = False,
        policy: ReadPolicy | None = None,
    ) -> GroundReport:
        """The facts each message of ``dialogues`` states and its claims, written to ``out``; scored against the
        gold annotations the input has (see docs/grounding.md). ``options`` defaults to ``MatchOptions()``;
        ``workers``: processes grounding the dialogues (default: one per CPU; the output is the same);
        ``skip_invalid``: records that are not dialogues go to ``OUT.rejected.jsonl``, else the first is an
        error; ``policy``: the reading's limits and text policy (:class:`~kgforge.core.limits.ReadPolicy`)."""
        from kgforge.grounding import GroundOptions, MatchOptions, ground_file  # lazy: start-up

        settings = GroundOptions(fmt, options or MatchOptions(), workers, skip_invalid, policy)
        return ground_file(self.name, Path(dialogues), Path(out), self.workdir, settings)

    def embed(
        self, *, name: str = "default", resume: bool = False, progress: bool = False, **config: Any
    ) -> EmbedReport:
        """Train a PyKEEN model (``config``: EmbedConfig fields such as model, dim, epochs) into
        ``models/<name>``; the loss and validation curves go to ``models/<name>-training.png``."""
        from kgforge.embed import (  # lazy: torch and PyKEEN take seconds to load
            EmbedConfig,
            embed,
        )

        return embed(self.name, self.workdir, EmbedConfig(**config), name=name, resume=resume, progress=progress)

    def related(
        self,
        entity: str,
        *,
        k: int = 10,
        model: str = "default",
        exclude_neighbours: bool = False,
        type_: str | None = None,
        device: str = "auto",
    ) -> RelatedReport:
        """The ``k`` entities nearest ``entity`` (a label or IRI) in the model bundle ``models/<model>``."""
        from kgforge.embed.related import related  # lazy: loads torch

        return related(
            self.name,
            entity,
            self.workdir,
            k=k,
            model=model,
            exclude_neighbours=exclude_neighbours,
            type_=type_,
            device=device,
        )

    def check(self, *, clean: bool = False) -> CheckReport:
        """Compare the published store with its manifest (per-graph counts, each quads file's sha256) and list
        what killed or failed writers left behind; ``clean=True`` removes that first (under the write lock)."""
        removed = tuple(str(p) for p in remove_leftovers(self.paths)) if clean else None
        return replace(check_store(self.name, self.workdir), removed=removed)

    def link(self) -> LinkSummary:
        """Link the dataset's and crawled entities to their Wikidata / XLORE counterparts (``owl:sameAs``, in a
        derived graph) by zh/en label and alias with type checks; ambiguous names are listed, never guessed."""
        from kgforge.publish.link import link_domain  # lazy: start-up

        return link_domain(self.name, self.workdir)

    def import_dump(
        self,
        dump: Path | str,
        *,
        kind: str = "wikidata",
        seeds: Iterable[str] = (),
        seed_names: Iterable[str] = (),
        seed_labels: bool = False,
        seed_classes: Iterable[str] = (),
        hops: int | None = None,
        fanout_cap: int | None = None,
        workers: int | None = None,
        engine: str = "local",
        address: str | None = None,
        resume: bool = True,
        keep_deprecated: bool = False,
        progress: bool = False,
    ) -> ImportReport:
        """Add a knowledge-base dump to the published store: ``kind`` ``wikidata`` (JSON, truthy N-Triples or
        full Turtle, told apart by the file's first line) or ``xlore``; optionally only the ``hops``
        neighbourhood of seeds (ids, exact labels, ``seed_labels``: the domain's own start entities, or the
        instances of ``seed_classes``). A killed import resumes from its last checkpoint unless ``resume=False``."""
        # lazy: start-up
        from kgforge.publish.domain_import import dump_selection, import_into_domain, wikidata_dump_kind

        options = dump_selection(
            self.name,
            self.workdir,
            seeds=seeds,
            seed_names=seed_names,
            seed_labels=seed_labels,
            seed_classes=seed_classes,
            hops=hops,
            fanout_cap=fanout_cap,
            workers=workers,
            engine=engine,
            address=address,
            resume=resume,
            keep_deprecated=keep_deprecated,
        )
        kind = wikidata_dump_kind(Path(dump)) if kind == "wikidata" else kind
        return import_into_domain(self.name, kind, Path(dump), options, self.workdir, show_progress=progress)

    def export_rdf(self, out: Path | str, *, fmt: str = "nq") -> RdfExportReport:
        """The whole store as RDF in ``fmt`` (a name or alias of :data:`RDF_FORMATS`): N-Quads and TriG keep the
        named graphs, N-Triples and Turtle give their union, deduplicated."""
        from kgforge.store.rdf_export import export_rdf  # lazy: start-up

        return export_rdf(self.name, fmt, Path(out), self.workdir)

    def init_schema(
        self,
        samples: Iterable[str | SourceSpec],
        *,
        out: Path | str | None = None,
        language: str | None = None,
        force: bool = False,
    ) -> SchemaReport:
        """Infer a schema for this (new) domain from sample data (``"KIND:FILE"``, or a FILE whose extension a
        source kind registers) and write it to ``out`` (default: the domain's own ``schema.toml``, which
        :meth:`build` reads); an existing file is kept unless ``force``."""
        own = self.paths.root / DOMAIN_SCHEMA_FILE  # the one file of a domain's folder `init` may write
        target = self.paths.output(out or own, own)
        if target.path.exists() and not force:
            raise KgforgeError(f"{target} exists already: edit it, or give --force to infer it again")
        specs = tuple(s if isinstance(s, SourceSpec) else sample_source(s) for s in samples)
        if not specs:
            raise KgforgeError("give sample data with --from FILE (a CSV, TSV, JSON Lines or RDF file)")
        inferred = infer_schema(self.name, list(specs), language)
        schema = inferred.write(target)
        return SchemaReport(**inferred.summary, schema=str(schema.path), samples=specs)

    def qa_predicates(self, *, language: str | None = None) -> QAPredicatesReport:
        """F(t) of ConvKGYarn: each type's predicates with coverage, specificity and object diversity."""
        from kgforge.qa import predicates as qa_predicate_table  # lazy: start-up

        return qa_predicate_table(self.name, self.workdir, language)

    def qa_select(
        self,
        out: Path | str,
        *,
        language: str | None = None,
        options: SelectorOptions | None = None,
        llm: LLMSettings | None = None,
    ) -> QASelectionReport:
        """G(t, preds): each type's interesting predicates (statistical, or judged by the ``llm``), written to
        ``out`` for :meth:`qa_templates` and ``kgforge qa generate --selection``."""
        from kgforge.qa import select as qa_select_file  # lazy: start-up

        return qa_select_file(self.name, Path(out), self.workdir, language, options, llm)

    def qa_templates(
        self,
        out: Path | str,
        llm: LLMSettings,
        *,
        language: str | None = None,
        selection: Path | str | None = None,
        limit: int = 50,
    ) -> QATemplatesReport:
        """A template file: the bundled templates plus the ``llm``'s templates for up to ``limit`` selected
        (type, predicate) pairs that pass the checks (placeholders, no answer given away)."""
        from kgforge.qa import llm_templates as qa_template_file  # lazy: start-up

        return qa_template_file(
            self.name, Path(out), llm, self.workdir, language, Path(selection) if selection else None, limit
        )

    def qa_generate(
        self,
        out: Path | str,
        options: QAGenerateOptions,
        *,
        language: str | None = None,
        selection: Path | str | None = None,
        templates: Path | str | None = None,
        convquestions: Path | str | None = None,
    ) -> QAGenerateReport:
        """Conversational QA turns from the graph (ConvKGYarn): ``options.n`` conversations rendered in every
        configuration and variant, written to ``out`` (and ConvQuestions-shaped to ``convquestions``)."""

        def path(value: Path | str | None) -> Path | None:
            return None if value is None else Path(value)

        from kgforge.qa import generate_dataset as qa_generate  # lazy: start-up

        return qa_generate(
            self.name,
            Path(out),
            options,
            self.workdir,
            language,
            path(selection),
            path(templates),
            path(convquestions),
        )


__all__ = [
    "BuildReport",
    "CandidatesReport",
    "CardReport",
    "CorpusStats",
    "DeriveReport",
    "DiffReport",
    "Domain",
    "DomainInfo",
    "DroppedGraph",
    "EmbedReport",
    "ExportReport",
    "GoalCheckReport",
    "GoalProblem",
    "GoalsReport",
    "GroundReport",
    "GroundScore",
    "ParallelExportReport",
    "QueryReport",
    "RelatedReport",
    "SplitReport",
    "StatsReport",
    "build_candidates",
    "corpus_stats",
    "list_domains",
    "split_corpus",
    "write_card",
]


def __getattr__(name: str) -> Any:
    """A name of :data:`_LAZY` or :data:`_RENAMED`, imported from its module on first use and kept (start-up)."""
    if name not in _HOME:
        raise AttributeError(f"module 'kgforge.api' has no attribute {name!r}")
    module, there = _HOME[name]
    value = getattr(importlib.import_module(module), there)
    globals()[name] = value
    return value


# The stages added to the API for the command line's other commands, and the registries its options offer.
__all__ += [
    "CheckReport",
    "EvalOptions",
    "IMPORT_ENGINES",
    "ImportReport",
    "KgforgeError",
    "LinkSummary",
    "RDF_FORMATS",
    "RdfExportReport",
    "ReadPolicy",
    "Record",
    "SchemaReport",
    "SourceSpec",
    "SplitPart",
    "describe_workdir",
    "evaluate",
    "plot_stats",
    "source_kinds",
]
__all__ += ["CrawlConfig", "CrawlReport", "SiteSpec", "crawl_site", "load_spec", "site_names"]
__all__ += [
    "BY",
    "EXPORT_FORMATS",
    "GOAL_STYLES",
    "GROUND_FORMATS",
    "METHODS",
    "dialogue_kinds",
    "export_formats",
    "layout_names",
    "parse_hops",
    "parse_ratios",
]
__all__ += [
    "ArgumentError",
    "RATING_LANGUAGES",
    "RUBRICS",
    "RatingReport",
    "SHEET_FORMATS",
    "import_ratings",
    "make_sheets",
    "parse_system",
]


# The typed reports of eval, qa and queries, and what their commands check options against.
@dataclass(frozen=True)
class ShippedQuery(Record):
    """A query shipped with kgforge (``kgforge queries``): run it by ``name`` with :meth:`Domain.query`."""

    name: str
    description: str  # the first sentence of the file's leading comment: what it returns
    path: Path


def list_queries() -> tuple[ShippedQuery, ...]:
    """The shipped queries by name, each with what it returns."""
    return tuple(ShippedQuery(entry.name, query_description(entry.obj), entry.obj) for entry in shipped_queries())


def check_embed_model(name: str, what: str = "model") -> str:
    """``name`` as the PyKEEN model it names (case as PyKEEN spells it), or an ArgumentError; loads torch."""
    from kgforge.embed import check_model  # lazy: torch and PyKEEN take seconds to load

    return check_model(name, what)


def embed_choices(option: str) -> tuple[str, ...]:
    """The values EmbedConfig accepts for ``option`` (``"precision"``, ``"evaluation"`` or ``"keep"``); loads torch."""
    import kgforge.embed  # lazy: torch and PyKEEN take seconds to load

    return tuple(
        {"precision": kgforge.embed.PRECISIONS, "evaluation": kgforge.embed.EVALUATIONS, "keep": kgforge.embed.KEEPS}[
            option
        ]
    )


__all__ += ["EvalReport", "KnowledgeScore", "score_responses"]
__all__ += [
    "EVAL_LAYOUTS",
    "HitsReport",
    "KnowledgeOptions",
    "Leaderboard",
    "METRICS",
    "SEGMENTATIONS",
    "evaluate_systems",
    "hits_at",
    "systems_in_folder",
]
__all__ += ["SelectionReport", "SelectionScores", "score_selection"]  # eval --selected: knowledge selection, KILT-style
__all__ += [
    "LLMSettings",
    "QAGenerateOptions",
    "QA_KEY_ENV",
    "SelectorOptions",
    "qa_configurations",
    "qa_evaluate",
    "QAGenerateReport",
    "QAPredicatesReport",
    "QAScoreReport",
    "QASelectionReport",
    "QATemplatesReport",
]
__all__ += [
    "QUERY_TIMEOUT",
    "ShippedQuery",
    "check_embed_model",
    "embed_choices",
    "list_queries",
    "load_query",
    "parse_binding",
]
__all__ += ["DEFAULT_KEY_ENV", "MAX_LABEL_CHARS", "MAX_LITERAL_CHARS"]
__all__ += ["AlignmentReport", "MatchOptions", "TranslationApplied", "TranslationProposals"]  # methods' types
