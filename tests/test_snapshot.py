"""One snapshot: every reader opens the published build through ``kgforge.store.snapshot.Snapshot``, which
resolves it once, so a build published meanwhile never pairs one build's manifest with another's tables."""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

import pytest

import kgforge.store.snapshot as snapshot_module
from kgforge import Domain
from kgforge.core.errors import KgforgeError, StoreMissingError
from kgforge.core.schema import SourceSpec
from kgforge.goals.generate import generate
from kgforge.goals.graph import GoalOptions
from kgforge.publish.transaction import build
from kgforge.stats import domain_stats
from kgforge.store.snapshot import Snapshot

PACKAGE = Path(__file__).resolve().parent.parent / "kgforge"
RESOLVERS = {"read_manifest", "published_build"}  # resolve the ``store`` link / read the manifest it leads to
# where they are defined (layout) and the one module that calls them (snapshot)
OWNERS = {Path("store/layout.py"), Path("store/snapshot.py")}
# the tables of a build are read for a reader only through its snapshot
TABLE_READERS = {"read_tables"}
TABLE_OWNERS = {Path("store/tables.py"), Path("store/snapshot.py")}


@functools.cache
def nodes(source: str) -> list[ast.AST]:
    return list(ast.walk(ast.parse(source)))


def names_used(source: str, names: set[str]) -> list[tuple[int, str]]:
    """``(line, name)`` of each import, call or reference of one of ``names`` in ``source``."""
    found = []
    for node in nodes(source):
        if isinstance(node, ast.ImportFrom):
            found += [(node.lineno, a.name) for a in node.names if a.name in names]
        elif isinstance(node, ast.Name) and node.id in names:
            found.append((node.lineno, node.id))
        elif isinstance(node, ast.Attribute) and node.attr in names:
            found.append((node.lineno, node.attr))
    return sorted(found)


def offenders(names: set[str], owners: set[Path]) -> list[str]:
    return [
        f"kgforge/{path.relative_to(PACKAGE)}:{line}: {name}"
        for path in sorted(PACKAGE.rglob("*.py"))
        if path.relative_to(PACKAGE) not in owners
        for line, name in names_used(path.read_text(encoding="utf-8"), names)
    ]


def test_only_the_snapshot_resolves_the_published_build_or_reads_its_manifest():
    found = offenders(RESOLVERS, OWNERS)
    assert not found, (
        "these modules resolve the published build or read its manifest themselves; open a "
        "kgforge.store.snapshot.Snapshot once and read its .build and .manifest:\n" + "\n".join(found)
    )


def test_only_the_snapshot_reads_a_builds_tables():
    found = offenders(TABLE_READERS, TABLE_OWNERS)
    assert not found, "read the tables through Snapshot.tables():\n" + "\n".join(found)


def test_the_walk_finds_imports_calls_and_attributes():
    source = (
        "from kgforge.store.layout import read_manifest\n"
        "import kgforge.store.layout as layout\n"
        "def f(paths):\n    return layout.published_build(paths)\n"
        "g = read_manifest\n"
    )
    assert names_used(source, RESOLVERS) == [(1, "read_manifest"), (4, "published_build"), (5, "read_manifest")]


# ---------------------------------------------------------------- a build swapped under a reader


def write_kb(path: Path, n: int) -> Path:
    """A KdConv-shaped travel KB of ``n`` sights, each with four facts (so two sizes differ in every count)."""
    kb = {
        f"景点{i}": [
            [f"景点{i}", "门票", f"{i % 7}元"],
            [f"景点{i}", "周边景点", f"景点{(i * 7 + 1) % n}"],
            [f"景点{i}", "地址", f"北京市第{i}号"],
            [f"景点{i}", "Information", f"景点{i}的介绍。"],
        ]
        for i in range(n)
    }
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def publish(kb: Path, workdir: Path) -> str:
    """Build ``kb`` in full into domain travel of ``workdir`` and publish it; its build id."""
    return build(
        "travel", [SourceSpec("kdconv", str(kb))], workdir, show_progress=False, use_schema_sources=False, full=True
    ).build_id


@pytest.fixture(scope="module")
def kbs(tmp_path_factory) -> dict[str, dict]:
    """Two KBs of different sizes, and each one's stats in a workdir of its own (the reference)."""
    folder = tmp_path_factory.mktemp("snapshot-kbs")
    found = {}
    for name, n in (("small", 12), ("large", 20)):
        kb = write_kb(folder / f"{name}.json", n)
        publish(kb, folder / name)
        stats = domain_stats(Snapshot.open("travel", folder / name))
        found[name] = {"kb": kb, "triples": stats.triples, "entities": stats.entities}
    assert found["small"]["triples"] != found["large"]["triples"]
    return found


