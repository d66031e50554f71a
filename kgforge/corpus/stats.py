"""`kgforge corpus stats`: the dialogue columns of KdConv Table 3, DuConv Table 1 and DuRecDial's goal
tables, over any dialogue file kgforge reads. The definitions are in docs/corpus.md; each figure is an
unrounded mean (the CLI rounds for people)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from kgforge.core.datasets import room_parts
from kgforge.core.errors import KgforgeError
from kgforge.core.limits import ReadPolicy, reading
from kgforge.core.output import OutputDir, output_dir
from kgforge.core.plots import cjk_font, figure_name
from kgforge.core.progress import iterate
from kgforge.core.registry import Entry, Registry
from kgforge.core.text import jieba_module
from kgforge.corpus.reading import (
    Corpus,
    Tokens,
    dialogue_topics,
    gold_triples,
    read_corpus,
    split_files,
    tokens_for,
    utterances,
)
from kgforge.corpus.transitions import RelationGraph, TransitionFigures, plot_transitions, transition_figures
from kgforge.exports.model import SourceDialogue
from kgforge.grounding import DialogueMatcher, GroundingIndex, MatchOptions
from kgforge.grounding.kept import load_index
from kgforge.grounding.messages import as_attr
from kgforge.publish.link import start_entity_names
from kgforge.store.snapshot import Snapshot


def mean(total: float, n: int) -> float | None:
    return total / n if n else None


@dataclass(frozen=True)
class KnowledgeFigures:
    """KdConv's gold ``attrs``: per dialogue, and over the whole file."""

    dialogues_with_knowledge: int
    topics_per_dialogue: float | None  # distinct attr names
    triples_per_dialogue: float | None  # distinct (name, attrname, attrvalue)
    entities: int  # distinct names in the file
    relations: int  # distinct attrnames
    triples: int  # distinct triples
    tokens_per_triple: float | None  # jieba tokens of name+attrname+attrvalue, over distinct triples
    chars_per_triple: float | None


@dataclass(frozen=True)
class GoalFigures:
    """DuConv: the knowledge each dialogue is given and the kind of its goal."""

    knowledge_per_dialogue: float | None  # entries of ``knowledge``
    goal_kinds: dict[str, int]  # one-step, two-step (other: a goal of another length)


@dataclass(frozen=True)
class RecommendationFigures:
    """DuRecDial: sub-dialogues by goal type, and the entities its user profiles record."""

    knowledge_per_dialogue: float | None
    sub_dialogues: int
    sub_dialogues_per_dialogue: float | None
    goal_types: dict[str, int]  # sub-dialogues by goal type, most frequent first
    recommended: int | None  # goals whose type recommends (…推荐), None where the layout has no goal types
    accepted: int | None  # user_profile 接受的… entries; None where the layout has no profile
    rejected: int | None  # user_profile 没有接受的… entries


@dataclass(frozen=True)
class GraphFigures:
    """The file's topics (declared and gold heads, distinct names) against a domain's graph: the build's start
    entities (KdConv Table 2's "# start entities": the names heading the dataset's own facts), the other
    entities the graph names (the extension), and those it does not name."""

    domain: str
    build_id: str
    topics: int
    start: int
    extended: int
    not_in_graph: int
    not_in_graph_examples: tuple[str, ...]


@dataclass(frozen=True)
class GroundedFigures:
    """Topics and triples per dialogue as the grounder (``kgforge ground``'s rules) finds them in the graph: each
    dialogue's utterances grounded in order, its declared topics in focus; a triple is (``name``, ``attrname``,
    ``attrvalue``) as ``kgforge ground`` writes an attr (the subject's label, the relation, the graph's value)."""

    domain: str
    dialogues_with_knowledge: int  # dialogues with at least one fact stated
    topics_per_dialogue: float | None  # distinct subjects (names) of the facts stated in the dialogue
    triples_per_dialogue: float | None  # distinct facts stated in the dialogue
    entities: int  # distinct subjects over the file
    relations: int  # distinct relations over the file
    triples: int  # distinct facts over the file


