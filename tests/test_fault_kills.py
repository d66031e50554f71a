"""SIGKILL at seeded random points of build (import and load phases), derive and embed. After each kill:
``kgforge check`` is ok, the next stage reads the old build or the new one (never an unpublished file),
the re-run gives exactly what an uninterrupted run gives, and nothing temporary is left behind.

Every comparison is exact because equal inputs give equal files: the quads of a build, the derived
graph and a trained model are compared by checksum with a reference run. Each kill lands at a seeded
point of the phase it targets, drawn within the time that phase took in the reference run (measured
here, so the points stay inside the phase on a fast machine or a busy one). Only the killed command
runs in a process of its own (``tests.faults``); what follows it is called in-process."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kgforge.core.errors import KgforgeError
from kgforge.core.schema import SourceSpec
from kgforge.derive import ASSOCIATED_GRAPH, derive
from kgforge.goals.generate import generate
from kgforge.goals.graph import GoalOptions
from kgforge.publish.transaction import build, check_store
from kgforge.store.snapshot import Snapshot
from tests.faults import kill_at_random_point, orphans, part_files

pytestmark = pytest.mark.slow  # SIGKILL at seeded random points of real builds, derives and embeds, each rerun after

BUILD_ENTITIES = 10_000


def write_kb(path: Path, n: int, ticket: str) -> Path:
    """A KdConv-shaped travel KB; ``ticket`` makes two KBs differ in every 门票 value and every address (so in
    what derive pairs up: attractions at one address), so a stage that read the unpublished build would give
    other pairs."""
    kb = {
        f"景点{i}": [
            [f"景点{i}", "门票", f"{ticket}{i % 7}"],
            [f"景点{i}", "周边景点", f"景点{(i * 7 + 1) % n}"],
            [f"景点{i}", "地址", f"北京市{ticket}路第{i % 7}号"],
            [f"景点{i}", "Information", f"景点{i}的介绍。" * 12],
        ]
        for i in range(n)
    }
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def build_args(kb: Path, workdir: Path) -> list[str]:
    return ["build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir)]


def build_travel(kb: Path, workdir: Path, full: bool = False) -> dict[str, float]:
    """Build in-process; returns the build's timings."""
    summary = build(
        "travel", [SourceSpec("kdconv", str(kb))], workdir, show_progress=False, use_schema_sources=False, full=full
    )
    return summary.timings


def within(seconds: float) -> tuple[float, float]:
    """A kill window inside a phase that took ``seconds`` in the reference run."""
    return (0.0, 0.7 * seconds)


def manifest(workdir: Path) -> dict:
    return json.loads((workdir / "travel" / "manifest.json").read_text(encoding="utf-8"))


def kb_sha(workdir: Path) -> str:
    """Which input the published build was made from."""
    [entry] = [e for e in manifest(workdir)["graphs"].values() if e["kind"] == "kdconv"]
    return entry["input"]["sha256"]


def quads_sha(workdir: Path) -> dict[str, str]:
    """The checksums of the built graphs (the derived graph apart)."""
    return {g: e["sha256"] for g, e in manifest(workdir)["graphs"].items() if g != ASSOCIATED_GRAPH}


def derived_sha(workdir: Path) -> str | None:
    entry = manifest(workdir)["graphs"].get(ASSOCIATED_GRAPH)
    return entry["sha256"] if entry else None


def assert_consistent_after(run, workdir: Path) -> None:
    """Nothing of the killed run is still alive, and the published store matches its manifest."""
    assert not orphans(run.tag, grace=2.0)
    report = check_store(Snapshot.open("travel", workdir))
    assert report.ok, report.problems


def assert_nothing_left(workdir: Path) -> None:
    assert not part_files(workdir / "travel")
    assert not check_store(Snapshot.open("travel", workdir)).leftovers


def staging_has(workdir: Path, pattern: str):
    """A readiness test: a staging build (``.incomplete``) holds something matching ``pattern``."""
    builds = workdir / "travel" / "builds"
    return lambda: any(any(b.glob(pattern)) for b in builds.glob("*") if (b / ".incomplete").exists())


@pytest.fixture(scope="module")
def kbs(tmp_path_factory) -> dict[str, dict]:
    """Two KBs and, for each, the reference results of uninterrupted runs: the build's quads checksums
    and the derived graph's checksum, and how long each phase took."""
    folder = tmp_path_factory.mktemp("kbs")
    refs = {}
    for name, ticket in (("a", "门票"), ("b", "SAMEVALUE")):
        kb = write_kb(folder / f"{name}.json", BUILD_ENTITIES, ticket)
        workdir = folder / f"ref-{name}"
        timings = build_travel(kb, workdir)
        built = quads_sha(workdir)
        derived = derive("travel", workdir).timings
        refs[name] = {
            "kb": kb,
            "workdir": workdir,
            "input": kb_sha(workdir),
            "quads": built,
            "derived": derived_sha(workdir),
            "seconds": {
                "import": timings["import_seconds"],
                "load": timings["load_seconds"],
                "derive": derived["write_seconds"] + derived["load_seconds"],
            },
        }
    return refs


