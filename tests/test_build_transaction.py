"""Build states are transactions: a failed or killed build is never read, quads are deterministic and
verified by checksum, and what a killed writer leaves behind is reported with the command that removes it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.demo.wikidata_dump import write_demo_dump
from kgforge.derive import ASSOCIATED_GRAPH
from kgforge.store.snapshot import Snapshot
from tests.faults import kill_at_random_point, part_files
from tests.test_derive import write_sessions
from tests.test_store import _write_kb
from tests.test_xlore import film_dump

KB_TRAVEL = "kdconv/travel/kb_travel.json"
SHARED_TICKET = "SELECT (COUNT(*) AS ?n) WHERE { ?pair kg:sharedObject ?x FILTER(STR(?x) = 'SAMEVALUE') }"


def _json(cli, *args: str) -> dict:
    return json.loads(cli(*args, "--json").stdout)


def _manifest(workdir: Path, domain: str) -> dict:
    return json.loads((workdir / domain / "manifest.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # builds the real travel KB, a failed rebuild, derives
def test_a_failed_rebuild_is_never_read_by_derive(cli, shared, workdir, tmp_path):
    """The rebuild imports a copy whose 门票 values are all SAMEVALUE, then fails on an
    empty second source; check stays ok and derive works on the published build, exactly as before."""
    kb = shared(KB_TRAVEL)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir))
    before = _json(cli, "derive", "travel", "--workdir", str(workdir))
    derived_sha = _manifest(workdir, "travel")["graphs"][ASSOCIATED_GRAPH]["sha256"]

    data = json.loads(kb.read_text(encoding="utf-8"))
    for triples in data.values():
        for triple in triples:
            if triple[1] == "门票":
                triple[2] = "SAMEVALUE"
    (tmp_path / "copy").mkdir()
    copy = tmp_path / "copy" / "kb_travel.json"  # same name, so the same graph and quads file name
    copy.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    (tmp_path / "empty.json").write_text("", encoding="utf-8")
    failed = cli(
        "build",
        "travel",
        "--source",
        f"kdconv:{copy}",
        "--source",
        f"kdconv:{tmp_path / 'empty.json'}",
        "--no-schema-sources",
        "--workdir",
        str(workdir),
        check=False,
    )
    assert failed.returncode == 1 and "empty" in failed.stderr

    checked = _json(cli, "check", "travel", "--workdir", str(workdir))
    assert checked["ok"], checked["problems"]
    after = _json(cli, "derive", "travel", "--workdir", str(workdir))
    assert after["relations"] == before["relations"]
    assert _manifest(workdir, "travel")["graphs"][ASSOCIATED_GRAPH]["sha256"] == derived_sha
    out = cli("query", "travel", SHARED_TICKET, "--format", "csv", "--workdir", str(workdir)).stdout
    assert out.splitlines() == ["n", "0"]
    assert not part_files(workdir) and not list((workdir / "travel" / "builds").glob("*/.incomplete"))


@pytest.mark.slow  # two builds in fresh interpreters with other hash seeds
def test_two_builds_of_the_same_input_give_identical_quads(cli, shared, workdir, tmp_path):
    """Equal inputs, equal checksums, whatever Python's hash seed: a check can tell a change from noise."""
    sources = [
        f"kdconv:{shared(KB_TRAVEL)}",
        f"kdconv-dialogues:{shared('kdconv/film/dev.json')}",
        f"duconv:{write_sessions(tmp_path / 'sessions.jsonl')}",
        f"xlore:{film_dump(tmp_path / 'xlore')}",
        f"wikidata:{write_demo_dump(tmp_path / 'wikidata.json.bz2')}",
        f"wikidata-nt:{shared('wikidata_rdf/Q8_happiness.truthy.nt')}",
    ]
    digests = []
    for seed in ("1", "2"):
        folder = workdir / f"seed{seed}"
        args = [a for s in sources for a in ("--source", s)]
        cli("build", "film", *args, "--no-schema-sources", "--workdir", str(folder), env={"PYTHONHASHSEED": seed})
        graphs = _manifest(folder, "film")["graphs"]
        files = {
            g: hashlib.sha256((folder / "film" / e["quads_file"]).read_bytes()).hexdigest() for g, e in graphs.items()
        }
        assert files == {g: e["sha256"] for g, e in graphs.items()}  # the manifest tells the truth
        digests.append(files)
    assert len(digests[0]) == len(sources) + 1 and digests[0] == digests[1]  # + the schema graph


