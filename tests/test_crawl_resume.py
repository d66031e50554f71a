"""Kill a crawl with SIGKILL part-way, resume it: nothing is fetched twice, and the store built from
it equals the store of an uninterrupted crawl."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pyoxigraph as ox

from kgforge.crawl.loopback import LoopbackSite, wait_for
from tests.crawl_support import CLI_SETTINGS, DOUBAN, douban_routes

KILL_AFTER = 8  # finished pages


def finished_pages(frontier: Path) -> int:
    if not frontier.exists():
        return 0
    try:
        with sqlite3.connect(f"file:{frontier}?mode=ro", uri=True, timeout=1) as db:
            return db.execute("SELECT COUNT(*) FROM pages WHERE state != 'pending'").fetchone()[0]
    except sqlite3.OperationalError:  # the crawler is creating the file
        return 0


def crawl_args(site: LoopbackSite, workdir: Path, *extra: str) -> list[str]:
    # A longer delay than the other tests, so that the kill lands between two requests.
    settings = list(CLI_SETTINGS)
    settings[settings.index("--delay") + 1] = "0.25"
    return [sys.executable, "-c", "from kgforge.commands import main; main()", "crawl", "douban_movie",
            "--base-url", site.base_url, *settings, "--workdir", str(workdir), "--json", *extra]


def store_quads(cli, workdir: Path) -> list[str]:
    cli("build", "film", "--source", "crawl:douban_movie", "--workdir", str(workdir), "--json")
    store = ox.Store.read_only(str(workdir / "film" / "store" / "oxigraph"))
    return sorted(str(q) for q in store.quads_for_pattern(None, None, None, None))


def test_sigkill_then_resume_fetches_nothing_twice(cli, tmp_path):
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    with LoopbackSite(DOUBAN, douban_routes()) as site:
        frontier = killed / "film" / "raw" / "crawl" / "douban_movie" / "frontier.sqlite"
        process = subprocess.Popen(crawl_args(site, killed), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            assert wait_for(lambda: finished_pages(frontier) >= KILL_AFTER, timeout=60)
            os.kill(process.pid, signal.SIGKILL)
        finally:
            process.communicate(timeout=30)
        assert process.returncode == -signal.SIGKILL
        at_kill = finished_pages(frontier)
        assert KILL_AFTER <= at_kill < 22
        without_resume = subprocess.run(crawl_args(site, killed), capture_output=True, text=True)
        assert without_resume.returncode == 1 and "--resume" in without_resume.stderr
        resumed = subprocess.run(crawl_args(site, killed, "--resume"), capture_output=True, text=True, timeout=120)
        assert resumed.returncode == 0, resumed.stderr
        killed_log = site.paths()

        site.routes.update(douban_routes())  # re-arm the 429 and the 500
        site.log.clear()
        cli(*crawl_args(site, whole)[3:])
        whole_log = site.paths()

    assert Counter(killed_log) == Counter(whole_log)  # the same requests, none repeated by the resume
    assert killed_log.count("/robots.txt") == 1 and killed_log.count("/subject/1292052/") == 1
    assert store_quads(cli, killed) == store_quads(cli, whole)