def test_a_build_published_between_the_manifest_and_the_tables_is_not_read(kbs, workdir, monkeypatch):
    """The swap lands inside a stage, after its snapshot read the manifest and before it reads the tables:
    the stage's report names the build it started on, and its counts are that build's."""
    small = publish(kbs["small"]["kb"], workdir)
    real_read_tables = snapshot_module.read_tables
    swapped: list[str] = []

    def swap_then_read(paths, manifest, build, include_derived=False):
        if not swapped:
            swapped.append(publish(kbs["large"]["kb"], workdir))
        return real_read_tables(paths, manifest, build, include_derived)

    monkeypatch.setattr(snapshot_module, "read_tables", swap_then_read)
    stats = Domain("travel", workdir).stats()
    assert swapped and Snapshot.open("travel", workdir).build_id == swapped[0] != small  # the swap happened
    assert stats.as_dict()["build_id"] == small
    assert (stats.triples, stats.entities) == (kbs["small"]["triples"], kbs["small"]["entities"])


def test_each_stage_between_two_swaps_sees_one_build(kbs, workdir, tmp_path):
    """stats, then a swap, then goals and stats again: each stage's manifest (build id) and tables (counts,
    topics) are of one build; a snapshot held across the swap still reads the build it resolved, whole."""
    small = publish(kbs["small"]["kb"], workdir)
    kg = Domain("travel", workdir)
    held = kg.snapshot()
    before = kg.stats()
    large = publish(kbs["large"]["kb"], workdir)
    after = kg.stats()
    assert (before.as_dict()["build_id"], before.triples) == (small, kbs["small"]["triples"])
    assert (after.as_dict()["build_id"], after.triples) == (large, kbs["large"]["triples"])
    options = GoalOptions(n=30, seed=0, one_step_ratio=1.0)
    old_goals = generate(held, options, tmp_path / "old.jsonl")
    new_goals = generate(kg.snapshot(), options, tmp_path / "new.jsonl")
    assert (old_goals.build_id, new_goals.build_id) == (small, large)
    assert topic_labels(tmp_path / "old.jsonl") <= {f"景点{i}" for i in range(12)}  # the small build's sights only
    assert topic_labels(tmp_path / "new.jsonl") - {f"景点{i}" for i in range(12)}  # the large build has more
    old = domain_stats(held)  # the previous build is kept, so the held snapshot still reads it
    assert (old.build_id, old.triples) == (small, kbs["small"]["triples"])


def topic_labels(goals: Path) -> set[str]:
    return {
        label for line in goals.read_text(encoding="utf-8").splitlines() for label in json.loads(line)["topic_labels"]
    }


def test_a_snapshot_reads_its_tables_once_and_hands_them_out_again(kbs, workdir):
    publish(kbs["small"]["kb"], workdir)
    snap = Snapshot.open("travel", workdir)
    assert snap.tables() is snap.tables()
    assert snap.tables(include_derived=True) is not snap.tables()
    assert snap.language == snap.schema.language == "zh"
    assert snap.manifest.build_id == snap.build_id == snap.build.name
    assert not snap.labels.is_empty()


def test_no_published_build_is_one_error_naming_the_workdir(workdir):
    with pytest.raises(StoreMissingError, match="kgforge build travel"):
        Snapshot.open("travel", workdir)
    assert Snapshot.published(Domain("travel", workdir).paths) is None


def test_a_model_is_joined_by_the_links_of_the_build_it_was_trained_on(kbs, workdir):
    """``kgforge related`` reads the build a bundle records (source.json's build_id): the published one, else
    the one the domain keeps before it; where that is gone too, the published one, with a warning saying so."""
    from types import SimpleNamespace

    from kgforge.embed.related import trained_build

    trained = publish(kbs["small"]["kb"], workdir)
    bundle = SimpleNamespace(source={"build_id": trained})
    assert trained_build(Snapshot.open("travel", workdir), bundle, "default").build_id == trained
    publish(kbs["large"]["kb"], workdir)
    kept = trained_build(Snapshot.open("travel", workdir), bundle, "default")  # the build before the published one
    assert kept.build_id == trained and kept.manifest.build_id == trained
    latest = publish(kbs["small"]["kb"], workdir)  # the trained build is pruned now
    with pytest.warns(
        RuntimeWarning, match=f"trained on build {trained} of 'travel', which the domain no longer keeps"
    ):
        fallen_back = trained_build(Snapshot.open("travel", workdir), bundle, "default")
    assert fallen_back.build_id == latest


def test_a_snapshot_hands_out_an_earlier_build_it_keeps_and_names_the_kept_ones_otherwise(kbs, workdir):
    first = publish(kbs["small"]["kb"], workdir)
    second = publish(kbs["large"]["kb"], workdir)
    snap = Snapshot.open("travel", workdir)
    assert snap.kept(second) is snap and snap.kept(first).build_id == first
    assert snap.kept(first).tables().facts.height < snap.tables().facts.height
    with pytest.raises(KgforgeError, match=f"keeps the published build and the one before it: {first}, {second}"):
        snap.kept("20000101T000000-1-000000")
