"""`kgforge diff` between two builds of the shared KdConv travel KB lists exactly the facts that changed:
three values edited and one entity removed, nothing else; the RDF Patch it writes turns the older build's
quads into the newer's."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge import Domain
from kgforge.core.errors import KgforgeError
from kgforge.store.diff import _compare, _key, _touched, patch_lines

KB = "kdconv/travel/kb_travel.json"
DIALOGUES = "kdconv/travel/dev.json"
GRAPH = "https://kgforge.org/graph/kdconv/kb_travel"


def store_lines(workdir: Path, build: str) -> set[str]:
    store = ox.Store.read_only(str(workdir / "travel" / "builds" / build / "oxigraph"))
    return {f"{q} ." for q in store}


@pytest.fixture
def two_builds(shared, tmp_path):
    """The travel KB built, then built again with three 门票 values edited and one entity removed."""
    kb = tmp_path / "kb_travel.json"
    data = json.loads(shared(KB).read_text(encoding="utf-8"))
    kb.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    domain = Domain("travel", tmp_path / "kg")
    first = domain.build([f"kdconv:{kb}"], schema_sources=False)
    edited = []
    mentioned = shared(DIALOGUES).read_text(encoding="utf-8")  # entities the dialogues talk about
    for name, triples in data.items():
        ticket = next((t for t in triples if t[1] == "门票"), None)
        if ticket and len(edited) < 3 and name in mentioned:
            edited.append((name, ticket[2], f"{ticket[2]}（已调价）"))
            ticket[2] = edited[-1][2]
    removed = next(name for name in reversed(list(data)) if name not in {e[0] for e in edited} and name in mentioned)
    del data[removed]
    kb.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    second = domain.build([f"kdconv:{kb}"], schema_sources=False)
    return domain, first.build_id, second.build_id, edited, removed


@pytest.mark.slow  # two builds of the real travel KB
def test_diff_lists_exactly_the_three_edited_values_and_the_removed_entity(two_builds, tmp_path):
    domain, first, second, edited, removed = two_builds
    patch = tmp_path / "changes.patch"
    report = domain.diff(out=patch)
    assert (report.from_build, report.to_build) == (first, second)
    [graph] = report.changed_graphs
    assert graph.graph == GRAPH and graph.status == "changed"
    assert graph.changed == 3 and graph.added == 0 and graph.removed > 0

    ops = list(patch_lines(patch))
    gone = [ox.parse(quad, format=ox.RdfFormat.N_QUADS) for op, quad in ops if op == "D"]
    came = [ox.parse(quad, format=ox.RdfFormat.N_QUADS) for op, quad in ops if op == "A"]
    gone, came = [next(q) for q in gone], [next(q) for q in came]
    assert sorted(q.object.value for q in came) == sorted(new for _, _, new in edited)
    # what went: the three old values, and every quad about the removed entity, which is the only other subject
    old_values = {old for _, old, _ in edited}
    about_removed = [q for q in gone if q.object.value not in old_values]
    assert len({q.subject for q in about_removed}) == 1
    assert any(q.object.value == removed for q in about_removed)  # its label
    assert graph.removed == len(about_removed)

    older, newer = store_lines(domain.workdir, first), store_lines(domain.workdir, second)
    applied = (older - {q for op, q in ops if op == "D"}) | {q for op, q in ops if op == "A"}
    assert applied == newer


def test_diff_names_builds_by_id_and_refuses_one_it_does_not_keep(two_builds):
    domain, first, second, _, _ = two_builds
    back = domain.diff(from_build=second, to_build=first)
    assert back.changed_graphs[0].changed == 3 and back.changed_graphs[0].added > 0
    same = domain.diff(from_build=second, to_build=second)
    assert same.changed_graphs == () and all(g.status == "unchanged" for g in same.graphs)
    with pytest.raises(KgforgeError, match=rf"no finished build 'nope' .*{first}, {second}"):
        domain.diff(from_build="nope")
    with pytest.raises(KgforgeError, match="no finished build '../x'"):
        domain.diff(from_build="../x")


@pytest.mark.slow  # two builds of the real travel KB
def test_the_diff_command_prints_counts_per_graph(two_builds, cli):
    domain, first, second, _, _ = two_builds
    out = cli("diff", "travel", "--workdir", str(domain.workdir)).stdout
    assert f"travel: {first} → {second}: 0 added," in out and "3 changed" in out
    assert f"{GRAPH} (changed): 0 added," in out and "graph(s) unchanged" in out
    data = json.loads(cli("diff", "travel", "--json", "--workdir", str(domain.workdir)).stdout)
    assert data["changed"] == 3 and data["added"] == 0


QUAD_LINES = st.builds(
    lambda s, p, o: f'<http://e/{s}> <http://p/{p}> "{o}" <http://g> .\n'.encode(),
    st.integers(0, 5),
    st.integers(0, 2),
    st.text("ab c", max_size=3),
)


@given(st.sets(QUAD_LINES, max_size=30), st.sets(QUAD_LINES, max_size=30))
@settings(max_examples=200, deadline=None)
def test_the_patch_turns_the_older_quads_into_the_newer_and_every_difference_is_counted_once(old, new):
    lines = _compare(old, new)
    assert (old - set(lines.removed)) | set(lines.added) == new
    assert lines.removed == sorted(old - new) and lines.added == sorted(new - old)
    # a changed pair lost and gained values; the other differing quads are added or removed, none counted twice
    assert lines.changed == {_key(x) for x in lines.removed} & {_key(x) for x in lines.added}
    plain_added = len(lines.added) - _touched(lines.added, lines.changed)
    plain_removed = len(lines.removed) - _touched(lines.removed, lines.changed)
    assert plain_added == sum(_key(x) not in lines.changed for x in new - old)
    assert plain_removed == sum(_key(x) not in lines.changed for x in old - new)


def records_by_id(path: Path) -> dict[str, dict]:
    """An export's records by id, without the build id they name (two builds' exports differ in it)."""
    ids = (path.parent / f"{path.name}.ids.txt").read_text(encoding="utf-8").split()
    records = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
    return {record_id: {k: v for k, v in record.items() if k != "build_id"} for record_id, record in zip(ids, records)}


def facts_in(record: Any) -> set[tuple[str, str, str]]:
    """Every (subject, relation, object) label triple a record states, wherever in it (subgraph, path, messages)."""
    if isinstance(record, list):
        return set().union(*map(facts_in, record)) if record else set()
    if not isinstance(record, dict):
        return set()
    own = {(record["s_label"], record["p_label"], record["o_label"])} if "s_label" in record else set()
    return own.union(*map(facts_in, record.values()))


def touching(then: dict[str, dict], now: dict[str, dict], edited: list, removed: str) -> set[str]:
    """The records that state a changed fact: an edited 门票 value (its old value before, its new one now), or
    any fact about the removed entity before."""
    old = {(name, "门票", value) for name, value, _ in edited}
    new = {(name, "门票", value) for name, _, value in edited}
    ids = set(then) | set(now)
    return {
        i
        for i in ids
        if facts_in(now.get(i)) & new
        or facts_in(then.get(i)) & old
        or any(removed in (s, o) for s, _, o in facts_in(then.get(i)))
    }


def original_domain(shared, tmp_path: Path) -> Domain:
    """The first build's KB built on its own, in a workdir of its own (the same file name: the same graph)."""
    original = tmp_path / "original" / "kb_travel.json"
    original.parent.mkdir()
    original.write_bytes(shared(KB).read_bytes())
    then = Domain("travel", tmp_path / "then")
    then.build([f"kdconv:{original}"], schema_sources=False)
    return then


