"""``kgforge ground``: a file of dialogues grounded against a domain's graph, written beside its report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.checks import choice
from kgforge.core.files import write_text_atomic
from kgforge.core.schema import load_schema
from kgforge.grounding.duconv import ground_duconv, read_sessions
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kdconv import ground_kdconv, read_dialogues
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions
from kgforge.store.layout import domain_paths, read_manifest
from kgforge.store.tables import read_tables

FORMATS = ("kdconv", "duconv")


@dataclass(frozen=True)
class GroundOptions:
    fmt: str = "kdconv"
    match: MatchOptions = DEFAULT_OPTIONS


def load_index(domain: str, workdir: Path | str | None) -> GroundingIndex:
    paths = domain_paths(domain, workdir)
    schema = load_schema(read_manifest(paths).schema.path)
    return GroundingIndex.from_tables(read_tables(paths), schema)


def ground_file(domain: str, dialogues: Path, out: Path, workdir: Path | str | None = None,
                options: GroundOptions = GroundOptions()) -> dict[str, Any]:
    """Grounds ``dialogues`` (``options.fmt``) against ``domain``'s published graph into ``out``; returns the
    report (counts, claim statuses, and the scores against gold annotations found in the input)."""
    choice(options.fmt, "--format", FORMATS)
    index = load_index(domain, workdir)
    if options.fmt == "duconv":
        return _ground_duconv(domain, index, Path(dialogues), Path(out), options)
    result = ground_kdconv(index, read_dialogues(Path(dialogues)), options.match)
    write_text_atomic(out, json_array_lines(result.dialogues))
    return {"domain": domain, "format": options.fmt, "dialogues": len(result.dialogues), "messages": result.messages,
            "attrs_predicted": result.predicted, "gold_messages": result.gold_messages,
            "scores": result.tally.scores() if result.gold_messages else None,
            "claims": dict(sorted(result.claims.items())), "topics_not_in_graph": result.topics_not_in_graph,
            "out": str(out)}


def json_array_lines(records: list[Any]) -> str:
    """A JSON array with one record a line: as readable as an indented file for a file of dialogues, and
    written by json's C encoder (an indented dump goes through the pure-Python one, several times slower)."""
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n"


def _ground_duconv(domain: str, index: GroundingIndex, sessions: Path, out: Path,
                   options: GroundOptions) -> dict[str, Any]:
    result = ground_duconv(read_sessions(sessions), index.text_relation_names, index.relation_words, options.match)
    write_text_atomic(out, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in result.sessions))
    return {"domain": domain, "format": options.fmt, "dialogues": len(result.sessions), "messages": result.utterances,
            "attrs_predicted": result.triples_stated, "grounded_utterances": result.grounded_utterances,
            "gold_messages": 0, "scores": None, "claims": {}, "topics_not_in_graph": [], "out": str(out)}
