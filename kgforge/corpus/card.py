"""`kgforge corpus card`: a Markdown datasheet of a dialogue release: its statistics, the graph's sources
with their provenance and licence (from the published build's manifest), the split and its leakage, and
the build id."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgforge.core.errors import InputError
from kgforge.core.files import sha256_file
from kgforge.core.limits import ReadPolicy, read_whole
from kgforge.corpus.split import REPORT
from kgforge.corpus.stats import CorpusStats, corpus_stats
from kgforge.sources.importer import source_licence
from kgforge.store.manifest import Manifest
from kgforge.store.snapshot import Snapshot

UNKNOWN = 'not recorded: state it in the schema\'s source entry (licence = "…")'


@dataclass(frozen=True)
class SourceLine:
    """One source graph of the build, as the datasheet lists it."""

    graph: str
    kind: str
    path: str
    sha256: str | None
    quads: int
    licence: str


@dataclass(frozen=True)
class CardReport:
    domain: str
    build_id: str
    out: str
    files: tuple[str, ...]
    sources: tuple[SourceLine, ...]
    unknown_licences: int  # sources whose licence neither the schema nor their kind states
    split_report: str | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def write_card(
    files: Iterable[Path | str],
    snapshot: Snapshot,
    out: Path | str,
    *,
    split: Path | str | None = None,
    input_layout: str | None = None,
    policy: ReadPolicy | None = None,
) -> CardReport:
    """Write the datasheet of the dialogue ``files`` built against ``snapshot``'s build to ``out``; ``split``
    is a folder written by ``corpus split`` (its split report and per-split statistics go in); ``policy``:
    the reading's limits and text policy."""
    dialogue_files = [Path(f) for f in files]
    if not dialogue_files:
        raise InputError("corpus card: give at least one dialogue file")
    target = snapshot.paths.output(out)
    manifest = snapshot.manifest
    stats = [
        corpus_stats(f, input_layout=input_layout, by_split=split if i == 0 else None, policy=policy)
        for i, f in enumerate(dialogue_files)
    ]
    sources = source_lines(manifest)
    split_report = _split_report(Path(split)) if split is not None else None
    text = render(manifest, dialogue_files, stats, sources, split_report)
    target.write_text(text)
    return CardReport(
        snapshot.domain,
        manifest.build_id,
        str(out),
        tuple(str(f) for f in dialogue_files),
        tuple(sources),
        sum(1 for s in sources if s.licence == UNKNOWN),
        str(Path(split) / REPORT) if split is not None and split_report else None,
    )


def source_lines(manifest: Manifest) -> list[SourceLine]:
    """Every source graph of the build (derived graphs, which no file holds, left out) with its licence: as
    the build recorded it, else as its kind registers it now (a build made before licences were recorded)."""
    lines = []
    for name, entry in manifest.graphs.items():
        details = entry.details
        if "path" not in details:
            continue
        recorded = details.get("input")
        fingerprint = recorded if isinstance(recorded, dict) else {}
        kind = entry.kind or name.split("/")[0]
        licence = details.get("licence") or source_licence(kind) or UNKNOWN
        lines.append(SourceLine(name, kind, str(details["path"]), fingerprint.get("sha256"), entry.quads, licence))
    return lines


def _split_report(folder: Path) -> dict[str, Any]:
    path = folder / REPORT
    try:
        return json.loads(read_whole(path, "split report").decode("utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: no split report; make the split with `kgforge corpus split`") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not a split report ({exc.msg})") from None
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not a split report (not UTF-8 at byte offset {exc.start})") from None


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:,.2f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value).replace("|", "\\|")


def _table(header: list[str], rows: list[list[Any]]) -> list[str]:
    return [
        "| " + " | ".join(header) + " |",
        "|" + "---|" * len(header),
        *("| " + " | ".join(_fmt(v) for v in row) + " |" for row in rows),
        "",
    ]


def render(
    manifest: Manifest,
    files: list[Path],
    stats: list[CorpusStats],
    sources: list[SourceLine],
    split: dict[str, Any] | None,
    shown: Callable[[Path], str] = str,
) -> str:
    """The datasheet's Markdown; ``shown`` writes a file's name in it (a release names its files relative to
    itself, never by a path of the machine that made it)."""
    lines = [
        f"# Datasheet: {manifest.domain}",
        "",
        f"Knowledge graph: domain `{manifest.domain}`, build `{manifest.build_id}`"
        + (f" (created {manifest.created})" if manifest.created else "")
        + ".",
        "",
        "## Dialogues",
        "",
        "Definitions: kgforge docs/corpus.md.",
        "",
    ]
    lines += _dialogue_table(files, stats)
    lines += _knowledge_tables(files, stats)
    lines += ["## Files", ""] + _table(["file", "sha256"], [[shown(f), sha256_file(f)] for f in files])
    if split is not None:
        lines += _split_section(split)
    lines += _sources_section(sources)
    return "\n".join(lines)


