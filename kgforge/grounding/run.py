"""``kgforge ground``: a file of dialogues grounded against a domain's graph, written beside its report."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.checks import choice
from kgforge.core.files import write_text_atomic
from kgforge.core.gc_pause import paused_gc
from kgforge.core.records import Record, omitted_when_none
from kgforge.grounding import durecdial
from kgforge.grounding.duconv import ground_duconv, read_sessions
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kdconv import ground_kdconv, read_dialogues
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions
from kgforge.store.snapshot import Snapshot

FORMATS = ("kdconv", "duconv", "durecdial")


@dataclass(frozen=True)
class GroundOptions:
    fmt: str = "kdconv"
    match: MatchOptions = DEFAULT_OPTIONS


def load_index(domain: str, workdir: Path | str | None) -> GroundingIndex:
    snapshot = Snapshot.open(domain, workdir)
    return GroundingIndex.from_tables(snapshot.tables(), snapshot.schema)


@dataclass(frozen=True)
class GroundScore:
    """Precision, recall and F1 of predicted against gold annotations (None where undefined)."""

    tp: int
    fp: int
    fn: int
    precision: float | None
    recall: float | None
    f1: float | None


@dataclass(frozen=True)
class GroundReport(Record):
    """What ``kgforge ground`` found in a dialogue file, and how it scores against the gold it holds."""

    domain: str
    format: str  # the input's: kdconv, duconv or durecdial
    dialogues: int
    messages: int  # messages (KdConv) or utterances (DuConv) read
    attrs_predicted: int  # facts the messages were found to state
    gold_messages: int  # messages whose gold annotation was kept and scored
    scores: dict[str, Any] | None  # {"micro": tp/fp/fn/precision/recall/f1, "per_relation": {...}}; None: no gold
    claims: dict[str, int]  # supported / contradicted / unsupported
    topics_not_in_graph: tuple[str, ...]
    out: Path
    grounded_utterances: int | None = omitted_when_none()  # DuConv: utterances stating a knowledge triple

    @property
    def micro(self) -> GroundScore | None:
        return GroundScore(**self.scores["micro"]) if self.scores else None

    @property
    def per_relation(self) -> dict[str, GroundScore]:
        return {r: GroundScore(**v) for r, v in (self.scores or {}).get("per_relation", {}).items()}

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()  # the key order the command has always printed: DuConv's count after attrs
        if self.grounded_utterances is None:
            return data
        keys = [*list(data)[:5], "grounded_utterances", *(k for k in list(data)[5:] if k != "grounded_utterances")]
        return {k: data[k] for k in keys}


@paused_gc()  # the index's facts and the grounded dialogues: millions of records that hold no cycles
def ground_file(
    domain: str, dialogues: Path, out: Path, workdir: Path | str | None = None, options: GroundOptions = GroundOptions()
) -> GroundReport:
    """Grounds ``dialogues`` (``options.fmt``) against ``domain``'s published graph into ``out``; returns the
    report (counts, claim statuses, and the scores against gold annotations found in the input)."""
    choice(options.fmt, "--format", FORMATS)
    index = load_index(domain, workdir)
    if options.fmt == "duconv":
        return _ground_duconv(domain, index, Path(dialogues), Path(out), options)
    if options.fmt == "durecdial":
        return _ground_durecdial(domain, index, Path(dialogues), Path(out), options)
    result = ground_kdconv(index, read_dialogues(Path(dialogues)), options.match)
    write_text_atomic(out, json_array_lines(result.dialogues))
    return GroundReport(
        domain,
        options.fmt,
        len(result.dialogues),
        result.messages,
        result.predicted,
        result.gold_messages,
        result.tally.scores() if result.gold_messages else None,
        dict(sorted(result.claims.items())),
        tuple(result.topics_not_in_graph),
        out,
    )


def json_array_lines(records: list[Any]) -> str:
    """A JSON array with one record a line: as readable as an indented file for a file of dialogues, and
    written by json's C encoder (an indented dump goes through the pure-Python one, several times slower)."""
    return "[\n" + ",\n".join(json.dumps(r, ensure_ascii=False) for r in records) + "\n]\n"


def _ground_duconv(
    domain: str, index: GroundingIndex, sessions: Path, out: Path, options: GroundOptions
) -> GroundReport:
    result = ground_duconv(read_sessions(sessions), index.text_relation_names, index.relation_words, options.match)
    write_text_atomic(out, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in result.sessions))
    return GroundReport(
        domain,
        options.fmt,
        len(result.sessions),
        result.utterances,
        result.triples_stated,
        0,
        None,
        {},
        (),
        out,
        grounded_utterances=result.grounded_utterances,
    )


def _ground_durecdial(
    domain: str, index: GroundingIndex, sessions: Path, out: Path, options: GroundOptions
) -> GroundReport:
    result = durecdial.ground_durecdial(durecdial.read_sessions(sessions), index, options.match)
    write_text_atomic(out, "".join(json.dumps(s, ensure_ascii=False) + "\n" for s in result.sessions))
    return GroundReport(
        domain,
        options.fmt,
        len(result.sessions),
        result.utterances,
        result.triples_stated,
        result.gold_utterances,
        result.tally.scores() if result.gold_utterances else None,
        {},
        (),
        out,
        grounded_utterances=result.grounded_utterances,
    )
