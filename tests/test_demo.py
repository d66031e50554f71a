"""The README's first command: `kgforge demo` runs every stage offline, end to end."""

from __future__ import annotations

import json

import pytest

from kgforge.store.layout import domain_paths
from kgforge.store.tables import read_tables_from_store, tables_from_quads


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from tests.conftest import run_cli

    workdir = tmp_path_factory.mktemp("demo") / "kg"
    result = run_cli("demo", "--workdir", str(workdir))
    return workdir, result.stdout


def test_demo_runs_every_stage(demo):
    _, stdout = demo
    for stage in ("build", "stats", "query", "crawl", "wikidata", "derive", "goals", "embed", "export"):
        assert f" {stage} " in stdout, stage
    assert "导演: 陈凯歌" in stdout  # the sample query over the bundled KB
    related_line = next(line for line in stdout.splitlines() if line.startswith("related 霸王别姬: "))
    assert "霸王别姬" not in related_line.removeprefix("related 霸王别姬: ")


def test_demo_exports_new_goals_as_duconv_test_samples_with_typed_topics(demo):
    workdir, _ = demo
    lines = (workdir / "demo" / "exports" / "test.duconv.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == 20
    for line in lines:
        record = json.loads(line)
        assert list(record) == ["goal", "knowledge", "history", "response"] and record["history"] == []
        assert record["goal"][0][0] == "START"
        for topic in record["goal"][0][1:]:
            assert any(t[0] == topic and t[1] == "领域" for t in record["knowledge"])
        for triple in record["goal"][1:]:
            assert triple in record["knowledge"] and triple != record["knowledge"][0]
    manifest = json.loads((workdir / "demo" / "exports" / "test.duconv.jsonl.manifest.json").read_text("utf-8"))
    assert manifest["options"]["add_related"] == "default" and manifest["layout_kind"] == "duconv-sample"


def test_demo_store_reads_the_same_from_quads_files_and_from_the_store(demo):
    """The fast reader and the store walk agree on a store holding every kind of graph."""
    workdir, _ = demo
    paths = domain_paths("demo", workdir)
    manifest = json.loads(paths.manifest.read_text(encoding="utf-8"))
    kinds = {entry["kind"] for entry in manifest["graphs"].values()}
    assert {"kdconv", "wikidata", "links", "derived-associated", "schema"} <= kinds
    for include_derived in (False, True):
        slow, fast = read_tables_from_store(paths, include_derived), tables_from_quads(paths, include_derived)
        for name in ("facts", "labels", "types", "relations"):
            a, b = getattr(slow, name), getattr(fast, name)
            assert a.sort(a.columns, nulls_last=True).equals(b.sort(a.columns, nulls_last=True)), name
