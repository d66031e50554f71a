"""A rebuild imports only the sources that changed: the graphs of the others come over from the published
store (a checkpoint, no reload), and the refreshed store holds exactly the quads a full build of the same
sources holds, whatever was added, removed or changed. Real stores on disk, real KdConv-shaped KBs."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge import Domain
from kgforge.core.errors import InputError
from kgforge.derive import ASSOCIATED_GRAPH
from kgforge.publish import transaction
from kgforge.publish.transaction import check_store
from kgforge.store.snapshot import Snapshot
from tests.test_fault_kills import write_kb


def sorted_quads(workdir: Path, domain: str = "travel") -> list[str]:
    """The published store's quads as sorted N-Quads lines: what two stores are compared by."""
    store = ox.Store.read_only(str(workdir / domain / "store" / "oxigraph"))
    return sorted(f"{q} ." for q in store)


def graph_checksums(workdir: Path, domain: str = "travel") -> dict[str, str]:
    manifest = json.loads((workdir / domain / "manifest.json").read_text(encoding="utf-8"))
    return {graph: entry["sha256"] for graph, entry in manifest["graphs"].items()}


def specs(*kbs: Path) -> list[str]:
    return [f"kdconv:{kb}" for kb in kbs]


def actions(report) -> dict[str, str]:
    return {Path(d.source.split(":", 1)[1]).stem: d.action for d in report.decisions}


@pytest.fixture
def kbs(tmp_path) -> dict[str, Path]:
    return {
        name: write_kb(tmp_path / f"{name}.json", n, ticket)
        for name, n, ticket in (("a", 300, "门票"), ("b", 250, "B"), ("c", 200, "C"))
    }


@pytest.mark.slow  # a refresh and a full build, compared quad by quad
def test_a_refresh_with_an_added_a_removed_and_a_changed_source_equals_a_full_build(kbs, tmp_path):
    domain = Domain("travel", tmp_path / "kg")
    domain.build(specs(kbs["a"], kbs["b"], kbs["c"]), schema_sources=False)
    kept_inode = (tmp_path / "kg/travel/quads/kdconv__a.nq").stat().st_ino
    write_kb(kbs["b"], 250, "B2")  # every 门票 value of b changes
    added = write_kb(tmp_path / "d.json", 120, "D")
    report = domain.build(specs(kbs["a"], kbs["b"], added), schema_sources=False)

    assert report.published and actions(report) == {"a": "kept", "b": "imported", "d": "imported"}
    reasons = {Path(d.source).stem: d.reason for d in report.decisions}
    assert reasons["a"].startswith("unchanged since build ") and reasons["b"].startswith("input changed (size ")
    assert reasons["d"] == "new source (not in the published build)"
    assert [(d.graph.rsplit("/", 1)[-1], d.source) for d in report.dropped] == [("c", True)]
    # the kept graph's quads were carried over (hard link), not written again
    assert (tmp_path / "kg/travel/quads/kdconv__a.nq").stat().st_ino == kept_inode

    full = Domain("travel", tmp_path / "full")
    full.build(specs(kbs["a"], kbs["b"], added), schema_sources=False)
    assert sorted_quads(tmp_path / "kg") == sorted_quads(tmp_path / "full")
    assert graph_checksums(tmp_path / "kg") == graph_checksums(tmp_path / "full")
    assert check_store(Snapshot.open("travel", tmp_path / "kg")).ok
    assert not check_store(Snapshot.open("travel", tmp_path / "kg")).leftovers


def test_nothing_changed_publishes_nothing_and_full_builds_again(kbs, tmp_path):
    domain = Domain("travel", tmp_path / "kg")
    first = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    os.utime(kbs["a"], ns=(1, 1))  # touched, same bytes
    again = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert not again.published and again.build_id == first.build_id and again.dropped == ()
    assert actions(again) == {"a": "kept", "b": "kept"}
    assert again.decisions[0].reason.endswith("(modified time differs, content does not)")
    assert again.total_quads == first.total_quads
    assert [b.name for b in (tmp_path / "kg/travel/builds").iterdir()] == [first.build_id]  # no staging left

    before = graph_checksums(tmp_path / "kg"), sorted_quads(tmp_path / "kg")
    full = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False, full=True)
    assert full.published and full.build_id != first.build_id
    assert {d.reason for d in full.decisions} == {"--full imports every source"}
    assert (graph_checksums(tmp_path / "kg"), sorted_quads(tmp_path / "kg")) == before
    assert check_store(Snapshot.open("travel", tmp_path / "kg")).ok


