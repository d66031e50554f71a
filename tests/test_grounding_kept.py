"""The grounding index kept beside a build (``kgforge/grounding/kept.py``): made by a build's first grounding,
read back by the next, and never the reason a grounding fails or differs."""

from __future__ import annotations

import json
import marshal
import warnings
from pathlib import Path

import pytest

from kgforge import Domain
from kgforge.grounding.index import GroundingIndex
from kgforge.grounding.kept import KEPT_INDEX, index_key, load_index
from kgforge.store.snapshot import Snapshot
from tests.conftest import build_travel, run_cli, shared_file


@pytest.fixture(scope="module")
def travel(tmp_path_factory) -> Path:
    return build_travel(tmp_path_factory.mktemp("kg"))


@pytest.fixture(scope="module")
def dialogues(tmp_path_factory) -> Path:
    """20 of the travel dev dialogues: what is compared is the same bytes, which any dialogues show."""
    dev = json.loads(shared_file("kdconv/travel/dev.json").read_text(encoding="utf-8"))
    path = tmp_path_factory.mktemp("dialogues") / "dev20.json"
    path.write_text(json.dumps(dev[:20], ensure_ascii=False), encoding="utf-8")
    return path


def kept_file(workdir: Path) -> Path:
    return Snapshot.open("travel", workdir).build / KEPT_INDEX


def ground_dev(workdir: Path, dialogues: Path, out: Path) -> tuple[dict, bytes]:
    report = Domain("travel", workdir).ground(dialogues, out)
    return {k: v for k, v in report.as_dict().items() if k != "out"}, out.read_bytes()


def without_rows(state: dict) -> dict:
    """The state less where each row lies; what is counted over the whole graph in one order."""
    facts = {k: v for k, v in state["facts"].items() if k not in ("offsets", "rows")}
    return {**state, "facts": {**facts, "literals": sorted(facts["literals"])}}


def rows_by_subject(state: dict) -> dict[str, list[tuple]]:
    rows = state["facts"]["rows"]
    return {
        subject: sorted(zip(*marshal.loads(rows[start:end])))
        for subject, (start, end) in state["facts"]["offsets"].items()
    }


@pytest.mark.slow  # makes the index three ways and compares them whole
def test_the_index_read_back_is_the_index_made(travel):
    kept_file(travel).unlink(missing_ok=True)
    snapshot = Snapshot.open("travel", travel)
    made = GroundingIndex.from_tables(snapshot.tables(), snapshot.schema).prepare()
    first = load_index(Snapshot.open("travel", travel))  # makes it, and keeps it
    assert kept_file(travel).is_file()
    read = load_index(Snapshot.open("travel", travel))
    assert read.state() == first.state()
    # a subject's rows lie where a hash group-by put them (and the graph's literals come in its order), another
    # place each time the index is made
    assert without_rows(read.state()) == without_rows(made.state())
    assert rows_by_subject(read.state()) == rows_by_subject(made.state())
    # the automata and jieba made again from the state find what the made ones find
    message = "故宫的门票是40元，旁边有景山公园和北海公园吗？"
    assert read.automaton.find(message) == made.automaton.find(message)
    assert read.segmenter(message) == made.segmenter(message)
    assert read.segmenter.dictionary_frequency("公园") == made.segmenter.dictionary_frequency("公园") > 100


def test_a_build_grounds_the_same_the_first_time_and_after(travel, dialogues, tmp_path):
    kept_file(travel).unlink(missing_ok=True)
    first = ground_dev(travel, dialogues, tmp_path / "first.json")
    assert kept_file(travel).is_file()
    assert ground_dev(travel, dialogues, tmp_path / "again.json") == first


def test_a_damaged_kept_index_is_made_again_with_a_warning(travel, dialogues, tmp_path):
    expected = ground_dev(travel, dialogues, tmp_path / "expected.json")
    kept = kept_file(travel)
    kept.write_bytes(kept.read_bytes()[:1000])  # cut short, as a full disk would leave it
    with pytest.warns(RuntimeWarning, match="kept grounding index is damaged"):
        assert ground_dev(travel, dialogues, tmp_path / "out.json") == expected
    key, _ = marshal.loads(kept.read_bytes())  # whole again
    assert key == index_key(Snapshot.open("travel", travel))


def test_an_index_kept_by_other_code_or_schema_is_made_again_silently(travel, dialogues, tmp_path):
    expected = ground_dev(travel, dialogues, tmp_path / "expected.json")
    kept = kept_file(travel)
    kept.write_bytes(marshal.dumps(("another key", {"names": {}})))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert ground_dev(travel, dialogues, tmp_path / "out.json") == expected
    assert marshal.loads(kept.read_bytes())[0] == index_key(Snapshot.open("travel", travel))


def test_an_index_that_cannot_be_kept_is_said_once_and_the_grounding_written(travel, dialogues, tmp_path):
    expected = ground_dev(travel, dialogues, tmp_path / "expected.json")
    kept = kept_file(travel)
    kept.unlink()
    kept.mkdir()  # neither readable nor writable as a file, whoever runs the test (root too)
    try:
        done = run_cli(
            "ground",
            "travel",
            "--dialogues",
            str(dialogues),
            "--out",
            str(tmp_path / "out.json"),
            "--workdir",
            str(travel),
            "--json",
        )
    finally:
        kept.rmdir()
    assert done.returncode == 0 and (tmp_path / "out.json").read_bytes() == expected[1]
    lines = [line for line in done.stderr.splitlines() if line.strip()]
    assert [line.split(KEPT_INDEX)[1].split("(")[0] for line in lines] == [
        ": the kept grounding index cannot be read ",
        ": the grounding index could not be kept beside the build ",
    ]
    assert all(line.startswith("warning: ") and "Traceback" not in line for line in lines)
    assert json.loads(done.stdout)["dialogues"] == 20
