"""`kgforge corpus split`: seeded train/dev/test splits written in the input's own layout, by dialogue or
by topic (every topic in one split only), each with a leakage report."""

from __future__ import annotations

import json
import random
from collections import defaultdict
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgforge.core.checks import whole
from kgforge.core.errors import ArgumentError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import OutputDir, output_dir
from kgforge.core.quarantine import write_rejected
from kgforge.corpus.reading import SPLIT_NAMES, Corpus, dialogue_topics, gold_triples, read_corpus, set_aside_note

BY = ("dialogue", "topic")
REPORT = "split.report.json"


@dataclass(frozen=True)
class SplitPart:
    """One split: its file, its dialogues, the share asked and the share it got, and its leakage against
    train (None for train itself): the share of its dialogues with a topic, and with a gold triple, that
    some train dialogue also has."""

    name: str
    file: str
    dialogues: int
    share_asked: float
    share: float
    off_by_dialogues: float  # dialogues - share_asked * all dialogues
    topic_leakage: float | None
    triple_leakage: float | None


@dataclass(frozen=True)
class SplitReport:
    file: str
    kind: str
    by: str
    seed: int
    ratios: tuple[int, ...]
    dialogues: int
    parts: tuple[SplitPart, ...]
    units: int  # what was assigned whole: dialogues, or groups of dialogues joined by shared topics
    largest_unit: int  # dialogues in the largest group (1 by dialogue)
    topic_overlap: int  # topics found in more than one split
    report_file: str
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def parse_ratios(text: str) -> tuple[int, ...]:
    """``8:1:1`` → (8, 1, 1): two or three whole numbers, each >= 1 (train:test, or train:dev:test)."""
    parts = text.split(":")
    try:
        ratios = tuple(whole(int(p), "--ratios", minimum=1) for p in parts)
    except ValueError:
        raise ArgumentError(
            "--ratios", f"{text!r} is not two or three whole numbers joined by ':' (e.g. 8:1:1)"
        ) from None
    if len(ratios) not in SPLIT_NAMES:
        raise ArgumentError("--ratios", f"{text!r}: give train:test or train:dev:test (e.g. 8:1:1)")
    return ratios


def split_corpus(
    path: Path | str,
    out: Path | str,
    *,
    ratios: tuple[int, ...] | str = (8, 1, 1),
    by: str = "dialogue",
    seed: int = 0,
    input_layout: str | None = None,
    skip_invalid: bool = False,
    policy: ReadPolicy | None = None,
) -> SplitReport:
    """Split the dialogues of ``path`` into ``out``/train|dev|test.<ext>, in the input's layout; the same seed
    gives the same bytes. ``by="topic"`` assigns whole groups of dialogues that share a topic. A record that
    is not a dialogue is an error, or with ``skip_invalid`` is left out and listed in
    ``out``/``split.rejected.jsonl``; ``policy``: the reading's limits and text policy."""
    ratios = parse_ratios(ratios) if isinstance(ratios, str) else ratios
    if by not in BY:
        raise ArgumentError("--by", f"{by!r} is not one of {', '.join(BY)}")
    seed = whole(seed, "--seed", minimum=0)
    folder = output_dir(out)  # refused before the input is read
    with reading(policy):
        corpus = read_corpus(path, input_layout, skip_invalid)
    units = topic_units(corpus) if by == "topic" else [[i] for i in range(len(corpus.dialogues))]
    assignment = assign(units, ratios, seed)
    return _write(corpus, folder, ratios, by, seed, units, assignment)


