"""Labels in another language: ``translate``, ``translation_list``, ``apply_translations`` and ``align``."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from kgforge.domain.base import DomainBase

if TYPE_CHECKING:
    from kgforge.languages import AlignmentReport, TranslationApplied, TranslationProposals


class LanguageMethods(DomainBase):
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
        :data:`~kgforge.llm.DEFAULT_KEY_ENV`, ``max_chars`` to
        :data:`~kgforge.languages.translate.MAX_LITERAL_CHARS`."""
        from kgforge.languages import propose_translations  # lazy: start-up
        from kgforge.languages.translate import MAX_LITERAL_CHARS  # lazy: start-up
        from kgforge.llm import DEFAULT_KEY_ENV, LLMSettings  # lazy: start-up

        settings = LLMSettings(llm_url, llm_model, llm_key_env or DEFAULT_KEY_ENV)
        chars = MAX_LITERAL_CHARS if max_chars is None else max_chars
        return propose_translations(self.snapshot(), language, out, settings, chars, limit)

    def translation_list(self, language: str, out: Path | str, *, max_chars: int | None = None) -> TranslationProposals:
        """Write the review file ``out`` (TSV) as a to-do list for translators, no model asked: one row for each
        name and short value that lacks a label in ``language`` (keyed by the name, its IRI beside it), the
        names the graph has only as an alias in ``language`` proposed for review; a person fills in ``label``
        and sets ``keep`` to yes, and :meth:`apply_translations` reads it back."""
        from kgforge.languages import propose_translations  # lazy: start-up
        from kgforge.languages.translate import MAX_LITERAL_CHARS  # lazy: start-up

        chars = MAX_LITERAL_CHARS if max_chars is None else max_chars
        return propose_translations(self.snapshot(), language, out, None, chars)

    def apply_translations(self, review_file: Path | str, language: str) -> TranslationApplied:
        """Load the kept rows of a reviewed translation file as the graph ``graph/translated/<language>``."""
        from kgforge.languages import apply_translations  # lazy: start-up

        return apply_translations(self.name, review_file, language, self.workdir)

    def align(self, language: str = "en", *, write: bool = False) -> AlignmentReport:
        """Align the domain's names with those in ``language`` across sources (type-checked), listing the
        ambiguous and missing ones; ``write`` publishes the name matches as ``owl:sameAs``."""
        from kgforge.languages import align_languages  # lazy: start-up

        return align_languages(self.snapshot(), language, write)