@dataclass(frozen=True)
class CorpusStats:
    """The statistics of one dialogue file (and, with ``--by-split``, of each split file beside it)."""

    file: str
    kind: str
    token_rule: str
    dialogues: int
    utterances: int
    utterances_per_dialogue: float | None
    tokens: int
    tokens_per_utterance: float | None
    tokens_per_dialogue: float | None
    chars: int
    chars_per_utterance: float | None
    chars_per_dialogue: float | None
    knowledge: KnowledgeFigures | None = None
    duconv: GoalFigures | None = None
    durecdial: RecommendationFigures | None = None
    graph: GraphFigures | None = None
    grounded: GroundedFigures | None = None
    # where the headline topics and triples per dialogue come from: "gold" (KdConv attrs), "grounded" (the
    # grounder, with --domain, for a file without gold annotation), None (neither)
    knowledge_from: str | None = None
    transitions: TransitionFigures | None = None
    figures: tuple[str, ...] = ()  # PNG files written (--plot)
    splits: dict[str, CorpusStats] = field(default_factory=dict)
    notes: tuple[str, ...] = ()  # what was asked for and not computed, and why
    extra: dict[str, Any] = field(default_factory=dict)  # the figures of plug-in statistics, by name

    def as_dict(self) -> dict[str, Any]:
        return _without_empty_extra(asdict(self))


def _without_empty_extra(data: dict[str, Any]) -> dict[str, Any]:
    """``data`` without an empty ``extra`` (so the JSON of a run without plug-ins is what it always was)."""
    if not data.get("extra"):
        data.pop("extra", None)
    for part in data.get("splits", {}).values():
        _without_empty_extra(part)
    return data


Figures = Callable[[list[SourceDialogue]], Any]


def _plugin_statistic(name: str, figures: Any) -> Entry[Figures]:
    """A statistic of the entry-point group ``kgforge.corpus_statistics``: a function from a file's dialogues
    (:class:`~kgforge.exports.model.SourceDialogue`) to its figures (a number, a dict or a dataclass), with an
    optional ``kinds`` attribute (the corpus kinds it applies to, as ``kdconv`` or the prefix ``durecdial``)."""
    if not callable(figures):
        raise KgforgeError(f"it is a {type(figures).__name__}, not a function of a file's dialogues")
    description = (figures.__doc__ or "plug-in statistic").strip().split("\n")[0]
    return Entry(name, figures, description, meta={"kinds": tuple(getattr(figures, "kinds", ()))})


# What `corpus stats` computes per file beside the counts: the built-in figures (each into its own field of
# CorpusStats) and those of installed packages (into ``extra``).
STATISTICS: Registry[Figures] = Registry(
    "corpus statistic",
    modules=lambda: room_parts("statistics"),  # each dataset's own figures, registered by its room
    entry_point_group="kgforge.corpus_statistics",
    plugin=_plugin_statistic,
)


def _applies(kinds: tuple[str, ...], kind: str) -> bool:
    return not kinds or any(kind == k or kind.startswith(k + "-") for k in kinds)


def corpus_stats(
    path: Path | str,
    *,
    input_layout: str | None = None,
    by_split: Path | str | None = None,
    snapshot: Snapshot | None = None,
    transitions: bool = False,
    plot: Path | str | None = None,
    tokens: Tokens | None = None,
    policy: ReadPolicy | None = None,
) -> CorpusStats:
    """The statistics of the dialogue file ``path``; with ``by_split`` (a folder written by ``corpus
    split``) also those of each of its split files; with ``snapshot`` (a domain's build), its topics against
    that graph; with ``transitions`` (or ``plot``, a folder for their figures) KdConv's Fig. 2 and Table 4.
    ``policy``: the reading's limits and text policy (:class:`~kgforge.core.limits.ReadPolicy`)."""
    folder = output_dir(plot, what="--plot") if plot is not None else None  # refused before the work
    with reading(policy):
        return _corpus_stats(path, input_layout, by_split, snapshot, transitions, folder, tokens)


