"""`kgforge collect`: a dataset made with people. Two crowd workers chat under a goal with its knowledge in view,
each turn sent with the facts it used, so the per-turn gold knowledge comes with the dialogue.

    from kgforge.collect import prepare_collection, serve_collection, export_collection
    prepare_collection("duconv", "goals.jsonl", "duconv", "collect/", workers=20)   # the folder, tokens
    serve_collection("collect/")                                                   # blocks; Ctrl-C stops it
    export_collection("collect/", "duconv", "collected.txt")                       # the finished sessions

:mod:`~kgforge.collect.styles` (roles, who sees what, turn bounds, export layouts: one table) <-
:mod:`~kgforge.collect.folder` (the folder, tokens) <- :mod:`~kgforge.collect.journal` (append-only, fsynced)
<- :mod:`~kgforge.collect.collection` (pairing, turns, finishing, views) <- :mod:`~kgforge.collect.judge`
(each turn grounded) <- :mod:`~kgforge.collect.service` (one served collection, rate limits) <-
:mod:`~kgforge.collect.app` (pages and the JSON API) <- :mod:`~kgforge.collect.server` (running it on
``kgforge serve``'s stack). Guide: ``docs/collect.md``.
"""

from kgforge.collect.collection import Collection
from kgforge.collect.export import export_collection
from kgforge.collect.prepare import add_tokens, prepare_collection
from kgforge.collect.records import (
    Checks,
    CollectError,
    CollectExportReport,
    CollectionReport,
    JoinResult,
    Progress,
    Refused,
    SessionView,
    TokensReport,
    TurnAccepted,
)
from kgforge.collect.server import serve_collection
from kgforge.collect.service import CollectService
from kgforge.collect.styles import STYLES

__all__ = [
    "STYLES",
    "Checks",
    "CollectError",
    "CollectExportReport",
    "CollectService",
    "Collection",
    "CollectionReport",
    "JoinResult",
    "Progress",
    "Refused",
    "SessionView",
    "TokensReport",
    "TurnAccepted",
    "add_tokens",
    "export_collection",
    "prepare_collection",
    "serve_collection",
]
