"""Which split each dialogue of a release goes to: a split folder that ``kgforge corpus split`` wrote (each of its
dialogues must be one of the release's, and each of the release's in exactly one split), seeded ratios by
topic or by dialogue (``corpus split``'s assignment), or, with neither, each file's own name (``dev.json``,
``dev.head250.jsonl``: dev; a file not named train, dev or test: train)."""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.jsonio import dumps_bytes
from kgforge.corpus.reading import SPLIT_NAMES, Corpus, split_files
from kgforge.corpus.split import BY, REPORT, assign, measure, parse_ratios, topic_units
from kgforge.exports.dialogues import read_dialogues
from kgforge.exports.grounding import SourceFile

ORDER = ("train", "dev", "test")


@dataclass(frozen=True)
class Assignment:
    """The splits in order, each with its dialogues' positions (in file order), and the split report the card
    shows: how they were made (``by``, ``seed``, ``ratios``) and each split's leakage against train."""

    names: tuple[str, ...]
    members: tuple[tuple[int, ...], ...]
    report: dict[str, Any]


def record_key(record: Any) -> bytes:
    """What makes two dialogue records the same dialogue: their content, keys in order."""
    return dumps_bytes(record, sort_keys=True)


def assign_splits(
    corpus: Corpus,
    origins: list[tuple[Path, int]],
    *,
    folder: Path | None = None,
    ratios: tuple[int, ...] | str | None = None,
    by: str = "topic",
    seed: int = 0,
) -> Assignment:
    """The splits of ``corpus`` (``origins[i]``: the file and line dialogue ``i`` was read from)."""
    if folder is not None and ratios is not None:
        raise ArgumentError("--split", "give a split folder or --ratios, not both")
    if folder is not None:
        return _from_folder(corpus, origins, Path(folder))
    if ratios is not None:
        chosen = parse_ratios(ratios) if isinstance(ratios, str) else ratios
        if by not in BY:
            raise ArgumentError("--by", f"{by!r} is not one of {', '.join(BY)}")
        units = topic_units(corpus) if by == "topic" else [[i] for i in range(len(corpus.dialogues))]
        split_of = assign(units, chosen, seed)
        names = SPLIT_NAMES[len(chosen)]
        members = [[i for i, s in enumerate(split_of) if s == k] for k in range(len(names))]
        largest = max((len(u) for u in units), default=0)
        return _assignment(corpus, names, chosen, members, by, seed, len(units), largest)
    by_name: dict[str, list[int]] = defaultdict(list)
    for i, (path, _) in enumerate(origins):
        stem = path.name.split(".", 1)[0].lower()
        by_name[stem if stem in ORDER else "train"].append(i)
    names = tuple(n for n in ORDER if n in by_name)
    members = [by_name[n] for n in names]
    return _assignment(corpus, names, tuple(len(m) for m in members), members, "file", None, len(corpus.dialogues), 1)


def _assignment(
    corpus: Corpus,
    names: tuple[str, ...],
    ratios: tuple[int, ...],
    members: list[list[int]],
    by: str,
    seed: int | None,
    units: int,
    largest: int,
) -> Assignment:
    parts, overlap = measure(corpus, names, ratios, members, [name for name in names])
    report = {
        "by": by,
        "seed": seed,
        "ratios": list(ratios),
        "units": units,
        "largest_unit": largest,
        "topic_overlap": overlap,
        "parts": [{k: v for k, v in vars(p).items() if k != "file"} for p in parts],
        "notes": [],
    }
    return Assignment(names, tuple(tuple(m) for m in members), report)


def _from_folder(corpus: Corpus, origins: list[tuple[Path, int]], folder: Path) -> Assignment:
    """Each split file's dialogues matched to the release's by content; anything unmatched is refused."""
    if not folder.is_dir():
        raise InputError(f"{folder}: not a folder of split files (give the folder `kgforge corpus split` wrote)")
    waiting: dict[bytes, list[int]] = defaultdict(list)
    for i, dialogue in enumerate(corpus.dialogues):
        waiting[record_key(dialogue.record)].append(i)
    names, members = [], []
    for name, path in split_files(folder):
        source = read_dialogues(path, corpus.kind)
        found = []
        for dialogue in source.dialogues:
            same = waiting.get(record_key(dialogue.record))
            if not same:
                raise InputError(
                    f"{path}:{dialogue.line}: this dialogue is not one of the --dialogues files' (the split folder "
                    "holds other dialogues, or one twice)"
                )
            found.append(same.pop(0))
        names.append(name)
        members.append(sorted(found))
    left = sorted(i for same in waiting.values() for i in same)
    if left:
        path, line = origins[left[0]]
        raise InputError(
            f"{path}:{line}: this dialogue is in none of the splits of {folder} ({len(left)} of "
            f"{len(corpus.dialogues)} dialogues are not; the split folder is of other dialogues)"
        )
    made = _written_report(folder)
    counts = tuple(len(m) for m in members)
    by, seed = (made.get("by", "folder"), made.get("seed")) if made else ("folder", None)
    return _assignment(corpus, tuple(names), counts, members, by, seed, len(corpus.dialogues), 1)


def _written_report(folder: Path) -> dict[str, Any] | None:
    path = folder / REPORT
    if not path.is_file():
        return None
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}:{getattr(exc, 'lineno', 1)}: not a split report ({exc})") from None
    return found if isinstance(found, dict) else None


def combined(files: list[Path], sources: list[SourceFile]) -> tuple[Corpus, list[tuple[Path, int]]]:
    """The dialogues of several files of one layout (``sources[i]`` read from ``files[i]``) as one corpus, with
    where each was read."""
    first = sources[0]
    dialogues = [d for s in sources for d in s.dialogues]
    merged = SourceFile(first.fmt, first.layout, dialogues, [], sum(s.records_in for s in sources))
    origins = [(path, d.line) for path, s in zip(files, sources) for d in s.dialogues]
    return Corpus(files[0], merged), origins
