"""``kgforge ground``: a file of dialogues grounded against a domain's graph, written beside its report."""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from kgforge.core.checks import choice, whole
from kgforge.core.files import write_text_atomic
from kgforge.core.gc_pause import paused_gc
from kgforge.core.processes import can_fork, forked_map, usable_cpus
from kgforge.core.records import Record, omitted_when_none
from kgforge.grounding import durecdial
from kgforge.grounding.duconv import ground_duconv, read_sessions
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kdconv import KdconvGrounding, ground_kdconv, read_dialogues
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions
from kgforge.store.snapshot import Snapshot

FORMATS = ("kdconv", "duconv", "durecdial")
PART_DIALOGUES = 500  # the fewest KdConv dialogues a worker process is given at once: fewer are grounded here
PARTS_PER_WORKER = 4  # parts a worker takes in turn: one slow part does not keep the others waiting


@dataclass(frozen=True)
class GroundOptions:
    fmt: str = "kdconv"
    match: MatchOptions = DEFAULT_OPTIONS
    workers: int | None = None  # processes grounding KdConv dialogues; None: one per usable CPU

    def processes(self) -> int:
        return usable_cpus() if self.workers is None else whole(self.workers, "--workers", 1, 256)


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
    workers: int = 1  # processes that grounded the dialogues (KdConv: --workers, where the input is large enough)

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
    read = read_dialogues(Path(dialogues))
    result, written, processes = _ground_kdconv(index, read, options)
    write_text_atomic(out, json_array(written))
    return GroundReport(
        domain,
        options.fmt,
        len(read),
        result.messages,
        result.predicted,
        result.gold_messages,
        result.tally.scores() if result.gold_messages else None,
        dict(sorted(result.claims.items())),
        tuple(result.topics_not_in_graph),
        out,
        workers=processes,
    )


def _ground_kdconv(
    index: GroundingIndex, dialogues: list[dict[str, Any]], options: GroundOptions
) -> tuple[KdconvGrounding, list[str], int]:
    """The dialogues grounded in parts, by up to ``options.processes()`` processes forked from this one once
    the index is made (they read it where it is, see :meth:`GroundingIndex.prepare`): the grounding, each
    part's dialogues as lines of a JSON array, and the processes that worked (one per ``PART_DIALOGUES``
    dialogues at most; one where the platform does not fork)."""
    wanted = options.processes()
    processes = max(1, min(wanted, len(dialogues) // PART_DIALOGUES)) if can_fork() else 1
    if processes > 1:
        index.prepare()
    size = max(PART_DIALOGUES, -(-len(dialogues) // (processes * PARTS_PER_WORKER)))
    parts = [dialogues[at : at + size] for at in range(0, len(dialogues), size)]
    grounded = forked_map(
        partial(_ground_kdconv_part, index, options.match), parts, processes, "kgforge ground (KdConv dialogues)"
    )
    return (
        KdconvGrounding.combined([result for result, _ in grounded]),
        [lines for _, lines in grounded],
        processes,
    )


def _ground_kdconv_part(
    index: GroundingIndex, options: MatchOptions, dialogues: list[dict[str, Any]]
) -> tuple[KdconvGrounding, str]:
    """One part grounded, its dialogues sent back as JSON text (made where they were grounded: the text
    crosses between processes far faster than the records would)."""
    result = ground_kdconv(index, dialogues, options)
    return dataclasses.replace(result, dialogues=[]), json_array_items(result.dialogues)


def json_array_items(records: list[Any]) -> str:
    """Records as lines of a JSON array, one record a line (see :func:`json_array`)."""
    return ",\n".join(json.dumps(r, ensure_ascii=False) for r in records)


def json_array(pieces: list[str]) -> str:
    """A JSON array of pieces of :func:`json_array_items`, in order: as readable as an indented file for a file
    of dialogues, and written by json's C encoder (an indented dump goes through the pure-Python one,
    several times slower)."""
    return "[\n" + ",\n".join(piece for piece in pieces if piece) + "\n]\n"


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
