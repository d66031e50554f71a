"""DuRecDial (Baidu, ACL 2020; DuRecDial 2.0, EMNLP 2021) session files: JSON lines whose ``knowledge``
(``kg`` in the original release) triples form the graph.

Reads every layout the sessions come in: the original release (``goals``, ``kg``), the LIC-2020
baseline's resource files (``goal`` a per-turn list, ``name``, ``label``; word-segmented), the LIC-2020
competition files and DuRecDial 2.0 (``goal`` a ``[1]…-->[2]…`` string, ``user_profile``), samples
(``history`` instead of ``conversation``), and the per-utterance knowledge lists of DuRecDial 2.0 dev/test
(flattened). Names are normalised as DuConv's
are (segmentation spaces out, the written form kept as an alternative label).
"""

from __future__ import annotations

from typing import Any

from kgforge.sources.importer import ImportContext, register
from kgforge.sources.names import import_session_lines

# The DuRecDial 2.0 README (github.com/liuzeming01/DuRecDial) states CC BY-NC-SA 4.0; the LIC-2020 files
# came with Baidu's competition terms, which could not be verified here.
LICENCE = ("CC BY-NC-SA 4.0, no commercial use (DuRecDial 2.0: github.com/liuzeming01/DuRecDial README); "
           "LIC-2020 files: unknown; see the release")


@register("durecdial", "DuRecDial sessions or samples (LIC-2020 resource or competition files, DuRecDial 2.0): "
                       "their knowledge triples", licence=LICENCE)
def import_sessions(ctx: ImportContext) -> None:
    import_session_lines(ctx, session_problem, session_triples)


def session_problem(value: object) -> str | None:
    """Why ``value`` is not a DuRecDial session or sample, or None."""
    if not isinstance(value, dict):
        return f"expected a JSON object per line, got {type(value).__name__}"
    missing = [] if "goal" in value or "goals" in value else ["goal (or goals)"]
    if "knowledge" not in value and "kg" not in value:
        missing.append("knowledge (or kg)")
    if "conversation" not in value and "history" not in value:
        missing.append("conversation (or history)")
    if missing:
        return f"missing field(s): {', '.join(missing)}"
    if not isinstance(value.get("knowledge", value.get("kg")), list):
        return "'knowledge' must be a list of [head, relation, tail] triples"
    return None


def session_triples(value: dict[str, Any]) -> list[Any]:
    """The session's triples; DuRecDial 2.0 dev/test index them per utterance (a list of triple lists)."""
    triples: list[Any] = []
    for item in value.get("knowledge", value.get("kg")):
        if isinstance(item, list) and all(isinstance(t, list) for t in item):  # one utterance's (maybe none)
            triples += item
        else:
            triples.append(item)
    return triples
