"""Choosing the domain subgraph from the index pass: seeds, the P279* closure, N-hop expansion.

Everything here streams the index journal (one small record per entity) instead of the dump,
and keeps in memory only the sets being built: the wanted ids, the current frontier, and the
subclass edges when a class closure is asked for.
"""

from __future__ import annotations

from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from kgforge.core import checks
from kgforge.sources.wikidata.entity import IndexRecord

Records = Callable[[], Iterator[IndexRecord]]  # a fresh scan of the index each call
DEFAULT_HOPS = 3
DEFAULT_FANOUT_CAP = 200


@dataclass(frozen=True)
class SeedSelection:
    """The options that pick a dump's subgraph (Wikidata and XLORE alike): seeds, then ``hops`` steps."""

    seeds: tuple[str, ...] = ()
    """Seed entities: QIDs (Wikidata) or instance ids or IRIs (XLORE)."""
    seed_names: tuple[str, ...] | dict[str, str | None] = ()
    """Seeds by exact label or alias: a list of names, or a table of name → the schema type it must be."""
    hops: int = DEFAULT_HOPS
    """How many steps to expand from the seeds."""
    fanout_cap: int = DEFAULT_FANOUT_CAP
    """Follow at most this many neighbours of one node (0: no cap)."""

    def __post_init__(self) -> None:
        checks.whole(self.hops, "hops", 0)
        checks.whole(self.fanout_cap, "fanout_cap", 0)

    @property
    def seeded(self) -> bool:
        return bool(self.seeds or self.seed_names)

    def named(self) -> dict[str, str | None]:
        """``seed_names`` as a table of name → type id (None: any type)."""
        names = self.seed_names
        return dict(names) if isinstance(names, dict) else {name: None for name in names}


def subclass_closure(records: Records, roots: Iterable[str]) -> set[str]:
    """``roots`` and every class below them along P279 (subclass of), from the dump's own edges."""
    children: dict[str, list[str]] = defaultdict(list)
    for record in records():
        for parent in record.subclass_of:
            children[parent].append(record.id)
    closure = set(roots)
    queue = deque(closure)
    while queue:
        for child in children.get(queue.popleft(), ()):
            if child not in closure:
                closure.add(child)
                queue.append(child)
    return closure


def instances_of(records: Records, classes: set[str]) -> set[str]:
    """Entities with a best-rank P31 (instance of) in ``classes``."""
    return {r.id for r in records() if classes.intersection(r.instance_of)}


@dataclass
class Expansion:
    """Entities reached at each hop; ``levels[0]`` are the seeds."""

    levels: list[set[str]] = field(default_factory=list)
    capped: dict[str, int] = field(default_factory=dict)  # node → neighbours it had (more than the cap)

    @property
    def entities(self) -> set[str]:
        return set().union(*self.levels) if self.levels else set()

    def summary(self) -> dict[str, object]:
        return {
            "per_hop": [len(level) for level in self.levels],
            "entities": len(self.entities),
            "capped_nodes": len(self.capped),
            "capped_examples": dict(sorted(self.capped.items(), key=lambda kv: -kv[1])[:10]),
        }


def expand(records: Records, seeds: Iterable[str], hops: int, fanout_cap: int | None = None) -> Expansion:
    """Entities within ``hops`` steps of ``seeds`` along entity-valued best-rank statements.

    One scan of the index per hop. A node follows at most ``fanout_cap`` of its neighbours —
    the first ones in index order, which puts the schema's mapped properties first — so hubs
    cannot pull in the world; capped nodes are reported. A node's edges may be spread over
    several records (XLORE edge lists); the cap counts them together.
    """
    seen = set(seeds)
    result = Expansion(levels=[set(seen)])
    frontier = set(seen)
    for _ in range(hops):
        if not frontier:
            break
        found: set[str] = set()
        followed: dict[str, set[str]] = defaultdict(set)
        degree: dict[str, set[str]] = defaultdict(set)
        for record in records():
            if record.id not in frontier:
                continue
            taken = followed[record.id]
            for neighbour in record.neighbours:
                if fanout_cap is not None:
                    degree[record.id].add(neighbour)
                    if len(taken) >= fanout_cap and neighbour not in taken:
                        continue
                taken.add(neighbour)
                if neighbour not in seen:
                    found.add(neighbour)
        for node, neighbours in degree.items():
            if len(neighbours) > (fanout_cap or 0):
                result.capped[node] = len(neighbours)
        seen |= found
        result.levels.append(found)
        frontier = found
    return result
