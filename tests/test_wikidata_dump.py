"""Generated dumps: bad input (truncated .bz2, corrupt lines), worker processes, resuming, expansion."""

from __future__ import annotations

import json
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.core.schema import load_schema
from kgforge.demo.wikidata_dump import entity, write_demo_dump, write_dump
from kgforge.sources.wikidata.entity import WikidataConfig
from kgforge.sources.wikidata.passes import index_records, read_journal, run_resumable
from kgforge.sources.wikidata.pipeline import PassSpec
from kgforge.sources.wikidata.select import expand, instances_of, subclass_closure
from kgforge.store.snapshot import Snapshot
from tests.test_wikidata import build_source

WD = "http://www.wikidata.org/entity/"


def many_entities(n: int, start: int = 1) -> list[dict]:
    """Entities of about 1.5 kB each, with varied text so bz2 needs several blocks."""
    return [
        entity(
            f"Q{i}",
            {"en": f"entity {i} " + "x" * (i % 97), "zh-hans": f"实体{i}"},
            {
                "P31": ["Q5"],
                "P2860": [f"Q{i + 1}"],
                "P1476": [("text", (f"title {i * 7919 % 100003}", "en"))],
                "P345": [("external-id", f"tt{i * 104729 % 9999991:07d}")],
            },
            descriptions={"en": " ".join(str(i * k % 1009) for k in range(60))},
        )
        for i in range(start, start + n)
    ]


def build_film(workdir: Path, path: Path, **options) -> dict:
    return build_source(workdir, "wikidata", path, **options)[1]


def quarantine_entries(workdir: Path, source: dict) -> list[dict]:
    text = (workdir / "film" / source["quarantine_file"]).read_text(encoding="utf-8")
    return [json.loads(line) for line in text.splitlines()]


def subjects(workdir: Path) -> set[str]:
    store = Snapshot.open("film", workdir).store()
    return {
        q.subject.value.removeprefix(WD)
        for q in store.quads_for_pattern(None, None, None, None)
        if q.subject.value.startswith(WD) and "/statement/" not in q.subject.value
    }


