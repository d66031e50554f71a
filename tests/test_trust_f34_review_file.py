"""F34: `translate --apply` reads a review file as a spreadsheet saves it (UTF-8 with a byte-order mark,
CRLF line ends), and a file it cannot read is one line naming the row: a byte that is not UTF-8, a cell over
the reader's limit. Before, the first was "the header lacks keep" and the others were tracebacks."""

from __future__ import annotations

import csv
import re

import pytest

from kgforge.core.errors import InputError
from tests.qa_support import chat_server
from tests.translate_support import dictionary_reply, films_domain, review_rows, write_rows


@pytest.fixture
def reviewed(tmp_path):
    """The films domain and its review file, every proposal accepted by a person."""
    films = films_domain(tmp_path)
    review = tmp_path / "review.tsv"
    with chat_server(dictionary_reply) as chat:
        films.translate("en", review, llm_url=chat.url, llm_model="dict")
    write_rows(review, [{**row, "keep": "yes"} for row in review_rows(review)])
    return films, review


def test_a_file_saved_with_a_byte_order_mark_and_crlf_applies_as_the_plain_one(reviewed, tmp_path):
    films, review = reviewed
    saved = tmp_path / "from-a-spreadsheet.tsv"
    saved.write_bytes(b"\xef\xbb\xbf" + review.read_bytes().replace(b"\n", b"\r\n"))
    applied = films.apply_translations(saved, "en")
    assert applied.loaded == {"entity": 1, "relation": 1, "type": 2, "literal": 3} and applied.skipped == 0


def write_lines(path, lines: list[bytes]) -> None:
    path.write_bytes(b"".join(line + b"\n" for line in lines))


def refused_in_one_line(films, review, message: str, cli) -> None:
    """``message`` from the API and, alone on stderr with no traceback, from the command line; nothing loaded."""
    before = films.paths.store_link.resolve()
    with pytest.raises(InputError, match=re.escape(message)):
        films.apply_translations(review, "en")
    run = cli(
        "translate", "films", "--lang", "en", "--apply", str(review), "--workdir", str(films.workdir), check=False
    )
    assert run.returncode == 1 and "Traceback" not in run.stderr and message in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1
    assert films.paths.store_link.resolve() == before


def test_a_byte_that_is_not_utf8_is_one_line_naming_its_row(reviewed, cli):
    films, review = reviewed
    lines = review.read_bytes().splitlines()
    lines[3] = lines[3].replace(b"\tperson\t", b"\tperson \xe9t\xe9\t")  # a label saved as Latin-1
    write_lines(review, lines)
    message = f"{review}: line 4: byte 0xE9 is not UTF-8 (save the file as UTF-8); nothing was loaded"
    refused_in_one_line(films, review, message, cli)


def test_a_byte_that_is_not_utf8_in_the_header_is_named_too(reviewed):
    films, review = reviewed
    lines = review.read_bytes().splitlines()
    write_lines(review, [lines[0].replace(b"note", b"n\xf6te"), *lines[1:]])
    with pytest.raises(InputError, match=re.escape(f"{review}: line 1: byte 0xF6 is not UTF-8")):
        films.apply_translations(review, "en")


def test_a_cell_over_the_readers_limit_is_one_line_naming_its_row(reviewed, cli):
    films, review = reviewed
    rows = review_rows(review)
    rows[2]["label"] = "person" * 40_000  # 240,000 characters: over csv's 131,072
    write_rows(review, rows)
    limit = csv.field_size_limit()
    refused_in_one_line(
        films, review, f"{review}: line 4: a cell longer than {limit:,} characters; nothing was loaded", cli
    )


def test_a_long_label_under_the_cell_limit_is_refused_by_the_label_rule(reviewed):
    films, review = reviewed
    rows = review_rows(review)
    rows[2]["label"] = "person" * 1000
    write_rows(review, rows)
    with pytest.raises(InputError, match=r"line 4: the label is 6,000 characters long, more than 512"):
        films.apply_translations(review, "en")
