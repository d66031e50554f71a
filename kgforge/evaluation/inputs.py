"""Reading what is evaluated: predictions, gold responses and the dialogues they belong to.

Every file is read into :class:`Slots`: one row per response (its text, the gold text where the file has
one, and where it has them the dialogue the response belongs to and the knowledge annotated on it) plus
the dialogues' context (topics, knowledge triples, gold knowledge). Layouts, chosen by content (or
``layout=``):

``lines``        one response per line (a model's output file); every line counts, empty ones too (a text file
                 whose first line holds a tab is the layout registered ``tabbed``, where one is).
``table``        JSON lines, CSV, Parquet or Excel (``.xlsx``, needs openpyxl) with named columns: prediction
                 (``prediction``/``pred``/``response``/``hypothesis``/``output``), gold (``gold``/``reference``/
                 ``ref``/``target``), optionally ``id``, ``dialogue_id``, ``topics``, ``knowledge``,
                 ``gold_knowledge`` (JSON lists; in CSV cells as JSON text).
``kgforge``      a ``kgforge export --format jsonl`` file: dialogue context only (topics, subgraph, goal path).

Each dataset's room registers the layouts of its own dialogue files (``kgforge/datasets/<name>/evaluation.py``,
:func:`register_layout`), with the helpers here that check a record's layout, triples and utterances; a layout
whose dialogues have goals says how they are read (``EvalLayout.goals``, :mod:`.goal_reading`).

A file that cannot be used is an :class:`InputError` naming the file and line; nothing is dropped silently.
"""

from __future__ import annotations

import csv
import io
import json
import zipfile
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
from polars.datatypes import DataTypeClass

from kgforge.core.datasets import room_parts
from kgforge.core.errors import ArgumentError, InputError, KgforgeError
from kgforge.core.jsonio import (
    LoneSurrogateError,
    NestingError,
    TextPolicy,
    iter_json_lines,
    loads,
)
from kgforge.core.limits import check_whole, lines, read_whole, record_too_large
from kgforge.core.registry import Entry, Registry
from kgforge.core.text import is_segmented
from kgforge.evaluation.goal_reading import GoalReading
from kgforge.sources.dialogue_layouts import layout_problem

PREDICTION_COLUMNS = ("prediction", "pred", "response", "hypothesis", "output", "generated")
GOLD_COLUMNS = ("gold", "reference", "ref", "target", "golden_response")
ID_COLUMNS = ("id", "response_id")
DIALOGUE_COLUMNS = ("dialogue_id", "dialogue")

Triple = tuple[str, str, str]
TRIPLES = pl.List(pl.List(pl.String))
FRAME_SCHEMA: dict[str, pl.DataType | DataTypeClass] = {
    "id": pl.String,
    "line": pl.Int64,
    "text": pl.String,
    "gold": pl.String,
    "dialogue": pl.Int64,
    "dialogue_key": pl.String,
    "gold_knowledge": TRIPLES,
    "turn": pl.Int64,  # the response's place in its dialogue's utterances (null where the file has no dialogue)
}


@dataclass
class Dialogue:
    """A dialogue's context: its topic names, its own knowledge triples and its gold knowledge (goal path), and
    its utterances (what a response's ``turn`` indexes: the history a rater reads before it)."""

    key: str
    topics: list[str] = field(default_factory=list)
    knowledge: list[Triple] = field(default_factory=list)
    gold: list[Triple] = field(default_factory=list)
    utterances: list[str] = field(default_factory=list)


@dataclass
class Slots:
    """What one file holds: a row per response (``FRAME_SCHEMA``) and the dialogues' context."""

    path: Path
    layout: str
    frame: pl.DataFrame
    dialogues: list[Dialogue]
    has_gold: bool = False
    skipped: list[str] = field(default_factory=list)
    unsegmented: bool = False  # a layout segmented by definition whose file is not (a release written unsegmented)

    @property
    def segmented(self) -> bool:
        return EVAL_LAYOUTS.get(self.layout).segmented and not self.unsegmented