@pytest.mark.parametrize("phase, pattern", [("import", "quads/*.part*"), ("load", "oxigraph")])
def test_build_killed_at_random_points(kbs, tmp_path, phase, pattern):
    workdir = tmp_path / "kg"
    shutil.copytree(kbs["a"]["workdir"], workdir, symlinks=True)
    published, kills = "a", 0
    for seed in range(3):
        target = "b" if published == "a" else "a"
        run = kill_at_random_point(
            build_args(kbs[target]["kb"], workdir),
            seed=seed,
            window=within(kbs[target]["seconds"][phase]),
            ready=staging_has(workdir, pattern),
        )
        kills += run.killed
        assert_consistent_after(run, workdir)
        now = {kbs[k]["input"]: k for k in (published, target)}[kb_sha(workdir)]  # the old build or the new
        assert now == target or run.killed
        assert quads_sha(workdir) == kbs[now]["quads"]
        derive("travel", workdir)  # the next stage reads the published build only
        assert derived_sha(workdir) == kbs[now]["derived"]
        build_travel(kbs[target]["kb"], workdir)  # the re-run equals an uninterrupted build
        assert quads_sha(workdir) == kbs[target]["quads"]
        assert_nothing_left(workdir)
        published = target
    assert kills >= 2, f"only {kills} of 3 runs were killed in the {phase} phase"


def test_derive_killed_at_random_points(kbs, tmp_path):
    ref = kbs["a"]
    workdir = tmp_path / "kg"
    shutil.copytree(ref["workdir"], workdir, symlinks=True)
    options = GoalOptions(n=40, seed=3)
    generate(Snapshot.open("travel", ref["workdir"]), options, tmp_path / "reference.jsonl")
    kills = 0
    for seed in range(3):
        build_travel(ref["kb"], workdir, full=True)  # published: the build without derived pairs (a refresh keeps them)
        run = kill_at_random_point(
            ["derive", "travel", "--workdir", str(workdir)],
            seed=seed,
            window=within(ref["seconds"]["derive"]),
            ready=staging_has(workdir, "quads"),
        )
        kills += run.killed
        assert_consistent_after(run, workdir)
        assert quads_sha(workdir) == ref["quads"]
        assert derived_sha(workdir) in (None, ref["derived"])
        # the next stage: two-step goals need the pairs, so they are refused, or exactly the reference goals
        out = tmp_path / f"goals{seed}.jsonl"
        if derived_sha(workdir) is None:
            with pytest.raises(KgforgeError, match="kgforge derive travel"):
                generate(Snapshot.open("travel", workdir), options, out)
        else:
            generate(Snapshot.open("travel", workdir), options, out)
            assert out.read_bytes() == (tmp_path / "reference.jsonl").read_bytes()
        derive("travel", workdir)
        assert derived_sha(workdir) == ref["derived"]
        assert_nothing_left(workdir)
    assert kills >= 2


def model_files(bundle: Path) -> dict[str, str]:
    """The sha256 of the trained weights and the search index, as the bundle lists them."""
    files = json.loads((bundle / "bundle.json").read_text(encoding="utf-8"))["files"]
    return {name: files[name] for name in ("weights.safetensors", "index.safetensors")}


EMBED_OPTIONS = {
    "model": "DistMult",
    "dim": 16,
    "epochs": 30,
    "batch_size": 256,
    "threads": 1,
    "evaluation": "none",
    "checkpoint_seconds": 0.2,
}


