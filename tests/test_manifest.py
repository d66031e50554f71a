"""The build manifest as typed records: one reader, one writer, the same bytes as before, old manifests load."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgforge.publish.transaction import build, check_store, parse_source
from kgforge.store.layout import domain_paths, read_manifest
from kgforge.store.manifest import GraphEntry, Manifest, ManifestError
from kgforge.store.snapshot import Snapshot

# a manifest as kgforge wrote it before schema-less builds and per-stage records: no "stages", no schema
# "inferred", a graph with neither kind nor sha256
OLD_MANIFEST = {
    "domain": "travel",
    "build_id": "20240101T000000-1-abcdef",
    "created": "2024-01-01T00:00:00+0000",
    "schema": {"name": "travel", "version": "1", "path": "schemas/travel.toml", "sha256": "0" * 64},
    "graphs": {
        "https://kgforge.org/graph/kdconv/kb": {
            "kind": "kdconv",
            "path": "kb.json",
            "quads_file": "quads/kdconv__kb.nq",
            "quads": 3,
            "sha256": "1" * 64,
            "input": {"size": 10},
        },
        "https://kgforge.org/graph/early": {"quads_file": "quads/early.nq", "quads": 2},
    },
    "total_quads": 5,
    "timings": {"load_seconds": 0.1},
    "versions": {"kgforge": "0.1"},
}


def _dumped(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2)


def test_a_built_manifest_reads_into_records_and_writes_back_byte_identical(tmp_path, workdir):
    kb = tmp_path / "kb.json"
    kb.write_text(
        json.dumps({"故宫": [["故宫", "地址", "北京市"], ["故宫", "周边景点", "天坛"]]}, ensure_ascii=False),
        encoding="utf-8",
    )
    build("travel", [parse_source(f"kdconv:{kb}")], workdir, show_progress=False)
    path = domain_paths("travel", workdir).manifest
    manifest = read_manifest(domain_paths("travel", workdir))
    [source] = [e for e in manifest.graphs.values() if e.kind == "kdconv"]
    assert source.details["counts"]["facts"] == 2 and len(source.sha256) == 64
    assert source.details["input"]["size"] == kb.stat().st_size
    assert manifest.quads == sum(e.quads for e in manifest.graphs.values())
    assert _dumped(manifest.to_dict()) == path.read_text(encoding="utf-8")
    manifest.write(tmp_path / "again.json")
    assert (tmp_path / "again.json").read_bytes() == path.read_bytes()
    assert check_store(Snapshot.open("travel", workdir)).ok


def test_an_old_manifest_loads_with_defaults_and_keeps_what_it_had(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(_dumped(OLD_MANIFEST), encoding="utf-8")
    manifest = Manifest.read(path)
    early = manifest.graphs["https://kgforge.org/graph/early"]
    assert (early.kind, early.sha256) == (None, None)
    assert manifest.stages == {} and manifest.schema.inferred is None
    assert manifest.graphs_of_kind("kdconv") == ["https://kgforge.org/graph/kdconv/kb"]
    written = manifest.to_dict()
    assert written["graphs"] == OLD_MANIFEST["graphs"] and written["schema"] == OLD_MANIFEST["schema"]
    assert list(written["graphs"]["https://kgforge.org/graph/kdconv/kb"]) == [
        "kind",
        "path",
        "quads_file",
        "quads",
        "sha256",
        "input",
    ]


def test_a_manifest_that_is_not_json_is_named_with_its_line(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text('{\n  "domain": "travel",\n  oops\n}', encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"{path}: not a JSON manifest \(line 3"):
        Manifest.read(path)


def test_a_manifest_missing_a_key_names_the_file_the_graph_and_the_key(tmp_path):
    path = tmp_path / "manifest.json"
    path.write_text(_dumped({k: v for k, v in OLD_MANIFEST.items() if k != "build_id"}), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"{path}: missing build_id"):
        Manifest.read(path)
    broken = dict(OLD_MANIFEST, graphs={"g": {"quads": 1}})
    path.write_text(_dumped(broken), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"{path}: graph g: missing quads_file"):
        Manifest.read(path)


_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3),
    max_leaves=6,
)


@given(
    st.dictionaries(st.text(min_size=1, max_size=8), _values, max_size=5),
    st.randoms(use_true_random=False),
    st.booleans(),
    st.booleans(),
)
def test_graph_entries_round_trip_with_their_key_order(extra, rnd, with_kind, with_sha):
    data = {k: v for k, v in extra.items() if k not in ("kind", "quads_file", "quads", "sha256")}
    data.update(quads_file="quads/g.nq", quads=7)
    if with_kind:
        data["kind"] = "kdconv"
    if with_sha:
        data["sha256"] = "f" * 64
    keys = list(data)
    rnd.shuffle(keys)
    data = {k: data[k] for k in keys}
    entry = GraphEntry.from_dict(data)
    assert list(entry.to_dict().items()) == list(data.items())
    assert GraphEntry.from_dict(entry.to_dict()) == entry


def test_an_entry_given_its_checksum_later_puts_it_last_as_builds_always_have(tmp_path: Path):
    entry = GraphEntry(kind="links", quads_file="quads/links.nq", quads=4).with_sha256("a" * 64)
    assert list(entry.to_dict()) == ["kind", "quads_file", "quads", "sha256"]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"graphs": []}, "graphs: expected an object"),
        ({"graphs": {"g": 3}}, "graph g: expected an object, found int"),
        ({"schema": "travel"}, "schema: missing path"),
    ],
)
def test_a_manifest_of_the_wrong_shape_is_named_not_a_traceback(tmp_path, change, message):
    path = tmp_path / "manifest.json"
    path.write_text(_dumped(dict(OLD_MANIFEST, **change)), encoding="utf-8")
    with pytest.raises(ManifestError, match=rf"{path}: {message}"):
        Manifest.read(path)