@pytest.mark.slow  # builds, derives and rebuilds
def test_a_derived_graph_stays_while_its_sources_do_and_goes_with_a_message_when_one_changes(kbs, tmp_path):
    domain = Domain("travel", tmp_path / "kg")
    domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    derived = domain.derive()
    unchanged = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert not unchanged.published and ASSOCIATED_GRAPH in graph_checksums(tmp_path / "kg")

    write_kb(kbs["b"], 250, "B3")
    changed = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert [d.message for d in changed.dropped] == [
        f"dropped derived graph associated ({derived.quads:,} quads); run `kgforge derive travel` to restore"
    ]
    manifest = json.loads((tmp_path / "kg/travel/manifest.json").read_text(encoding="utf-8"))
    assert ASSOCIATED_GRAPH not in manifest["graphs"] and "derive" not in manifest["stages"]
    assert check_store(Snapshot.open("travel", tmp_path / "kg")).ok
    domain.derive()  # the command it names brings the graph back, made from the new build
    assert ASSOCIATED_GRAPH in graph_checksums(tmp_path / "kg")


def test_a_new_schema_or_a_build_without_records_imports_every_source(kbs, tmp_path):
    domain = Domain("travel", tmp_path / "kg")
    domain.build(specs(kbs["a"]), schema_sources=False)
    manifest_path = tmp_path / "kg/travel/manifest.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    for entry in manifest["graphs"].values():
        entry.pop("refresh", None)  # as an earlier version wrote it
    manifest_path.resolve().write_text(json.dumps(manifest), encoding="utf-8")
    report = domain.build(specs(kbs["a"]), schema_sources=False)
    assert [d.reason for d in report.decisions] == [
        "the published build does not record what this graph was made from (made by an earlier version)"
    ]

    schema = tmp_path / "schema.toml"
    shutil.copyfile(Path(json.loads(manifest_path.read_text(encoding="utf-8"))["schema"]["path"]), schema)
    schema.write_text(schema.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    report = domain.build(specs(kbs["a"]), schema=str(schema), schema_sources=False)
    assert [d.reason for d in report.decisions] == ["the schema changed since the published build"]


@pytest.mark.slow  # several builds of the real travel KB
def test_the_command_says_what_it_kept_and_what_it_imported(kbs, tmp_path, cli):
    args = [
        "build",
        "travel",
        "--no-schema-sources",
        "--source",
        f"kdconv:{kbs['a']}",
        "--source",
        f"kdconv:{kbs['b']}",
        "--workdir",
        str(tmp_path / "kg"),
    ]
    cli(*args)
    same = cli(*args, env={"COLUMNS": "300"}).stdout
    assert f"kept kdconv:{kbs['a']}" in same and "nothing changed: build " in same and "stays published" in same
    write_kb(kbs["a"], 300, "changed")
    changed = cli(*args, env={"COLUMNS": "300"}).stdout
    assert f"imported kdconv:{kbs['a']}" in changed and f"kept kdconv:{kbs['b']}" in changed
    assert "input changed" in changed and "built travel" in changed
    data = json.loads(cli(*args, "--full", "--json").stdout)
    assert data["published"] and [r["action"] for r in data["refresh"]] == ["imported", "imported"]


def test_a_source_that_changes_while_it_is_imported_fails_the_build_and_leaves_the_published_one(
    kbs, tmp_path, monkeypatch
):
    """The manifest records the input the import read: a source rewritten during its import (a sync, an editor)
    would otherwise be recorded with bytes the import never saw, and the next rebuild would keep a stale graph."""
    domain = Domain("travel", tmp_path / "kg")
    first = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    quads = sorted_quads(tmp_path / "kg")
    real = transaction.importer_for

    def rewritten_meanwhile(kind):
        def run(ctx):
            real(kind)(ctx)
            if ctx.path == kbs["b"]:
                write_kb(kbs["b"], 250, "rewritten during the import")

        return run

    write_kb(kbs["b"], 250, "B4")
    monkeypatch.setattr(transaction, "importer_for", rewritten_meanwhile)
    with pytest.raises(
        InputError,
        match=rf"{kbs['b'].name}: changed while it was being imported .* run the build "
        "again",
    ):
        domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert json.loads((tmp_path / "kg/travel/manifest.json").read_text(encoding="utf-8"))["build_id"] == first.build_id
    assert sorted_quads(tmp_path / "kg") == quads
    assert (
        check_store(Snapshot.open("travel", tmp_path / "kg")).ok
        and not check_store(Snapshot.open("travel", tmp_path / "kg")).leftovers
    )

    monkeypatch.undo()  # the run again imports what the file now holds, and records that
    again = domain.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert actions(again) == {"a": "kept", "b": "imported"}
    full = Domain("travel", tmp_path / "full")
    full.build(specs(kbs["a"], kbs["b"]), schema_sources=False)
    assert sorted_quads(tmp_path / "kg") == sorted_quads(tmp_path / "full")
