"""The same sources give the same quads, byte for byte, however the store was reached: a fresh build, or a
build refreshed through an unchanged rebuild, a one-value change and the change undone; each in a process
with its own hash seed (so nothing may depend on set or dict order), the Wikidata dump on top parsed in
batches small enough that two worker processes share them (or, once, in-process). Compared as sorted N-Quads
lines, and by the manifests' per-graph checksums."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pyoxigraph as ox
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from benchmarks.synthetic import write_synthetic_kb  # noqa: E402
from kgforge.core.schema import schema_path  # noqa: E402

KB = "kdconv/travel/kb_travel.json"
DUMP = "wikidata_json/mini-dump.assembled.json"


PARALLEL_BATCHES = "\n[options.wikidata]\nbatch_bytes = 16384  # the dump's lines over several batches\n"


def domain_schema(workdir: Path) -> None:
    """The shipped travel schema as the domain's own, with Wikidata batches small enough to spread the mini
    dump's entities over the worker processes."""
    schema = workdir / "travel" / "schema.toml"
    schema.parent.mkdir(parents=True)
    schema.write_text(schema_path("travel").read_text(encoding="utf-8") + PARALLEL_BATCHES, encoding="utf-8")


def nquads(workdir: Path) -> bytes:
    store = ox.Store.read_only(str(workdir / "travel" / "store" / "oxigraph"))
    return "".join(sorted(f"{q} .\n" for q in store)).encode("utf-8")


def checksums(workdir: Path) -> dict[str, str]:
    manifest = json.loads((workdir / "travel" / "manifest.json").read_text(encoding="utf-8"))
    return {graph: entry["sha256"] for graph, entry in manifest["graphs"].items()}


def set_first_value(kb: Path, relation: str, value: str) -> str:
    """Set the first ``relation`` value of the KB to ``value``; returns the value it had."""
    data = json.loads(kb.read_text(encoding="utf-8"))
    triple = next(t for triples in data.values() for t in triples if t[1] == relation)
    old, triple[2] = triple[2], value
    kb.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    return old


@pytest.mark.slow
def test_fresh_and_refreshed_builds_of_the_same_sources_hold_the_same_quads(cli, shared, tmp_path):
    synthetic = tmp_path / "kb_film.json"
    write_synthetic_kb(synthetic, entities=4_000, triples=80_000, seed=7)
    travel = tmp_path / "kb_travel.json"
    shutil.copyfile(shared(KB), travel)
    dump = shared(DUMP)

    def build(workdir: Path, seed: int, *extra: str) -> dict:
        out = cli(
            "build",
            "travel",
            "--source",
            f"kdconv:{synthetic}",
            "--source",
            f"kdconv:{travel}",
            "--no-schema-sources",
            "--workdir",
            str(workdir),
            "--json",
            *extra,
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        return json.loads(out)

    def add_dump(workdir: Path, seed: int, workers: int = 2) -> None:
        out = cli(
            "import",
            "wikidata",
            "-d",
            "travel",
            str(dump),
            "--workers",
            str(workers),
            "--workdir",
            str(workdir),
            "--json",
            env={"PYTHONHASHSEED": str(seed)},
        ).stdout
        engine = json.loads(out)["source"]["engine"]
        assert engine["workers"] == workers, engine

    fresh, refreshed = tmp_path / "fresh", tmp_path / "refreshed"
    for workdir in (fresh, refreshed):
        domain_schema(workdir)
    build(fresh, 1)
    add_dump(fresh, 1)

    build(refreshed, 2)
    assert not build(refreshed, 3)["published"]
    old = set_first_value(travel, "门票", "门票改过")
    changed = build(refreshed, 4)
    assert [r["action"] for r in changed["refresh"]] == ["kept", "imported"]
    set_first_value(travel, "门票", old)
    back = build(refreshed, 5)
    assert [r["action"] for r in back["refresh"]] == ["kept", "imported"]
    add_dump(refreshed, 6)

    assert checksums(refreshed) == checksums(fresh)
    assert nquads(refreshed) == nquads(fresh)

    full = tmp_path / "full"
    shutil.copytree(refreshed, full, symlinks=True)
    build(full, 7, "--full")
    add_dump(full, 8, workers=0)  # parsed in-process: the same quads as the pool's
    assert nquads(full) == nquads(fresh)
