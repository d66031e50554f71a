"""Plug-ins register one way: docs/extending.md's example package, installed for real, adds a source kind, an
export format, a metric, a rubric, a corpus statistic and a command; the per-name side tables are attributes
of the registrations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kgforge.cli import _commands, interrupt_message
from kgforge.cli._app import NOTHING_CHANGED, REBUILD_DISCARDED
from kgforge.core.errors import KgforgeError
from kgforge.sources.importer import kind_for_suffix
from tests.conftest import install_example, run_cli

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = REPO / "docs" / "examples" / "kgforge-example-plugin"


@pytest.fixture(scope="module")
def plugin_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    return install_example(EXAMPLE, "kgforge_example", tmp_path_factory)


@pytest.mark.slow
def test_the_example_plugin_adds_a_source_kind_a_format_a_metric_a_rubric_a_statistic_and_a_command(
    plugin_path: str, tmp_path: Path
):
    def kgforge(*args: str) -> str:
        return run_cli(*args, "--workdir", str(tmp_path / "kg"), cwd=tmp_path, env={"PYTHONPATH": plugin_path}).stdout

    def listing(*args: str) -> str:
        return run_cli(*args, cwd=tmp_path, env={"PYTHONPATH": plugin_path}).stdout

    assert "relation-counts" in listing("--help")
    assert "Facts per relation of DOMAIN's published build" in listing("--help")
    assert "arrows" in json.dumps(json.loads(listing("sources", "--json")))
    assert json.loads(listing("export-formats", "--json"))["triples-tsv"]["layouts"][0]["layout"] == "plain"
    assert "triples-tsv" in listing("export", "--help")

    films = EXAMPLE / "examples" / "films.arrows"
    kgforge("init", "films", "--from", str(films))  # the kind follows from the plug-in's own suffix
    built = json.loads(kgforge("build", "films", "--source", f"arrows:{films}", "--json"))
    assert built["records_ok"] == 23 and built["records_bad"] == 0
    counts = [line.split("\t") for line in kgforge("relation-counts", "films").splitlines()]
    assert sum(int(n) for n, _ in counts) == 23 and counts[0][0] == "6"  # 主演: six facts, the most

    kgforge("goals", "films", "--n", "3", "--one-step-ratio", "1", "--out", str(tmp_path / "goals.jsonl"))
    kgforge(
        "export",
        "films",
        "--goals",
        str(tmp_path / "goals.jsonl"),
        "--format",
        "ttsv",  # an alias
        "--out",
        str(tmp_path / "out.tsv"),
    )
    rows = [line.split("\t") for line in (tmp_path / "out.tsv").read_text(encoding="utf-8").splitlines()]
    assert len(rows) == 3 and all(r[0].startswith("dlg-") and all(c.count("|") == 2 for c in r[1:]) for r in rows)

    (tmp_path / "pred.txt").write_text("好看！\n一般\n巩俐演的!\n", encoding="utf-8")
    (tmp_path / "gold.txt").write_text("好看\n一般\n巩俐演的\n", encoding="utf-8")
    scores = json.loads(
        listing(
            "eval", str(tmp_path / "pred.txt"), "--gold", str(tmp_path / "gold.txt"), "--metrics", "bangs", "--json"
        )
    )
    assert scores["metrics"] == {"exclamations": pytest.approx(2 / 3)}

    assert "film_facts 0..2" in listing("rate", "rubrics")
    (tmp_path / "dev.json").write_text(
        json.dumps(
            [
                {
                    "name": "霸王别姬",
                    "messages": [
                        {"message": "你看过霸王别姬吗？"},
                        {
                            "message": "看过，导演是陈凯歌。",
                            "attrs": [{"name": "霸王别姬", "attrname": "导演", "attrvalue": "陈凯歌"}],
                        },
                        {"message": "主演呢？"},
                        {"message": "张国荣。"},
                    ],
                }
            ],
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    stats = json.loads(listing("corpus", "stats", str(tmp_path / "dev.json"), "--json"))
    assert stats["extra"] == {"questions": {"questions": 2, "share": 0.5}} and stats["knowledge"]["triples"] == 1


def test_a_plugin_command_cannot_take_a_builtin_name():
    from kgforge.cli._lazy import _as_command

    with pytest.raises(KgforgeError, match="built-in command"):
        _as_command("build", lambda: None)
    entry = _as_command("hello", lambda name="x": None)
    assert entry.obj.name == "hello"


def test_file_suffixes_are_registered_with_their_source_kinds():
    assert [kind_for_suffix(s) for s in (".csv", ".TSV", ".tab", ".ndjson", ".jsonl", ".ttl", ".jsonld")] == [
        "csv",
        "tsv",
        "tsv",
        "jsonl",
        "jsonl",
        "rdf",
        "rdf",
    ]
    assert kind_for_suffix(".docx") is None


def test_ctrl_c_hints_are_read_from_the_commands_own_marks():
    assert interrupt_message(["build", "travel"], KeyboardInterrupt()) == REBUILD_DISCARDED
    assert interrupt_message(["stats", "travel"], KeyboardInterrupt()) == NOTHING_CHANGED
    assert "--resume" in interrupt_message(["crawl", "x"], KeyboardInterrupt())
    assert set(_commands.INTERRUPTED) <= set(_commands.COMMANDS)
    assert interrupt_message(["no-such-command"], KeyboardInterrupt()).startswith("interrupted; rerun")
