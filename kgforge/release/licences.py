"""The licence of a release, from the licences of its sources (docs/release.md, "Licences").

A source's licence is free text (the schema's ``licence = "…"``, or what its kind registers); it is read as one
of the SPDX identifiers of :data:`LICENCES` when it names one (``CC BY-NC-SA 4.0, no commercial use`` is
``CC-BY-NC-SA-4.0``), else it is unknown. Each known licence has a class; a release may carry a licence ``L``
when every source allows it:

* a public-domain source (CC0, PDDL) allows any licence;
* an attribution source (CC BY, Apache-2.0, MIT, BSD, ODC-By) allows any licence that keeps attribution;
* a share-alike source allows only its own licence;
* a non-commercial source allows only non-commercial licences; a non-commercial share-alike one only itself;
* a no-derivatives source allows no release (a release is adapted material);
* an unknown source cannot be checked: the release's licence is then unknown too, unless one is given, and the
  report names the sources it was not checked against.

Without a choice the release takes the most restrictive source licence (classes ordered as above); sources
that allow no common licence (CC BY-SA beside ODbL, or a share-alike beside a non-commercial one) are refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kgforge.core.errors import ArgumentError, InputError

PUBLIC, ATTRIBUTION, SHARE_ALIKE, NON_COMMERCIAL, NON_COMMERCIAL_SHARE_ALIKE, NO_DERIVATIVES = range(6)
CLASS_NAMES = ("public domain", "attribution", "share-alike", "non-commercial", "non-commercial share-alike",
               "no derivatives")  # fmt: skip
UNKNOWN = "unknown"

# SPDX id -> (class, the Hugging Face card's licence id, the licence's URL)
LICENCES: dict[str, tuple[int, str, str]] = {
    "CC0-1.0": (PUBLIC, "cc0-1.0", "https://creativecommons.org/publicdomain/zero/1.0/"),
    "PDDL-1.0": (PUBLIC, "pddl", "https://opendatacommons.org/licenses/pddl/1-0/"),
    "CC-BY-4.0": (ATTRIBUTION, "cc-by-4.0", "https://creativecommons.org/licenses/by/4.0/"),
    "CC-BY-3.0": (ATTRIBUTION, "cc-by-3.0", "https://creativecommons.org/licenses/by/3.0/"),
    "Apache-2.0": (ATTRIBUTION, "apache-2.0", "https://www.apache.org/licenses/LICENSE-2.0"),
    "MIT": (ATTRIBUTION, "mit", "https://opensource.org/licenses/MIT"),
    "BSD-3-Clause": (ATTRIBUTION, "bsd-3-clause", "https://opensource.org/licenses/BSD-3-Clause"),
    "ODC-By-1.0": (ATTRIBUTION, "odc-by", "https://opendatacommons.org/licenses/by/1-0/"),
    "CC-BY-SA-4.0": (SHARE_ALIKE, "cc-by-sa-4.0", "https://creativecommons.org/licenses/by-sa/4.0/"),
    "CC-BY-SA-3.0": (SHARE_ALIKE, "cc-by-sa-3.0", "https://creativecommons.org/licenses/by-sa/3.0/"),
    "ODbL-1.0": (SHARE_ALIKE, "odbl", "https://opendatacommons.org/licenses/odbl/1-0/"),
    "CC-BY-NC-4.0": (NON_COMMERCIAL, "cc-by-nc-4.0", "https://creativecommons.org/licenses/by-nc/4.0/"),
    "CC-BY-NC-SA-4.0": (
        NON_COMMERCIAL_SHARE_ALIKE,
        "cc-by-nc-sa-4.0",
        "https://creativecommons.org/licenses/by-nc-sa/4.0/",
    ),
    "CC-BY-ND-4.0": (NO_DERIVATIVES, "cc-by-nd-4.0", "https://creativecommons.org/licenses/by-nd/4.0/"),
    "CC-BY-NC-ND-4.0": (NO_DERIVATIVES, "cc-by-nc-nd-4.0", "https://creativecommons.org/licenses/by-nc-nd/4.0/"),
}
_WORDS = re.compile(r"[^a-z0-9.]+")


def spdx(text: str | None) -> str | None:
    """The SPDX id of :data:`LICENCES` that a licence's free text names first (``CC BY 4.0`` and ``CC-BY-4.0``
    alike; ``CC0 1.0 (Wikidata's structured data)`` is CC0-1.0), or None: not one of them, or unknown."""
    if not text:
        return None
    words = _WORDS.sub("-", text.lower()).strip("-")
    best = None
    for name in LICENCES:
        key = name.lower()
        at = words.find(key)
        # the longest name at the earliest place: CC-BY-NC-SA-4.0, not CC-BY-NC (which it begins with)
        end = at + len(key)
        whole_name = (
            at >= 0 and (at == 0 or not words[at - 1].isalnum()) and (end == len(words) or not words[end].isalnum())
        )
        if whole_name and (best is None or (at, -len(key)) < best[0]):
            best = ((at, -len(key)), name)
    return best[1] if best else None


def allows(source: str, chosen: str) -> bool:
    """Whether a source under the SPDX licence ``source`` may be released under ``chosen`` (module docstring)."""
    kind, chosen_kind = LICENCES[source][0], LICENCES[chosen][0]
    if kind == PUBLIC:
        return chosen_kind != NO_DERIVATIVES
    if kind == ATTRIBUTION:
        return chosen_kind not in (PUBLIC, NO_DERIVATIVES)
    if kind == NON_COMMERCIAL:
        return chosen_kind in (NON_COMMERCIAL, NON_COMMERCIAL_SHARE_ALIKE)
    if kind in (SHARE_ALIKE, NON_COMMERCIAL_SHARE_ALIKE):
        return chosen == source
    return False  # no derivatives


@dataclass(frozen=True)
class LicenceChoice:
    """The release's licence: an SPDX id of :data:`LICENCES`, or ``unknown``; what the card's header says."""

    licence: str
    chosen_by: str  # "sources" (the most restrictive) or "--licence"
    unchecked: tuple[str, ...]  # graphs whose licence is unknown: not checked against the licence

    @property
    def hub_id(self) -> str:
        return LICENCES[self.licence][1] if self.licence in LICENCES else "other"

    @property
    def url(self) -> str | None:
        return LICENCES[self.licence][2] if self.licence in LICENCES else None


def choose_licence(sources: dict[str, str], given: str | None = None) -> LicenceChoice:
    """The release's licence for ``sources`` (graph -> licence text), or the ``given`` SPDX id once every
    source allows it; an ArgumentError names the sources that forbid it."""
    known = {graph: spdx(text) for graph, text in sources.items()}
    unchecked = tuple(graph for graph, name in known.items() if name is None)
    if given is not None:
        name = _given(given)
        forbid = [f"{graph} ({found})" for graph, found in known.items() if found and not allows(found, name)]
        if forbid:
            raise ArgumentError("--licence", f"{name} is not allowed by the licence of {', '.join(forbid)}")
        return LicenceChoice(name, "--licence", unchecked)
    underived = [f"{graph} ({found})" for graph, found in known.items() if found and not _derivable(found)]
    if underived:
        raise InputError(f"no release is allowed: {', '.join(underived)} forbid(s) adapted material")
    if unchecked:
        return LicenceChoice(UNKNOWN, "sources", unchecked)
    ranked = sorted({name for name in known.values() if name}, key=lambda name: LICENCES[name][0], reverse=True)
    if not ranked:
        return LicenceChoice(UNKNOWN, "sources", unchecked)
    top = LICENCES[ranked[0]][0]
    firsts = [name for name in ranked if LICENCES[name][0] == top]
    choice = firsts[0] if len(firsts) == 1 or top != ATTRIBUTION else "CC-BY-4.0"
    forbid = [f"{graph} ({found})" for graph, found in known.items() if found and not allows(found, choice)]
    if forbid:
        raise InputError(
            f"the sources' licences allow no common licence: {choice} is not allowed by {', '.join(forbid)}"
        )
    return LicenceChoice(choice, "sources", unchecked)


def _derivable(name: str) -> bool:
    return LICENCES[name][0] != NO_DERIVATIVES


def _given(text: str) -> str:
    for name in LICENCES:
        if name.lower() == text.strip().lower():
            if not _derivable(name):
                raise ArgumentError("--licence", f"{name} forbids adapted material: a release cannot carry it")
            return name
    raise ArgumentError("--licence", f"{text!r} is not one of {', '.join(LICENCES)}")
