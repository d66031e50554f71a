"""Releases of the shared KdConv travel dev dialogues (domain built from kb_travel.json) and of the DuConv dev sample,
read by what reads releases: ``datasets.load_dataset`` offline (both configs, every split, the files' row counts),
``mlcroissant validate`` and mlcroissant's records of ``turns``, ``kgforge release check``, and the seeds' own
readers (``run-readers kdconv`` / ``duconv-session``, where their mirrors are fetched)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from kgforge.release import check_release
from tests.conftest import REPO, run_cli, shared_file
from tests.test_release import assert_names_nothing_private

pytestmark = pytest.mark.slow  # whole releases, read back by `datasets` and mlcroissant in fresh interpreters

READERS = {"kdconv": "kdconv", "duconv": "duconv-session", "durecdial": "durecdial-resource"}
MIRRORS = {
    "kdconv": "thu-coai+KdConv",
    "duconv": "baidu+knowledge-driven-dialogue",
    "durecdial": "PaddlePaddle+Research",
}


@pytest.fixture(scope="module", params=["kdconv", "duconv", "durecdial"])
def release(request, tmp_path_factory):
    """(workdir, release folder, config) of the KdConv travel dev set (split 8:1:1 by topic), the DuConv sample
    and the DuRecDial LIC-2020 resource sample."""
    root = tmp_path_factory.mktemp(request.param)
    workdir = root / "kg"
    if request.param == "kdconv":
        kb, dialogues, domain = (
            shared_file("kdconv/travel/kb_travel.json"),
            shared_file("kdconv/travel/dev.json"),
            "travel",
        )
        run_cli("build", domain, "--source", f"kdconv:{kb}", "--workdir", str(workdir))
        extra = ["--ratios", "8:1:1", "--by", "topic"]
    else:
        relative = {"duconv": "duconv/dev.head250.jsonl", "durecdial": "durecdial/lic2020_baseline_resource_dev.txt"}
        dialogues, domain = shared_file(relative[request.param]), request.param
        run_cli("build", domain, "--source", f"{request.param}:{dialogues}", "--workdir", str(workdir))
        extra = []
    out = root / f"{request.param}-release"
    run_cli("release", domain, "--dialogues", str(dialogues), "--out", str(out), "--workdir", str(workdir), *extra)
    return workdir, out, request.param


def mirrors(config: str) -> Path | None:
    """The folder holding the mirror of the repository whose readers read ``config``'s layout, if fetched."""
    for root in (os.environ.get("READERS_MIRRORS"), "/work/.mirror"):
        if root and (Path(root) / MIRRORS[config] / "repo").is_dir():
            return Path(root)
    return None


LOAD = """
import json, sys, datasets
folder, configs = sys.argv[1], sys.argv[2:]
print(json.dumps({c: {s: d.num_rows for s, d in datasets.load_dataset(folder, c).items()} for c in configs}))
"""


def test_datasets_loads_both_configs_and_every_split_offline(release, tmp_path):
    _, out, config = release
    env = {**os.environ, "HF_DATASETS_OFFLINE": "1", "HF_HUB_OFFLINE": "1", "HF_HOME": str(tmp_path / "hf")}
    result = subprocess.run(
        [sys.executable, "-c", LOAD, str(out), "turns", config], capture_output=True, text=True, env=env, timeout=600
    )
    assert result.returncode == 0, result.stderr[-2000:]
    loaded = json.loads(result.stdout.strip().splitlines()[-1])
    manifest = json.loads((out / "release.json").read_text(encoding="utf-8"))
    expected_turns = {
        s["name"]: pl.read_parquet(out / s["turns_file"].replace(".jsonl", ".parquet")).height
        for s in manifest["splits"]
    }
    expected_dialogues = {s["name"]: s["dialogues"] for s in manifest["splits"]}
    assert loaded == {"turns": expected_turns, config: expected_dialogues}
    for split in manifest["splits"]:
        records = (out / split["layout_file"]).read_text(encoding="utf-8")
        count = len(json.loads(records)) if split["layout_file"].endswith(".json") else len(records.splitlines())
        assert count == split["dialogues"]


def test_mlcroissant_validates_and_reads_every_turn_record(release):
    _, out, _ = release
    validate = REPO / ".venv" / "bin" / "mlcroissant"
    command = [str(validate)] if validate.exists() else [sys.executable, "-m", "mlcroissant.scripts.cli"]
    result = subprocess.run(
        [*command, "validate", "--jsonld", str(out / "croissant.json")], capture_output=True, text=True
    )
    assert result.returncode == 0, result.stderr[-2000:]
    import mlcroissant as mlc

    read = sum(1 for _ in mlc.Dataset(jsonld=str(out / "croissant.json")).records(record_set="turns"))
    assert read == json.loads((out / "release.json").read_text(encoding="utf-8"))["turns"]


def test_release_check_passes_and_the_seeds_readers_read_the_layout_files(release):
    workdir, out, config = release
    found = mirrors(config)
    kit = shared_file("duconv").parent.parent / "readers" / "run-readers"
    report = check_release(out, mirrors=found, readers=kit if found and kit.exists() else None, records=True)
    assert report.ok, report.problems
    readers = {line.check: line for line in report.checks}["readers"]
    if found is None or not kit.exists():
        assert readers.status == "not run"
        pytest.skip(f"no reader mirror: fetch github:{MIRRORS[config].replace('+', '/')} and set READERS_MIRRORS")
    assert readers.status == "ok" and f"run-readers {READERS[config]}" in readers.detail
    assert_names_nothing_private(out, workdir)
