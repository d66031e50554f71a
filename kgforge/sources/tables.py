"""Source kinds ``csv`` and ``tsv``: a table of triples, or an entity table, with a header row.

* **Triples**: the header is ``subject, predicate, object`` and optionally a fourth column (``lang``,
  ``datatype`` or ``lang_or_datatype``): ``@en``/``en`` tags the object, ``xsd:integer`` or a datatype IRI
  types it. A subject or predicate is an IRI (``<…>``, ``http…``) or a name.
* **Entity table**: one row per entity, one column per relation (the header names them: the schema's labels
  and aliases, or undeclared ones). The ``id`` column (``id``/``iri``/``uri``), the ``name`` column
  (``name``/``label``/``title``, else the first other column) and the ``aliases`` column are found by those
  names unless ``[options.records]`` (or the source's options) name them; a cell holding several values
  separates them with ``separator`` (``|`` unless declared). Empty cells state nothing.

Rows are read as bytes and decoded one at a time, so a row that is not UTF-8 is quarantined with its line and
byte offset and the next is read as usual; so is a row with the wrong number of columns, an empty subject, or
a malformed IRI, language tag or datatype. Cells are typed as :mod:`kgforge.sources.records` says.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from kgforge.core.errors import InputError
from kgforge.core.limits import current, lines, record_too_large
from kgforge.core.quads import XSD
from kgforge.core.text import NotUtf8Error, decode_utf8
from kgforge.sources.importer import ImportContext, register
from kgforge.sources.records import GenericFacts, iri_in, record_settings

TRIPLE_HEADER = ("subject", "predicate", "object")
FOURTH_COLUMNS = ("lang", "datatype", "lang_or_datatype", "lang|datatype")


@dataclass(frozen=True)
class Row:
    line: int  # 1-based line the row starts on
    cells: list[str] | None
    error: str | None = None
    raw: str | None = None


@register(
    "csv",
    "CSV with a header: triples (subject,predicate,object[,lang|datatype]) or an entity table "
    "(one row per entity, one column per relation; multi-valued cells split on `separator`, default |)",
    suffixes=(".csv",),
)
def import_csv(ctx: ImportContext) -> None:
    import_table(ctx, "\t" if ctx.path.suffix.lower() in (".tsv", ".tab") else ",")


@register(
    "tsv", "tab-separated values, as `csv` (no quoting: a cell holds no tab or line break)", suffixes=(".tsv", ".tab")
)
def import_tsv(ctx: ImportContext) -> None:
    import_table(ctx, "\t")


def import_table(ctx: ImportContext, delimiter: str) -> None:
    rows = read_rows(ctx.path, delimiter)
    header = next(rows, None)
    if header is None or header.cells is None:
        raise InputError(f"{ctx.path}: line 1: no header row" + (f" ({header.error})" if header else " (empty file)"))
    columns = [c.strip() for c in header.cells]
    if len(set(columns)) != len(columns) or not all(columns):
        raise InputError(f"{ctx.path}: line {header.line}: every column needs a distinct, non-empty name: {columns}")
    facts = GenericFacts(ctx)
    if (
        tuple(c.lower() for c in columns[:3]) == TRIPLE_HEADER
        and len(columns) <= 4
        and (len(columns) == 3 or columns[3].lower() in FOURTH_COLUMNS)
    ):
        read = _triple_row
    else:
        read = _entity_row(ctx, columns, header.line)
    for row in rows:
        location = ctx.location = f"line {row.line}"
        if row.cells is None:
            ctx.reject(location, row.error or "unreadable row", row.raw)
            continue
        if len(row.cells) != len(columns):
            ctx.reject(location, f"expected {len(columns)} columns as the header has, got {len(row.cells)}", row.raw)
            continue
        try:
            read(facts, dict(zip(columns, row.cells)), location)
        except ValueError as exc:
            ctx.reject(location, str(exc), row.raw)
            continue
        ctx.accept()
    facts.emit()


_Quoting = Literal[0, 3]  # csv.QUOTE_MINIMAL or csv.QUOTE_NONE, as csv.reader's stub spells them


def read_rows(path: Path, delimiter: str) -> Iterator[Row]:
    """The rows of ``path``, each decoded and split on its own (a quoted CSV cell may span lines); blank lines
    skipped."""
    quoting: _Quoting = csv.QUOTE_MINIMAL if delimiter == "," else csv.QUOTE_NONE
    pending: list[str] = []
    start_line = 0
    pending_size = 0  # bytes of the row being joined: a quoted cell never closed must not hold the file
    with open(path, "rb") as stream:
        for number, line_offset, raw, size in lines(stream):
            if raw is None or pending_size + size > current().max_record_bytes:
                yield Row(start_line if pending else number, None, record_too_large(pending_size + size, "row"), "")
                pending, pending_size = [], 0
                continue
            if number == 1:
                raw = raw.removeprefix(b"\xef\xbb\xbf")
            try:
                text = decode_utf8(raw, line_offset)
            except NotUtf8Error as exc:
                if pending:  # the row this line continues is lost with it
                    yield Row(start_line, None, f"{exc} (on line {number}, inside this row)", "".join(pending))
                    pending, pending_size = [], 0
                else:
                    yield Row(number, None, str(exc), raw.decode("utf-8", "backslashreplace"))
                continue
            if not pending:
                if not text.strip():
                    continue
                start_line = number
            pending.append(text)
            pending_size += size
            joined = "".join(pending)
            if quoting == csv.QUOTE_MINIMAL and ends_in_quoted_cell(joined, delimiter):
                continue  # inside a quoted cell: the row goes on on the next line
            pending, pending_size = [], 0
            yield _split(joined, start_line, delimiter, quoting)
    if pending:
        yield Row(start_line, None, "a quoted cell is not closed before the end of the file", "".join(pending))


def ends_in_quoted_cell(text: str, delimiter: str) -> bool:
    """Whether ``text`` stops inside a quoted cell, as Python's csv reader scans it: a quote opens a quoted
    cell only as the cell's first character (``b"c`` is three characters of an unquoted cell), ``""``
    inside one is a quote, and the quote that closes it is followed by the delimiter or the line's end.
    Counting quotes instead would read a stray quote as an open cell and swallow every later row."""
    quoted, at_cell_start, index = False, True, 0
    while index < len(text):
        char = text[index]
        if quoted:
            if char == '"':
                if text.startswith('""', index):
                    index += 1
                else:
                    quoted = False
        elif char == '"' and at_cell_start:
            quoted = True
        at_cell_start = not quoted and char in (delimiter, "\n", "\r")
        index += 1
    return quoted


def _split(text: str, line: int, delimiter: str, quoting: _Quoting) -> Row:
    try:
        rows = list(csv.reader(io.StringIO(text), delimiter=delimiter, quoting=quoting, strict=True))
    except csv.Error as exc:
        return Row(line, None, f"not a CSV row: {exc}", text)
    if len(rows) != 1:
        return Row(line, None, "not one CSV row", text)
    return Row(line, rows[0], raw=text.rstrip("\r\n"))


def _triple_row(facts: GenericFacts, row: dict[str, str], location: str) -> None:
    subject, predicate, obj = (row[k] for k in list(row)[:3])
    if not subject.strip() or not predicate.strip() or obj == "":
        raise ValueError("subject, predicate and object must not be empty")
    extra = list(row.values())[3].strip() if len(row) == 4 else ""
    schema = facts.ctx.schema
    predicate_iri = iri_in(predicate.strip())
    relation = schema.relation_for_iri(predicate_iri) if predicate_iri else schema.relation_for(predicate)
    lang, datatype = _lang_or_datatype(extra)
    cell = facts.cell(obj, lang, datatype)
    subject = subject.strip()
    is_iri = iri_in(subject) is not None
    iri = facts.subject(subject if is_iri else None, None if is_iri else subject, location)
    facts.add(iri, relation, cell, location)


def _lang_or_datatype(extra: str) -> tuple[str | None, str | None]:
    if not extra:
        return None, None
    if extra.startswith("@"):
        return extra[1:], None
    if extra.startswith("xsd:"):
        return None, XSD + extra[4:]
    if iri_in(extra):
        return None, iri_in(extra)
    return extra, None


def _entity_row(ctx: ImportContext, columns: list[str], header_line: int):
    settings = record_settings(ctx, columns)
    id_key, label_key, alias_key, separator = settings.id, settings.label, settings.aliases, settings.separator
    schema = ctx.schema
    labels = settings.labels
    relations = {}
    for column in columns:
        if column in (id_key, label_key, alias_key) or column in labels:
            continue
        try:
            iri = iri_in(column)
        except ValueError as exc:  # the column names no relation: every row would be refused for it
            raise InputError(f"{ctx.path}: line {header_line}: column {column!r}: {exc}") from None
        relations[column] = schema.relation_for_iri(iri) if iri else schema.relation_for(column)

    def read(facts: GenericFacts, row: dict[str, str], location: str) -> None:
        cells = [
            (relation, facts.cell(value))
            for column, relation in relations.items()
            for value in split_cell(row[column], separator)
        ]  # first: a bad cell costs the row, names too
        subject = facts.subject(
            row.get(id_key) if id_key else None, row.get(label_key) if label_key else None, location, record=True
        )
        for name in split_cell(row.get(alias_key, ""), separator) if alias_key else ():
            facts.alias(subject, name, location)
        for column, lang in labels.items():
            for name in split_cell(row.get(column) or "", separator):
                facts.label(subject, name, lang, location)
        for relation, cell in cells:
            facts.add(subject, relation, cell, location)

    return read


def split_cell(text: str, separator: str) -> list[str]:
    """The values of a cell: split on ``separator``, each trimmed, empty ones dropped."""
    parts = text.split(separator) if separator else [text]
    return [part.strip() for part in parts if part.strip()]
