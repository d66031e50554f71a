"""Conversational KGQA datasets from the graph, as ConvKGYarn (Pradeep et al., 2024) makes them.

``predicates`` gives F(t), ``select`` G(t, preds) (statistical, or an LLM's judgement), ``generate_dataset``
the question turns (kgforge JSONL and ConvQuestions-shaped JSON lines), ``evaluate`` scores predictions
(``kgforge qa-eval``). Modules: graph (the graph as question material), predicates, select, templates
(+ bundled templates/zh.toml, en.toml), phenomena (typos, disfluencies), generate, score, prompts (the LLM steps' prompts and checks; the client is
:mod:`kgforge.llm`), related.
"""

from kgforge.llm import DEFAULT_KEY_ENV, LLMSettings
from kgforge.qa.generate import GenerateOptions, QAGenerateReport
from kgforge.qa.pipeline import (
    QAPredicatesReport,
    QASelectionReport,
    QATemplatesReport,
    generate_dataset,
    llm_templates,
    predicates,
    select,
)
from kgforge.qa.score import QAScoreReport, evaluate
from kgforge.qa.select import SelectorOptions

__all__ = [
    "DEFAULT_KEY_ENV",
    "GenerateOptions",
    "LLMSettings",
    "QAGenerateReport",
    "QAPredicatesReport",
    "QAScoreReport",
    "QASelectionReport",
    "QATemplatesReport",
    "SelectorOptions",
    "evaluate",
    "generate_dataset",
    "llm_templates",
    "predicates",
    "select",
]
