"""Labels in one language, chosen by one documented fallback chain, with a record of what fell back.

Every stage that writes names for people (export, goals, qa, serve, query) asks for a language; an entity
may carry labels in several (``周迅``@zh, ``Xun Zhou``@en from a ``name_en`` column, a Wikidata label
through ``owl:sameAs``, a reviewed translation). The chain, first match wins:

1. ``language``: an ``rdfs:label`` in the language (``en`` also takes ``en-GB``; a label tagged ``en`` but
   written in Han characters, as an inferred schema may give a type, is not one);
2. ``alias``: a ``skos:altLabel`` in the language;
3. ``linked``: a label in the language of an entity it is ``owl:sameAs`` (``kgforge link``);
4. ``untagged``: a plain label (no language tag) in a script the language reads (as in 5);
5. ``script``: a label in another language written in a script the language reads as its own: for a
   Latin-script language, a label with no CJK character (``3 Idiots``@zh); for Chinese (or another CJK
   language), any label (Chinese text writes foreign names as they are).

An entity with labels but none on this chain *lacks* a label in the language: an export refuses the
dialogues that need it (naming it) unless mixing was allowed, and ``kgforge translate`` proposes one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import polars as pl

from kgforge.core.scripts import CJK_CLASS, fits_script, is_cjk_language

__all__ = ["LINK_KINDS", "STEPS", "LanguageLabels", "fits_script", "in_language", "language_labels"]
LINK_KINDS = ("links", "aligned")  # the graphs whose owl:sameAs pairs lend names (Snapshot.same_as_pairs)
STEPS = ("language", "alias", "linked", "untagged", "script")


@dataclass(frozen=True)
class LanguageLabels:
    """One label per IRI in ``language`` (``labels``), the chain step each came from where it was not the
    first (``fell_back``), and the IRIs with labels but none usable in the language (``lacking``)."""

    language: str
    labels: Mapping[str, str]
    fell_back: Mapping[str, str] = field(default_factory=dict)
    lacking: frozenset[str] = frozenset()

    def counts(self) -> dict[str, int]:
        """How many labels each step gave, and how many IRIs lack one."""
        steps = {step: 0 for step in STEPS}
        for step in self.fell_back.values():
            steps[step] += 1
        steps["language"] = len(self.labels) - len(self.fell_back)
        return {**steps, "lacking": len(self.lacking)}


def in_language(lang: pl.Expr, language: str) -> pl.Expr:
    """Whether a label's tag is ``language`` or one of its regional forms (``en`` takes ``en-GB``)."""
    base = language.lower()
    folded = lang.str.to_lowercase()
    return (folded == base) | folded.str.starts_with(base + "-")


def language_labels(labels: pl.DataFrame, language: str, links: Iterable[tuple[str, str]] = ()) -> LanguageLabels:
    """The chain of this module over ``labels`` (a GraphTables ``labels`` frame: iri, label, lang, preferred)
    and the ``owl:sameAs`` pairs ``links``."""
    readable = pl.lit(True) if is_cjk_language(language) else ~pl.col("label").str.contains(CJK_CLASS)
    ranked = labels.with_columns(  # a label tagged en but written in Han characters is no English label
        mine=in_language(pl.col("lang"), language) & readable,
    ).sort("iri", pl.col("preferred").not_(), "label")
    own = ranked.filter(pl.col("mine"))
    first = own.unique("iri", keep="first", maintain_order=True)
    chosen: dict[str, str] = dict(zip(first["iri"].to_list(), first["label"].to_list()))
    fell_back = {
        iri: "alias" for iri, preferred in zip(first["iri"].to_list(), first["preferred"].to_list()) if not preferred
    }
    partners: dict[str, list[str]] = {}
    for a, b in links:
        partners.setdefault(a, []).append(b)
        partners.setdefault(b, []).append(a)
    for iri in sorted(set(partners) - set(chosen)):
        found = sorted(chosen[p] for p in partners[iri] if p in chosen and fell_back.get(p) is None)
        if found:
            chosen[iri], fell_back[iri] = found[0], "linked"
    rest = ranked.filter(~pl.col("iri").is_in(list(chosen)))
    for iri, label, lang in rest.select("iri", "label", "lang").iter_rows():
        if iri in chosen:
            continue
        if lang == "" and fits_script(label, language):
            chosen[iri], fell_back[iri] = label, "untagged"
    for iri, label in rest.select("iri", "label").iter_rows():
        if iri not in chosen and fits_script(label, language):
            chosen[iri], fell_back[iri] = label, "script"
    lacking = frozenset(set(rest["iri"].to_list()) - set(chosen))
    return LanguageLabels(language, chosen, fell_back, lacking)
