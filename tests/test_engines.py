"""The ray engine of the dump passes against the local one, on a real local Ray instance (this machine only):
the same quads and journals from the shared samples (and from XLORE dump files), the manifest's engine record, resume without
parsing a finished shard again, a SIGKILLed Ray worker retried, and the message when Ray is missing."""

from __future__ import annotations

import bz2
import gzip
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from benchmarks.bench_wikidata import realistic_entity
from kgforge.core.schema import load_schema
from kgforge.demo.wikidata_dump import write_dump
from kgforge.sources.wikidata.engines import LocalEngine, make_engine
from kgforge.sources.wikidata.entity import WikidataConfig
from kgforge.sources.wikidata.passes import run_resumable
from kgforge.sources.wikidata.pipeline import PassSpec
from kgforge.sources.wikidata.ray_engine import WORKER_NICENESS, RayEngine
from tests.test_wikidata import build_source
from tests.test_xlore import I, film_dump

pytestmark = pytest.mark.slow  # a real local Ray instance and its dump passes

SAMPLES = [
    ("wikidata", "wikidata_json/mini-dump.assembled.json"),  # plain: tasks read their own byte ranges
    ("wikidata", "wikidata_json/mini-dump.assembled.json.bz2"),
    ("wikidata", "wikidata_json/sample-dump-20150815.wdtk.json.gz"),
    ("wikidata-nt", "wikidata_rdf/Q8_happiness.truthy.nt"),
    ("wikidata-ttl", "wikidata_rdf/Q42.all.ttl"),
]


@pytest.fixture(scope="module")
def ray_local():
    import ray

    os.environ.setdefault(WORKER_NICENESS, "0")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield ray
    ray.shutdown()


def quads_of(store) -> list[str]:
    return sorted(str(quad) for quad in store)


def journal_under(folder: Path) -> bytes:
    (journal,) = folder.rglob("*extract-*/journal")
    return journal.read_bytes()


@pytest.mark.parametrize("kind,sample", SAMPLES)
def test_ray_engine_imports_the_samples_as_the_local_engine(kind, sample, shared, tmp_path, ray_local):
    path = shared(sample)
    local, local_entry = build_source(tmp_path / "local", kind, path, workers=2, keep_journal=True)
    ray, ray_entry = build_source(
        tmp_path / "ray", kind, path, workers=2, keep_journal=True, engine="ray", shard_bytes=4096
    )
    assert quads_of(ray) == quads_of(local) and len(quads_of(local)) > 50
    assert journal_under(tmp_path / "ray") == journal_under(tmp_path / "local")
    assert ray_entry["quarantined"] == local_entry["quarantined"]
    assert local_entry["engine"]["engine"] == "local" and local_entry["engine"]["nodes"] == 1
    engine = ray_entry["engine"]
    assert engine["engine"] == "ray" and engine["nodes"] == 1 and engine["workers"] == 2
    shards = engine["shards"]["extract"]
    entities = local_entry["counts"]["entities"]
    assert len(shards) >= min(2, entities), "4 KiB shards: a sample of several entities is cut into several"
    assert sum(s["entities"] for s in shards) == entities == ray_entry["counts"]["entities"]
    assert [s["offset"] for s in shards] == sorted(s["offset"] for s in shards)
    assert all(a["offset"] + a["bytes"] == b["offset"] for a, b in zip(shards, shards[1:])), "gaps or overlaps"
    assert all(s["pid"] != os.getpid() and s["node"] and s["attempt"] == 1 for s in shards)
    assert not list((tmp_path / "ray").rglob("shards/*")), "shard files outlive their pass"


@pytest.mark.parametrize("selection", [{}, {"seeds": ["bdi1"], "hops": 3}], ids=["whole", "seeded"])
def test_ray_engine_imports_xlore_dumps_as_the_local_engine(selection, shared, tmp_path, ray_local):
    folder = film_dump(tmp_path / "xlore")
    shutil.copy(shared("xlore/dbpedia_xlore_concept.dat"), folder)
    with open(folder / "xlore.instance.infobox.ttl", "a", encoding="utf-8") as out:
        out.writelines(f"<{I}bdi{n}> <http://xlore.org/property/p14> <{I}bdi{n + 1}> .\n" for n in range(4, 300))
        out.write("a line that is not a triple\n")
    local, local_entry = build_source(tmp_path / "local", "xlore", folder, workers=2, **selection)
    ray, ray_entry = build_source(
        tmp_path / "ray", "xlore", folder, workers=2, engine="ray", shard_bytes=2048, **selection
    )
    assert quads_of(ray) == quads_of(local) and len(quads_of(local)) > (30 if selection else 300)
    assert ray_entry["counts"].get("selected_entities") == local_entry["counts"].get("selected_entities")
    assert ray_entry["quarantined"] == local_entry["quarantined"] == 2
    assert ray_entry["counts"]["records_ok"] == local_entry["counts"]["records_ok"]
    shards = ray_entry["engine"]["shards"]
    passes = ["extract", "index"] if selection else ["extract"]
    assert {name.split()[0] for name in shards} == set(passes) and len(shards) == 6 * len(passes)
    infobox = shards["extract xlore.instance.infobox.ttl"]
    assert len(infobox) >= 4, "2 KiB shards: the infobox file is cut into several"
    assert all(a["offset"] + a["bytes"] == b["offset"] for a, b in zip(infobox, infobox[1:])), "gaps or overlaps"
    assert all(s["pid"] != os.getpid() for pass_shards in shards.values() for s in pass_shards)


