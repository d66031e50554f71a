"""Kill a real `kgforge crawl` with SIGKILL at seeded random moments, resume it each time: no page that was
finished at a kill is fetched again, nothing is left running or half-written, and the store built from
the resumed crawl equals the store of an uninterrupted crawl."""

from __future__ import annotations

import sqlite3
from collections import Counter
from pathlib import Path

import pyoxigraph as ox
import pytest

from kgforge.crawl.cache import ResponseCache
from kgforge.crawl.loopback import LoopbackSite
from tests.crawl_support import CLI_SETTINGS, DOUBAN, douban_routes
from tests.faults import kill_at_random_point, orphans, part_files

pytestmark = pytest.mark.slow  # a real crawl killed at seeded random points and resumed each time

SEEDS = (11, 12, 13)  # one kill each: the first run, then two --resume runs
WINDOW = (1.5, 4.0)  # seconds after the process starts (about 1 s of it is Python importing kgforge)


def settled_pages(frontier: Path) -> set[str]:
    """URLs the frontier had finished (done, failed or skipped) when the crawl was killed."""
    if not frontier.exists():
        return set()
    with sqlite3.connect(f"file:{frontier}?mode=ro", uri=True, timeout=5) as db:
        return {url for (url,) in db.execute("SELECT url FROM pages WHERE state != 'pending'")}


def crawl_args(site: LoopbackSite, workdir: Path, *extra: str) -> list[str]:
    # A longer delay than the other tests, so the crawl lasts long enough to be killed three times.
    settings = list(CLI_SETTINGS)
    settings[settings.index("--delay") + 1] = "0.25"
    return [
        "crawl",
        "douban_movie",
        "--base-url",
        site.base_url,
        *settings,
        "--workdir",
        str(workdir),
        "--json",
        *extra,
    ]


def store_quads(cli, workdir: Path) -> list[str]:
    cli("build", "film", "--source", "crawl:douban_movie", "--workdir", str(workdir), "--json")
    store = ox.Store.read_only(str(workdir / "film" / "store" / "oxigraph"))
    return sorted(str(q) for q in store.quads_for_pattern(None, None, None, None))


def test_seeded_sigkills_then_resume_fetch_nothing_twice(cli, tmp_path):
    killed, whole = tmp_path / "killed", tmp_path / "whole"
    crawl_dir = killed / "film" / "raw" / "crawl" / "douban_movie"
    with LoopbackSite(DOUBAN, douban_routes()) as site:
        kills = []
        for run, seed in enumerate(SEEDS):
            outcome = kill_at_random_point(crawl_args(site, killed, *(["--resume"] if run else [])), seed, WINDOW)
            assert orphans(outcome.tag) == []
            settled = settled_pages(crawl_dir / "frontier.sqlite")
            if site.base_url + "/robots.txt" in ResponseCache(crawl_dir / "cache"):
                settled.add(site.base_url + "/robots.txt")
            kills.append((outcome, len(site.log), settled))
        assert sum(outcome.killed for outcome, _, _ in kills) >= 2, [k[0] for k in kills]
        without_resume = cli(*crawl_args(site, killed), check=False)
        assert without_resume.returncode == 1 and "--resume" in without_resume.stderr
        cli(*crawl_args(site, killed, "--resume"))
        killed_log = [entry.path for entry in site.log]

        site.routes.update(douban_routes())  # re-arm the 429 and the 500
        site.log.clear()
        cli(*crawl_args(site, whole))
        whole_log = site.paths()

    for outcome, requests_before_kill, settled in kills:
        refetched = {path for path in killed_log[requests_before_kill:] if site.base_url + path in settled}
        assert refetched == set(), f"fetched again after the kill at {outcome.delay:.2f} s: {refetched}"
    extra = Counter(killed_log) - Counter(whole_log)
    assert set(Counter(whole_log) - Counter(killed_log)) == set()  # every page of the whole crawl was fetched
    assert sum(extra.values()) <= len(kills)  # at most the one request in flight at each kill, again
    assert part_files(killed) == []
    assert store_quads(cli, killed) == store_quads(cli, whole)