@dataclass(frozen=True)
class EvalLayout:
    """How ``kgforge eval`` reads one layout into :class:`Slots`, and how it knows a file is in it: ``array``,
    a JSON array (``.json``) is this layout; ``detects``, the first record of a JSON-lines file is (layouts are
    asked most specific first: highest ``priority``); ``tabbed``, a text file whose first line holds a tab is.
    ``segmented``: word-segmented by definition; ``dialogues``: the file holds dialogues and their context (it
    may be given as ``--dialogues``); ``goals``: how its dialogues' goals are read, for ``--goal-metrics``
    (:mod:`.goal_reading`; None: they have none); ``records``: the file's dialogue records, each checked against
    its layout, for a layout whose file is not JSON lines (a rating sheet of whole dialogues reads them)."""

    read: Callable[[Path], Slots]
    detects: Callable[[dict[str, Any]], bool] | None = None
    array: bool = False
    segmented: bool = False
    dialogues: bool = True
    priority: int = 0
    description: str = ""
    goals: GoalReading | None = None
    records: Callable[[Path], Iterable[tuple[int, Any]]] | None = None
    tabbed: bool = False


def _plugin_layout(name: str, obj: Any) -> Entry[EvalLayout]:
    if not isinstance(obj, EvalLayout):
        raise KgforgeError(f"it is a {type(obj).__name__}, not a kgforge.evaluation.inputs.EvalLayout")
    return Entry(name, obj, obj.description)


# the layouts of no one dataset are registered below; each dataset's room registers its own (its evaluation part)
EVAL_LAYOUTS: Registry[EvalLayout] = Registry(
    "eval layout",
    modules=lambda: room_parts("evaluation"),
    entry_point_group="kgforge.eval_layouts",
    plugin=_plugin_layout,
)


def register_layout(name: str, layout: EvalLayout) -> EvalLayout:
    """Make ``layout`` what ``kgforge eval --layout NAME`` reads (and what ``auto`` may find)."""
    EVAL_LAYOUTS.register(name, layout, description=layout.description)
    return layout


def layout_names() -> tuple[str, ...]:
    """What ``--layout`` accepts: ``auto`` and every registered layout."""
    return ("auto", *EVAL_LAYOUTS.names())


def dataset_layouts() -> tuple[str, ...]:
    """The layouts whose files hold dialogues and their context (what ``--dialogues`` takes)."""
    return tuple(entry.name for entry in EVAL_LAYOUTS if entry.obj.dialogues)


# ---------------------------------------------------------------- detection


def detect_layout(path: Path) -> str:
    """The layout of ``path`` by its name and first record (see the module docstring)."""
    path = _present(path)
    suffix = path.suffix.lower()
    if suffix in (".csv", ".xlsx", ".parquet"):
        return "table"
    head = _first_line(path)
    if suffix == ".json" or head.startswith("["):
        return next((e.name for e in EVAL_LAYOUTS if e.obj.array), "table")
    if head.startswith("{"):
        try:
            record = loads(head)
        except ValueError:  # not JSON, or nested too deeply: the table reader names the line
            return "table"
        return _record_layout(record)
    return next((e.name for e in EVAL_LAYOUTS if e.obj.tabbed), "lines") if "\t" in head else "lines"


def _record_layout(record: Any) -> str:
    """The most specific layout whose ``detects`` takes ``record`` (a JSON-lines file's first), else a table."""
    if not isinstance(record, dict):
        return "table"
    found = sorted((e for e in EVAL_LAYOUTS if e.obj.detects), key=lambda e: -e.obj.priority)
    return next((e.name for e in found if e.obj.detects and e.obj.detects(record)), "table")


def _present(path: Path) -> Path:
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    return path


def _first_line(path: Path) -> str:
    with open(path, "rb") as handle:
        for line in lines(handle):
            if line.raw is None:
                raise InputError(f"{path}:{line.number}: {record_too_large(line.size, 'line')}")
            text = line.raw.decode("utf-8", "replace").lstrip("\ufeff").strip()
            if text:
                return text
    raise InputError(f"{path}:1: file is empty")


# ---------------------------------------------------------------- reading


def read_slots(path: Path, layout: str = "auto", columns: dict[str, str] | None = None) -> Slots:
    """``path`` read in ``layout`` (``auto``: :func:`detect_layout`)."""
    if layout not in layout_names():
        raise ArgumentError("layout", f"{layout!r} is not one of {', '.join(layout_names())}")
    path = _present(path)
    layout = detect_layout(path) if layout == "auto" else layout
    if layout == "table":  # the one layout told its columns
        return read_table(path, columns or {})
    return EVAL_LAYOUTS.get(layout).read(path)