def test_a_multistream_bz2_dump_gives_the_local_engines_journal(shared, tmp_path, ray_local):
    lines = shared("wikidata_json/mini-dump.assembled.json").read_bytes().splitlines(keepends=True)
    dump = tmp_path / "multistream.json.bz2"  # one bz2 stream per line, as parallel compressors write them
    dump.write_bytes(b"".join(bz2.compress(line) for line in lines))
    assert dump.read_bytes().count(b"BZh9") >= len(lines) > 3
    local = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    ray = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=4096))
    assert ray.journal.read_bytes() == local.journal.read_bytes() and local.counts["entities"] == len(lines) - 2
    assert len(ray.engine["shards"]) >= 2


def test_tasks_of_a_plain_dump_read_their_own_byte_range(tmp_path, ray_local, monkeypatch):
    dump = synthetic_dump(tmp_path / "dump.json", 40)
    log = tmp_path / "sent.jsonl"  # written by the tasks, in Ray's worker processes
    record_shipments(monkeypatch, log)
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    ray = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=16 << 10))
    assert ray.journal.read_bytes() == whole.journal.read_bytes()
    sent = shipments(log)
    assert len(sent) >= 2 and all(
        shipped_bytes == 0 and size > 0 and source == str(dump.resolve()) and index is None
        for shipped_bytes, size, source, index in sent
    )


def record_shipments(monkeypatch, log: Path) -> None:
    """Make every Ray task append what it was sent to ``log``: [bytes sent or staged, shard size, source, seek index]."""
    import kgforge.sources.wikidata.ray_engine as ray_engine

    shipped = ray_engine.parse_shard

    def recorded(batch, spec, folder, source=None, seek_index=None):
        size = batch.end_offset - batch.first_offset
        staged = ray_engine.ShardFiles(Path(folder), batch.first_offset, size).data
        with open(log, "a", encoding="utf-8") as out:  # bytes sent with the task, or staged for it
            out.write(
                json.dumps(
                    [len(batch.data) or (staged.stat().st_size if staged.exists() else 0), size, source, seek_index]
                )
                + "\n"
            )
        return shipped(batch, spec, folder, source, seek_index)

    monkeypatch.setattr(ray_engine, "parse_shard", recorded)


def shipments(log: Path) -> list[list]:
    sent = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    log.unlink(missing_ok=True)
    return sent


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress], ids=["gz", "bz2"])
def test_a_compressed_dump_read_whole_once_is_read_by_range_in_the_passes_after(
    compress, tmp_path, ray_local, monkeypatch
):
    plain = synthetic_dump(tmp_path / "dump.json", 300)
    dump = tmp_path / "dump.json.z"
    dump.write_bytes(compress(plain.read_bytes()))
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    log = tmp_path / "sent.jsonl"
    record_shipments(monkeypatch, log)
    first = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10))
    assert first.journal.read_bytes() == whole.journal.read_bytes() and first.engine["dump_index"] == "built"
    assert all(sent == size and source is None for sent, size, source, _ in shipments(log)), (
        "the first read stages bytes"
    )

    again = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10), resume=False)
    assert again.engine["dump_index"] == "used" and again.decompressor == "rapidgzip"
    assert again.journal.read_bytes() == whole.journal.read_bytes()
    assert again.counts["entities"] == whole.counts["entities"] == 300 and again.truncated is None
    sent = shipments(log)
    assert len(sent) == len(first.engine["shards"]) >= 2
    assert all(
        shipped == 0 and size > 0 and source == str(dump.resolve()) and index.endswith("seek-index.gztool")
        for shipped, size, source, index in sent
    ), "tasks read their range through the seek index"
    assert [s["offset"] for s in again.engine["shards"]] == [s["offset"] for s in first.engine["shards"]]


