"""The public Python API: one ``Domain`` object per knowledge graph, one method per pipeline stage.

    from kgforge import Domain

    kg = Domain("travel", workdir="kg")
    kg.build(sources=["kdconv:kb_travel.json"])
    kg.stats().triples
    kg.query("goal_two_step", a="故宫", limit=10).rows   # a shipped query by name, an entity by its label
    kg.tables().facts                       # polars
    kg.derive(); kg.goals(n=100, out="goals.jsonl"); kg.export("goals.jsonl", "train.jsonl", fmt="duconv")
    kg.embed(model="RotatE", dim=64); kg.related("故宫", k=5)
    kg.corpus_card(["dev.json"], out="card.md")  # and, on any dialogue file: corpus_stats, split_corpus, build_candidates

Each method runs the same library function as the CLI command of that name and returns a typed report
(a frozen dataclass) whose ``as_dict()`` is exactly what the command prints with ``--json``. Values reach
SPARQL as substitutions (``**bindings``: a plain ``str`` is read by where its variable stands, an entity's
label or a literal, see :mod:`kgforge.store.labels`; ``pyoxigraph`` terms pass through), never pasted into
the query text. A method reads the build published when it is called, opened once (``kg.snapshot()``) and
handed to every stage it passes through.

``Domain``'s methods live in :mod:`kgforge.domain`, one module per stage. The names the API hands on from the
stages (their reports and options records) are the imports under ``if TYPE_CHECKING:`` below, each loaded on
first use (:mod:`kgforge.core.lazy`): importing this module loads no stage. What an option offers to choose
from (formats, layouts, styles, rubrics, …) lives on its registry: :func:`registry` and :func:`choices`.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kgforge.core import lazy
from kgforge.core.limits import ReadPolicy
from kgforge.core.output import output_dir
from kgforge.core.quarantine import Quarantine
from kgforge.core.records import Record
from kgforge.core.registry import Registry, closest
from kgforge.core.resources import query_description, shipped_queries
from kgforge.domain.base import open_snapshot
from kgforge.domain.building import BuildMethods
from kgforge.domain.corpus import CorpusMethods
from kgforge.domain.embed import EmbedMethods
from kgforge.domain.evaluation import evaluate as evaluate
from kgforge.domain.evaluation import evaluate_systems as evaluate_systems
from kgforge.domain.evaluation import llm_judge as llm_judge
from kgforge.domain.evaluation import score_selection as score_selection
from kgforge.domain.exports import ExportMethods
from kgforge.domain.goals import GoalMethods
from kgforge.domain.grounding import GroundingMethods
from kgforge.domain.languages import LanguageMethods
from kgforge.domain.qa import QAMethods
from kgforge.domain.reading import ReadingMethods
from kgforge.domain.release import ReleaseMethods
from kgforge.domain.synth import SynthMethods
from kgforge.store.catalog import describe_domain
from kgforge.store.workdir import built_domains, resolve_workdir


class Domain(
    BuildMethods,
    ReadingMethods,
    GoalMethods,
    ExportMethods,
    CorpusMethods,
    GroundingMethods,
    EmbedMethods,
    LanguageMethods,
    QAMethods,
    SynthMethods,
    ReleaseMethods,
):
    """One domain's knowledge graph under ``workdir`` (default: ``$KGFORGE_WORKDIR``, else ``./kg``), as the CLI
    sees it: one method per stage (each defined with its stage's others in :mod:`kgforge.domain`)."""


score_responses = evaluate  # its former name, kept for callers


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


def corpus_stats(
    dialogues: Path | str,
    *,
    input_layout: str | None = None,
    by_split: Path | str | None = None,
    domain: str | None = None,
    workdir: Path | str | None = None,
    transitions: bool = False,
    plot: Path | str | None = None,
    tokens: Tokens | None = None,
    policy: ReadPolicy | None = None,
) -> CorpusStats:
    """``kgforge corpus stats``: the statistics of a dialogue file (:func:`kgforge.corpus.corpus_stats`); with
    ``domain``, its topics against that domain's published build."""
    from kgforge.corpus import corpus_stats as stats  # lazy: start-up

    snapshot = open_snapshot(domain, workdir)
    return stats(
        dialogues,
        input_layout=input_layout,
        by_split=by_split,
        snapshot=snapshot,
        transitions=transitions,
        plot=plot,
        tokens=tokens,
        policy=policy,
    )


def write_card(
    files: Iterable[Path | str],
    domain: str,
    out: Path | str,
    *,
    workdir: Path | str | None = None,
    split: Path | str | None = None,
    input_layout: str | None = None,
    policy: ReadPolicy | None = None,
) -> CardReport:
    """``kgforge corpus card``: the datasheet of dialogue ``files`` built against ``domain``
    (:meth:`Domain.corpus_card`)."""
    return Domain(domain, workdir).corpus_card(files, out, split=split, input_layout=input_layout, policy=policy)


def list_domains(workdir: Path | str | None = None) -> list[DomainInfo]:
    """``kgforge domains``: the domains with a published store under ``workdir`` (the workdir rule applies), by
    name, each described from its own published build."""
    root = resolve_workdir(workdir)
    return [describe_domain(Domain(name, root).snapshot()) for name in built_domains(root)]


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
    """The values EmbedConfig accepts for ``option`` (``"precision"``, ``"evaluation"`` or ``"keep"``); loads
    torch. The same as ``choices("embed " + option)``."""
    return choices(f"embed {option}")


# Where each option's choices live: the registry (a core.registry.Registry) or the tuple of names the stage checks
# against, or a function listing them, as "module:name", loaded when asked for. A new option with choices adds
# one line here, not a name of this module (docs/architecture.md, "Chosen by name").
CHOICES = {
    "dataset": "kgforge.core.datasets:DATASETS",
    "source kind": "kgforge.sources.importer:IMPORTERS",
    "dump engine": "kgforge.sources.wikidata.engines:ENGINES",
    "RDF format": "kgforge.store.rdf_export:RDF_FORMATS",
    "goal style": "kgforge.goals.graph:STYLES",
    "export format": "kgforge.exports.registry:FORMATS",
    "export layout": "kgforge.exports.registry:layout_names",
    "input layout": "kgforge.exports.registry:dialogue_kinds",
    "ground format": "kgforge.grounding.registry:GROUNDERS",
    "metric": "kgforge.evaluation.registry:METRICS",
    "segmentation": "kgforge.evaluation.segmentation:SEGMENTATIONS",
    "eval layout": "kgforge.evaluation.inputs:layout_names",
    "rating rubric": "kgforge.evaluation.rating:RUBRICS",
    "sheet format": "kgforge.evaluation.rating:SHEET_FORMATS",
    "rating language": "kgforge.evaluation.rating:LANGUAGES",
    "split by": "kgforge.corpus.split:BY",
    "candidate method": "kgforge.corpus.candidates:METHODS",
    "corpus statistic": "kgforge.corpus.stats:STATISTICS",
    "embedding model": "kgforge.embed.config:MODELS",
    "embed precision": "kgforge.embed.config:PRECISIONS",
    "embed evaluation": "kgforge.embed.config:EVALUATIONS",
    "embed keep": "kgforge.embed.config:KEEPS",
    "synth style": "kgforge.synth.styles:STYLES",
    "synth layout": "kgforge.synth.styles:layout_names",
    "release kg": "kgforge.release.kg:KG_CHOICES",
    "dialogue origin": "kgforge.release.rai:ORIGINS",
}


def _choice_list(option: str) -> Any:
    if option not in CHOICES:
        close = closest(option, CHOICES)
        hint = f"; did you mean {close!r}?" if close else ""
        raise KeyError(f"no option {option!r} offers choices{hint} (kgforge.api.CHOICES lists them)")
    module, name = CHOICES[option].split(":")
    found = getattr(importlib.import_module(module), name)
    return found() if callable(found) and not isinstance(found, Registry) else found


def registry(option: str) -> Registry[Any]:
    """The registry ``option`` chooses from (``"export format"``, ``"goal style"``, ``"metric"``, …: the keys of
    :data:`CHOICES`): names, aliases, descriptions and "did you mean" for a name a user typed."""
    found = _choice_list(option)
    if not isinstance(found, Registry):
        raise TypeError(f"{option!r} offers a list of names, not a registry: ask choices({option!r})")
    return found


def choices(option: str) -> tuple[str, ...]:
    """The names ``option`` accepts (the keys of :data:`CHOICES`), in the order its stage lists them."""
    found = _choice_list(option)
    return tuple(found.names() if isinstance(found, Registry) else found)


if TYPE_CHECKING:  # The names the API hands on, each loaded from its module on first use (kgforge.core.lazy).
    from kgforge.core.errors import ArgumentError as ArgumentError
    from kgforge.core.errors import KgforgeError as KgforgeError
    from kgforge.core.limits import ReadPolicy as ReadPolicy
    from kgforge.core.records import Record as Record
    from kgforge.core.schema import SourceSpec as SourceSpec
    from kgforge.corpus import CandidatesReport as CandidatesReport
    from kgforge.corpus import CardReport as CardReport
    from kgforge.corpus import CorpusStats as CorpusStats
    from kgforge.corpus import SplitPart as SplitPart
    from kgforge.corpus import SplitReport as SplitReport
    from kgforge.corpus import build_candidates as build_candidates
    from kgforge.corpus import parse_ratios as parse_ratios
    from kgforge.corpus import split_corpus as split_corpus
    from kgforge.corpus.reading import Tokens as Tokens
    from kgforge.crawl import CrawlConfig as CrawlConfig
    from kgforge.crawl import SiteSpec as SiteSpec
    from kgforge.crawl import load_spec as load_spec
    from kgforge.crawl import site_names as site_names
    from kgforge.crawl.site_crawl import CrawlReport as CrawlReport
    from kgforge.crawl.site_crawl import crawl_site as crawl_site
    from kgforge.derive import DeriveReport as DeriveReport
    from kgforge.domain.building import DiffReport as DiffReport
    from kgforge.domain.building import SchemaReport as SchemaReport
    from kgforge.domain.grounding import train_grounding as train_grounding
    from kgforge.domain.reading import QueryReport as QueryReport
    from kgforge.embed.config import EmbedConfig as EmbedConfig
    from kgforge.embed.related import RelatedReport as RelatedReport
    from kgforge.embed.train import EmbedReport as EmbedReport
    from kgforge.evaluation import EvalOptions as EvalOptions
    from kgforge.evaluation import EvalReport as EvalReport
    from kgforge.evaluation import HitsReport as HitsReport
    from kgforge.evaluation import KnowledgeOptions as KnowledgeOptions
    from kgforge.evaluation import KnowledgeScore as KnowledgeScore
    from kgforge.evaluation import Leaderboard as Leaderboard
    from kgforge.evaluation import PerplexityReport as PerplexityReport
    from kgforge.evaluation import SelectionReport as SelectionReport
    from kgforge.evaluation import SelectionScores as SelectionScores
    from kgforge.evaluation import figure_text as figure_text
    from kgforge.evaluation import hits_at as hits_at
    from kgforge.evaluation import in_percent as in_percent
    from kgforge.evaluation import p_text as p_text
    from kgforge.evaluation import parse_system as parse_system
    from kgforge.evaluation import perplexity as perplexity
    from kgforge.evaluation import systems_in_folder as systems_in_folder
    from kgforge.evaluation.rating import RatingReport as RatingReport
    from kgforge.evaluation.rating import import_ratings as import_ratings
    from kgforge.evaluation.rating import make_sheets as make_sheets
    from kgforge.exports import ExportOptions as ExportOptions
    from kgforge.exports import ExportReport as ExportReport
    from kgforge.exports import dialogue_kinds as dialogue_kinds
    from kgforge.exports import layout_names as layout_names
    from kgforge.exports.parallel import ParallelExportReport as ParallelExportReport
    from kgforge.goals.check import GoalCheckReport as GoalCheckReport
    from kgforge.goals.check import GoalProblem as GoalProblem
    from kgforge.goals.generate import GoalsReport as GoalsReport
    from kgforge.goals.graph import GoalOptions as GoalOptions
    from kgforge.goals.graph import parse_hops as parse_hops
    from kgforge.grounding import GroundOptions as GroundOptions
    from kgforge.grounding import GroundReport as GroundReport
    from kgforge.grounding import GroundScore as GroundScore
    from kgforge.grounding import MatchOptions as MatchOptions
    from kgforge.grounding.learning import TrainingData as TrainingData
    from kgforge.grounding.learning import TrainReport as TrainReport
    from kgforge.languages import AlignmentReport as AlignmentReport
    from kgforge.languages import TranslationApplied as TranslationApplied
    from kgforge.languages import TranslationProposals as TranslationProposals
    from kgforge.languages.translate import MAX_LABEL_CHARS as MAX_LABEL_CHARS
    from kgforge.languages.translate import MAX_LITERAL_CHARS as MAX_LITERAL_CHARS
    from kgforge.llm import DEFAULT_KEY_ENV as DEFAULT_KEY_ENV
    from kgforge.llm import LLMSettings as LLMSettings
    from kgforge.publish.domain_import import ImportReport as ImportReport
    from kgforge.publish.link import LinkSummary as LinkSummary
    from kgforge.publish.transaction import BuildReport as BuildReport
    from kgforge.publish.transaction import CheckReport as CheckReport
    from kgforge.publish.transaction import DroppedGraph as DroppedGraph
    from kgforge.qa import QAGenerateReport as QAGenerateReport
    from kgforge.qa import QAPredicatesReport as QAPredicatesReport
    from kgforge.qa import QAScoreReport as QAScoreReport
    from kgforge.qa import QASelectionReport as QASelectionReport
    from kgforge.qa import QATemplatesReport as QATemplatesReport
    from kgforge.qa import SelectorOptions as SelectorOptions
    from kgforge.release import AuditReport as AuditReport
    from kgforge.release import AuditSheet as AuditSheet
    from kgforge.release import ReleaseCheck as ReleaseCheck
    from kgforge.release import ReleaseOptions as ReleaseOptions
    from kgforge.release import ReleaseReport as ReleaseReport
    from kgforge.release import audit_import as audit_import
    from kgforge.release import check_release as check_release
    from kgforge.sources.importer import source_kinds as source_kinds
    from kgforge.stats import plot_stats as plot_stats
    from kgforge.store.catalog import DomainInfo as DomainInfo
    from kgforge.store.query import load_query as load_query
    from kgforge.store.query import parse_binding as parse_binding
    from kgforge.store.rdf_export import RdfExportReport as RdfExportReport
    from kgforge.synth import SynthOptions as SynthOptions
    from kgforge.synth import SynthPlan as SynthPlan
    from kgforge.synth import SynthReport as SynthReport
    from kgforge.synth.judge import JudgeReport as JudgeReport

if TYPE_CHECKING:  # Names the API gives a stage's name under a name of its own (no re-export to a linter: noqa).
    from kgforge.llm import DEFAULT_KEY_ENV as QA_KEY_ENV  # noqa: F401
    from kgforge.qa import GenerateOptions as QAGenerateOptions  # noqa: F401
    from kgforge.qa.generate import configurations as qa_configurations  # noqa: F401
    from kgforge.stats import DomainStats as StatsReport  # noqa: F401
    from kgforge.store.query import DEFAULT_TIMEOUT as QUERY_TIMEOUT  # noqa: F401
    from kgforge.store.workdir import where as describe_workdir  # noqa: F401

if TYPE_CHECKING:  # The choice lists this module handed on one by one before, kept for callers: they are
    # choices()'s and registry()'s now (CHOICES), so add no name here.
    from kgforge.corpus import BY as BY
    from kgforge.corpus import METHODS as METHODS
    from kgforge.evaluation import EVAL_LAYOUTS as EVAL_LAYOUTS
    from kgforge.evaluation import METRICS as METRICS
    from kgforge.evaluation import SEGMENTATIONS as SEGMENTATIONS
    from kgforge.evaluation.rating import LANGUAGES as RATING_LANGUAGES  # noqa: F401
    from kgforge.evaluation.rating import RUBRICS as RUBRICS
    from kgforge.evaluation.rating import SHEET_FORMATS as SHEET_FORMATS
    from kgforge.exports import FORMATS as EXPORT_FORMATS  # noqa: F401
    from kgforge.exports import formats as export_formats  # noqa: F401
    from kgforge.goals.graph import STYLES as GOAL_STYLES  # noqa: F401
    from kgforge.grounding.registry import GROUNDERS as GROUND_FORMATS  # noqa: F401
    from kgforge.sources.wikidata.engines import ENGINES as IMPORT_ENGINES  # noqa: F401
    from kgforge.store.rdf_export import RDF_FORMATS as RDF_FORMATS

__getattr__, __dir__ = lazy.attach(__name__)