def test_stages_trust_a_quads_file_by_its_checksum_not_its_line_count(cli, workdir, tmp_path):
    kb = _write_kb(tmp_path / "kb.json", 20)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir))
    [entry] = [e for e in _manifest(workdir, "travel")["graphs"].values() if e["kind"] == "kdconv"]
    quads_file = workdir / "travel" / entry["quads_file"]
    text = quads_file.read_text(encoding="utf-8")
    assert "北京市第3号" in text
    quads_file.write_text(text.replace("北京市第3号", "TAMPERED"), encoding="utf-8")  # same line count
    facts = Snapshot.open("travel", workdir).tables().facts
    assert "TAMPERED" not in facts["o"].to_list()
    assert "北京市第3号" in facts["o"].to_list()  # read from the store instead
    checked = cli("check", "travel", "--workdir", str(workdir), check=False)
    assert checked.returncode == 1 and "sha256 differs" in checked.stdout


@pytest.mark.slow  # kills an import
def test_a_killed_import_is_reported_by_check_and_cleaned(cli, workdir, tmp_path):
    """A build killed while importing leaves ``quads/*.nq.part<pid>``: check names them and the command that removes them."""
    small = _write_kb(tmp_path / "small.json", 30)
    cli("build", "travel", "--source", f"kdconv:{small}", "--no-schema-sources", "--workdir", str(workdir))
    big = _write_kb(tmp_path / "big.json", 30_000)
    root = workdir / "travel"
    run = kill_at_random_point(
        ["build", "travel", "--source", f"kdconv:{big}", "--no-schema-sources", "--workdir", str(workdir)],
        seed=0,
        window=(0.0, 0.05),
        ready=lambda: bool(part_files(root)),
    )
    assert run.killed
    assert part_files(root)
    report = _json(cli, "check", "travel", "--workdir", str(workdir))
    assert report["ok"] and report["leftovers"]
    text = cli("check", "travel", "--workdir", str(workdir)).stdout
    assert f"kgforge check travel --clean --workdir {workdir}" in text
    cleaned = _json(cli, "check", "travel", "--clean", "--workdir", str(workdir))
    assert cleaned["ok"] and cleaned["removed"] and not cleaned["leftovers"]
    assert not part_files(root)
    assert not _json(cli, "check", "travel", "--workdir", str(workdir))["leftovers"]


def test_no_usable_record_names_only_files_that_exist(cli, workdir, tmp_path):
    """With no usable record, the message names only files that were written (no quarantine file that is not there)."""
    empty = tmp_path / "empty_kb.json"
    empty.write_text("{}", encoding="utf-8")
    result = cli(
        "build", "travel", "--source", f"kdconv:{empty}", "--no-schema-sources", "--workdir", str(workdir), check=False
    )
    assert result.returncode == 1 and "no usable record" in result.stderr
    named = re.findall(r"see (\S+?\.jsonl)", result.stderr)
    assert all(Path(path).exists() for path in named), named
    bad = tmp_path / "bad_kb.json"
    bad.write_text(json.dumps({"故宫": "not a list"}, ensure_ascii=False), encoding="utf-8")
    result = cli(
        "build", "travel", "--source", f"kdconv:{bad}", "--no-schema-sources", "--workdir", str(workdir), check=False
    )
    [named] = re.findall(r"see (\S+?\.jsonl)", result.stderr)
    assert Path(named).exists() and "not a list" in Path(named).read_text(encoding="utf-8")


def test_the_store_link_is_the_one_place_stages_read(cli, workdir, tmp_path):
    """``kg/<domain>/quads`` and ``manifest.json`` are the published build's, reached through ``store``."""
    kb = _write_kb(tmp_path / "kb.json", 10)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--no-schema-sources", "--workdir", str(workdir))
    root = workdir / "travel"
    build = (root / "store").resolve()
    for graph, entry in _manifest(workdir, "travel")["graphs"].items():
        assert (root / entry["quads_file"]).resolve() == (build / entry["quads_file"]).resolve(), graph
    store = Snapshot.open("travel", workdir).store()
    assert len(store) == sum(e["quads"] for e in _manifest(workdir, "travel")["graphs"].values())
    assert isinstance(next(iter(store)).subject, ox.NamedNode)