@pytest.mark.slow  # two builds of the real travel KB and two exports
def test_export_changed_since_writes_exactly_the_dialogues_whose_records_changed(two_builds, shared, tmp_path):
    """The first build's KB built on its own and exported in full, beside the full export of the second build:
    the dialogues whose records differ are exactly those `export --changed-since FIRST` writes, and exactly
    those that state one of the changed facts."""
    domain, first, _, edited, removed = two_builds
    options = {"fmt": "jsonl", "dialogues": shared(DIALOGUES), "skip_invalid": True}
    original_domain(shared, tmp_path).export(None, tmp_path / "then.jsonl", **options)
    domain.export(None, tmp_path / "now.jsonl", **options)
    report = domain.export(None, tmp_path / "changed.jsonl", changed_since=first, **options)

    then, now = records_by_id(tmp_path / "then.jsonl"), records_by_id(tmp_path / "now.jsonl")
    expected = {record_id for record_id, record in now.items() if then.get(record_id) != record}
    written = records_by_id(tmp_path / "changed.jsonl")
    assert 0 < len(expected) < len(now)
    assert set(written) == expected and all(written[i] == now[i] for i in expected)
    assert set(written) == touching(then, now, edited, removed)
    assert report.details["changed_since"] == {
        "build": first,
        "records_changed": len(expected),
        "records_unchanged": len(now) - len(expected),
    }
    with pytest.raises(KgforgeError, match=rf"no dialogue's subgraph changed since build {report.build_id}"):
        domain.export(None, tmp_path / "none.jsonl", changed_since=report.build_id, **options)


@pytest.mark.slow  # two builds of the real travel KB and two exports
def test_export_changed_since_writes_exactly_the_goals_whose_subgraphs_changed(two_builds, shared, tmp_path, cli):
    """New goals made on the second build, exported on both: `export --goals --changed-since FIRST` writes the
    goals whose records differ, and exactly those whose subgraph states a changed fact."""
    domain, first, _, edited, removed = two_builds
    goals = domain.goals(600, tmp_path / "goals.jsonl", seed=0, one_step_ratio=1).out
    options = {"fmt": "jsonl", "skip_invalid": True}
    original_domain(shared, tmp_path).export(goals, tmp_path / "then.jsonl", **options)
    domain.export(goals, tmp_path / "now.jsonl", **options)
    report = domain.export(goals, tmp_path / "changed.jsonl", changed_since=first, **options)

    then, now = records_by_id(tmp_path / "then.jsonl"), records_by_id(tmp_path / "now.jsonl")
    written = records_by_id(tmp_path / "changed.jsonl")
    expected = {record_id for record_id, record in now.items() if then.get(record_id) != record}
    assert 0 < len(expected) < len(now)
    assert set(written) == expected and all(written[i] == now[i] for i in expected)
    assert set(written) == touching(then, now, edited, removed) & set(now)
    assert report.details["changed_since"] == {
        "build": first,
        "records_changed": len(expected),
        "records_unchanged": len(now) - len(expected),
    }
    out = cli(
        "export",
        "travel",
        "--format",
        "jsonl",
        "--goals",
        str(goals),
        "--out",
        str(tmp_path / "cli.jsonl"),
        "--changed-since",
        first,
        "--workdir",
        str(domain.workdir),
    ).stdout
    assert f"changed since build {first}: {len(expected):,} records written" in out
    with pytest.raises(KgforgeError, match=rf"no goal's subgraph changed since build {report.build_id}"):
        domain.export(goals, tmp_path / "none.jsonl", changed_since=report.build_id, **options)
