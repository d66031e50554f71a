"""F17: a lone surrogate (a ``\\ud800`` escape in a dialogue file) was a UnicodeEncodeError traceback in
``export --dialogues`` (polars), ``ground`` (OpenCC) and the other commands. One text policy now
(``core.text``, applied by ``core.jsonio`` to every record it reads): the record is refused in one line naming
the file, the line and where the surrogate stands, or with ``--replace-invalid`` each surrogate becomes
U+FFFD and a warning says how many; nothing after the reader ever sees one.

What is new in this change is imported inside the tests that use it, so that on the code before it the
other tests run and show the old behaviour, not an import error."""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.jsonio import iter_json_container, iter_json_lines
from tests.trust_inputs import DUCONV, KDCONV, build_tiny, refused, variant, write_array, write_lines

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
SURROGATES = st.integers(0xD800, 0xDFFF).map(chr)
# text with lone surrogates mixed in (a high one followed by a low one is a pair, but JSON escapes keep each
# one lone when written alone; the strategy keeps them apart with a letter)
TEXT = st.lists(st.one_of(st.text(max_size=5), SURROGATES.map(lambda s: s + "x")), max_size=6).map("".join)
VALUES = st.recursive(
    st.one_of(TEXT, st.integers(), st.booleans(), st.none()),
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(TEXT, inner, max_size=4)),
    max_leaves=12,
)


def surrogates_in(value: object) -> int:
    if isinstance(value, str):
        return sum(0xD800 <= ord(c) <= 0xDFFF for c in value)
    if isinstance(value, dict):
        return sum(surrogates_in(k) + surrogates_in(v) for k, v in value.items())
    if isinstance(value, list):
        return sum(map(surrogates_in, value))
    return 0


@given(VALUES)
def test_replacing_leaves_no_surrogate_counts_each_and_changes_nothing_else(value: object) -> None:
    from kgforge.core.text import lone_surrogate, replace_lone_surrogates

    replaced, count = replace_lone_surrogates(value)
    assert count == surrogates_in(value)
    json.dumps(replaced, ensure_ascii=False).encode("utf-8")  # encodable: nothing downstream can fail on it
    assert (lone_surrogate(value) is None) == (count == 0)
    if not count:
        assert replaced is value


@SETTINGS
@given(records=st.lists(VALUES, min_size=1, max_size=6), container=st.booleans())
def test_every_json_reader_refuses_or_replaces_each_surrogate(records: list, container: bool, tmp_path: Path) -> None:
    from kgforge.core.limits import ReadPolicy, reading
    from kgforge.core.text import replace_lone_surrogates

    path = tmp_path / ("d.json" if container else "d.jsonl")
    if container:
        write_array(path, records)
    else:
        write_lines(path, records)
    read = (lambda: iter_json_container(path, list)) if container else (lambda: iter_json_lines(path))
    line = (lambda i: i + 2) if container else (lambda i: i + 1)
    for i, record in enumerate(read()):
        if surrogates_in(records[i]):
            assert record.value is None and record.line == line(i) and "lone surrogate \\ud" in record.error
        else:  # a record without one is read exactly as before
            assert record.error is None and record.value == records[i]
    with warnings.catch_warnings(record=True) as said, reading(ReadPolicy(replace_invalid=True)):
        warnings.simplefilter("always")
        got = list(read())
    assert [r.value for r in got] == [replace_lone_surrogates(r)[0] for r in records]
    total = sum(map(surrogates_in, records))
    assert [str(w.message) for w in said if "lone surrogate" in str(w.message)] == (
        [
            f"{path}: {total:,} lone surrogate{'s' if total > 1 else ''} replaced with U+FFFD (--replace-invalid), "
            f"the first on line {line(next(i for i, r in enumerate(records) if surrogates_in(r)))}"
        ]
        if total
        else []
    )


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny(tmp_path_factory.mktemp("f17") / "kg")


