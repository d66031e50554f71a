"""The store: atomic swaps survive SIGKILL, one writer, read-only readers, manifest checks, timeouts."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgforge.core.errors import QueryTimeout, StoreLockedError
from kgforge.publish.transaction import build, check_store, parse_source
from kgforge.store.layout import domain_paths, write_lock
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot


def _write_kb(path: Path, n: int, prefix: str = "景点") -> Path:
    kb = {
        f"{prefix}{i}": [
            [f"{prefix}{i}", "周边景点", f"{prefix}{(i * 7 + 1) % n}"],
            [f"{prefix}{i}", "地址", f"北京市第{i}号"],
            [f"{prefix}{i}", "Information", f"{prefix}{i}的介绍。" * 20],
        ]
        for i in range(n)
    }
    path.write_text(json.dumps(kb, ensure_ascii=False), encoding="utf-8")
    return path


def _stats(cli, workdir: Path, domain: str = "travel") -> dict:
    return json.loads(cli("stats", domain, "--workdir", str(workdir), "--json").stdout)


@pytest.mark.slow  # SIGKILL of real builds at seeded moments
def test_sigkill_during_build_leaves_previous_store_intact(tmp_path, workdir, cli):
    small = _write_kb(tmp_path / "small.json", 50)
    cli("build", "travel", "--source", f"kdconv:{small}", "--workdir", str(workdir))
    before = _stats(cli, workdir)
    big = _write_kb(tmp_path / "big.json", 60_000)
    builds = workdir / "travel" / "builds"
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from kgforge.cli import main; main()",
            "build",
            "travel",
            "--source",
            f"kdconv:{big}",
            "--workdir",
            str(workdir),
            "--json",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.time() + 120
    while time.time() < deadline and not any(
        (b / ".incomplete").exists() and (b / "oxigraph").exists() for b in builds.iterdir()
    ):
        time.sleep(0.05)  # wait until the load phase has started writing the staged build's store
    assert process.poll() is None, "the build finished before it could be killed; make the input bigger"
    time.sleep(0.5)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert any((b / ".incomplete").exists() for b in builds.iterdir())
    assert _stats(cli, workdir) == before
    assert json.loads(cli("check", "travel", "--workdir", str(workdir), "--json").stdout)["ok"]
    # the next build cleans the killed one away
    cli("build", "travel", "--source", f"kdconv:{small}", "--workdir", str(workdir))
    assert not any((b / ".incomplete").exists() for b in builds.iterdir())


def test_second_writer_gets_a_message_naming_the_lock(tmp_path, workdir, cli):
    kb = _write_kb(tmp_path / "kb.json", 10)
    paths = domain_paths("travel", workdir)
    with write_lock(paths):
        result = cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir), check=False)
        with pytest.raises(StoreLockedError, match=str(os.getpid())):
            build("travel", [parse_source(f"kdconv:{kb}")], workdir, show_progress=False)
    assert result.returncode == 1
    assert str(paths.lock) in result.stderr and f"pid {os.getpid()}" in result.stderr
    assert "RocksDB" not in result.stderr and "Traceback" not in result.stderr
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))  # lock released


def test_check_gives_a_running_writer_s_pid_as_an_int(tmp_path, workdir, cli):
    # CheckReport.writer_pid is declared int; it held the lock file's text ("1234") until mypy saw it
    kb = _write_kb(tmp_path / "kb.json", 10)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    with write_lock(domain_paths("travel", workdir)):
        report = check_store(Snapshot.open("travel", workdir))
        printed = json.loads(cli("check", "travel", "--workdir", str(workdir), "--json", check=False).stdout)
    assert report.writer_pid == os.getpid() and isinstance(report.writer_pid, int)
    assert printed["writer_pid"] == os.getpid()


def test_readers_work_while_a_writer_holds_the_lock(tmp_path, workdir, cli):
    kb = _write_kb(tmp_path / "kb.json", 10)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    with write_lock(domain_paths("travel", workdir)):
        assert _stats(cli, workdir)["entities"] == 10
        out = cli(
            "query",
            "travel",
            "--workdir",
            str(workdir),
            "--format",
            "csv",
            "SELECT (COUNT(*) AS ?n) WHERE { ?s kgr:nearby ?o }",
        ).stdout
        assert out.splitlines() == ["n", "10"]


def test_manifest_records_inputs_and_check_detects_tampering(tmp_path, workdir, cli):
    kb = _write_kb(tmp_path / "kb.json", 20)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    manifest = json.loads((workdir / "travel" / "manifest.json").read_text(encoding="utf-8"))
    [source] = [g for g in manifest["graphs"].values() if g["kind"] == "kdconv"]
    assert source["input"]["size"] == kb.stat().st_size
    assert len(source["input"]["sha256"]) == 64
    assert source["quads"] == manifest["total_quads"] - manifest["graphs"]["https://kgforge.org/graph/schema"]["quads"]
    assert {"pyoxigraph", "python", "kgforge"} <= set(manifest["versions"])
    assert check_store(Snapshot.open("travel", workdir)).ok
    quads_file = workdir / "travel" / source["quads_file"]
    quads_file.write_text(quads_file.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    result = cli("check", "travel", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "sha256 differs" in result.stdout


@pytest.mark.slow  # waits out a query timeout
def test_query_past_its_timeout_is_an_error_not_a_short_result(tmp_path, workdir, cli):
    kb = _write_kb(tmp_path / "kb.json", 400)
    cli("build", "travel", "--source", f"kdconv:{kb}", "--workdir", str(workdir))
    explosive = "SELECT (COUNT(*) AS ?n) WHERE { ?a ?p ?b . ?c ?q ?d . ?e ?r ?f . ?g ?s ?h }"
    with QueryRunner(Snapshot.open("travel", workdir)) as runner:
        with pytest.raises(QueryTimeout, match="1 s timeout"):
            runner.query(explosive, timeout=1)
        quick = runner.query("SELECT (COUNT(*) AS ?n) WHERE { ?s kgr:nearby ?o }", timeout=30)
        assert quick.rows[0]["n"].value == "400"  # the runner recovers after a timeout
    result = cli(
        "query", "travel", explosive, "--timeout", "1", "--workdir", str(workdir), "--format", "csv", check=False
    )
    assert result.returncode == 1 and "timeout" in result.stderr and result.stdout == ""


def test_query_before_any_build_says_what_to_do(workdir, cli):
    result = cli("query", "film", "SELECT * WHERE { ?s ?p ?o }", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "kgforge build film" in result.stderr