def _corpus_stats(
    path: Path | str,
    input_layout: str | None,
    by_split: Path | str | None,
    snapshot: Snapshot | None,
    transitions: bool,
    folder: OutputDir | None,
    tokens: Tokens | None,
) -> CorpusStats:
    corpus = read_corpus(path, input_layout)
    tokens = tokens or tokens_for(corpus)
    stats = file_stats(corpus, tokens)
    index = load_index(snapshot) if snapshot is not None else None
    if snapshot is not None:
        stats = _with(stats, graph=graph_figures(corpus, snapshot))
    stats = _with_grounded(stats, corpus, snapshot, index)
    if transitions or folder is not None:
        stats = _with_transitions(stats, corpus, snapshot, folder)
    if by_split is not None:
        splits, empty = {}, []
        for name, file in split_files(Path(by_split)):
            if _holds_nothing(file):
                empty.append(name)
                continue
            part = read_corpus(file, corpus.kind)
            splits[name] = _with_grounded(file_stats(part, tokens), part, snapshot, index)
        notes = [f"split {name} holds no dialogue" for name in empty]
        stats = _with(stats, splits=splits, notes=(*stats.notes, *notes))
    return stats


def _with_grounded(
    stats: CorpusStats, corpus: Corpus, snapshot: Snapshot | None, index: GroundingIndex | None
) -> CorpusStats:
    """The grounded figures beside the file's own (with a domain), and which of them are the headline: gold
    annotation where the file has it, else the grounder's."""
    gold = stats.knowledge is not None and stats.knowledge.dialogues_with_knowledge > 0
    if snapshot is None or index is None:
        return _with(stats, knowledge_from="gold" if gold else None)
    figures = grounded_figures(corpus, snapshot.domain, index)
    return _with(stats, grounded=figures, knowledge_from="gold" if gold else "grounded")


def grounded_triples(
    index: GroundingIndex, dialogue: SourceDialogue, options: MatchOptions = MatchOptions()
) -> list[tuple[str, str, str]]:
    """The distinct facts the grounder finds in a dialogue's utterances, in order, as ``kgforge ground`` writes
    them: one matcher per dialogue (focus carries over from utterance to utterance), its declared topics first in
    focus, exactly as :func:`kgforge.grounding.messages.ground_messages` grounds a dialogue's messages."""
    matcher = DialogueMatcher(index, dialogue.topic_names, options)
    found: dict[tuple[str, str, str], None] = {}
    for text in utterances(dialogue):
        stated, _ = matcher.message(text)
        for fact in stated:
            attr = as_attr(index, fact)
            found[attr["name"], attr["attrname"], attr["attrvalue"]] = None
    return list(found)


def grounded_figures(corpus: Corpus, domain: str, index: GroundingIndex) -> GroundedFigures:
    per_dialogue = [grounded_triples(index, d) for d in iterate(corpus.dialogues, "ground dialogues")]
    everything = {t for triples in per_dialogue for t in triples}
    n = len(per_dialogue)
    return GroundedFigures(
        domain=domain,
        dialogues_with_knowledge=sum(1 for triples in per_dialogue if triples),
        topics_per_dialogue=mean(sum(len({h for h, _, _ in triples}) for triples in per_dialogue), n),
        triples_per_dialogue=mean(sum(len(triples) for triples in per_dialogue), n),
        entities=len({h for h, _, _ in everything}),
        relations=len({r for _, r, _ in everything}),
        triples=len(everything),
    )


def _holds_nothing(path: Path) -> bool:
    """An empty split as ``corpus split`` writes one: no line, or an empty JSON array (a few bytes: a larger
    file is read as dialogues, and its size checked there)."""
    with open(path, "rb") as handle:
        head = handle.read(1 << 16)
    return len(head) < 1 << 16 and re.fullmatch(rb"\s*(\[\s*\])?\s*", head) is not None


def _with(stats: CorpusStats, **changes: Any) -> CorpusStats:
    return CorpusStats(**{**{f: getattr(stats, f) for f in stats.__dataclass_fields__}, **changes})


