"""DuConv (Baidu, ACL 2019) session files: JSON lines whose ``knowledge`` lists form the graph."""

from __future__ import annotations

from kgforge.datasets.duconv import layouts as layouts  # registers its dialogue layouts
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.names import import_session_lines

# Baidu released DuConv for LIC 2019 behind its own terms; the code repository's licences (MIT, Apache-2.0)
# do not cover the data, and no licence of the data itself could be verified.
LICENCE = (
    "unknown; see the release (Baidu, DuConv / LIC 2019: github.com/baidu/knowledge-driven-dialogue "
    "and the competition's terms)"
)


@register(
    "duconv", "DuConv sessions (JSON lines with goal, knowledge, conversation or history/response)", licence=LICENCE
)
def import_sessions(ctx: ImportContext) -> None:
    import_session_lines(ctx, session_problem, lambda session: session["knowledge"])


def session_problem(value: object) -> str | None:
    """Why ``value`` is not a DuConv session, or None."""
    if not isinstance(value, dict):
        return f"expected a JSON object per line, got {type(value).__name__}"
    missing = [key for key in ("goal", "knowledge") if key not in value]
    if "conversation" not in value and "history" not in value:
        missing.append("conversation (or history/response)")
    if missing:
        return f"missing field(s): {', '.join(missing)}"
    if not isinstance(value["knowledge"], list):
        return "'knowledge' must be a list of [head, relation, tail] triples"
    if not isinstance(value["goal"], list):
        return "'goal' must be a list of triples"
    return None