def test_embed_killed_at_random_points_resumes_to_the_same_model(tmp_path):
    from kgforge.embed import EmbedConfig, embed
    from kgforge.embed.related import related

    config = EmbedConfig(**EMBED_OPTIONS)
    command = [
        "embed",
        "travel",
        "--model",
        "DistMult",
        "--dim",
        "16",
        "--epochs",
        "30",
        "--batch-size",
        "256",
        "--threads",
        "1",
        "--evaluation",
        "none",
        "--checkpoint-every",
        "0.2",
        "--resume",
    ]
    kb = write_kb(tmp_path / "kb.json", 400, "门票")
    reference, workdir = tmp_path / "ref", tmp_path / "kg"
    build_travel(kb, reference)
    shutil.copytree(reference, workdir, symlinks=True)
    training = embed(Snapshot.open("travel", reference), config, progress=False).training["seconds"]
    expected = model_files(reference / "travel" / "models" / "default")
    bundle = workdir / "travel" / "models" / "default"
    kills = 0
    for seed in range(3):
        run = kill_at_random_point(
            command + ["--workdir", str(workdir)],
            seed=seed,
            window=within(training),
            ready=(bundle.parent / ".default.work").exists,
        )
        kills += run.killed
        assert_consistent_after(run, workdir)
        assert not bundle.exists() or model_files(bundle) == expected  # no bundle yet, or the finished one
        embed(Snapshot.open("travel", workdir), config, resume=True, progress=False)
        assert model_files(bundle) == expected
        assert not part_files(workdir / "travel")
        shutil.rmtree(bundle)
    assert kills >= 2
    embed(Snapshot.open("travel", workdir), config, resume=True, progress=False)
    assert (
        related(Snapshot.open("travel", workdir), "景点1").results
        == related(Snapshot.open("travel", reference), "景点1").results
    )


def refresh_args(source: Path, static: Path, workdir: Path) -> list[str]:
    return [
        "build",
        "travel",
        "--source",
        f"kdconv:{source}",
        "--source",
        f"kdconv:{static}",
        "--no-schema-sources",
        "--workdir",
        str(workdir),
    ]


def build_sources(workdir: Path, *kbs: Path):
    return build(
        "travel", [SourceSpec("kdconv", str(kb)) for kb in kbs], workdir, show_progress=False, use_schema_sources=False
    )


@pytest.fixture(scope="module")
def refresh_refs(kbs, tmp_path_factory) -> dict:
    """A second source that no refresh changes, the quads checksums of full builds of each KB beside it, and
    how long the phases of a refresh (one source changed, the other kept) took."""
    folder = tmp_path_factory.mktemp("refresh")
    static = write_kb(folder / "static.json", BUILD_ENTITIES // 2, "S")
    refs: dict = {"static": static, "quads": {}}
    for name in ("a", "b"):
        source = folder / name / "travel.json"  # the graph is named after the file, as in the killed runs
        source.parent.mkdir()
        shutil.copyfile(kbs[name]["kb"], source)
        build_sources(folder / f"ref-{name}", source, static)
        refs["quads"][name] = quads_sha(folder / f"ref-{name}")
    source = folder / "timed" / "travel.json"
    source.parent.mkdir()
    shutil.copyfile(kbs["a"]["kb"], source)
    build_sources(folder / "timed-kg", source, static)
    shutil.copyfile(kbs["b"]["kb"], source)
    refreshed = build_sources(folder / "timed-kg", source, static)
    assert [d.action for d in refreshed.decisions] == ["imported", "kept"]
    refs["seconds"] = {"import": refreshed.timings["import_seconds"], "load": refreshed.timings["load_seconds"]}
    return refs


@pytest.mark.parametrize("phase, pattern", [("import", "quads/*.part*"), ("load", "oxigraph")])
def test_refresh_killed_at_random_points(kbs, refresh_refs, tmp_path, phase, pattern):
    """A rebuild that re-imports one changed source and keeps the other, killed in its import or in its load
    into the checkpoint of the published store: the previous build stays published and checks ok, and the
    re-run refreshes to exactly what a full build of the same sources gives."""
    workdir, source, static = tmp_path / "kg", tmp_path / "travel.json", refresh_refs["static"]
    shutil.copyfile(kbs["a"]["kb"], source)
    build_sources(workdir, source, static)
    published, kills = "a", 0
    for seed in range(3):
        target = "b" if published == "a" else "a"
        shutil.copyfile(kbs[target]["kb"], source)
        run = kill_at_random_point(
            refresh_args(source, static, workdir),
            seed=seed,
            window=within(refresh_refs["seconds"][phase]),
            ready=staging_has(workdir, pattern),
        )
        kills += run.killed
        assert_consistent_after(run, workdir)
        now = quads_sha(workdir)
        assert now == refresh_refs["quads"][target] or (run.killed and now == refresh_refs["quads"][published])
        rerun = build_sources(workdir, source, static)
        expected = ["kept", "kept"] if now == refresh_refs["quads"][target] else ["imported", "kept"]
        assert [d.action for d in rerun.decisions] == expected
        assert quads_sha(workdir) == refresh_refs["quads"][target]
        assert_nothing_left(workdir)
        published = target
    assert kills >= 2, f"only {kills} of 3 refreshes were killed in the {phase} phase"
