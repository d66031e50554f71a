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

__all__ = ["LINK_KINDS", "STEPS", "LanguageLabels", "fits_script", "in_language", "language_labels", "literal_forms"]
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


FORM_COLUMNS = {"s": pl.String, "p": pl.String, "o": pl.String, "form": pl.String}


def literal_forms(facts: pl.DataFrame, language: str) -> pl.DataFrame:
    """``(s, p, o, form)``: each literal value written in a script ``language`` does not read (Han characters
    in English; none in Chinese, which writes any value as it is) paired with its form in ``language``, where
    the same subject and relation state one (a reviewed translation, or a source in that language): 爱情@zh
    of a film's genre and romance@en beside it. A relation with several values
    (genres 爱情 and 剧情, romance and drama) is paired by the value across the graph: a value's form is a
    value in the language stated beside it wherever it is stated and nowhere else (``kgforge translate
    --apply`` states one label beside every fact of its source value), taken in rounds (:func:`_paired`).
    A value whose form stays ambiguous, or that has none, gets no row: it lacks a form in the language.
    ``facts`` is a GraphTables facts frame (s, p, o, o_is_entity, o_lang)."""
    if is_cjk_language(language):
        return pl.DataFrame(schema=FORM_COLUMNS)
    literals = facts.filter(~pl.col("o_is_entity"), pl.col("o_lang") != "").select("s", "p", "o", "o_lang").unique()
    mine = in_language(pl.col("o_lang"), language)
    foreign = pl.col("o").str.contains(CJK_CLASS)
    own = literals.filter(mine, ~foreign).select("s", "p", form="o")  # a value tagged en in Han is no English
    other = literals.filter(~mine, foreign).select("s", "p", "o").unique()
    other = other.join(own.select("s", "p").unique(), on=["s", "p"])
    if other.is_empty():
        return pl.DataFrame(schema=FORM_COLUMNS)
    stated = other.group_by("o").agg(n=pl.len())  # the subjects and relations stating each value
    pairs = other.join(own, on=["s", "p"])
    spread = pairs.select("s", "p", "form").unique().group_by("form").agg(m=pl.len())
    beside = (
        pairs.group_by("o", "form")
        .agg(k=pl.len())
        .join(stated, on="o")
        .join(spread, on="form")
        .filter(pl.col("k") == pl.col("n"), pl.col("m") == pl.col("n"))  # stated where the value is, and only there
        .select("o", "form")
    )
    return other.join(_paired(beside), on="o").select(list(FORM_COLUMNS)).sort("s", "p", "o")


def _paired(beside: pl.DataFrame) -> pl.DataFrame:
    """``(o, form)``: each value paired with its one candidate form, found in rounds: a value left with one
    candidate that no other value is left with alone takes it, and its form is no other value's candidate; two
    values left with the same one form are both ambiguous. Sound under ``translate --apply`` (a form stands
    wherever its value does, and no two values share a translation): a value that is not translated is left with
    another value's form alone only where that value is too, so neither takes it. Two values translated alike
    (爱情 and 爱情片, both romance) can make a third, untranslated one standing exactly where they do look
    translated: the facts cannot tell those two stories apart (tests/test_english_exports.py, hypothesis)."""
    paired = []
    while not beside.is_empty():
        single = beside.filter(pl.len().over("o") == 1)
        claimed = single.filter(pl.len().over("form") == 1)
        stuck = single.join(claimed, on="o", how="anti").select("o")
        if claimed.is_empty() and stuck.is_empty():
            break
        paired.append(claimed)
        beside = beside.join(claimed.select("o"), on="o", how="anti").join(stuck, on="o", how="anti")
        beside = beside.join(claimed.select("form"), on="form", how="anti")
    return pl.concat(paired) if paired else pl.DataFrame(schema={"o": pl.String, "form": pl.String})
