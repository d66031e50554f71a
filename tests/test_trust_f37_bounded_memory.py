"""F37: ``corpus candidates du1m.jsonl --pool pool.jsonl --out c.jsonl --k 5`` on a 10 MB DuConv file holding one
session of a million utterances grew to 24 GB and was killed (cutting a session into samples is quadratic).
Every reader now caps what it holds (``core.limits``): a dialogue over 10,000 utterances, a record or line over
64 MiB, a file read whole over 1 GiB is one line naming the file, the line and the limit, and ``--max-…``
raises it. The probe's file is refused by every command that reads dialogues, well under a GiB.

What is new in this change is imported inside the tests that use it, so that on the code before it the
other tests run and show the old behaviour, not an import error."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.jsonio import iter_json_container, iter_json_lines
from kgforge.sources.tables import read_rows
from tests.trust_inputs import DUCONV, KDCONV, refused, variant, write_array, write_lines

GIB_KB = 1 << 20  # VmHWM is in KiB
MAX_UTTERANCES = 10_000  # the default limit of kgforge.core.limits


@pytest.fixture(scope="module")
def du1m(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The probe's file: one DuConv session of 10^6 short utterances, about 9 MB."""
    path = tmp_path_factory.mktemp("f37") / "du1m.jsonl"
    session = variant(DUCONV, "conversation", value=["你好"] * 1_000_000)
    path.write_text(json.dumps(session, ensure_ascii=False) + "\n", encoding="utf-8")
    assert 8_000_000 < path.stat().st_size < 11_000_000
    return path


def commands(path: Path, tmp_path: Path) -> dict[str, list[str]]:
    """The probe's commands (``ground`` with a domain that does not exist: its input is read first) on ``path``."""
    pool = write_lines(tmp_path / "pool.jsonl", [DUCONV])
    return {
        "candidates": ["corpus", "candidates", str(path), "--pool", str(pool), "--out", str(tmp_path / "c.jsonl")]
        + ["--k", "2"],
        "stats": ["corpus", "stats", str(path)],
        "ground": ["ground", "any", "--format", "duconv", "--dialogues", str(path), "--out", str(tmp_path / "g.jsonl")]
        + ["--workdir", str(tmp_path / "kg")],
        "rate sheet": ["rate", "sheet", "duconv-turn", "--system", f"a={path}", "--out", str(tmp_path / "sheets")],
        "eval": ["eval", str(path), "--no-out"],
    }


def limit_said(count: int) -> str:
    return f"{count:,} utterances in one dialogue, over the limit of {MAX_UTTERANCES:,} (--max-utterances raises it)"


def test_corpus_candidates_refuses_the_probes_session_in_one_line(du1m, tmp_path, cli):
    refused(cli(*commands(du1m, tmp_path)["candidates"], check=False), f"{du1m}:1: ", limit_said(1_000_000))
    assert not (tmp_path / "c.jsonl").exists()


def test_every_command_refuses_a_session_over_the_limit_in_one_line(tmp_path, cli):
    over = write_lines(
        tmp_path / "du.jsonl", [DUCONV, variant(DUCONV, "conversation", value=["好"] * (MAX_UTTERANCES + 1))]
    )
    for args in commands(over, tmp_path).values():
        refused(cli(*args, check=False), f"{over}:2: ", limit_said(MAX_UTTERANCES + 1))


# The child's own high-water mark: VmHWM belongs to the process's memory map, which exec replaces, whereas
# ru_maxrss carries the parent's peak across fork and exec (a long pytest run would be measured, not kgforge).
PEAK = """
import json, re, sys
from pathlib import Path
from kgforge.cli import main
said = []
for args in json.loads(sys.argv[1]):
    sys.argv = ["kgforge", *args]
    try:
        main()
    except SystemExit as exc:
        said.append(exc.code)
peak = int(re.search(r"VmHWM:\\s+(\\d+) kB", Path("/proc/self/status").read_text()).group(1))
print(json.dumps({"codes": said, "peak_kib": peak}))
"""


@pytest.mark.slow  # the five commands over a 9 MB file, then a session at the limit, in a fresh interpreter: ~10 s
def test_every_command_on_the_probes_session_and_candidates_at_the_limit_stay_under_a_gib(du1m, tmp_path):
    at_limit = variant(DUCONV, "conversation", value=[f"第 {i} 句" for i in range(MAX_UTTERANCES)])
    source = write_lines(tmp_path / "du10k.jsonl", [at_limit])
    runs = [*commands(du1m, tmp_path).values()]
    runs.append(["corpus", "candidates", str(source), "--pool", str(source), "--out", str(tmp_path / "k.jsonl")])
    done = subprocess.run(
        [sys.executable, "-c", PEAK, json.dumps(runs)], capture_output=True, text=True, timeout=300, check=True
    )
    measured = json.loads(done.stdout.splitlines()[-1])
    assert measured["codes"] == [1] * 5 + [0], done.stderr
    assert done.stderr.count(limit_said(1_000_000)) == 5
    assert measured["peak_kib"] < GIB_KB, f"peak {measured['peak_kib'] / 1024:.0f} MiB"
    assert len((tmp_path / "k.jsonl").read_text(encoding="utf-8").splitlines()) == MAX_UTTERANCES // 2


def test_max_utterances_raises_the_limit(tmp_path, cli):
    from kgforge.core import limits

    assert limits.MAX_UTTERANCES == MAX_UTTERANCES
    path = write_lines(tmp_path / "du.jsonl", [variant(DUCONV, "conversation", value=["你 好"] * 30)])
    refused(cli("corpus", "stats", str(path), "--max-utterances", "20", check=False), f"{path}:1: ", "limit of 20 ")
    assert json.loads(cli("corpus", "stats", str(path), "--max-utterances", "30", "--json").stdout)["dialogues"] == 1
    kdconv = write_array(tmp_path / "kd.json", [KDCONV])  # KdConv messages count as utterances too
    refused(cli("corpus", "stats", str(kdconv), "--max-utterances", "3", check=False), f"{kdconv}:2: ", "4 utterances")


