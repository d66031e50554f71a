"""``kgforge ground``: a file of dialogues grounded against a domain's graph, written beside its report."""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypedDict

from kgforge.core.checks import whole
from kgforge.core.errors import InputError
from kgforge.core.gc_pause import paused_gc
from kgforge.core.jsonio import array_items, json_array, json_lines
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import OutputFile
from kgforge.core.processes import can_fork, forked_map, usable_cpus
from kgforge.core.progress import tracked
from kgforge.core.quarantine import write_rejected
from kgforge.core.records import Record, omitted_when_none
from kgforge.grounding import kept
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.matching import DEFAULT_OPTIONS, MatchOptions
from kgforge.grounding.model_file import chosen_model
from kgforge.grounding.registry import GROUNDERS, Grounder
from kgforge.grounding.scoring import GroundScore, GroundScores, Tally
from kgforge.sources.dialogue_layouts import Checked
from kgforge.store.snapshot import Snapshot

FORMATS = GROUNDERS  # the --format names (each dataset's room registers its grounder)
PART_DIALOGUES = 500  # the fewest dialogues a worker process is given at once: fewer are grounded here
PARTS_PER_WORKER = 16  # parts a worker takes in turn: the last to end leaves the other processes idle a part's time
ENCODED_AT_ONCE = 25  # dialogues grounded, then encoded, at a time: their records are let go as a part goes on


class _Rejected(TypedDict, total=False):
    """GroundReport's --skip-invalid fields, given only with that option."""

    rejected: int
    rejected_file: Path | None


@dataclass(frozen=True)
class GroundOptions:
    fmt: str = "kdconv"
    match: MatchOptions = DEFAULT_OPTIONS
    workers: int | None = None  # processes grounding the dialogues; None: one per usable CPU
    skip_invalid: bool = False  # records that are not dialogues of the format go to OUT.rejected.jsonl
    policy: ReadPolicy | None = None  # the limits and text policy of the reading (None: the one in force)

    def processes(self) -> int:
        return usable_cpus() if self.workers is None else whole(self.workers, "--workers", 1, 256)


@dataclass(frozen=True)
class GroundReport(Record):
    """What ``kgforge ground`` found in a dialogue file, and how it scores against the gold it holds."""

    domain: str
    format: str  # the input's: kdconv, duconv or durecdial
    dialogues: int
    messages: int  # messages (KdConv) or utterances (DuConv) read
    attrs_predicted: int  # facts the messages were found to state
    gold_messages: int  # messages whose gold annotation was kept and scored
    scores: GroundScores | None  # micro and per relation: tp/fp/fn/precision/recall/f1; None: no gold
    claims: dict[str, int]  # supported / contradicted / unsupported
    topics_not_in_graph: tuple[str, ...]
    out: Path
    grounded_utterances: int | None = omitted_when_none()  # DuConv: utterances stating a knowledge triple
    workers: int = 1  # processes that grounded the dialogues (--workers, where the input is large enough)
    rejected: int | None = omitted_when_none()  # --skip-invalid: records set aside, listed in rejected_file
    rejected_file: Path | None = omitted_when_none()
    # KdConv: who chose among the candidate facts (the shipped model, "rules", or a model file); None for the others
    model: str | None = omitted_when_none()

    @property
    def micro(self) -> GroundScore | None:
        return self.scores.micro if self.scores else None

    @property
    def per_relation(self) -> dict[str, GroundScore]:
        return dict(self.scores.per_relation) if self.scores else {}

    def as_dict(self) -> dict[str, Any]:
        data = super().as_dict()  # the key order the command has always printed: DuConv's count after attrs
        if self.grounded_utterances is None:
            return data
        keys = [*list(data)[:5], "grounded_utterances", *(k for k in list(data)[5:] if k != "grounded_utterances")]
        return {k: data[k] for k in keys}


def read_input(dialogues: Path, options: GroundOptions = GroundOptions()) -> Checked:
    """The dialogues of the file ``dialogues`` in ``options.fmt``, read with ``options.policy``: an InputError
    naming the file when none can be grounded. Read before the graph, so a file that cannot be grounded is
    named before a domain that is not built, and costs no index."""
    way = GROUNDERS.get(options.fmt)
    chosen_model(options.match.model)  # a model file that is no model is refused before the input is read
    with reading(options.policy):
        read = way.read(Path(dialogues), options.skip_invalid)
    if read.rejected and not read.values:
        raise InputError(f"{dialogues}: no {options.fmt} dialogue could be read ({read.rejected[0]['reason']})")
    return read


