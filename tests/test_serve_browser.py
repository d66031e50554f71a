"""The explorer in a real browser: headless Chromium (Debian's ``chromium``) driven by Playwright.

search → entity page → expand the neighbourhood graph → goal paths → SPARQL editor run, and a label that
is markup shown as text everywhere. Screenshots of every step are kept in ``test-artifacts/serve/`` (an
ignored folder; ``KGFORGE_TEST_ARTIFACTS`` moves it) for a person to look at.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest

from kgforge.demo.runner import step_embed, step_wikidata
from tests.conftest import REPO
from tests.serve_support import (
    MARKUP_LABEL,
    build_demo,
    chromium,
    markup_kb,
    running_server,
    wait_search_ready,
)

pytestmark = pytest.mark.slow  # headless Chromium driven through the explorer

ARTIFACTS = Path(os.environ.get("KGFORGE_TEST_ARTIFACTS", REPO / "test-artifacts")) / "serve"


@pytest.fixture(scope="module")
def explorer(tmp_path_factory):
    """The demo plus a film whose name is markup, with the demo's later stages run on it (derive, the
    Wikidata import that brings English labels, linking, embedding), served."""
    workdir = tmp_path_factory.mktemp("serve-browser") / "kg"
    workdir.mkdir()
    build_demo(workdir, markup_kb(workdir.parent))
    step_wikidata(workdir)
    step_embed(workdir)
    with running_server(workdir, workers=2, timeout=60.0) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with chromium(ARTIFACTS) as launched:
        yield launched


@pytest.fixture
def page(browser):
    # bypass_csp lets Playwright evaluate its waits; the pages' escaping, not their CSP, is under test here
    context = browser.new_context(viewport={"width": 1280, "height": 900}, locale="zh-CN", bypass_csp=True)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" else None)
    page.errors = errors
    yield page
    context.close()


def shot(page, name: str) -> None:
    page.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)


def test_search_entity_graph_goals_editor(explorer, page):
    page.goto(explorer + "/")
    page.fill("input[name=q]", "霸王")
    page.click("header button[type=submit]")
    page.wait_for_selector("#hits")
    shot(page, "1-search")
    first = page.locator("#hits li a.entity").first
    assert first.inner_text() == "霸王别姬"

    first.click()
    page.wait_for_selector("#facts-out")
    shot(page, "2-entity")
    page.screenshot(path=str(ARTIFACTS / "2-entity-viewport.png"))  # the README's picture (docs/serve-entity.png)
    assert page.inner_text("#title") == "霸王别姬"
    labels = page.locator("#labels tbody tr").all_inner_texts()
    assert any("霸王别姬" in row and "zh" in row for row in labels)
    facts = page.locator("#facts-out tbody tr").all_inner_texts()
    assert len(facts) == len(set(facts))  # 巩俐's label is in two graphs: still one row per fact
    assert any("陈凯歌" in row and "kdconv/kb_demo" in row for row in facts)
    assert page.locator("#facts-out tr.derived .badge.derived").count() > 0  # associated triples marked

    page.click("#to-graph")
    page.wait_for_function("document.getElementById('graph').dataset.nodes > 1")
    before = int(page.get_attribute("#graph", "data-nodes"))
    target = page.evaluate("""() => {
        const cy = window.kgforgeGraph.cy;
        const node = cy.nodes().filter(n => !n.hasClass('center') && n.data('label') === '巩俐')[0];
        const box = document.getElementById('graph').getBoundingClientRect();
        const at = node.renderedPosition();
        return {x: box.left + at.x, y: box.top + at.y};
    }""")
    page.mouse.click(target["x"], target["y"])
    page.wait_for_function(f"document.getElementById('graph').dataset.nodes > {before}")
    shot(page, "3-graph-expanded")
    assert page.inner_text("#selected-label") == "巩俐"
    assert int(page.get_attribute("#graph", "data-nodes")) > before

    page.go_back()
    page.click("#to-goals")
    page.wait_for_selector("section.goal")
    shot(page, "4-goals")
    kinds = page.locator("section.goal h2").all_inner_texts()
    assert any(k.startswith("one-step") for k in kinds) and any(k.startswith("two-step") for k in kinds), kinds
    goal = page.locator("section.goal").first
    assert "霸王别姬" in goal.locator("ol.path").inner_text()
    roles = goal.locator("table.subgraph tbody tr td:nth-child(4)").all_inner_texts()
    assert {"path", "type", "fact"} <= set(roles), roles  # the export orders rows by its own keys

    page.goto(explorer + "/editor")
    page.select_option("#shipped", "entity_facts")
    assert page.evaluate("window.kgforgeEditor.getValue()").startswith("# The facts of the entity")
    page.fill("#bindings", 'name="霸王别姬"@zh')
    page.click("#run")
    page.wait_for_selector("#result-table")
    shot(page, "5-editor")
    values = {cell.split(" @")[0] for cell in page.locator("#result-table td").all_inner_texts()}
    assert {"陈凯歌", "导演", "张国荣"} <= values
    assert not page.errors, page.errors


def test_related_entities_page(explorer, page):
    page.goto(explorer + "/search?q=" + "霸王别姬")
    page.locator("#hits li a.entity").first.click()
    page.click("#to-related")
    page.wait_for_selector("#related")
    shot(page, "6-related")
    names = page.locator("#related li a").all_inner_texts()
    assert len(names) == 10 and "霸王别姬" not in names


def test_search_finds_english_labels_case_folded(explorer):
    """The demo's Wikidata entities carry English labels (``kgforge demo`` imports them)."""
    with httpx.Client(timeout=60) as client:
        wait_search_ready(client, explorer)
        prefix = client.get(f"{explorer}/search", params={"q": "gong l", "format": "json"}).json()["results"]
        exact = client.get(f"{explorer}/search", params={"q": "GONG LI", "format": "json"}).json()["results"]
    assert prefix and prefix[0]["matched"] == "Gong Li" and not prefix[0]["exact"]
    assert exact[0]["exact"] and exact[0]["iri"] == prefix[0]["iri"]


def test_a_label_with_markup_shows_as_text(explorer, page):
    page.goto(explorer + "/search?q=" + "%3Cscript")
    page.wait_for_selector("#hits")
    link = page.locator("#hits li a.entity").first
    assert link.inner_text() == MARKUP_LABEL
    link.click()
    page.wait_for_selector("#title")
    shot(page, "7-markup-entity")
    assert page.inner_text("#title") == MARKUP_LABEL
    assert page.locator("main b").count() == 0 and page.locator("main script").count() == 0
    page.click("#to-graph")
    page.wait_for_function("document.getElementById('graph').dataset.nodes > 1")
    assert page.inner_text("#selected-label") == MARKUP_LABEL
    shot(page, "8-markup-graph")
    assert page.evaluate("window.kgforgePwned") is None
    assert not page.errors, page.errors
