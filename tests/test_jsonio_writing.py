"""Files of records written piece by piece (exports, grounded dialogues) read back as the records they hold."""

from __future__ import annotations

import json

from hypothesis import given
from hypothesis import strategies as st

from kgforge.core.jsonio import array_items, json_array, json_lines

# what dialogue records hold: text of any kind (lone surrogates from \\ud800 escapes included), numbers beyond
# 64 bits, nesting
_TEXT = st.text(st.characters(codec=None, exclude_categories=()), max_size=20)
_LEAF = st.one_of(st.none(), st.booleans(), st.integers(min_value=-(2**80), max_value=2**80), _TEXT)
_RECORD = st.recursive(_LEAF, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3))


@given(st.lists(st.lists(_RECORD, max_size=4), max_size=4))
def test_a_json_array_written_in_pieces_reads_back_as_all_the_records_in_order(pieces):
    written = b"".join(json_array(array_items(piece) for piece in pieces))
    assert json.loads(written) == [record for piece in pieces for record in piece]
    # one record a line: the file diffs record by record
    records = sum(len(piece) for piece in pieces)
    assert written.count(b"\n") == (records + 2 if records else 3)


@given(st.lists(_RECORD, max_size=6))
def test_json_lines_read_back_one_record_a_line(records):
    written = json_lines(records)
    assert [json.loads(line) for line in written.splitlines()] == records