def response_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    return pl.DataFrame(rows, schema=FRAME_SCHEMA) if rows else pl.DataFrame(schema=FRAME_SCHEMA)


def read_lines(path: Path) -> Slots:
    """One response per line; a trailing newline does not make an extra (empty) response."""
    rows = [{"id": str(lineno), "line": lineno, "text": line.rstrip("\n")} for lineno, line in numbered_lines(path)]
    if not rows:
        raise InputError(f"{path}:1: file is empty")
    return Slots(path, "lines", response_frame(rows), [])


def numbered_lines(path: Path) -> Iterator[tuple[int, str]]:
    """The lines of a text file (``\\r\\n`` read as ``\\n``, a leading BOM dropped), each decoded on its own,
    so that a byte that is not UTF-8 is named with its own line and byte offset in the file."""
    with open(path, "rb") as handle:
        for lineno, offset, raw, size in lines(handle):
            if raw is None:
                raise InputError(f"{path}:{lineno}: {record_too_large(size, 'line')}")
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise InputError(
                    f"{path}:{lineno}: not UTF-8 ({exc.reason} at byte offset {offset + exc.start})"
                ) from None
            if line.endswith("\r\n"):
                line = line[:-2] + "\n"
            yield lineno, line.lstrip("\ufeff") if lineno == 1 else line


# ---------------------------------------------------------------- tables


def read_table(path: Path, columns: dict[str, str]) -> Slots:
    """JSON lines, CSV or Excel with named columns; ``columns`` maps ``prediction``/``gold``/``id``/
    ``dialogue`` to the file's own column names where they differ from the usual ones."""
    records = list(table_records(path))
    if not records:
        raise InputError(f"{path}: no rows")
    names = list(dict.fromkeys(key for _, record in records for key in record))
    prediction = _required_column(path, names, columns.get("prediction"), PREDICTION_COLUMNS, "prediction")
    gold = _column(path, names, columns.get("gold"), GOLD_COLUMNS)
    ident = _column(path, names, columns.get("id"), ID_COLUMNS)
    dialogue = _column(path, names, columns.get("dialogue"), DIALOGUE_COLUMNS)
    rows: list[dict[str, Any]] = []
    dialogues: list[Dialogue] = []
    policy = TextPolicy(path)
    for line, record in records:
        text = record.get(prediction)
        if not isinstance(text, str):
            raise InputError(f"{path}:{line}: column {prediction!r} must be a string, got {_kind(text)}")
        gold_text = record.get(gold) if gold else None
        if gold and not isinstance(gold_text, str):
            raise InputError(f"{path}:{line}: column {gold!r} must be a string, got {_kind(gold_text)}")
        context = _row_context(path, line, record, policy)
        row = {
            "id": str(record.get(ident, line)) if ident else str(line),
            "line": line,
            "text": text,
            "gold": gold_text,
            "dialogue_key": str(record[dialogue]) if dialogue and record.get(dialogue) is not None else None,
            "gold_knowledge": context.gold or None,
        }
        if context.topics or context.knowledge:
            row["dialogue"] = len(dialogues)
            dialogues.append(context)
        rows.append(row)
    policy.finish()
    return Slots(path, "table", response_frame(rows), dialogues, has_gold=gold is not None)


def table_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    suffix = path.suffix.lower()
    if suffix in (".csv", ".tsv"):
        reader = csv.DictReader(io.StringIO(_csv_text(path), newline=""), delimiter="\t" if suffix == ".tsv" else ",")
        try:
            for record in reader:
                if None in record or None in record.values():  # more cells than the header names, or fewer
                    raise InputError(
                        f"{path}:{reader.line_num}: {len(reader.fieldnames or [])} columns in the "
                        f"header but {_cells(record)} cells in this row"
                    )
                yield reader.line_num, dict(record)
        except csv.Error as exc:
            raise InputError(f"{path}:{reader.line_num + 1}: not a CSV row ({exc})") from None
    elif suffix == ".xlsx":
        yield from _excel_records(path)
    elif suffix == ".parquet":
        try:
            frame = pl.read_parquet(check_whole(path, "Parquet file"))
        except (pl.exceptions.PolarsError, OSError) as exc:
            raise InputError(f"{path}: not a readable Parquet file ({exc})") from None
        yield from enumerate(frame.to_dicts(), start=1)
    else:
        yield from json_objects(path)


