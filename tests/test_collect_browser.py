"""`kgforge collect` in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright, two
workers in two browser contexts (one in Chinese, one in English) paired into a DuConv session of 8 turns, the
leader clicking the facts each turn uses, then ending it; the export read as the seeds' readers read it
(kgforge's checks of what they need; the real readers too where ``shared/readers`` and the mirrors are here).
Screenshots of every step go to ``test-artifacts/collect/`` (``KGFORGE_TEST_ARTIFACTS`` moves it); the ones in
docs/collect.md were taken by this test."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from kgforge.collect import export_collection
from kgforge.datasets.duconv.export import SESSION
from kgforge.datasets.kdconv.export import DIALOGUES
from kgforge.exports.registry import format_named
from tests.collect_support import (
    MARKUP,
    Worker,
    admin_token,
    new_collection,
    running_collection,
    script,
    tokens,
    unsegmented,
)
from tests.conftest import REPO, shared_file
from tests.serve_support import chromium

pytestmark = pytest.mark.slow  # headless Chromium, two workers chatting

ARTIFACTS = Path(os.environ.get("KGFORGE_TEST_ARTIFACTS", REPO / "test-artifacts")) / "collect"


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    root = tmp_path_factory.mktemp("collect-browser")
    folder, workdir = new_collection(root, "site", workers=4)
    with running_collection(folder, workdir) as base:
        yield folder, base


@pytest.fixture(scope="module")
def browser():
    with chromium(ARTIFACTS) as launched:
        yield launched


def open_page(browser, url: str, locale: str):
    # bypass_csp lets Playwright evaluate its waits; the pages' escaping, not their CSP, is under test here
    context = browser.new_context(viewport={"width": 1100, "height": 760}, locale=locale, bypass_csp=True)
    page = context.new_page()
    page.errors = []
    page.on("pageerror", lambda exc: page.errors.append(str(exc)))
    page.on("console", lambda msg: page.errors.append(msg.text) if msg.type == "error" else None)
    page.goto(url)
    return page


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"))


def send(page, text: str, facts: list[str], count: int) -> None:
    page.wait_for_selector("#text:not([disabled])")
    for fact in facts:
        page.click(f"button.fact[data-id='{fact}']")
        assert page.get_attribute(f"button.fact[data-id='{fact}']", "aria-pressed") == "true"
    page.fill("#text", text)
    page.click("#send")
    page.wait_for_function(f"document.querySelectorAll('#turns li').length === {count}")


def test_two_workers_chat_eight_turns_with_facts_clicked_and_the_export_is_read(site, browser, tmp_path):
    folder, base = site
    leader_token, follower_token = tokens(folder)[:2]
    leader = open_page(browser, f"{base}/collect?token={leader_token}", "zh-CN")
    leader.wait_for_selector("#status:has-text('正在等待')")
    assert "token" not in leader.url  # taken out of the address bar
    shot(leader, "1-waiting")
    follower = open_page(browser, f"{base}/collect?token={follower_token}", "en-US")
    follower.wait_for_selector("#chat:not([hidden])")
    leader.wait_for_selector("#knowledge button.fact", timeout=15000)
    assert leader.inner_text("#role") == "引导者" and follower.inner_text("#role") == "Follower"

    with httpx.Client() as client:
        view = Worker(base, leader_token, client).view(Worker(base, leader_token, client).join()["session"])
    lines = script(view)
    lines[3] = ("follower", MARKUP, [])  # a worker typing markup: shown as text, never run
    for n, (who, text, facts) in enumerate(lines):
        send(leader if who == "leader" else follower, text, facts, n + 1)
        (follower if who == "leader" else leader).wait_for_function(
            f"document.querySelectorAll('#turns li').length === {n + 1}"
        )
        if n == 2:
            shot(leader, "2-leader")
            shot(follower, "3-follower")
    assert leader.locator("#turns li .text").nth(3).evaluate("e => e.firstChild.textContent") == MARKUP
    assert follower.evaluate("window.kgforgePwned") is None and leader.evaluate("window.kgforgePwned") is None
    assert follower.locator("#knowledge-box").is_hidden() and follower.locator("#goal-box").is_hidden()
    shown = follower.inner_text("body")
    assert not any(f["tail"] in shown for f in view["knowledge"] if f["relation"] == "评论" and len(f["tail"]) > 4)

    leader.wait_for_selector("#finish:not([hidden])")
    leader.click("#finish")
    leader.wait_for_selector("#done:not([hidden])")
    follower.wait_for_selector("#done:not([hidden])")
    assert "✓" in leader.inner_text("#checks")
    shot(leader, "4-finished")
    admin = open_page(browser, f"{base}/collect/admin?token={admin_token(folder)}&lang=en", "en-US")
    assert "1 of 6 sessions finished" in admin.inner_text("#progress")
    shot(admin, "5-admin")
    assert leader.errors == [] and follower.errors == [] and admin.errors == []

    check_exports(folder, tmp_path, lines, view)


def check_exports(folder: Path, tmp_path: Path, lines: list, view: dict) -> None:
    """The DuConv and KdConv exports hold the eight turns with each turn's clicked facts, as their readers need."""
    export_collection(folder, "duconv", tmp_path / "collected.duconv.txt")
    export_collection(folder, "kdconv", tmp_path / "collected.kdconv.json")
    session = json.loads((tmp_path / "collected.duconv.txt").read_text(encoding="utf-8").splitlines()[0])
    assert format_named("duconv").check(session, SESSION) == []
    by_id = {f["id"]: [f["head"], f["relation"], f["tail"]] for f in view["knowledge"]}
    assert unsegmented(session["knowledge_per_turn"]) == [[by_id[i] for i in facts] for _, _, facts in lines]
    dialogue = json.loads((tmp_path / "collected.kdconv.json").read_text(encoding="utf-8"))[0]
    assert format_named("kdconv").check(dialogue, DIALOGUES) == []
    assert [len(m.get("attrs", [])) for m in dialogue["messages"]] == [len(facts) for _, _, facts in lines]
    for kind, name in (("duconv-session", "collected.duconv.txt"), ("kdconv", "collected.kdconv.json")):
        result = real_readers(kind, tmp_path / name)
        if (
            result is not None
        ):  # every reader that is here ran and made samples (the optional dkn_duconv mirror may be absent)
            ran = [r for r in result["results"] if not r["status"].startswith(("skipped", "unavailable"))]
            assert result["ok"] and ran and all(r["status"] == "ok" and r["samples"] for r in ran), result


def real_readers(kind: str, path: Path) -> dict | None:
    """``shared/readers/run-readers`` on ``path``, when the kit and its mirrors are here (None otherwise)."""
    kit = shared_file("duconv").parent.parent / "readers" / "run-readers"
    mirrors = Path(os.environ.get("READERS_MIRRORS", "/work/.mirror"))
    if not kit.exists() or not (mirrors / "baidu+knowledge-driven-dialogue" / "repo").is_dir():
        return None
    done = subprocess.run(
        [str(kit), "--mirrors", str(mirrors), kind, str(path), "--json", "--allow-missing"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "READERS_PYTHON": sys.executable},
    )
    assert done.stdout.strip(), done.stderr
    return json.loads(done.stdout)
