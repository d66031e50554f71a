"""Languages on one graph: proposing labels for what lacks one in a language (``kgforge translate``), loading
the reviewed ones as their own named graph, and aligning names across languages (``kgforge align``)."""

from kgforge.languages.align import AlignmentReport, align_languages
from kgforge.languages.translate import (
    TranslationApplied,
    TranslationProposals,
    apply_translations,
    propose_translations,
)

__all__ = [
    "AlignmentReport",
    "TranslationApplied",
    "TranslationProposals",
    "align_languages",
    "apply_translations",
    "propose_translations",
]
