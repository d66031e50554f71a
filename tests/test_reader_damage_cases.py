"""Damaged input costs only the records it touches: cuts inside a UTF-8 character, invalid bytes in the
middle of a file, JSON nested beyond the documented depth, invalid UTF-8 in an N-Triples label, and
KdConv names kept exactly as written."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest

from kgforge.core.errors import InputError
from kgforge.core.jsonio import MAX_DEPTH
from kgforge.core.schema import load_schema
from kgforge.goals.styles import read_profiles
from tests.readers import BUILD_SAMPLES, durecdial_sessions, read_sample, read_source

DEEP = "[" * 200_000  # what the probe sent: every JSON reader died with a RecursionError


def multibyte_cuts(data: bytes, count: int = 4) -> list[int]:
    """Offsets strictly inside ``count`` multi-byte characters spread over ``data`` (each of their inner bytes)."""
    starts = [i for i, b in enumerate(data) if b >= 0xC0]
    chosen = starts[len(starts) // (2 * count) :: max(1, len(starts) // count)][:count]
    return [start + k for start in chosen for k in range(1, utf8_length(data[start]))]


def first_multibyte(data: bytes) -> int:
    return next(i for i, b in enumerate(data) if b >= 0xC0)


def utf8_length(lead: int) -> int:
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


# ---------------------------------------------------------------- cuts inside a character


@pytest.mark.parametrize("kind", ["kdconv", "kdconv-dialogues", "duconv"])
def test_a_cut_inside_a_utf8_character_keeps_every_record_before_it(kind: str, tmp_path: Path) -> None:
    sample = BUILD_SAMPLES[kind]()
    cuts = multibyte_cuts(sample.data)
    assert len({sample.before(cut) for cut in cuts}) > 1  # the cuts fall in different records
    for cut in cuts:
        outcome = read_sample(sample, sample.data[:cut], tmp_path / f"cut{cut}")
        kept = read_sample(sample, sample.prefix(sample.before(cut)), tmp_path / f"prefix{cut}")
        assert outcome.error is None, f"cut at byte {cut}: {outcome.error}"
        assert outcome.counts["records_ok"] == sample.before(cut), f"cut at byte {cut}"
        assert outcome.quarantined, f"cut at byte {cut}: the broken record must be quarantined"
        assert kept.facts <= outcome.facts


def test_a_cut_inside_a_utf8_character_keeps_the_profiles_before_it(tmp_path: Path) -> None:
    sample = durecdial_sessions()
    for cut in multibyte_cuts(sample.data):
        path = tmp_path / f"profiles{cut}.jsonl"
        path.write_bytes(sample.data[:cut])
        profiles, unreadable = read_profiles(path)
        expected = [json.loads(line) for line in sample.records[: sample.before(cut)]]  # sessions stand as profiles
        assert profiles == expected
        [bad] = unreadable
        assert bad["line"] == sample.before(cut) + 1


def test_invalid_utf8_in_the_middle_of_json_lines_costs_only_that_line(tmp_path: Path) -> None:
    sample = BUILD_SAMPLES["duconv"]()
    start, end = sample.spans()[1]
    at = start + first_multibyte(sample.records[1])
    data = sample.data[:at] + b"\xff\xfe" + sample.data[at:]
    outcome = read_sample(sample, data, tmp_path)
    assert outcome.error is None
    assert outcome.counts["records_ok"] == len(sample.records) - 1 and outcome.counts["records_bad"] == 1
    [entry] = outcome.quarantined
    assert entry["location"] == "line 2"
    assert f"not UTF-8 at byte offset {at}" in entry["reason"]
    assert "\\xff\\xfe" in entry["record"]  # the bad bytes shown as they are, not replaced


def test_invalid_utf8_inside_a_kdconv_member_costs_only_that_member(tmp_path: Path) -> None:
    sample = BUILD_SAMPLES["kdconv"]()
    start, end = sample.spans()[1]
    at = start + first_multibyte(sample.records[1])
    data = sample.data[:at] + b"\xff" + sample.data[at + 1 :]
    outcome = read_sample(sample, data, tmp_path)
    assert outcome.counts["records_ok"] == len(sample.records) - 1 and outcome.counts["records_bad"] == 1
    [entry] = outcome.quarantined
    assert entry["location"] == "line 3"
    assert f"not UTF-8 at byte offset {at}" in entry["reason"] and "\\xff" in entry["record"]


# ---------------------------------------------------------------- nesting depth


@pytest.mark.parametrize("kind", ["duconv", "kdconv", "kdconv-dialogues"])
@pytest.mark.parametrize("depth", [MAX_DEPTH + 1, 200_000])
def test_deep_nesting_is_quarantined_with_its_line(kind: str, depth: int, tmp_path: Path) -> None:
    """A record nested deeper than MAX_DEPTH (well-formed, or 200k levels of '[' that Python's parser
    cannot follow) is quarantined with its line; the records around it land."""
    sample = BUILD_SAMPLES[kind]()
    deep = ("[" * depth + ("]" * depth if depth < 1000 else "")).encode()
    member = b'  "deep": ' + deep if kind == "kdconv" else deep
    if depth < 1000:  # well-formed: the records after it are read too
        records = (*sample.records[:1], member, *sample.records[1:])
    else:  # unterminated: it is the last thing read
        records = (*sample.records, member)
    if kind == "duconv":
        records = tuple(r if r.endswith(b"\n") else r + b"\n" for r in records)
    damaged = replace(sample, records=records)
    outcome = read_sample(sample, damaged.data, tmp_path)
    assert outcome.error is None
    assert outcome.counts["records_ok"] == len(sample.records)
    [entry] = outcome.quarantined
    line = damaged.data[: damaged.data.index(b"[" * 50)].count(b"\n") + 1
    assert entry["location"] == f"line {line}" and "nested" in entry["reason"]


def test_deep_nesting_through_every_command_is_a_clear_error(cli, workdir: Path, tmp_path: Path) -> None:
    """build (JSON lines, JSON arrays and objects, Wikidata dumps and documents), import, goals --profiles and
    --validate, export --dialogues: an error naming file and line or a quarantined record, never a traceback."""
    deep_line = tmp_path / "deep.jsonl"
    deep_line.write_text(DEEP + "\n", encoding="utf-8")
    deep_doc = tmp_path / "deep.json"
    deep_doc.write_text("[" + DEEP, encoding="utf-8")
    deep_kb = tmp_path / "kb_deep.json"
    deep_kb.write_text('{"deep": ' + DEEP, encoding="utf-8")
    dump = tmp_path / "dump.json"
    dump.write_text(
        "[\n" + DEEP + ",\n" + '{"type":"item","id":"Q1","labels":{"en":{"language":"en","value":"x"}}}\n]\n',
        encoding="utf-8",
    )
    sessions = tmp_path / "sessions.jsonl"
    sessions.write_bytes(BUILD_SAMPLES["duconv"]().data)
    cli("build", "duconv", "--source", f"duconv:{sessions}", "--workdir", str(workdir), "--json")
    runs = {
        "duconv": cli(
            "build",
            "duconv",
            "--source",
            f"duconv:{deep_line}",
            "--no-schema-sources",
            "--workdir",
            str(workdir),
            check=False,
        ),
        "kdconv": cli(
            "build",
            "travel",
            "--source",
            f"kdconv:{deep_kb}",
            "--no-schema-sources",
            "--workdir",
            str(workdir),
            check=False,
        ),
        "wikidata": cli(
            "build",
            "film",
            "--source",
            f"wikidata:{deep_doc}",
            "--no-schema-sources",
            "--workdir",
            str(workdir),
            check=False,
        ),
        "import": cli(
            "import", "wikidata", str(dump), "--domain", "film", "--workdir", str(workdir), "--json", check=False
        ),
        "profiles": cli(
            "goals",
            "duconv",
            "--n",
            "2",
            "--profiles",
            str(deep_line),
            "--out",
            str(tmp_path / "g.jsonl"),
            "--workdir",
            str(workdir),
            check=False,
        ),
        "validate": cli(
            "goals", "duconv", "--validate", str(deep_line), "--workdir", str(workdir), "--json", check=False
        ),
        "dialogues": cli(
            "export",
            "duconv",
            "--dialogues",
            str(deep_doc),
            "--format",
            "kdconv",
            "--out",
            str(tmp_path / "d.json"),
            "--workdir",
            str(workdir),
            check=False,
        ),
    }
    for name, run in runs.items():
        assert "Traceback" not in run.stderr and "RecursionError" not in run.stderr, name
    for name in ("duconv", "kdconv", "wikidata", "profiles", "dialogues"):  # nothing usable: an error naming the file
        assert runs[name].returncode == 1, name
    assert f"{deep_line}: no usable profile; line 1: nested" in runs["profiles"].stderr
    assert f"{deep_doc}:1:" in runs["dialogues"].stderr
    assert "nested" in runs["duconv"].stderr and f"{deep_line} line 1" in runs["duconv"].stderr
    assert "nested" in runs["kdconv"].stderr and f"{deep_kb} line 1" in runs["kdconv"].stderr
    imported = json.loads(runs["import"].stdout)["source"]
    assert imported["counts"]["entities"] == 1 and imported["quarantined"] == 1
    entry = json.loads((workdir / "film" / imported["quarantine_file"]).read_text(encoding="utf-8"))
    assert entry["location"].startswith("line 2 (byte 2)") and "nested too deeply" in entry["reason"]
    [unreadable] = json.loads(runs["validate"].stdout)["unreadable"]
    assert unreadable["line"] == 1 and "nested" in unreadable["reason"]


# ---------------------------------------------------------------- N-Triples labels, KdConv names


def test_invalid_utf8_in_an_ntriples_label_is_quarantined_and_counted_bad(shared, tmp_path: Path) -> None:
    lines = shared("wikidata_rdf/Q8_happiness.truthy.nt").read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"happiness"@en' in line)
    lines[at] = lines[at].replace(b'"happiness"@en', b'"happ\xffiness"@en')
    data = b"\n".join(lines)
    outcome = read_source("wikidata-nt", data, tmp_path)
    [entry] = outcome.quarantined
    offset = sum(len(line) + 1 for line in lines[:at])
    bad_byte = offset + lines[at].index(b"\xff")
    assert entry["location"] == f"line {at + 1} (byte {offset})"
    assert f"not UTF-8 at byte offset {bad_byte}" in entry["reason"]
    assert outcome.counts["records_bad"] == 1
    assert not any("\ufffd" in quad or '"happiness"@en ' in quad for quad in outcome.quads)  # dropped, not altered


def test_kdconv_names_are_kept_exactly(tmp_path: Path) -> None:
    kb = {"\t故宫": [["\t故宫", "地址", " 北京市东城区 "]], "天坛 ": [["天坛 ", "周边景点", "\t故宫"]]}
    outcome = read_source("kdconv", json.dumps(kb, ensure_ascii=False).encode(), tmp_path)
    labels = outcome.labels()
    assert {"\t故宫", "天坛 "} <= labels
    assert "故宫" not in labels and "天坛" not in labels
    schema = load_schema("travel")
    address, nearby = schema.relation_for("地址").iri, schema.relation_for("周边景点").iri
    assert {("\t故宫", address, " 北京市东城区 "), ("天坛 ", nearby, "\t故宫")} <= outcome.named_facts()


def test_an_unusable_profiles_file_is_an_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "profiles.jsonl"
    path.write_bytes(b'["not a profile"]\n\xff\n')
    with pytest.raises(
        InputError,
        match=rf"{path}: no usable profile; line 1: expected a JSON object .*; line 2: not UTF-8 at byte offset 18",
    ):
        read_profiles(path)