def test_a_pass_stopped_midway_resumes_through_the_seek_index(tmp_path, ray_local):
    plain = synthetic_dump(tmp_path / "dump.json", 300)
    dump = tmp_path / "dump.json.gz"
    dump.write_bytes(gzip.compress(plain.read_bytes()))
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10))  # reads the dump whole: the index
    spec = PassSpec("index", WikidataConfig.from_schema(load_schema("film")))  # another pass over the same dump
    stopped = run_resumable(
        dump,
        spec,
        tmp_path / "ray",
        engine=RayEngine(2, shard_bytes=64 << 10),
        checkpoint_seconds=0,
        stop_after_batches=3,
    )
    records_at_stop = len(stopped.journal.read_bytes().splitlines())
    assert stopped.engine["dump_index"] == "used" and 0 < records_at_stop < 300
    resumed = run_resumable(
        dump, spec, tmp_path / "ray", engine=RayEngine(2, shard_bytes=64 << 10), checkpoint_seconds=0
    )
    local = run_resumable(dump, spec, tmp_path / "local", engine=LocalEngine(2), checkpoint_seconds=0)
    assert resumed.engine["dump_index"] == "used" and resumed.resumed_from > 0
    assert resumed.journal.read_bytes() == local.journal.read_bytes()
    assert whole.counts["entities"] == 300


def test_a_cut_compressed_dump_leaves_no_seek_index_and_keeps_what_the_local_engine_keeps(tmp_path, ray_local):
    plain = synthetic_dump(tmp_path / "dump.json", 300)
    dump = tmp_path / "cut.json.gz"
    data = gzip.compress(plain.read_bytes())
    dump.write_bytes(data[: len(data) * 2 // 3])
    local = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    ray = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10))
    assert ray.truncated and local.truncated and "ends early or is corrupt" in ray.truncated
    assert ray.journal.read_bytes() == local.journal.read_bytes() and 0 < ray.counts["entities"] < 300
    assert ray.engine["dump_index"] == "" and not list((tmp_path / "ray").rglob("dump-index/*/shards.json"))


def test_without_rapidgzip_compressed_shards_are_staged_for_their_tasks_every_time(tmp_path, ray_local, monkeypatch):
    import kgforge.sources.wikidata.framing as framing

    monkeypatch.setattr(framing, "rapidgzip_module", lambda: None)
    plain = synthetic_dump(tmp_path / "dump.json", 100)
    dump = tmp_path / "dump.json.gz"
    dump.write_bytes(gzip.compress(plain.read_bytes()))
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    stopped = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10), stop_after_batches=2)
    finished = list((tmp_path / "ray").rglob("shards/*.json"))
    assert finished and not list((tmp_path / "ray").rglob("shards/*.data")), "a finished shard's staged bytes go"
    assert 0 < stopped.counts["entities"] < 100
    for resume in (True, False):
        ray = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10), resume=resume)
        assert ray.journal.read_bytes() == whole.journal.read_bytes()
        assert ray.engine["dump_index"] == "" and ray.decompressor != "rapidgzip"
        assert not list((tmp_path / "ray").rglob("shards"))


def synthetic_dump(path: Path, entities: int) -> Path:
    return write_dump(path, (realistic_entity(i) for i in range(entities)))


def extract_pass(dump: Path, state: Path, engine, **options):
    spec = PassSpec("extract", WikidataConfig.from_schema(load_schema("film")))
    return run_resumable(dump, spec, state, engine=engine, checkpoint_seconds=0, **options)


def test_a_resumed_ray_pass_never_parses_a_finished_shard_again(tmp_path, ray_local):
    dump = synthetic_dump(tmp_path / "dump.json", 300)
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    stopped = extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10), stop_after_batches=3)
    assert 0 < stopped.counts["entities"] < whole.counts["entities"]
    finished = {p.name: json.loads(p.read_text())["producer"] for p in (tmp_path / "ray").rglob("shards/*.json")}
    assert finished, "shards in flight when the pass stopped were finished and left for the next run"
    engine = RayEngine(2, shard_bytes=64 << 10)
    resumed = extract_pass(dump, tmp_path / "ray", engine)
    assert resumed.journal.read_bytes() == whole.journal.read_bytes()
    assert resumed.counts["entities"] == whole.counts["entities"]
    reused = {f"{s['offset']:015d}-{s['bytes']}.json": s for s in engine.produced if s["reused"]}
    assert set(reused) == set(finished), "every shard finished before the stop was taken as it was"
    assert all(reused[name]["pid"] == producer["pid"] for name, producer in finished.items())
    assert len({s["offset"] for s in resumed.engine["shards"]}) == len(resumed.engine["shards"])


