"""KdConv's Fig. 2 and Table 4 for any dialogue file: how many dialogues reach k topics within their first n
turns, and the topic transitions between consecutive topics, by hop count in the graph, as relation paths."""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl

from kgforge.core import plots
from kgforge.core.output import OutputDir, output_dir
from kgforge.corpus.reading import Corpus, corpus_layout
from kgforge.exports.model import SourceDialogue
from kgforge.store.tables import GraphTables

TOPIC_COUNTS = (2, 3, 4, 5)  # the curves of KdConv's Fig. 2
MAX_HOPS = 3
TOP = 3
INVERSE = "⁻¹"  # a relation walked from its object to its subject


@dataclass(frozen=True)
class TransitionFigures:
    """``topics_within_turns[k][n-1]``: dialogues with at least ``k`` distinct topics in their first ``n``
    turns (KdConv: the gold ``name``s of the first n messages), None where the layout marks no topic per
    turn. ``top_paths[h]``: the three commonest relation paths of ``h`` hops joining consecutive topics."""

    topics_within_turns: dict[str, list[int]] | None
    transitions: int  # consecutive pairs of different topics, over all dialogues
    distinct_transitions: int
    top_paths: dict[str, list[tuple[str, int]]]  # hops ("1", "2", "3") -> [(path, transitions)]
    by_hops: dict[str, int]  # hops -> transitions; "none": beyond 3 hops; "not_in_graph": a topic the graph
    # lacks; "no_graph": no --domain to measure hops in


def turn_topics(dialogue: SourceDialogue) -> list[list[str]] | None:
    """The topics each turn is annotated with (the heads of the gold triples annotated on its message); None
    where the layout annotates no turn."""
    if not corpus_layout(dialogue.layout).topics_per_turn:
        return None
    per_turn: list[list[str]] = [[] for _ in dialogue.texts]
    for triple in dialogue.gold:
        if triple.message is not None and triple.head not in per_turn[triple.message]:
            per_turn[triple.message].append(triple.head)
    return per_turn


def topic_sequence(dialogue: SourceDialogue) -> list[str]:
    """The dialogue's topics in the order it moves through them, repeats in a row collapsed: per turn where
    the layout annotates turns, else its declared topics (DuConv's goal A, B; DuRecDial's 『』 topics)."""
    turns = turn_topics(dialogue)
    order = [t for turn in turns for t in turn] if turns is not None else list(dialogue.topic_names)
    return [t for i, t in enumerate(order) if i == 0 or order[i - 1] != t]


def topics_within_turns(corpus: Corpus) -> dict[str, list[int]] | None:
    annotated = [turn_topics(d) for d in corpus.dialogues]
    per_dialogue = [turns for turns in annotated if turns is not None]
    if len(per_dialogue) < len(annotated) or not per_dialogue:
        return None
    longest = max(len(turns) for turns in per_dialogue)
    curves: dict[str, list[int]] = {str(k): [0] * longest for k in TOPIC_COUNTS}
    for turns in per_dialogue:
        seen: set[str] = set()
        for n in range(longest):
            if n < len(turns):
                seen.update(turns[n])
            for k in TOPIC_COUNTS:
                curves[str(k)][n] += len(seen) >= k
    return curves


class RelationGraph:
    """The graph's entity-to-entity facts, walked both ways, for the shortest relation path between names."""

    def __init__(self, tables: GraphTables, language: str) -> None:
        labels = tables.label_map(language)
        facts = tables.facts.filter(pl.col("o_is_entity")).select("s", "p", "o").unique()
        self.next: dict[str, list[tuple[str, str]]] = defaultdict(list)
        for s, p, o in facts.iter_rows():
            relation = labels.get(p, p)
            self.next[s].append((relation, o))
            self.next[o].append((relation + INVERSE, s))
        for steps in self.next.values():
            steps.sort()  # the same path whichever order the store gave the facts in
        names = tables.labels.select("label", "iri").unique()
        self.iris: dict[str, list[str]] = defaultdict(list)
        for label, iri in names.sort("iri").iter_rows():
            self.iris[label].append(iri)

    def path(self, a: str, b: str) -> tuple[str, ...] | None | Literal[False]:
        """The relations of a shortest path (at most 3 hops) from the entity named ``a`` to the one named ``b``;
        None when none is that short, False when the graph names neither one of them."""
        starts, goals = self.iris.get(a), set(self.iris.get(b, ()))
        if not starts or not goals:
            return False
        frontier: deque[tuple[str, tuple[str, ...]]] = deque((iri, ()) for iri in starts)
        seen = set(starts)
        while frontier:
            node, relations = frontier.popleft()
            if len(relations) == MAX_HOPS:
                continue
            for relation, target in self.next.get(node, ()):
                if target in goals:
                    return (*relations, relation)
                if target not in seen:
                    seen.add(target)
                    frontier.append((target, (*relations, relation)))
        return None


def transition_figures(corpus: Corpus, graph: RelationGraph | None) -> TransitionFigures:
    pairs = Counter((a, b) for d in corpus.dialogues for a, b in zip(topic_sequence(d), topic_sequence(d)[1:]))
    paths: dict[str, Counter] = {str(h): Counter() for h in range(1, MAX_HOPS + 1)}
    by_hops: Counter = Counter()
    for (a, b), n in sorted(pairs.items()):
        found: tuple[str, ...] | None | Literal[False] = graph.path(a, b) if graph is not None else False
        if graph is None:
            by_hops["no_graph"] += n
        elif found is False:
            by_hops["not_in_graph"] += n
        elif found is None:
            by_hops["none"] += n
        else:
            by_hops[str(len(found))] += n
            paths[str(len(found))][" → ".join(found)] += n
    top = {h: sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP] for h, c in paths.items()}
    return TransitionFigures(topics_within_turns(corpus), sum(pairs.values()), len(pairs), top, dict(by_hops))


def plot_transitions(figures: TransitionFigures, folder: Path | OutputDir, name: str) -> list[Path]:
    """``<name>-topics.png`` (Fig. 2, where turns are annotated) and ``<name>-transitions.png`` (Table 4)."""
    folder = output_dir(folder, what="--plot")
    drawn = []
    if figures.topics_within_turns is not None:
        drawn.append(
            plots.curves(
                {f"≥ {k} 个话题 (topics)": v for k, v in figures.topics_within_turns.items()},
                folder.file(f"{name}-topics.png"),
                title=f"{name}: dialogues by topics in the first n turns",
                xlabel="turns (n)",
                ylabel="dialogues",
            )
        )
    bars = {f"{h} 跳 (hops): {path}": n for h, top in figures.top_paths.items() for path, n in top}
    if bars:
        drawn.append(
            plots.relation_histogram(
                bars,
                folder.file(f"{name}-transitions.png"),
                xlabel="transitions",
                title=f"{name}: topic transitions by hops",
            )
        )
    return drawn