def topic_units(corpus: Corpus) -> list[list[int]]:
    """Groups of dialogues that must share a split: union-find over dialogues joined by a common topic."""
    parent = list(range(len(corpus.dialogues)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    first_with: dict[str, int] = {}
    for i, dialogue in enumerate(corpus.dialogues):
        for topic in dialogue_topics(dialogue):
            j = first_with.setdefault(topic, i)
            parent[root(i)] = root(j)
    groups: dict[int, list[int]] = defaultdict(list)
    for i in range(len(parent)):
        groups[root(i)].append(i)
    return list(groups.values())


def assign(units: list[list[int]], ratios: tuple[int, ...], seed: int) -> list[int]:
    """The split of each dialogue. Units are shuffled with ``seed``, then taken largest first, each into the
    split furthest below its share (so single dialogues fill the gaps big groups leave)."""
    rng = random.Random(seed)
    order = list(range(len(units)))
    rng.shuffle(order)
    order.sort(key=lambda u: -len(units[u]))  # stable: equal sizes keep the shuffled order
    total = sum(len(u) for u in units)
    targets = [total * r / sum(ratios) for r in ratios]
    counts = [0] * len(ratios)
    split_of = [0] * total
    for u in order:
        best = max(range(len(ratios)), key=lambda s: (targets[s] - counts[s], -s))
        counts[best] += len(units[u])
        for i in units[u]:
            split_of[i] = best
    return split_of


def _write(
    corpus: Corpus,
    out: OutputDir,
    ratios: tuple[int, ...],
    by: str,
    seed: int,
    units: list[list[int]],
    split_of: list[int],
) -> SplitReport:
    names = SPLIT_NAMES[len(ratios)]
    suffix = corpus.path.suffix or (".json" if corpus.source.fmt.container == "array" else ".jsonl")
    targets = [out.file(f"{name}{suffix}") for name in names]  # every file checked before the first is written
    report_file = out.file(REPORT)
    members: list[list[int]] = [[] for _ in names]
    for i, s in enumerate(split_of):
        members[s].append(i)  # file order within a split
    files = []
    for target, indices in zip(targets, members):
        with target.part() as part:
            corpus.source.fmt.write([corpus.dialogues[i].record for i in indices], part, corpus.source.layout)
        files.append(target.path)
    parts, overlap = measure(corpus, names, ratios, members, [str(f) for f in files])
    n = len(corpus.dialogues)
    largest = max((len(u) for u in units), default=0)
    notes = _notes(parts, largest, n) + set_aside_note(
        corpus, write_rejected(out.file("split"), corpus.source.rejected)
    )
    report = SplitReport(
        str(corpus.path),
        corpus.kind,
        by,
        seed,
        ratios,
        n,
        tuple(parts),
        len(units),
        largest,
        overlap,
        str(report_file.path),
        notes,
    )
    report_file.write_text(json.dumps(report.as_dict(), ensure_ascii=False, indent=2) + "\n")
    return report


def measure(
    corpus: Corpus,
    names: tuple[str, ...],
    ratios: tuple[int, ...],
    members: list[list[int]],
    files: list[str],
) -> tuple[list[SplitPart], int]:
    """Each split's part of the report (``names[s]``, ``members[s]``: its dialogues' positions, ``files[s]``: its
    file, ``ratios[s]``: its share asked) with its leakage against the first split (train), and the topics found
    in more than one split."""
    topics = [set(dialogue_topics(d)) for d in corpus.dialogues]
    triples = [set(gold_triples(d)) for d in corpus.dialogues]
    train_topics = set().union(*(topics[i] for i in members[0]))
    train_triples = set().union(*(triples[i] for i in members[0]))
    n = len(corpus.dialogues)
    parts = []
    for s, (name, indices) in enumerate(zip(names, members)):
        leak_t = leak_g = None
        if s > 0:
            leak_t = _share(sum(1 for i in indices if topics[i] & train_topics), len(indices))
            leak_g = _share(sum(1 for i in indices if triples[i] & train_triples), len(indices))
        asked = ratios[s] / sum(ratios)
        parts.append(
            SplitPart(
                name, files[s], len(indices), asked, _share(len(indices), n), len(indices) - asked * n, leak_t, leak_g
            )
        )
    seen: dict[str, set[int]] = defaultdict(set)
    for s, indices in enumerate(members):
        for i in indices:
            for topic in topics[i]:
                seen[topic].add(s)
    return parts, sum(1 for splits in seen.values() if len(splits) > 1)


def _share(part: int, whole_: int) -> float:
    return part / whole_ if whole_ else 0.0


def _notes(parts: list[SplitPart], largest: int, n: int) -> tuple[str, ...]:
    """Say where a split is more than one dialogue off its share: only a group too big to place does that."""
    off = [p for p in parts if abs(p.off_by_dialogues) > 1]
    if not off:
        return ()
    worst = ", ".join(f"{p.name} {p.dialogues} (asked {p.share_asked * n:.1f})" for p in off)
    return (
        f"shares more than one dialogue off the ratios: {worst}; the largest group of dialogues joined by shared "
        f"topics holds {largest} of {n} dialogues and cannot be divided without putting a topic in two splits",
    )
