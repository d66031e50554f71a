"""DuRecDial's importer: the knowledge triples of its session files (every layout :mod:`kgforge.sources.durecdial` reads) into the graph."""

from __future__ import annotations

from kgforge.sources.durecdial import session_problem, session_triples
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