def test_a_finished_shard_whose_journal_is_short_is_parsed_again(tmp_path, ray_local):
    dump = synthetic_dump(tmp_path / "dump.json", 300)
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    extract_pass(dump, tmp_path / "ray", RayEngine(2, shard_bytes=64 << 10), stop_after_batches=3)
    metas = sorted((tmp_path / "ray").rglob("shards/*.json"))
    assert metas, "shards in flight when the pass stopped were finished and left for the next run"
    short = metas[0].with_suffix(".journal")  # what a machine crash leaves of a journal that was not fsynced
    short.write_bytes(short.read_bytes()[:100])
    engine = RayEngine(2, shard_bytes=64 << 10)
    resumed = extract_pass(dump, tmp_path / "ray", engine)
    assert resumed.journal.read_bytes() == whole.journal.read_bytes()
    redone = int(metas[0].name.split("-")[0])
    assert [s["reused"] for s in engine.produced if s["offset"] == redone] == [False]
    assert any(s["reused"] for s in engine.produced), "the whole shards were taken as they were"


@pytest.mark.parametrize("compression", ["plain", "gz"])  # tasks read their ranges / map the shards staged for them
def test_a_sigkilled_ray_worker_is_retried_and_nothing_is_lost_or_duplicated(compression, tmp_path, ray_local):
    dump = synthetic_dump(tmp_path / "dump.json", 600)
    if compression == "gz":
        dump = dump.with_suffix(".json.gz")
        dump.write_bytes(gzip.compress((tmp_path / "dump.json").read_bytes(), compresslevel=1))
    whole = extract_pass(dump, tmp_path / "local", LocalEngine(2))
    engine, outcome = RayEngine(2, shard_bytes=256 << 10), {}
    runner = threading.Thread(target=lambda: outcome.update(result=extract_pass(dump, tmp_path / "ray", engine)))
    runner.start()
    killed = kill_workers_mid_shard(tmp_path / "ray", runner)
    runner.join()
    result = outcome["result"]
    assert killed, "no Ray worker was caught mid-shard"
    retried = [s for s in result.engine["shards"] if s["attempt"] > 1]
    assert retried and {s["offset"] for s in retried} <= killed
    assert result.journal.read_bytes() == whole.journal.read_bytes()
    assert result.counts["entities"] == whole.counts["entities"] == 600


def kill_workers_mid_shard(state: Path, runner: threading.Thread) -> set[int]:
    """SIGKILL the worker of each shard seen running (claimed, not finished), while the pass runs;
    the offsets of the shards whose worker was killed before the shard was finished."""
    killed: set[int] = set()
    while runner.is_alive():
        try:
            claims = list(state.rglob("shards/*.attempts"))
        except FileNotFoundError:  # the pass ended and removed its shards folder
            claims = []
        for claim in claims:
            meta = claim.with_suffix(".json")
            try:
                lines = claim.read_text().splitlines()
            except FileNotFoundError:  # appended to the pass journal and removed meanwhile
                continue
            if meta.exists() or len(lines) != 1 or len(killed) >= 2:
                continue
            try:
                os.kill(json.loads(lines[0])["pid"], signal.SIGKILL)
            except ProcessLookupError:  # that worker has already gone (finished, or Ray retired it)
                continue
            if not meta.exists():  # the shard was not finished when its worker died
                killed.add(int(claim.name.split("-")[0]))
        time.sleep(0.002)
    return killed


def test_without_ray_the_local_engine_works_and_ray_says_how_to_install_it(shared, tmp_path):
    blocked = "import sys; sys.modules['ray'] = None; from kgforge.cli import main; main()"
    dump = shared("wikidata_json/mini-dump.assembled.json.bz2")

    def run(*options: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [
                sys.executable,
                "-c",
                blocked,
                "import",
                "wikidata",
                str(dump),
                "--domain",
                "film",
                "--workdir",
                str(tmp_path),
                "--json",
                *options,
            ],
            capture_output=True,
            text=True,
            timeout=300,
        )

    missing = run("--engine", "ray")
    assert missing.returncode != 0
    assert "pip install 'kgforge[ray]'" in missing.stderr and "Traceback" not in missing.stderr
    local = run("--engine", "local")
    assert local.returncode == 0, local.stderr
    assert json.loads(local.stdout)["source"]["engine"]["engine"] == "local"


def test_engine_choices_are_checked():
    with pytest.raises(Exception, match="only the ray engine"):
        make_engine("local", 2, address="auto")
    with pytest.raises(Exception, match="not an engine"):
        make_engine("spark", 2)