def _dialogue_table(files: list[Path], stats: list[CorpusStats]) -> list[str]:
    """One row per file, then one per split file of it (`corpus stats --by-split`), each named after both."""
    rows = []
    for f, s in zip(files, stats):
        for name, part in [("", s), *s.splits.items()]:
            rows.append(
                [
                    f"{f.name}{' / ' + name if name else ''}",
                    part.kind,
                    part.dialogues,
                    part.utterances,
                    part.utterances_per_dialogue,
                    part.tokens_per_utterance,
                    part.tokens_per_dialogue,
                    part.chars_per_utterance,
                ]
            )
    return _table(
        [
            "file",
            "layout",
            "dialogues",
            "utterances",
            "utterances / dialogue",
            "tokens / utterance",
            "tokens / dialogue",
            "chars / utterance",
        ],
        rows,
    )


def _split_section(split: dict[str, Any]) -> list[str]:
    """How the corpus was split (`kgforge corpus split`'s report) and each part's share and leakage."""
    lines = [
        "## Split",
        "",
        f"By {split['by']}, seed {split['seed']}, ratios {':'.join(map(str, split['ratios']))}; "
        f"{split['units']} units (largest {split['largest_unit']} dialogues), topics in more than one split: "
        f"{split['topic_overlap']}. Leakage: the share of a split's dialogues with a topic (a gold triple) "
        "that a train dialogue also has.",
        "",
    ]
    lines += _table(
        ["split", "dialogues", "share asked", "share", "topic leakage", "triple leakage"],
        [
            [p["name"], p["dialogues"], p["share_asked"], p["share"], p["topic_leakage"], p["triple_leakage"]]
            for p in split["parts"]
        ],
    )
    lines += [f"Note: {note}" for note in split.get("notes", [])] + ([""] if split.get("notes") else [])
    return lines


def _sources_section(sources: list[SourceLine]) -> list[str]:
    """Each graph's source and licence, and whether the release's terms are complete (a licence not recorded)."""
    lines = ["## Sources and licences", ""] + _table(
        ["graph", "kind", "path", "sha256", "quads", "licence"],
        [[s.graph, s.kind, s.path, s.sha256, s.quads, s.licence] for s in sources],
    )
    unknown = [s.graph for s in sources if s.licence == UNKNOWN]
    lines += [
        "Terms: a derived release is bound by every licence above; "
        + (
            f"the licence of {', '.join(unknown)} is not recorded, so the release's terms are incomplete."
            if unknown
            else "every source states one."
        ),
        "",
    ]
    return lines


def _knowledge_tables(files: list[Path], stats: list[CorpusStats]) -> list[str]:
    lines: list[str] = []
    kd = [(f, s.knowledge) for f, s in zip(files, stats) if s.knowledge]
    if kd:
        lines += ["### Gold knowledge (KdConv attrs)", ""] + _table(
            [
                "file",
                "topics / dialogue",
                "triples / dialogue",
                "entities",
                "relations",
                "triples",
                "tokens / triple",
                "chars / triple",
            ],
            [
                [
                    f.name,
                    k.topics_per_dialogue,
                    k.triples_per_dialogue,
                    k.entities,
                    k.relations,
                    k.triples,
                    k.tokens_per_triple,
                    k.chars_per_triple,
                ]
                for f, k in kd
            ],
        )
    du = [(f, s.duconv) for f, s in zip(files, stats) if s.duconv]
    if du:
        lines += ["### Goals (DuConv)", ""] + _table(
            ["file", "knowledge / dialogue", "goal kinds"],
            [[f.name, g.knowledge_per_dialogue, ", ".join(f"{k} {n}" for k, n in g.goal_kinds.items())] for f, g in du],
        )
    rec = [(f, s.durecdial) for f, s in zip(files, stats) if s.durecdial]
    if rec:
        lines += ["### Goals (DuRecDial)", ""] + _table(
            ["file", "sub-dialogues / dialogue", "goal types", "recommended", "accepted", "rejected"],
            [
                [
                    f.name,
                    r.sub_dialogues_per_dialogue,
                    ", ".join(f"{k} {n}" for k, n in r.goal_types.items()),
                    r.recommended,
                    r.accepted,
                    r.rejected,
                ]
                for f, r in rec
            ],
        )
    return lines
