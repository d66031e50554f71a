"""Real goals (DuConv sessions) checked against a built domain: names resolved to IRIs, each goal
triple found or reported."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pyoxigraph as ox

from kgforge.core.jsonio import iter_json_lines
from kgforge.core.records import Record, omitted_when_none
from kgforge.core.resources import query_text
from kgforge.core.text import normalise_label
from kgforge.derive import read_pairs
from kgforge.goals.graph import EntityIndex, GoalGraph
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot

# ---------------------------------------------------------------- validating real goals


@dataclass
class ParsedGoal:
    line: int
    kind: str
    topics: tuple[str, str]
    triples: list[list[str]]


def parse_duconv_goal(goal: Any, line: int) -> ParsedGoal | str:
    """A DuConv ``goal`` list, or why it is not one."""
    if not isinstance(goal, list) or len(goal) < 2 or not all(isinstance(t, list) and len(t) == 3 for t in goal):
        return "goal must be a list of 3-item lists"
    if not all(isinstance(x, str) for t in goal for x in t):
        return "goal items must be strings"
    start, *path = goal
    if start[0] != "START":
        return 'goal must begin with ["START", A, B]'
    if len(path) == 1:
        kind = "one_step"
    elif len(path) == 2 and path[0][1:] == path[1][1:]:
        kind = "two_step"
    else:
        kind = f"other ({len(path)} triples)"
    return ParsedGoal(line, kind, (start[1], start[2]), path)


class GoalChecker:
    """Checks DuConv goals against a store: are their triples in it, and do the goal queries find them."""

    def __init__(self, graph: GoalGraph, runner: QueryRunner, timeout: float = 30.0) -> None:
        self.graph = graph
        self.runner = runner
        self.timeout = timeout
        self.index = EntityIndex.from_tables(graph.tables, segmented=True)
        facts = graph.base_facts
        self.facts = set(zip(facts["s"].to_list(), facts["p"].to_list(), facts["o"].to_list()))
        pairs = read_pairs(graph.tables)
        self.materialised = set(
            zip(pairs["a"].to_list(), pairs["b"].to_list(), pairs["p"].to_list(), pairs["o"].to_list())
        )

    def resolve(self, triple: list[str]) -> tuple[str, str, str, bool] | None:
        """The stored fact a goal triple names, as (s, p, o, o_is_entity), or None."""
        head, relation, tail = triple
        p = self.graph.schema.relation_for(relation).iri
        for s in self.index.lookup(head):
            for o in self.index.lookup(tail):
                if (s, p, o) in self.facts:
                    return s, p, o, True
            value = normalise_label(tail)
            if (s, p, value) in self.facts:
                return s, p, value, False
            if (s, p, tail) in self.facts:
                return s, p, tail, False
        return None

    def check(self, parsed: ParsedGoal) -> GoalCheck:
        resolved = [self.resolve(t) for t in parsed.triples]
        if not all(resolved):
            absent = "; ".join(" ".join(t) for t, r in zip(parsed.triples, resolved) if r is None)
            return GoalCheck(parsed.line, parsed.kind, False, reason="goal triple(s) absent from the graph: " + absent)
        triples = [r for r in resolved if r is not None]  # every one of them: the goal is in the graph
        topics = [r[0] for r in triples] if parsed.kind == "two_step" else None
        found = materialised = False
        if parsed.kind == "one_step":
            found = self._one_step(triples[0])
        elif parsed.kind == "two_step" and topics:
            found, materialised = self._two_step(topics[0], topics[1], triples[0])
        reason = None if found else "no goal query produces this goal"
        return GoalCheck(parsed.line, parsed.kind, True, found, materialised, reason)

    def _one_step(self, fact: tuple[str, str, str, bool]) -> bool:
        s, p, o, _ = fact
        rows = self.runner.query(
            query_text("goal_one_step"), {"a": ox.NamedNode(s), "b": ox.NamedNode(o)}, timeout=self.timeout
        ).rows
        return any(r["head"].value == s and r["r"].value == p and r["tail"].value == o for r in rows)

    def _two_step(self, a: str, b: str, fact: tuple[str, str, str, bool]) -> tuple[bool, bool]:
        _, p, x, _ = fact
        if p in self.graph.stop_iris:
            return False, False
        rows = self.runner.query(
            query_text("goal_two_step"), {"a": ox.NamedNode(a), "b": ox.NamedNode(b)}, timeout=self.timeout
        ).rows
        found = any(r["r"].value == p and r["x"].value == x for r in rows)
        left, right = sorted((a, b))
        return found, (left, right, p, x) in self.materialised


@dataclass(frozen=True)
class GoalProblem:
    """One goal of a checked file that the graph does not give: its line and what is wrong."""

    line: int
    kind: str  # one_step, two_step, other (…), or unreadable
    reason: str


@dataclass(frozen=True)
class GoalCheck(Record):
    """One goal checked against the graph: whether its triples are in it, and whether the goal queries find it."""

    line: int
    kind: str  # one_step, two_step, other (…)
    in_graph: bool  # every triple of the goal is in the graph
    found: bool = False  # a goal query produces it
    materialised: bool = False  # a two-step goal whose pair `kgforge derive` added
    reason: str | None = omitted_when_none()  # why it was not found


@dataclass(frozen=True)
class GoalCheckReport(Record):
    """Real DuConv goals checked against one build: in its graph, and found by the goal queries."""

    domain: str
    file: Path
    goals: int
    goals_in_graph: int  # every triple of the goal is in the graph
    goals_not_in_graph: int
    found: int  # of those in the graph, found by the goal queries
    recall: float | None  # found / goals_in_graph (None: no goal is in the graph)
    two_step_materialised: int  # two-step goals whose pair `kgforge derive` added
    by_kind: dict[str, dict[str, int]]  # kind -> goals, goals_in_graph, found, materialised
    unreadable: tuple[dict[str, Any], ...]  # {"line", "reason"} of lines without a usable goal
    misses: tuple[GoalCheck, ...]  # the first 50 goals in the graph that the queries did not find
    not_in_graph_examples: tuple[GoalCheck, ...]  # the first 10 goals not in the graph

    @property
    def problems(self) -> tuple[GoalProblem, ...]:
        """Unreadable lines, then goals not in the graph, then misses (capped as above)."""
        return tuple(GoalProblem(b["line"], "unreadable", b["reason"]) for b in self.unreadable) + tuple(
            GoalProblem(r.line, r.kind, r.reason or "") for r in self.not_in_graph_examples + self.misses
        )


def validate(snapshot: Snapshot, sessions: Path) -> GoalCheckReport:
    """Check each DuConv session's goal against the snapshot's graph (see ``GoalChecker``): the tables and
    the goal queries read the same build."""
    graph = GoalGraph.load(snapshot)
    goals, bad = read_session_goals(sessions)
    with QueryRunner(snapshot) as runner:
        checker = GoalChecker(graph, runner)
        results = [checker.check(goal) for goal in goals]
    return _validation_report(snapshot.domain, sessions, results, bad)


def read_session_goals(sessions: Path) -> tuple[list[ParsedGoal], list[dict[str, Any]]]:
    """The goal of each DuConv session in ``sessions`` (JSON lines), and the lines without a usable one
    (``{"line", "reason"}``): a damaged line costs only itself."""
    goals, bad = [], []
    for record in iter_json_lines(sessions):
        goal = record.value.get("goal") if isinstance(record.value, dict) else None
        parsed = record.error or parse_duconv_goal(goal, record.line)
        if isinstance(parsed, str):
            bad.append({"line": record.line, "reason": parsed})
        else:
            goals.append(parsed)
    return goals, bad


def _validation_report(
    domain: str, sessions: Path, results: list[GoalCheck], bad: list[dict[str, Any]]
) -> GoalCheckReport:
    in_graph = [r for r in results if r.in_graph]
    found = [r for r in in_graph if r.found]
    by_kind: dict[str, dict[str, int]] = {}
    for r in results:
        counts = by_kind.setdefault(r.kind, {"goals": 0, "goals_in_graph": 0, "found": 0, "materialised": 0})
        counts["goals"] += 1
        counts["goals_in_graph"] += r.in_graph
        counts["found"] += r.found
        counts["materialised"] += r.materialised
    return GoalCheckReport(
        domain,
        sessions,
        len(results),
        len(in_graph),
        len(results) - len(in_graph),
        len(found),
        round(len(found) / len(in_graph), 4) if in_graph else None,
        by_kind.get("two_step", {}).get("materialised", 0),
        by_kind,
        tuple(bad),
        tuple(r for r in in_graph if not r.found)[:50],
        tuple(r for r in results if not r.in_graph)[:10],
    )