@pytest.mark.slow  # builds from a generated dump once per decompressor
@pytest.mark.parametrize("decompressor", ["python", "bzip2"])
def test_truncated_bz2_keeps_good_entities_and_names_the_byte(workdir: Path, tmp_path: Path, decompressor: str) -> None:
    whole = write_dump(tmp_path / "dump.json.bz2", many_entities(3000))
    cut = tmp_path / "cut.json.bz2"
    cut.write_bytes(whole.read_bytes()[: whole.stat().st_size // 2])
    source = build_film(workdir, cut, decompressor=decompressor)
    assert 0 < source["counts"]["entities"] < 3000
    entries = quarantine_entries(workdir, source)
    truncated = [e for e in entries if e["location"] == "end of dump"]
    assert len(truncated) == 1
    assert "byte" in truncated[0]["reason"] and "the entities before it were kept" in truncated[0]["reason"]
    assert source["counts"]["dump_truncated"] == 1


def test_corrupt_line_is_quarantined_with_line_and_byte(workdir: Path, tmp_path: Path) -> None:
    path = write_dump(tmp_path / "dump.json", many_entities(20))
    lines = path.read_text(encoding="utf-8").split("\n")
    lines[5] = '{"type":"item","id":"Q5","labels":{"en":{'  # line 6 of the file
    lines[8] = (
        '{"type":"item","id":"Q8","labels":{"en":{"language":"en","value":"eight"}},"claims":{"P31":[{"mainsnak":{"snaktype":"value","datavalue":'
        '{"type":"time","value":{"time":"yesterday"}}},"rank":"normal"}]}},'
    )
    path.write_text("\n".join(lines), encoding="utf-8")
    offset = sum(len(line.encode()) + 1 for line in lines[:5])
    source = build_film(workdir, path)
    assert source["counts"]["entities"] == 19
    entries = quarantine_entries(workdir, source)
    assert entries[0]["location"] == f"line 6 (byte {offset})" and "malformed JSON" in entries[0]["reason"]
    bad_value = [e for e in entries if e["location"].startswith("line 9 ")]
    assert bad_value and "malformed time 'yesterday'" in bad_value[0]["reason"]
    assert "Q8" in subjects(workdir)  # the entity itself is kept, only the bad statement is out


def test_workers_give_the_same_triples_as_one_process(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json.gz", many_entities(1500))
    cfg = WikidataConfig.from_schema(load_schema("film"))
    single = run_resumable(dump, PassSpec("extract", cfg), tmp_path / "a", workers=0)
    double = run_resumable(dump, PassSpec("extract", cfg), tmp_path / "b", workers=2)
    assert single.counts["entities"] == double.counts["entities"] == 1500
    assert list(read_journal(single.journal)) == list(read_journal(double.journal))


def test_workers_extract_only_the_wanted_entities(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json.gz", many_entities(1500))
    wanted = frozenset(f"Q{i}" for i in range(1, 1501, 7))
    spec = PassSpec("extract", WikidataConfig.from_schema(load_schema("film")), wanted)
    single = run_resumable(dump, spec, tmp_path / "a", workers=0)
    double = run_resumable(dump, spec, tmp_path / "b", workers=2, batch_bytes=50_000)
    assert list(read_journal(single.journal)) == list(read_journal(double.journal))
    assert double.counts["entities"] == len(wanted) and double.counts["entities_skipped"] == 1500 - len(wanted)
    assert {payload.split(" ", 1)[0] for _, payload in read_journal(double.journal, "T")} == {WD + q for q in wanted}


def test_batches_too_large_for_the_ring_travel_inline_and_the_spool_is_removed(tmp_path: Path) -> None:
    entities = many_entities(300)
    entities[100]["descriptions"]["de"] = {"language": "de", "value": "groß " * 20_000}  # ~120 kB on one line
    dump = write_dump(tmp_path / "dump.json", entities)
    lines = dump.read_bytes().split(b"\n")
    lines[200] = b'{"type":"item","id":"Q200","labels":'  # a bad line among small batches
    dump.write_bytes(b"\n".join(lines))
    spec = PassSpec("extract", WikidataConfig.from_schema(load_schema("film")))
    single = run_resumable(dump, spec, tmp_path / "a", workers=0, batch_bytes=16_000)
    double = run_resumable(dump, spec, tmp_path / "b", workers=2, batch_bytes=16_000)
    assert list(read_journal(single.journal)) == list(read_journal(double.journal))
    assert double.counts["entities"] == 299 and double.counts["entities_bad"] == 1
    assert not list((tmp_path / "b").rglob("*.spool"))


def test_a_killed_pass_resumes_from_its_byte_offset(tmp_path: Path) -> None:
    dump = write_dump(tmp_path / "dump.json", many_entities(2500))
    spec = PassSpec("extract", WikidataConfig.from_schema(load_schema("film")))
    fresh = run_resumable(dump, spec, tmp_path / "fresh")
    stopped = run_resumable(dump, spec, tmp_path / "state", stop_after_batches=1)
    partial_lines = len(list(read_journal(stopped.journal)))
    resumed = run_resumable(dump, spec, tmp_path / "state")
    assert 0 < partial_lines < len(list(read_journal(fresh.journal)))
    assert resumed.resumed_from > 0
    assert list(read_journal(resumed.journal)) == list(read_journal(fresh.journal))
    assert resumed.counts["entities"] == 2500
    again = run_resumable(dump, spec, tmp_path / "state")
    assert again.reused


# --- selection: seeds, P279* closure, hops, fan-out cap ---------------------------------------


def graph_dump(tmp_path: Path) -> Path:
    return write_dump(tmp_path / "graph.json.bz2", graph_entities())


def graph_entities() -> list[dict]:
    hub = [f"Q{i}" for i in range(101, 111)]
    return [
        entity(
            "Q1",
            {"en": "root"},
            {"P161": ["Q2", "Q3"], "P57": [{"value": "Q999", "rank": "deprecated"}], "P1344": ["Q998"]},
        ),
        entity("Q2", {"en": "two"}, {"P161": ["Q4", "Q100"]}),
        entity("Q3", {"en": "three"}, {"P161": ["Q5", "Q6"]}),
        entity("Q4", {"en": "four"}, {"P57": ["Q7"]}),
        entity("Q5", {"en": "five"}, {"P57": ["Q1"]}),
        entity("Q6", {"en": "six"}),
        entity("Q7", {"en": "seven"}, {"P57": ["Q8"]}),
        entity("Q8", {"en": "eight"}),
        entity("Q100", {"en": "hub"}, {"P161": hub}),
        *[entity(q, {"en": q}) for q in hub],
        entity("Q998", {"en": "excluded target"}),
        entity("Q999", {"en": "deprecated target"}),
        entity("Q200", {"en": "film subclass"}, {"P279": ["Q11424"]}),
        entity("Q201", {"en": "film sub-subclass"}, {"P279": ["Q200"]}),
        entity("Q300", {"en": "some film", "zh": "某电影"}, {"P31": ["Q201"], "P57": ["Q6"]}),
        entity("Q301", {"en": "some film"}, {"P31": ["Q5"]}),
    ]


EXPECTED_LEVELS = [{"Q1"}, {"Q2", "Q3"}, {"Q4", "Q100", "Q5", "Q6"}, {"Q7", "Q101", "Q102", "Q103"}]


def test_expansion_gives_exact_sets_per_hop_with_the_cap(tmp_path: Path) -> None:
    cfg = WikidataConfig.from_schema(load_schema("film"), {"exclude": ["P1344"]})
    index = run_resumable(graph_dump(tmp_path), PassSpec("index", cfg), tmp_path / "state")
    records = lambda: index_records(index.journal)  # noqa: E731
    for hops in (1, 2, 3):
        result = expand(records, {"Q1"}, hops, fanout_cap=3)
        assert result.levels == EXPECTED_LEVELS[: hops + 1]
        assert result.entities == set().union(*EXPECTED_LEVELS[: hops + 1])
    assert expand(records, {"Q1"}, 3, fanout_cap=3).capped == {"Q100": 10}
    uncapped = expand(records, {"Q1"}, 3, fanout_cap=None)
    assert uncapped.levels[3] == {"Q7", *(f"Q{i}" for i in range(101, 111))}
    closure = subclass_closure(records, {"Q11424"})
    assert closure == {"Q11424", "Q200", "Q201"}
    assert instances_of(records, closure) == {"Q300"}


def test_build_with_seeds_extracts_only_the_selection(workdir: Path, tmp_path: Path) -> None:
    dump = graph_dump(tmp_path)
    source = build_film(workdir, dump, seeds=["Q1"], hops=2, fanout_cap=3, exclude=["P1344"], workers=1)
    assert subjects(workdir) == set().union(*EXPECTED_LEVELS[:3])
    assert source["counts"]["hop_2_entities"] == 4 and source["counts"]["selected_entities"] == 7


def test_seeds_by_class_and_by_name(workdir: Path, tmp_path: Path) -> None:
    dump = graph_dump(tmp_path)
    source = build_film(workdir, dump, seed_classes=["Q11424"], hops=1)
    assert subjects(workdir) == {"Q300", "Q6", "Q201"}  # P31 is an edge like any other
    build_film(tmp_path / "no-follow", dump, seed_classes=["Q11424"], hops=1, no_follow=["P31"])
    assert subjects(tmp_path / "no-follow") == {"Q300", "Q6"}  # … unless no_follow lists it
    assert source["counts"]["class_closure_size"] == 3
    # "some film" names two entities: reported as ambiguous, never guessed; 某电影 is unique
    workdir = tmp_path / "by-name"  # a second build in the same second needs its own folder (build ids)
    source = build_film(workdir, dump, seed_names=["some film", "某电影", "nothing like it"], hops=0)
    assert subjects(workdir) == {"Q300"}
    reasons = {e["location"]: e["reason"] for e in quarantine_entries(workdir, source)}
    assert reasons["seed name 'some film'"].startswith("ambiguous: 2 entities")
    assert "seed name 'nothing like it'" not in reasons and source["counts"]["seed_names_unmatched"] == 1
    selection = json.loads(next((workdir / "film" / "raw" / "wikidata").glob("index-*/selection.json")).read_text())
    assert selection["unmatched_seed_names"] == ["nothing like it"]


def test_demo_dump_builds(workdir: Path, tmp_path: Path) -> None:
    path = write_demo_dump(tmp_path / "demo.json.bz2")
    source = build_film(workdir, path)
    assert source["counts"]["entities"] == 11 and source["quarantined"] == 0
    store = Snapshot.open("film", workdir).store()
    labels = {
        q.object
        for q in store.quads_for_pattern(ox.NamedNode(WD + "Q1000002"), None, None, None)
        if isinstance(q.object, ox.Literal) and q.object.language
    }
    assert ox.Literal("霸王别姬", language="zh-hans") in labels


@pytest.mark.slow  # a real import killed and resumed
def test_cli_import_killed_then_resumed(cli, tmp_path: Path) -> None:
    """SIGKILL a real `kgforge import wikidata` after a checkpoint; the rerun resumes at its byte offset
    and ends with exactly the quads of an uninterrupted import."""
    import os
    import signal
    import subprocess
    import sys
    import time

    dump = write_dump(tmp_path / "dump.json", many_entities(12000))
    options = ["--domain", "film", "--workers", "0"]
    killed, fresh = tmp_path / "killed", tmp_path / "fresh"
    env = {**os.environ, "KGFORGE_WIKIDATA_CHECKPOINT_SECONDS": "0.05"}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kgforge.cli import main; main()",
            "import",
            "wikidata",
            str(dump),
            *options,
            "--workdir",
            str(killed),
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=env,
    )
    deadline = time.monotonic() + 120
    checkpoint = None
    while time.monotonic() < deadline and proc.poll() is None:
        found = list((killed / "film" / "raw" / "wikidata").glob("extract-*/checkpoint.json"))
        if found and json.loads(found[0].read_text())["offset"] > 0:
            checkpoint = json.loads(found[0].read_text())
            break
        time.sleep(0.02)
    assert checkpoint is not None and proc.poll() is None, "the import ended before a checkpoint could be seen"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    resumed = json.loads(cli("import", "wikidata", str(dump), *options, "--workdir", str(killed), "--json").stdout)
    assert resumed["source"]["counts"]["resumed_from_byte"] >= checkpoint["offset"] > 0
    assert resumed["source"]["counts"]["entities"] == 12000
    whole = json.loads(cli("import", "wikidata", str(dump), *options, "--workdir", str(fresh), "--json").stdout)
    assert whole["source"]["counts"]["resumed_from_byte"] == 0
    quads = [
        (folder / "film" / resumed["source"]["quads_file"]).read_text(encoding="utf-8") for folder in (killed, fresh)
    ]
    assert sorted(quads[0].splitlines()) == sorted(quads[1].splitlines())


def test_a_dying_worker_fails_the_pass_clearly(tmp_path: Path) -> None:
    """A worker killed mid-pass (as the OOM killer would) stops the pass with a clear error, never a hang."""
    import pytest

    from kgforge.core.errors import KgforgeError

    dump = write_dump(tmp_path / "dump.json", many_entities(300))
    spec = PassSpec("extract", WikidataConfig())
    with pytest.raises(KgforgeError, match=r"worker process died .* byte \d+"):
        run_resumable(
            dump, spec, tmp_path / "state", workers=1, batch_bytes=20_000, on_progress=lambda n: _kill_workers()
        )


def _kill_workers() -> None:
    import multiprocessing
    import os
    import signal

    for child in multiprocessing.active_children():
        os.kill(child.pid, signal.SIGKILL)
