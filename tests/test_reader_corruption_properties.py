"""Corrupt input for every reader, drawn by hypothesis: a file cut at any byte, cut at every byte inside a
multi-byte character, or with one byte flipped. Whatever the damage, every record wholly before it is
kept, a record it leaves broken is reported (quarantined, or an error naming the file), and nothing
raises anything but a clear InputError — the build readers, ``goals --profiles`` and ``--validate``
inputs, and ``export --dialogues`` input alike."""

from __future__ import annotations

import functools
import json
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgforge.core.errors import InputError
from kgforge.exports.dialogues import read_dialogues
from kgforge.goals.check import read_session_goals
from kgforge.goals.styles import read_profiles
from tests.readers import (
    BUILD_SAMPLES,
    Outcome,
    Sample,
    duconv_sessions,
    durecdial_sessions,
    read_sample,
    wikidata_dump,
)

# a proper prefix of one of their records never parses, so a cut inside a record must be reported
STRICT_RECORDS = {"kdconv", "kdconv-dialogues", "duconv", "durecdial", "wikidata", "wikidata-nt"}
# the end of the file is marked (a closing bracket), so any cut that loses data must be reported
CLOSED = {"kdconv", "kdconv-dialogues", "wikidata"}
T = TypeVar("T")
SETTINGS = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@dataclass(frozen=True)
class Damage:
    what: str
    data: bytes
    position: int  # the first damaged byte (for a cut: the first byte missing)
    cut: bool


def utf8_length(lead: int) -> int:
    return 2 if lead < 0xE0 else 3 if lead < 0xF0 else 4


@st.composite
def damages(draw: st.DrawFn, data: bytes) -> list[Damage]:
    """One damage, or for a cut inside a multi-byte character, a cut at each of its inner bytes."""
    starts = [i for i, b in enumerate(data) if b >= 0xC0]
    how = draw(st.sampled_from(["cut", "flip", "cut inside a character"] if starts else ["cut", "flip"]))
    if how == "cut inside a character":
        start = draw(st.sampled_from(starts))
        return [
            Damage(f"cut at byte {start + k}, inside the character at byte {start}", data[: start + k], start + k, True)
            for k in range(1, utf8_length(data[start]))
        ]
    position = draw(st.integers(0, len(data) - 1))
    if how == "cut":
        return [Damage(f"cut at byte {position}", data[:position], position, True)]
    mask = draw(st.integers(1, 255))
    flipped = data[:position] + bytes([data[position] ^ mask]) + data[position + 1 :]
    return [Damage(f"byte {position} xor {mask:#04x}", flipped, position, False)]


def must_be_reported(sample: Sample, damage: Damage) -> bool:
    """A cut that leaves a record broken (or a closed file unclosed) cannot go unnoticed."""
    if not damage.cut:
        return False
    if sample.kind in CLOSED:
        return bool(sample.data[damage.position :].strip())
    return sample.kind in STRICT_RECORDS and any(
        start < damage.position and sample.data[damage.position : end].strip() for start, end in sample.spans()
    )


@functools.cache
def build_sample(name: str) -> Sample:
    if name == "wikidata":
        with tempfile.TemporaryDirectory() as folder:
            return wikidata_dump(Path(folder))
    return BUILD_SAMPLES[name]()


@functools.cache
def clean_prefix(name: str, count: int) -> Outcome:
    """What the reader makes of the records before the damage alone, cleanly ended."""
    sample = build_sample(name)
    with tempfile.TemporaryDirectory() as folder:
        return read_sample(sample, sample.prefix(count), Path(folder))


@pytest.mark.slow  # hypothesis damage through every build reader
@pytest.mark.parametrize("name", [*BUILD_SAMPLES, "wikidata"])
@SETTINGS
@given(data=st.data())
def test_build_readers_keep_every_record_before_the_damage(name: str, data: st.DataObject) -> None:
    sample = build_sample(name)
    for damage in data.draw(damages(sample.data)):
        with tempfile.TemporaryDirectory() as folder:
            outcome = read_sample(sample, damage.data, Path(folder))
        before = sample.before(damage.position)
        if outcome.error is not None:
            assert before == 0, f"{damage.what}: {outcome.error}"
            assert sample.name in outcome.error
            continue
        assert clean_prefix(name, before).facts <= outcome.facts, damage.what
        if must_be_reported(sample, damage):
            assert outcome.quarantined, f"{damage.what}: nothing quarantined"
        assert all(entry["location"] and entry["reason"] for entry in outcome.quarantined)


def read_damaged(read: Callable[[Path], T], data: bytes, name: str) -> T | InputError:
    """``read`` of ``data`` written to a file called ``name``, or the InputError it raised."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / name
        path.write_bytes(data)
        try:
            return read(path)
        except InputError as exc:
            return exc


def names_the_file(error: InputError, name: str) -> bool:
    return str(error).split(":")[0].endswith("/" + name)


@SETTINGS
@given(data=st.data())
def test_profiles_before_the_damage_are_kept(data: st.DataObject) -> None:
    """``goals --profiles``: DuRecDial sessions (or bare user profiles), one a line."""
    sample = durecdial_sessions()
    originals = [json.loads(record) for record in sample.records]
    for damage in data.draw(damages(sample.data)):
        before = sample.before(damage.position)
        result = read_damaged(read_profiles, damage.data, sample.name)
        if isinstance(result, InputError):
            assert before == 0 and names_the_file(result, sample.name), damage.what
            continue
        profiles, unreadable = result
        assert profiles[:before] == originals[:before], damage.what
        if must_be_reported(sample, damage):
            assert unreadable and all(u["line"] > before for u in unreadable), damage.what


@SETTINGS
@given(data=st.data())
def test_validated_goals_before_the_damage_are_kept(data: st.DataObject) -> None:
    """``goals --validate``: the goal of each DuConv session; a damaged line is listed, never a crash."""
    sample = duconv_sessions()
    originals, _ = read_damaged(read_session_goals, sample.data, sample.name)
    for damage in data.draw(damages(sample.data)):
        before = sample.before(damage.position)
        result = read_damaged(read_session_goals, damage.data, sample.name)
        if isinstance(result, InputError):  # only an empty file
            assert before == 0 and "file is empty" in str(result), damage.what
            continue
        goals, bad = result
        assert [g for g in goals if g.line <= before] == originals[:before], damage.what
        if must_be_reported(sample, damage):
            assert bad and all(b["line"] > before and b["reason"] for b in bad), damage.what


@SETTINGS
@given(data=st.data())
def test_export_dialogues_input_is_read_whole_or_refused_with_its_line(data: st.DataObject) -> None:
    """``export --dialogues`` takes a KdConv dialogue file whole: damage is an error naming file and line
    (a dialogue is never silently dropped from an export), or, where it leaves valid dialogues, they are read."""
    sample = BUILD_SAMPLES["kdconv-dialogues"]()
    originals = [json.loads(record) for record in sample.records]
    for damage in data.draw(damages(sample.data)):
        before = sample.before(damage.position)
        result = read_damaged(kdconv_dialogues, damage.data, sample.name)
        if isinstance(result, InputError):
            assert names_the_file(result, sample.name), damage.what
            continue
        assert not must_be_reported(sample, damage), f"{damage.what}: read without a word"
        assert result[:before] == originals[:before]


def kdconv_dialogues(path: Path) -> list[dict]:
    """The records ``export --dialogues`` reads from a KdConv file, exactly as read."""
    return [dialogue.record for dialogue in read_dialogues(path, "kdconv").dialogues]