def _csv_text(path: Path) -> str:
    """A CSV file's text; InputError naming the line and byte offset of a byte that is not UTF-8."""
    data = read_whole(path, "CSV file")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{path}:{line}: not UTF-8 ({exc.reason} at byte offset {exc.start})") from None


def _cells(record: dict[Any, Any]) -> int:
    extra = record.get(None) or []
    return sum(1 for key, value in record.items() if key is not None and value is not None) + len(extra)


def _excel_records(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    try:
        import openpyxl  # optional: only Excel input needs it
    except ImportError:
        raise InputError(f"{path}: reading .xlsx needs openpyxl (pip install 'kgforge[excel]')") from None
    from openpyxl.utils.exceptions import InvalidFileException

    try:
        workbook = openpyxl.load_workbook(check_whole(path, "workbook"), read_only=True, data_only=True)
    except (InvalidFileException, zipfile.BadZipFile, KeyError, ValueError, OSError) as exc:
        raise InputError(f"{path}: not a readable .xlsx workbook ({type(exc).__name__}: {exc})") from None
    try:
        rows = workbook.worksheets[0].iter_rows(values_only=True)
        header = [str(name) if name is not None else "" for name in next(rows, ())]
        for line, values in enumerate(rows, start=2):
            if all(value is None for value in values):
                continue
            yield (
                line,
                {
                    name: ("" if value is None else value if isinstance(value, (int, float)) else str(value))
                    for name, value in zip(header, values)
                    if name
                },
            )
    finally:
        workbook.close()


def _column(path: Path, names: list[str], given: str | None, usual: tuple[str, ...]) -> str | None:
    if given is not None:
        if given not in names:
            raise InputError(f"{path}: no column {given!r} (columns: {', '.join(names)})")
        return given
    return next((name for name in usual if name in names), None)


def _required_column(path: Path, names: list[str], given: str | None, usual: tuple[str, ...], what: str) -> str:
    found = _column(path, names, given, usual)
    if found is None:
        raise InputError(
            f"{path}: no {what} column: name it with --{what}-column (columns: {', '.join(names)}; "
            f"recognised: {', '.join(usual)})"
        )
    return found


def _row_context(path: Path, line: int, record: dict[str, Any], text: TextPolicy) -> Dialogue:
    """A table row's own context columns (``topics``, ``knowledge``, ``gold_knowledge``), JSON in CSV cells
    (decoded as every input's JSON is: nesting bounded, under the text policy)."""

    def value(name: str) -> Any:
        raw = record.get(name)
        if isinstance(raw, str) and raw.strip():
            try:
                return text.value(loads(raw), line)
            except json.JSONDecodeError as exc:
                raise InputError(f"{path}:{line}: column {name!r} is not JSON ({exc.msg})") from None
            except (NestingError, LoneSurrogateError) as exc:
                raise InputError(f"{path}:{line}: column {name!r}: {exc}") from None
        return raw or []

    topics = value("topics")
    if not isinstance(topics, list) or not all(isinstance(t, str) for t in topics):
        raise InputError(f"{path}:{line}: column 'topics' must be a list of names")
    return Dialogue(
        str(line),
        topics,
        checked_triples(path, line, value("knowledge"), "knowledge"),
        checked_triples(path, line, value("gold_knowledge"), "gold_knowledge"),
    )


def checked_triples(path: Path, line: int, value: Any, what: str) -> list[Triple]:
    """``value`` (``what``, at ``path:line``) as triples: ``[[head, relation, tail], …]`` or attrs objects
    ``[{"name", "attrname", "attrvalue"}, …]``; anything else is an InputError naming the line."""
    if not isinstance(value, list):
        raise InputError(f"{path}:{line}: {what} must be a list of [head, relation, tail] triples")
    triples = []
    for item in value:
        if isinstance(item, dict):
            item = [item.get("name"), item.get("attrname"), item.get("attrvalue")]
        if not (isinstance(item, list) and len(item) == 3 and all(isinstance(x, str) for x in item)):
            raise InputError(
                f"{path}:{line}: {what}: {json.dumps(item, ensure_ascii=False)[:80]} is not a "
                "[head, relation, tail] triple of strings"
            )
        triples.append((item[0], item[1], item[2]))
    return triples


def _kind(value: Any) -> str:
    return "nothing" if value is None else type(value).__name__


# ---------------------------------------------------------------- datasets


def json_objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line, object)`` per line of a JSON lines file; anything else stops the reading with its line."""
    for record in iter_json_lines(path):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        if not isinstance(record.value, dict):
            raise InputError(f"{path}:{record.line}: expected a JSON object per line, got {_kind(record.value)}")
        yield record.line, record.value


def utterance_list(path: Path, line: int, value: Any, what: str) -> list[str]:
    """``value`` (``what``, at ``path:line``) as a list of utterances; anything else is an InputError."""
    if not isinstance(value, list) or not all(isinstance(u, str) for u in value):
        raise InputError(f"{path}:{line}: {what} must be a list of strings")
    return value


def heads(triples: list[Triple]) -> list[str]:
    """The triples' subjects, in order (a dialogue's topics, after its own)."""
    return [head for head, _, _ in triples]


def in_layout(path: Path, line: int, kind: str | None, record: dict[str, Any], unknown: str) -> None:
    """Refuse ``record`` (line ``line`` of ``path``) unless it is a dialogue of layout ``kind``
    (:mod:`kgforge.sources.dialogue_layouts`, the check every reader of dialogue files shares)."""
    if kind is None:
        raise InputError(f"{path}:{line}: {unknown}")
    problem = layout_problem(kind, record)
    if problem:
        raise InputError(f"{path}:{line}: not a {kind} dialogue: {problem}")


def read_kgforge_export(path: Path) -> Slots:
    dialogues = []
    for line, record in json_objects(path):

        def labelled(key: str) -> list[Triple]:
            items = record.get(key) or []
            if not isinstance(items, list) or not all(isinstance(t, dict) for t in items):
                raise InputError(f"{path}:{line}: {key!r} must be a list of triple objects")
            return [(str(t.get("s_label")), str(t.get("p_label")), str(t.get("o_label"))) for t in items]

        topics = [str(t.get("label")) for t in record.get("topics") or [] if isinstance(t, dict)]
        dialogues.append(Dialogue(str(record.get("dialogue_id", line)), topics, labelled("triples"), labelled("path")))
    return Slots(path, "kgforge", response_frame([]), dialogues)


def _is_export(record: dict[str, Any]) -> bool:
    return "dialogue_id" in record and "triples" in record


register_layout("lines", EvalLayout(read_lines, dialogues=False, description="one response per line"))
register_layout(
    "table",
    EvalLayout(
        lambda path: read_table(path, {}),
        dialogues=False,
        description="JSON lines, CSV, Parquet or Excel with named columns",
    ),
)
register_layout(
    "kgforge",
    EvalLayout(read_kgforge_export, _is_export, priority=30, description="a kgforge export --format jsonl file"),
)


# ---------------------------------------------------------------- predictions, gold and dialogues together


@dataclass
class Responses:
    """The responses to evaluate: ``frame`` has ``id, line, prediction, gold, dialogue, gold_knowledge``;
    ``dialogue`` indexes ``dialogues`` (null where no context is known)."""

    frame: pl.DataFrame
    dialogues: list[Dialogue]
    has_gold: bool
    segmented: bool
    sources: dict[str, Any]


def load_responses(
    predictions: Path,
    gold: Path | None = None,
    dialogues: Path | None = None,
    layout: str = "auto",
    columns: dict[str, str] | None = None,
) -> Responses:
    """Predictions matched with their gold responses and dialogue context.

    ``predictions`` may hold gold itself (``prediction<TAB>gold`` lines, a table with a gold column); otherwise ``gold`` (any
    layout) gives it, response by response in order. Context comes from ``gold`` when it is a dataset layout,
    else from ``dialogues`` (matched by a ``dialogue_id`` column when the predictions have one, else in order),
    else from ``predictions`` themselves."""
    pred = read_slots(predictions, layout, columns)
    if pred.layout == "kgforge":
        raise InputError(f"{predictions}: a kgforge export holds dialogues, not responses: give it as --dialogues")
    own_gold = pred.has_gold and not EVAL_LAYOUTS.get(pred.layout).dialogues  # a prediction's gold beside it
    frame = pred.frame.rename({"text": "prediction"})
    if not own_gold:
        frame = frame.with_columns(gold=pl.lit(None, pl.String))
    sources: dict[str, Any] = {"predictions": _describe(pred)}
    context: Slots | None = pred if pred.dialogues else None
    if gold is not None:
        if own_gold:
            raise InputError(f"{predictions} holds gold responses already (layout {pred.layout}); leave out --gold")
        reference = read_slots(gold, "auto", columns)
        _same_count(pred, reference)
        texts = reference.frame["gold"] if reference.has_gold else reference.frame["text"]
        frame = frame.with_columns(gold=texts)
        sources["gold"] = _describe(reference)
        if reference.dialogues and reference.layout in dataset_layouts():
            context = reference
    if dialogues is not None:
        given = read_slots(dialogues, "auto", columns)
        if given.layout not in dataset_layouts():
            raise InputError(
                f"{dialogues}: --dialogues takes a dialogue file (a layout of "
                f"{', '.join(dataset_layouts())}), not a {given.layout} file"
            )
        sources["dialogues"] = _describe(given)
        context = _context_by_key(frame, given) if frame["dialogue_key"].is_not_null().any() else given
    if context is not None and context is not pred:
        frame = _attach(frame, context)
    segmented = any(s.segmented for s in (pred, context) if s is not None) or looks_segmented(frame)
    return Responses(
        frame, context.dialogues if context is not None else [], own_gold or gold is not None, segmented, sources
    )


def _describe(slots: Slots) -> dict[str, Any]:
    described: dict[str, Any] = {"path": str(slots.path), "layout": slots.layout, "responses": slots.frame.height}
    if slots.dialogues:
        described["dialogues"] = len(slots.dialogues)
    if slots.skipped:
        described["skipped"] = slots.skipped
    return described


def _same_count(pred: Slots, other: Slots) -> None:
    if pred.frame.height != other.frame.height:
        raise InputError(
            f"{pred.path} has {pred.frame.height} responses ({pred.layout}) but {other.path} has "
            f"{other.frame.height} ({other.layout}): responses are matched in order, so the counts "
            "must be equal"
        )


def _attach(frame: pl.DataFrame, context: Slots) -> pl.DataFrame:
    """The context's dialogue and gold knowledge for each response, in order."""
    if context.frame.height == 0:  # a kgforge export: one response per dialogue
        if frame.height != len(context.dialogues):
            raise InputError(
                f"{context.path} has {len(context.dialogues)} dialogues and no responses; "
                f"{frame.height} responses cannot be matched to them one by one"
            )
        return frame.with_columns(
            dialogue=pl.int_range(frame.height, dtype=pl.Int64),
            gold_knowledge=pl.lit(None, TRIPLES),
            turn=pl.lit(None, pl.Int64),
        )
    if frame.height != context.frame.height:
        raise InputError(
            f"{context.path} has {context.frame.height} responses ({context.layout}) but the "
            f"predictions have {frame.height}: responses are matched in order, so the counts must be equal"
        )
    return frame.with_columns(
        dialogue=context.frame["dialogue"], gold_knowledge=context.frame["gold_knowledge"], turn=context.frame["turn"]
    )


