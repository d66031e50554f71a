"""`kgforge export`: one subgraph per dialogue, in each dataset's own layout, checked before it is written.

Two inputs: new goals from ``kgforge goals`` (:func:`export_goals`, written only in layouts that mean
something without a conversation), or real dialogues of DuConv, KdConv or DuRecDial
(:func:`export_dialogues`, kept as they are, with the graph's facts beside them). Formats and layouts
live in one registry (:mod:`kgforge.exports.registry`: the formats of no one dataset in
:mod:`kgforge.exports.formats`, each dataset's in its room); ``docs/exports.md`` describes each.
"""

from kgforge.exports.assemble import ExportCheckError
from kgforge.exports.dialogues import export_dialogues
from kgforge.exports.new_goals import export_goals
from kgforge.exports.options import ExportOptions
from kgforge.exports.parallel import export_parallel, export_parallel_dialogues
from kgforge.exports.registry import (
    FORMATS,
    Format,
    Layout,
    ParallelExport,
    dialogue_kinds,
    format_named,
    formats,
    layout_names,
)
from kgforge.exports.writing import ExportReport

__all__ = [
    "FORMATS",
    "ExportCheckError",
    "ExportOptions",
    "ExportReport",
    "Format",
    "Layout",
    "ParallelExport",
    "dialogue_kinds",
    "export_dialogues",
    "export_goals",
    "export_parallel",
    "export_parallel_dialogues",
    "format_named",
    "formats",
    "layout_names",
]