@paused_gc()  # the index's facts and the grounded dialogues: millions of records that hold no cycles
def ground_file(
    snapshot: Snapshot,
    dialogues: Path | Checked,
    out: Path | OutputFile,
    options: GroundOptions = GroundOptions(),
) -> GroundReport:
    """Grounds ``dialogues`` (a file in ``options.fmt``, or what :func:`read_input` read of one) against
    ``snapshot``'s graph into ``out``; returns the report (counts, claim statuses, and the scores against gold
    annotations found in the input)."""
    way = GROUNDERS.get(options.fmt)
    chosen_model(options.match.model)  # a model file that is no model is refused before anything is read or written
    target = snapshot.paths.output(out)  # refused before the work, not after it
    read = dialogues if isinstance(dialogues, Checked) else read_input(dialogues, options)
    records = read.values
    index = kept.load_index(snapshot)
    result, pieces, processes = _ground_in_parts(index, records, way, options)
    with target.open("wb") as handle:  # piece by piece: never the whole file as one string
        handle.writelines(json_array(pieces) if way.array else pieces)
    rejected: _Rejected = {"rejected": len(read.rejected), "rejected_file": write_rejected(target, read.rejected)}
    if not options.skip_invalid:
        rejected = {}
    counts = way.counts(result)
    return GroundReport(
        snapshot.domain,
        GROUNDERS.entry(options.fmt).name,
        len(records),
        counts.messages,
        counts.stated,
        counts.gold,
        counts.tally.scores() if counts.gold and counts.tally else None,
        dict(sorted(counts.claims.items())),
        counts.topics_not_in_graph,
        target.path,
        grounded_utterances=counts.grounded_utterances,
        workers=processes,
        **rejected,
        model=options.match.model if way.uses_model else None,
    )


def _ground_in_parts(
    index: GroundingIndex, records: list[dict[str, Any]], way: Grounder, options: GroundOptions
) -> tuple[Any, list[bytes], int]:
    """The dialogues grounded in parts, by up to ``options.processes()`` processes forked from this one with
    the index made ready (:func:`kgforge.grounding.kept.load_index`; they read it where it is): the grounding, each
    part's dialogues as bytes of the output file, and the processes that worked (one per ``PART_DIALOGUES``
    dialogues at most; one where the platform does not fork)."""
    wanted = options.processes()
    processes = max(1, min(wanted, len(records) // PART_DIALOGUES)) if can_fork() else 1
    size = max(PART_DIALOGUES, -(-len(records) // (processes * PARTS_PER_WORKER)))
    parts = [records[at : at + size] for at in range(0, len(records), size)] or [records]
    with tracked(f"ground {options.fmt} dialogues", len(records)) as bar:  # moved on as each part ends
        grounded = forked_map(
            partial(_ground_part, index, way, options.match),
            parts,
            processes,
            f"kgforge ground ({options.fmt} dialogues)",
            done=lambda part: bar.advance(len(part)),
        )
    return combined([result for result, _ in grounded]), [encoded for _, encoded in grounded], processes


def _ground_part(
    index: GroundingIndex, way: Grounder, options: MatchOptions, records: list[dict[str, Any]]
) -> tuple[Any, bytes]:
    """One part grounded, its dialogues sent back as bytes of the output file (encoded where they were
    grounded: bytes cross between processes far faster than the records would), the grounding without them.
    The part is grounded ``ENCODED_AT_ONCE`` dialogues at a time, each few encoded at once: the grounded
    records of a whole part, held to its end, were new memory for the process to fault in (docs/benchmarks.md)."""
    results, pieces = [], []
    for at in range(0, max(len(records), 1), ENCODED_AT_ONCE):  # an empty part: one empty grounding
        result = way.ground(index, records[at : at + ENCODED_AT_ONCE], options)
        grounded = getattr(result, way.records)
        pieces.append(array_items(grounded) if way.array else json_lines(grounded))
        results.append(dataclasses.replace(result, **{way.records: []}))
    encoded = b",\n".join(filter(None, pieces)) if way.array else b"".join(pieces)
    return combined(results), encoded


def combined(parts: list[Any]) -> Any:
    """Groundings of consecutive parts of a file as one: counts added, lists joined in order, counters and
    tallies summed. Each dialogue's focus is its own, so the parts ground as the whole file would."""
    values: dict[str, Any] = {}
    for field in dataclasses.fields(parts[0]):
        got = [getattr(part, field.name) for part in parts]
        if isinstance(got[0], Tally):
            values[field.name] = Tally(sum((tally.counts for tally in got), Counter()))
        elif isinstance(got[0], Counter):
            values[field.name] = sum(got, Counter())
        elif isinstance(got[0], list):
            values[field.name] = [item for items in got for item in items]
        elif isinstance(got[0], int):
            values[field.name] = sum(got)
        else:
            raise TypeError(f"no rule to combine {field.name!r} of {type(parts[0]).__name__}")
    return type(parts[0])(**values)
