"""DuRecDial's importer: the knowledge triples of its session files (every layout of
:mod:`kgforge.datasets.durecdial.layouts`) into the graph; importing it registers those layouts."""

from __future__ import annotations

from kgforge.datasets.durecdial import layouts as layouts  # registers DuRecDial's dialogue layouts
from kgforge.sources.dialogue_layouts import session_triples
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.names import import_session_lines

# The DuRecDial 2.0 README (github.com/liuzeming01/DuRecDial) states CC BY-NC-SA 4.0; the LIC-2020 files
# came with Baidu's competition terms, which could not be verified here.
LICENCE = (
    "CC BY-NC-SA 4.0, no commercial use (DuRecDial 2.0: github.com/liuzeming01/DuRecDial README); "
    "LIC-2020 files: unknown; see the release"
)


@register(
    "durecdial",
    "DuRecDial sessions or samples (LIC-2020 resource or competition files, DuRecDial 2.0): their knowledge triples",
    licence=LICENCE,
)
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
