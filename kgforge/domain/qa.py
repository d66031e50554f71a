"""Conversational QA from the graph (ConvKGYarn): ``qa_predicates``, ``qa_select``, ``qa_templates`` and
``qa_generate``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.llm import LLMSettings
    from kgforge.qa import (
        GenerateOptions,
        QAGenerateReport,
        QAPredicatesReport,
        QASelectionReport,
        QATemplatesReport,
        SelectorOptions,
    )


def _path(value: Path | str | None) -> Path | None:
    return None if value is None else Path(value)


class QAMethods(DomainBase):
    def qa_predicates(self, *, language: str | None = None) -> QAPredicatesReport:
        """F(t) of ConvKGYarn: each type's predicates with coverage, specificity and object diversity."""
        from kgforge.qa import predicates as qa_predicate_table  # lazy: start-up

        return qa_predicate_table(self.snapshot(), language)

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

        return qa_select_file(self.snapshot(), Path(out), language, options, llm)

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

        return qa_template_file(self.snapshot(), Path(out), llm, language, _path(selection), limit)

    def qa_generate(
        self,
        out: Path | str,
        options: GenerateOptions,
        *,
        language: str | None = None,
        selection: Path | str | None = None,
        templates: Path | str | None = None,
        convquestions: Path | str | None = None,
    ) -> QAGenerateReport:
        """Conversational QA turns from the graph (ConvKGYarn): ``options.n`` conversations rendered in every
        configuration and variant, written to ``out`` (and ConvQuestions-shaped to ``convquestions``)."""
        from kgforge.qa import generate_dataset as qa_generate  # lazy: start-up

        return qa_generate(
            self.snapshot(), Path(out), options, language, _path(selection), _path(templates), _path(convquestions)
        )
