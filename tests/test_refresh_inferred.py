"""A domain with no schema file refreshes as one with a schema does: the schema inferred at build time is kept
with what each source showed, an unchanged rebuild observes no source again, and a changed source re-imports
only itself and the sources whose relations changed kind or datatype. Every refreshed store holds exactly the
quads of a full build of the same sources (real stores on disk, KdConv-shaped KBs)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.publish.inferred import OBSERVATIONS
from tests.test_refresh import graph_checksums, sorted_quads

DOMAIN = "sights"  # no shipped schema and no schema file: every build infers one


def write_kb(path: Path, n: int, ticket: str, address: int = 1, hours: bool = False) -> Path:
    """A KdConv-shaped KB of ``n`` sights; ``address`` repeats each address (long ones make 地址 free text)."""
    kb = {}
    for i in range(n):
        name = f"{path.stem}景点{i}"
        kb[name] = [
            [name, "门票", f"{ticket}{i % 7}元"],
            [name, "周边景点", f"{path.stem}景点{(i * 7 + 1) % n}"],
            [name, "地址", f"北京市第{i}号" * address],
            [name, "Information", f"{name}的介绍。" * 12],
        ]
        if hours:
            kb[name].append([name, "开放时间", f"{8 + i % 3}:00-17:00"])
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def build(workdir: Path, *kbs: Path, full: bool = False):
    return Domain(DOMAIN, workdir).build([f"kdconv:{kb}" for kb in kbs], schema_sources=False, full=full)


def actions(report) -> dict[str, tuple[str, str]]:
    return {Path(d.source.split(":", 1)[1]).stem: (d.action, d.reason) for d in report.decisions}


def assert_same_as_a_full_build(tmp_path: Path, *kbs: Path) -> None:
    fresh = tmp_path / f"full{len(list(tmp_path.iterdir()))}"
    build(fresh, *kbs, full=True)
    assert sorted_quads(tmp_path / "kg", DOMAIN) == sorted_quads(fresh, DOMAIN)
    assert graph_checksums(tmp_path / "kg", DOMAIN) == graph_checksums(fresh, DOMAIN)


@pytest.fixture
def kbs(tmp_path) -> tuple[Path, Path]:
    return write_kb(tmp_path / "big.json", 300, "A"), write_kb(tmp_path / "small.json", 40, "B")


def test_an_unchanged_rebuild_observes_no_source_again_and_publishes_nothing(kbs, tmp_path):
    first = build(tmp_path / "kg", *kbs)
    assert first.schema["inferred"] and first.schema["sources_observed"] == 2
    assert (tmp_path / "kg" / DOMAIN / "store").resolve().joinpath(OBSERVATIONS).is_file()

    again = build(tmp_path / "kg", *kbs)
    assert not again.published and again.build_id == first.build_id
    assert again.schema["sources_observed"] == 0  # what each source showed came from the published build


def test_a_changed_source_is_observed_and_imported_alone_when_no_relation_changes_kind(kbs, tmp_path):
    big, small = kbs
    first = build(tmp_path / "kg", big, small)
    write_kb(small, 40, "C", hours=True)  # new prices, and a relation only it has
    report = build(tmp_path / "kg", big, small)

    assert report.published and report.schema["sources_observed"] == 1
    done = actions(report)
    assert done["big"] == ("kept", f"unchanged since build {first.build_id}: same size and sha256")
    assert done["small"][0] == "imported" and done["small"][1].startswith("input changed")
    assert_same_as_a_full_build(tmp_path, big, small)


def test_a_relation_that_changes_kind_reimports_every_source_that_uses_it(kbs, tmp_path):
    big, small = kbs
    build(tmp_path / "kg", big, small)
    write_kb(small, 40, "B", address=200)  # addresses of 1,000+ characters: 地址 becomes free text for both
    report = build(tmp_path / "kg", big, small)

    done = actions(report)
    assert done["small"][0] == "imported"
    assert done["big"] == (
        "imported",
        "the inferred schema changed for the relations this source uses (kind, datatype or name)",
    )
    manifest = json.loads((tmp_path / "kg" / DOMAIN / "manifest.json").read_text(encoding="utf-8"))
    used = manifest["graphs"][report.decisions[0].graph]["refresh"]["relations"]  # [iri, zh, en, kind]
    assert {zh: kind for _, zh, _, kind in used}["地址"] == "text"
    assert_same_as_a_full_build(tmp_path, big, small)


def test_a_source_added_to_a_schema_less_domain_renames_no_relation_of_the_others(kbs, tmp_path):
    big, small = kbs
    build(tmp_path / "kg", big)
    report = build(tmp_path / "kg", big, small)  # small's relations are all big's: the schema says the same of them
    assert actions(report)["big"][0] == "kept"
    assert_same_as_a_full_build(tmp_path, big, small)


def test_damaged_observations_are_observed_again_with_the_same_result(kbs, tmp_path):
    first = build(tmp_path / "kg", *kbs)
    kept = (tmp_path / "kg" / DOMAIN / "store").resolve() / OBSERVATIONS
    kept.write_text("{not json", encoding="utf-8")
    again = build(tmp_path / "kg", *kbs)
    assert again.schema["sources_observed"] == 2 and again.build_id == first.build_id and not again.published
