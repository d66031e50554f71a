"""The corpus side of a release: dialogue statistics, seeded splits with a leakage report, retrieval
candidate sets and a datasheet, over any dialogue file kgforge reads (docs/corpus.md)."""

from kgforge.corpus.candidates import METHODS, CandidatesReport, build_candidates
from kgforge.corpus.card import CardReport, SourceLine, write_card
from kgforge.corpus.split import BY, SplitPart, SplitReport, parse_ratios, split_corpus
from kgforge.corpus.stats import (
    STATISTICS,
    CorpusStats,
    GoalFigures,
    GroundedFigures,
    KnowledgeFigures,
    RecommendationFigures,
    corpus_stats,
)

__all__ = [
    "BY",
    "METHODS",
    "CandidatesReport",
    "CardReport",
    "CorpusStats",
    "GoalFigures",
    "GroundedFigures",
    "KnowledgeFigures",
    "RecommendationFigures",
    "STATISTICS",
    "SourceLine",
    "SplitPart",
    "SplitReport",
    "build_candidates",
    "corpus_stats",
    "parse_ratios",
    "split_corpus",
    "write_card",
]