def test_a_record_over_the_record_limit_is_one_line_naming_it(tmp_path, cli):
    big = variant(DUCONV, "conversation", value=["x" * 1_200_000, "好"])  # 1.2 MB in one line
    path = write_lines(tmp_path / "du.jsonl", [DUCONV, big])
    said = refused(cli("corpus", "stats", str(path), "--max-record-mib", "1", check=False), f"{path}:2: a line of ")
    assert "over the limit of 1 MiB for one record (--max-record-mib raises it)" in said
    assert json.loads(cli("corpus", "stats", str(path), "--max-record-mib", "2", "--json").stdout)["dialogues"] == 2
    predictions = tmp_path / "pred.txt"
    predictions.write_bytes(b"ok\n" + b"x" * (1 << 21))  # no newline at all after the first line
    refused(cli("eval", str(predictions), "--no-out", "--max-record-mib", "1", check=False), f"{predictions}:2: ")
    array = write_array(
        tmp_path / "kd.json", [KDCONV, variant(KDCONV, "messages", 0, "message", value="x" * 1_200_000)]
    )
    refused(cli("corpus", "stats", str(array), "--max-record-mib", "1", check=False), f"{array}:3: a record of ")


def test_a_file_read_whole_over_the_file_limit_is_refused_before_it_is_read(tmp_path, cli):
    from kgforge.core.limits import ReadPolicy, reading

    path = write_array(tmp_path / "kd.json", [KDCONV] * 3000)
    assert path.stat().st_size > 1 << 20
    said = refused(cli("corpus", "stats", str(path), "--max-file-mib", "1", check=False), f"{path}: ")
    assert "over the limit of 1 MiB for a file read whole (--max-file-mib raises it)" in said
    with reading(ReadPolicy.of(max_file_mib=2)):
        assert [record.value for record in iter_json_container(path, list)] == [KDCONV] * 3000


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")), max_size=8), st.booleans(), st.integers(1, 30)
)
def test_lines_are_read_with_the_record_limit_as_their_bound(
    parts: list[bytes], last_newline: bool, limit: int
) -> None:
    import io

    from kgforge.core.limits import ReadPolicy, lines, reading

    data = b"\n".join(parts) + (b"\n" if last_newline and parts else b"")
    with reading(ReadPolicy(max_record_bytes=limit)):
        got = list(lines(io.BytesIO(data)))
    pieces = data.split(b"\n")
    expected = [piece + b"\n" for piece in pieces[:-1]] + ([pieces[-1]] if pieces[-1] else [])
    assert [line.size for line in got] == [len(raw) for raw in expected]
    assert [line.offset for line in got] == [sum(map(len, expected[:i])) for i in range(len(expected))]
    assert [line.number for line in got] == list(range(1, len(expected) + 1))
    for line, raw in zip(got, expected):
        assert line.raw == (raw if len(raw.rstrip(b"\n")) <= limit else None)


def test_jsonl_and_csv_knowledge_lines_over_the_limit_cost_only_themselves(tmp_path):
    from kgforge.core.limits import ReadPolicy, reading

    path = tmp_path / "kb.jsonl"
    path.write_text('{"a": 1}\n{"b": "' + "x" * 300 + '"}\n{"c": 3}\n', encoding="utf-8")
    with reading(ReadPolicy(max_record_bytes=100)):
        records = list(iter_json_lines(path))
    assert [r.value for r in records] == [{"a": 1}, None, {"c": 3}]
    assert records[1].line == 2 and "a line of 310 bytes, over the limit of 100 bytes" in records[1].error
    table = tmp_path / "kb.csv"
    table.write_text('id,name\n1,"never closed\n' + "x,y\n" * 60 + "", encoding="utf-8")
    with reading(ReadPolicy(max_record_bytes=100)):
        rows = list(read_rows(table, ","))
    assert rows[0].cells == ["id", "name"]
    assert rows[1].cells is None and rows[1].line == 2 and "over the limit of 100 bytes" in rows[1].error
    assert all(row.cells == ["x", "y"] for row in rows[2:]) and rows[2:]  # the rows after it are read again


@pytest.mark.parametrize(
    ("what", "reader", "before", "after"),  # the reader's arguments before and after the user's path
    [
        ("grounding model", "kgforge.grounding.model_file:read_model", (), ()),
        ("prompts", "kgforge.synth.prompts:load_prompts", (Path("bundled.toml"), "zh"), ()),
        ("template file", "kgforge.qa.templates:load_templates", (), ()),
        ("audit", "kgforge.release.make:read_audit", (), ("travel",)),
    ],
)
def test_small_files_a_user_names_are_read_under_the_file_limit(tmp_path, what, reader, before, after):
    import importlib

    from kgforge.core.errors import InputError
    from kgforge.core.limits import ReadPolicy, reading

    module, name = reader.split(":")
    read = getattr(importlib.import_module(module), name)
    path = tmp_path / "big.txt"

    def call():
        return read(*before, path, *after)

    path.write_text("x" * 4096, encoding="utf-8")
    with reading(ReadPolicy(max_file_bytes=1024)), pytest.raises(InputError) as raised:
        call()
    assert str(raised.value).startswith(f"{path}: a {what} over the limit of ")
    path.write_bytes(b"\xff\xfe not utf-8")
    with pytest.raises(InputError, match=f"cannot read the {what} \\(UnicodeDecodeError"):
        call()