def inputs(tmp_path: Path) -> dict[str, Path]:
    """A KdConv and a DuConv file, each with one lone surrogate on its second dialogue."""
    kd = write_array(
        tmp_path / "kd.json", [KDCONV, variant(KDCONV, "messages", 2, "message", value="门票\ud800多少？")]
    )
    du = write_lines(tmp_path / "du.jsonl", [DUCONV, variant(DUCONV, "knowledge", 2, 2, value="60\udfff元")])
    return {"kdconv": kd, "duconv": du}


def runs(tiny: Path, tmp_path: Path, fmt: str) -> dict[str, list[str]]:
    """``export --dialogues`` and ``ground`` of the ``fmt`` file of :func:`inputs` into the ``tiny`` graph."""
    source = str(inputs(tmp_path)[fmt])
    return {
        name: [name, "tiny", "--dialogues", source, "--format", fmt, "--out", str(tmp_path / f"{name}.out")]
        + ["--workdir", str(tiny)]
        for name in ("export", "ground")
    }


LINE = {"kdconv": 3, "duconv": 2}
WHERE = {"kdconv": "\\ud800 in messages[2].message", "duconv": "\\udfff in knowledge[2][2]"}


@pytest.mark.parametrize("fmt", ["kdconv", "duconv"])
def test_export_and_ground_refuse_a_surrogate_in_one_line(tiny, tmp_path, cli, fmt):
    for name, args in runs(tiny, tmp_path, fmt).items():
        done = cli(*args, check=False)
        refused(done, f"{tmp_path}/{'kd.json' if fmt == 'kdconv' else 'du.jsonl'}:{LINE[fmt]}: ")
        refused(done, f"lone surrogate {WHERE[fmt]}: text no UTF-8 writer can encode", "--replace-invalid")
        assert not (tmp_path / f"{name}.out").exists()


@pytest.mark.slow  # grounds and exports for real: jieba's dictionary and the graph's grounding index, seconds
@pytest.mark.parametrize("fmt", ["kdconv", "duconv"])
def test_export_and_ground_replace_a_surrogate_and_say_so(tiny, tmp_path, cli, fmt):
    for name, args in runs(tiny, tmp_path, fmt).items():
        done = cli(*args, "--replace-invalid")
        said = f"1 lone surrogate replaced with U+FFFD (--replace-invalid), the first on line {LINE[fmt]}"
        assert said in done.stderr, (name, done.stderr)
        written = (tmp_path / f"{name}.out").read_text(encoding="utf-8")  # strict UTF-8: no surrogate in it
        assert "\ufffd" in written or "\\ufffd" in written


def test_the_other_readers_of_dialogues_refuse_it_too(tmp_path, cli):
    files = inputs(tmp_path)
    du, kd = str(files["duconv"]), str(files["kdconv"])
    for args, where in [
        (["corpus", "stats", kd], f"{kd}:3: "),
        (["corpus", "candidates", du, "--pool", du, "--out", str(tmp_path / "c.jsonl"), "--k", "2"], f"{du}:2: "),
        (["eval", du, "--no-out"], f"{du}:2: "),
        (["rate", "sheet", "duconv-dialogue", "--system", f"a={du}", "--out", str(tmp_path / "sheets")], f"{du}:2: "),
    ]:
        refused(cli(*args, check=False), where, "lone surrogate")
    done = cli("corpus", "stats", kd, "--replace-invalid", "--json")
    assert json.loads(done.stdout)["dialogues"] == 2 and "1 lone surrogate replaced" in done.stderr


def test_a_surrogate_in_a_json_cell_of_a_table_is_refused_or_replaced(tmp_path, cli):
    table = tmp_path / "pred.csv"
    table.write_text('prediction,gold,knowledge\n好,好,"[[""a\\ud800"", ""b"", ""c""]]"\n', encoding="utf-8")
    refused(cli("eval", str(table), "--no-out", check=False), f"{table}:2: column 'knowledge'", "lone surrogate")
    done = cli("eval", str(table), "--no-out", "--replace-invalid")
    assert "1 lone surrogate replaced" in done.stderr
