"""A rebuild with other sources names every source graph of the published build it leaves out, with the
command that brings it back (a build is exactly its sources; nothing is lost without a word)."""

from __future__ import annotations

import json
import shlex
import shutil

import pytest

from kgforge import Domain

DIALOGUES = "kdconv/film/dev.json"
KB = "kdconv/travel/kb_travel.json"
WIKIDATA = "wikidata_json/Q2262932_city_streets_film.converted.json"


@pytest.fixture(scope="module")
def imported(tmp_path_factory):
    """film built from KdConv's film dialogues, then a Wikidata file imported into it."""
    from tests.conftest import run_cli, shared_file

    workdir = tmp_path_factory.mktemp("rebuild") / "kg"
    run_cli("build", "film", "--source", f"kdconv-dialogues:{shared_file(DIALOGUES)}", "--workdir", str(workdir))
    run_cli("import", "wikidata", "-d", "film", str(shared_file(WIKIDATA)), "--workdir", str(workdir))
    return workdir


@pytest.mark.slow  # builds the real travel KB with every source kind, then rebuilds
def test_a_rebuild_names_each_source_graph_it_drops_and_the_command_that_keeps_it(imported, cli, shared, tmp_path):
    workdir = tmp_path / "kg"
    shutil.copytree(imported, workdir, symlinks=True)
    kb = shared(KB)
    result = cli("build", "film", "--source", f"kdconv:{kb}", "--workdir", str(workdir), env={"COLUMNS": "400"})
    rebuild = f"kgforge build film --source kdconv:{kb} --source kdconv-dialogues:{shared(DIALOGUES)}"
    assert (
        f"dropped source graph kdconv-dialogues/dev (3,477 quads): the previous build had it, this build's "
        f"sources do not; run `{rebuild}` to add it back"
    ) in result.stdout
    assert (
        f"dropped source graph wikidata/Q2262932_city_streets_film.converted (52 quads): the previous build had "
        f"it, this build's sources do not; run `kgforge import wikidata -d film {shared(WIKIDATA)}` to add it back"
    ) in result.stdout

    # the commands it names bring both graphs back
    for command in (rebuild, f"kgforge import wikidata -d film {shared(WIKIDATA)}"):
        cli(*shlex.split(command)[1:], "--workdir", str(workdir))
    graphs = json.loads(cli("check", "film", "--workdir", str(workdir), "--json").stdout)["graphs"]
    assert graphs["https://kgforge.org/graph/kdconv-dialogues/dev"] == 3477
    assert graphs["https://kgforge.org/graph/wikidata/Q2262932_city_streets_film.converted"] == 52


def test_the_build_report_lists_the_dropped_source_graphs(imported, shared, tmp_path):
    workdir = tmp_path / "kg"
    shutil.copytree(imported, workdir, symlinks=True)
    report = Domain("film", workdir).build([f"kdconv-dialogues:{shared(DIALOGUES)}"])
    assert [(d.graph.rsplit("/", 1)[-1], d.kind, d.quads, d.source) for d in report.dropped] == [
        ("Q2262932_city_streets_film.converted", "wikidata", 52, True)
    ]
    assert report.as_dict()["dropped_graphs"][0]["restore"].startswith("kgforge import wikidata -d film ")
    again = Domain("film", workdir).build([f"kdconv-dialogues:{shared(DIALOGUES)}"])
    assert again.dropped == ()  # the same sources again drop nothing