def file_stats(corpus: Corpus, tokens: Tokens) -> CorpusStats:
    dialogues = corpus.dialogues
    texts = [text for d in dialogues for text in utterances(d)]
    n, u = len(dialogues), len(texts)
    token_total = sum(tokens.count(text) for text in iterate(texts, "count tokens"))
    chars = sum(len(text) for text in texts)
    return CorpusStats(
        file=str(corpus.path),
        kind=corpus.kind,
        token_rule="whitespace" if tokens.segmented else "jieba.lcut (accurate), whitespace tokens dropped",
        dialogues=n,
        utterances=u,
        utterances_per_dialogue=mean(u, n),
        tokens=token_total,
        tokens_per_utterance=mean(token_total, u),
        tokens_per_dialogue=mean(token_total, n),
        chars=chars,
        chars_per_utterance=mean(chars, u),
        chars_per_dialogue=mean(chars, n),
        **_figures(corpus),
    )


def _figures(corpus: Corpus) -> dict[str, Any]:
    """Each registered statistic that applies to the file's kind: a built-in one under its field, the others
    in ``extra``."""
    found: dict[str, Any] = {"extra": {}}
    for entry in STATISTICS:
        if _applies(entry.meta.get("kinds", ()), corpus.kind):
            value = entry.obj(corpus.dialogues)
            if entry.meta.get("field"):
                found[entry.meta["field"]] = value
            else:
                found["extra"][entry.name] = value
    return found


def _with_transitions(
    stats: CorpusStats, corpus: Corpus, snapshot: Snapshot | None, plot: OutputDir | None
) -> CorpusStats:
    graph = None
    if snapshot is not None:
        graph = RelationGraph(snapshot.tables(), snapshot.language)
    figures = transition_figures(corpus, graph)
    notes = list(stats.notes)
    if figures.topics_within_turns is None:
        notes.append(
            f"topics within the first n turns (KdConv Fig. 2) need topics marked per turn, which "
            f"{corpus.kind} does not mark"
        )
    if graph is None:
        notes.append("topic transitions as relation paths (KdConv Table 4) need --domain")
    domain = snapshot.domain if snapshot is not None else None
    drawn = plot_transitions(figures, plot, figure_name(corpus.path, domain)) if plot is not None else []
    if drawn and cjk_font() is None:
        notes.append(
            "no CJK font is installed (e.g. Noto Sans CJK SC: apt install fonts-noto-cjk), so the figures "
            "draw Chinese labels as boxes"
        )
    return _with(stats, transitions=figures, figures=tuple(str(p) for p in drawn), notes=tuple(notes))


def graph_figures(corpus: Corpus, snapshot: Snapshot) -> GraphFigures:
    manifest = snapshot.manifest
    start = set(start_entity_names(snapshot))
    named = set(snapshot.labels["label"].to_list())
    topics = list(dict.fromkeys(t for d in corpus.dialogues for t in dialogue_topics(d)))
    missing = [t for t in topics if t not in start and t not in named]
    return GraphFigures(
        snapshot.domain,
        manifest.build_id,
        len(topics),
        sum(1 for t in topics if t in start),
        sum(1 for t in topics if t not in start and t in named),
        len(missing),
        tuple(missing[:10]),
    )


def knowledge_figures(dialogues: list[SourceDialogue]) -> KnowledgeFigures:
    per_dialogue = [gold_triples(d) for d in dialogues]
    everything = list(dict.fromkeys(t for triples in per_dialogue for t in triples))
    cut = jieba_module().lcut  # as `kgforge stats` counts a triple's tokens: every token
    n = len(dialogues)
    return KnowledgeFigures(
        dialogues_with_knowledge=sum(1 for triples in per_dialogue if triples),
        topics_per_dialogue=mean(sum(len({h for h, _, _ in triples}) for triples in per_dialogue), n),
        triples_per_dialogue=mean(sum(len(triples) for triples in per_dialogue), n),
        entities=len({h for h, _, _ in everything}),
        relations=len({r for _, r, _ in everything}),
        triples=len(everything),
        tokens_per_triple=mean(sum(len(cut("".join(t))) for t in everything), len(everything)),
        chars_per_triple=mean(sum(len("".join(t)) for t in everything), len(everything)),
    )
