"""Grounded response evaluation (``kgforge eval``): the official DuConv metrics, BLEU-3/4 and ROUGE-L, and
knowledge precision / recall / F1 with a hallucination list against a domain's graph; correlations with
human scores; the facts a system selected for each turn, KILT-style (:func:`score_selection`); the goal-topic
focus accuracy of a grounded DuConv file (:func:`focus_accuracy`). See docs/evaluation.md and docs/grounding.md.

    from kgforge.evaluation import evaluate
    report = evaluate("pred.txt", gold="dev.txt", domain="duconv", out="scores.jsonl")

A metric is one function registered by name (:func:`register_metric`); the registry imports the built-in
ones when it is first read, and an installed package adds its own through the entry-point group
``kgforge.metrics`` (docs/extending.md).
"""

from kgforge.evaluation.batch import Batch
from kgforge.evaluation.figures import figure_text, p_text
from kgforge.evaluation.focus import FocusReport, focus_accuracy
from kgforge.evaluation.inputs import EVAL_LAYOUTS, Responses, layout_names, load_responses
from kgforge.evaluation.knowledge import KnowledgeIndex, KnowledgeOptions
from kgforge.evaluation.logprobs import PerplexityReport, perplexity
from kgforge.evaluation.registry import METRICS, Metric, in_percent, register_metric
from kgforge.evaluation.report import EvalOptions, EvalReport, KnowledgeScore, evaluate
from kgforge.evaluation.retrieval import HitsReport, hits_at
from kgforge.evaluation.segmentation import SEGMENTATIONS
from kgforge.evaluation.selection import SelectionReport, SelectionScores, score_selection
from kgforge.evaluation.systems import Leaderboard, evaluate_systems, parse_system, systems_in_folder

__all__ = [
    "Batch",
    "EvalOptions",
    "EvalReport",
    "FocusReport",
    "KnowledgeIndex",
    "KnowledgeOptions",
    "KnowledgeScore",
    "EVAL_LAYOUTS",
    "layout_names",
    "METRICS",
    "Metric",
    "PerplexityReport",
    "HitsReport",
    "Leaderboard",
    "Responses",
    "SEGMENTATIONS",
    "SelectionReport",
    "SelectionScores",
    "evaluate",
    "evaluate_systems",
    "figure_text",
    "focus_accuracy",
    "hits_at",
    "in_percent",
    "load_responses",
    "p_text",
    "parse_system",
    "perplexity",
    "register_metric",
    "score_selection",
    "systems_in_folder",
]