def _context_by_key(frame: pl.DataFrame, given: Slots) -> Slots:
    """``given`` with one row per prediction, found by the prediction's ``dialogue_id``."""
    index = {dialogue.key: i for i, dialogue in enumerate(given.dialogues)}
    missing = frame.filter(pl.col("dialogue_key").is_not_null() & ~pl.col("dialogue_key").is_in(list(index)))
    if missing.height:
        first = missing.row(0, named=True)
        raise InputError(
            f"line {first['line']}: dialogue {first['dialogue_key']!r} is not in {given.path} "
            f"(its dialogues are keyed {', '.join(list(index)[:3])}, …)"
        )
    rows = frame.select(
        dialogue=pl.col("dialogue_key").replace_strict(index, default=None, return_dtype=pl.Int64),
        gold_knowledge=pl.lit(None, TRIPLES),
        turn=pl.lit(None, pl.Int64),
    )
    return Slots(given.path, given.layout, rows, given.dialogues)


def looks_segmented(frame: pl.DataFrame, column: str | None = None) -> bool:
    """Whether most texts (``column``; by default gold, else predictions; the first 200) carry word-segmentation
    spaces."""
    column = column or ("gold" if frame["gold"].is_not_null().any() else "prediction")
    texts = [t for t in frame[column].drop_nulls().head(200).to_list() if t.strip()]
    return bool(texts) and sum(is_segmented(t) for t in texts) * 2 > len(texts)
