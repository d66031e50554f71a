"""Human rating sheets: ``kgforge rate sheet`` writes blinded, shuffled sheets for a rubric; ``kgforge rate
import`` reads the filled sheets back, un-blinds them and reports per-system means, the annotators' agreement
(Fleiss' κ, Krippendorff's α, percent agreement) and paired significance between systems.

A rubric is a small TOML file (``kgforge/evaluation/rubrics/NAME.toml``, or a path to the user's own): its unit
(``turn``: one response; ``dialogue``: a whole conversation; ``pair``: two systems' responses to the same input,
side by side), its aspects, each with a scale and its wording in Chinese and English, and the measurement level
for α. Blinding: a sheet shows an item number, the text (and its context where the file has one) and an empty
column per aspect; which system wrote what is only in ``key.json``, beside the sheets, which the annotators are
not given. Items are shuffled with a seed, in another order for each annotator. Every text cell is escaped against
formula injection (:func:`kgforge.core.text.spreadsheet_cell`).
"""

from __future__ import annotations

import csv
import itertools
import json
import random
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.files import atomic_path
from kgforge.core.jsonio import iter_json_container
from kgforge.core.registry import Entry, Registry
from kgforge.core.text import spreadsheet_cell
from kgforge.evaluation.agreement import agreement, paired_test
from kgforge.evaluation.inputs import detect_layout, json_objects, load_responses, table_records

UNITS = ("turn", "dialogue", "pair")
LEVELS = ("nominal", "ordinal", "interval", "ratio")
SHEET_FORMATS = ("csv", "tsv", "xlsx")
LANGUAGES = ("zh", "en", "both")
KEY_FILE = "key.json"
CONTEXT_COLUMNS = ("context", "history")


# ---------------------------------------------------------------- rubrics


@dataclass(frozen=True)
class Aspect:
    key: str
    zh: str
    en: str
    scale: tuple[float, ...]
    labels: dict[str, tuple[str, ...]] = field(default_factory=dict)
    optional: bool = False

    def title(self, language: str) -> str:
        return {"zh": self.zh, "en": self.en}.get(language, f"{self.zh} / {self.en}")


@dataclass(frozen=True)
class Rubric:
    name: str
    unit: str
    level: str
    source: str
    instructions: dict[str, str]
    aspects: tuple[Aspect, ...]
    annotators: int = 3

    def instructions_text(self, language: str) -> str:
        """The annotators' instructions: what to do, then each aspect's scale with its wording."""
        languages = ["zh", "en"] if language == "both" else [language]
        lines = [f"# {self.name}", ""]
        for lang in languages:
            lines += [self.instructions.get(lang, ""), ""]
            for aspect in self.aspects:
                lines.append(f"## {aspect.key}: {aspect.title(lang)}{' (optional)' if aspect.optional else ''}")
                for value, label in zip(aspect.scale, aspect.labels.get(lang, ()), strict=False):
                    lines.append(f"- {_number_text(value)}: {label}")
                lines.append("")
        return "\n".join(lines)


def read_rubric(path: Path) -> Rubric:
    """A rubric file (TOML); a malformed one is an InputError naming the file and the field."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise InputError(f"{path}: not a readable rubric ({exc})") from None

    def need(mapping: Mapping[str, Any], key: str, kind: type, where: str) -> Any:
        value = mapping.get(key)
        if not isinstance(value, kind):
            raise InputError(f"{path}: {where}{key!r} must be a {kind.__name__}")
        return value

    unit, level = need(data, "unit", str, ""), data.get("level", "ordinal")
    if unit not in UNITS or level not in LEVELS:
        raise InputError(f"{path}: unit must be one of {', '.join(UNITS)} and level one of {', '.join(LEVELS)}")
    aspects = []
    for i, raw in enumerate(need(data, "aspects", list, "")):
        where = f"aspects[{i}]."
        scale = need(raw, "scale", list, where)
        if not scale or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in scale):
            raise InputError(f"{path}: {where}scale must be a list of numbers")
        labels = {lang: tuple(map(str, values)) for lang, values in (raw.get("labels") or {}).items()}
        aspects.append(
            Aspect(
                need(raw, "key", str, where),
                need(raw, "zh", str, where),
                need(raw, "en", str, where),
                tuple(float(v) for v in scale),
                labels,
                bool(raw.get("optional", False)),
            )
        )
    if not aspects:
        raise InputError(f"{path}: a rubric needs at least one aspect")
    return Rubric(
        need(data, "name", str, ""),
        unit,
        level,
        str(data.get("source", "")),
        dict(data.get("instructions") or {}),
        tuple(aspects),
        int(data.get("annotators", 3)),
    )


def _bundled() -> Iterable[tuple[str, Rubric]]:
    for entry in sorted(resources.files("kgforge.evaluation").joinpath("rubrics").iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".toml"):
            rubric = read_rubric(Path(str(entry)))
            yield rubric.name, rubric


def _plugin_rubric(name: str, obj: Any) -> Entry[Rubric]:
    """A rubric of the entry-point group ``kgforge.rubrics``: a :class:`Rubric`, or the path of its TOML file
    (a ``str``, a ``Path`` or an ``importlib.resources`` file of the plug-in's package)."""
    made = (
        obj
        if isinstance(obj, Rubric)
        else read_rubric(Path(str(obj)))
        if isinstance(obj, (str, Path)) or hasattr(obj, "read_text")
        else None
    )
    if made is None:
        raise ArgumentError(f"rubric plug-in {name!r}", f"is a {type(obj).__name__}, not a Rubric or a TOML path")
    return Entry(name, made, f"{made.unit} rubric, {len(made.aspects)} aspects ({made.source or 'plug-in'})")


RUBRICS: Registry[Rubric] = Registry(
    "rubric", discover=_bundled, entry_point_group="kgforge.rubrics", plugin=_plugin_rubric
)


def rubric(name_or_path: str | Path) -> Rubric:
    """A bundled rubric by name, or the user's own rubric file (a path ending in .toml)."""
    text = str(name_or_path)
    if text.endswith(".toml"):
        return read_rubric(Path(text))
    return RUBRICS.get(text)


# ---------------------------------------------------------------- what is rated


@dataclass(frozen=True)
class Unit:
    """One thing a system produced for one input: a response (``turn``) or a conversation (``dialogue``)."""

    key: str
    text: str
    context: str = ""


def system_units(
    path: Path, unit: str, gold: Path | None = None, layout: str = "auto", columns: dict[str, str] | None = None
) -> list[Unit]:
    """The units of a system's file: its responses (with a ``context``/``history`` column when a table has
    one), or its conversations (DuConv/DuRecDial ``conversation``, KdConv ``messages``)."""
    if unit == "dialogue":
        return _conversations(Path(path))
    responses = load_responses(Path(path), None, None, layout, columns or {})
    contexts = _contexts(Path(path), responses.frame.height)
    return [
        Unit(str(ident), text, contexts[i])
        for i, (ident, text) in enumerate(
            zip(responses.frame["id"].to_list(), responses.frame["prediction"].to_list(), strict=True)
        )
    ]


def _contexts(path: Path, size: int) -> list[str]:
    if path.suffix.lower() not in (".jsonl", ".csv", ".tsv", ".xlsx"):
        return [""] * size
    try:
        records = [record for _, record in table_records(path)]
    except InputError:
        return [""] * size
    if len(records) != size:
        return [""] * size
    found = []
    for record in records:
        value = next((record[c] for c in CONTEXT_COLUMNS if c in record), "")
        found.append("\n".join(map(str, value)) if isinstance(value, list) else str(value or ""))
    return found


def _dialogue_records(path: Path) -> Iterable[tuple[int, Any]]:
    if detect_layout(path) != "kdconv":
        yield from json_objects(path)
        return
    for record in iter_json_container(path, list):
        if record.error:
            raise InputError(f"{path}:{record.line}: {record.error}")
        yield record.line, record.value


def _conversations(path: Path) -> list[Unit]:
    units = []
    for line, record in _dialogue_records(path):
        if isinstance(record, dict) and isinstance(record.get("conversation"), list):
            turns = [str(t) for t in record["conversation"]]
        elif isinstance(record, dict) and isinstance(record.get("messages"), list):
            turns = [str(m.get("message", "")) for m in record["messages"] if isinstance(m, dict)]
        else:
            raise InputError(
                f"{path}:{line}: a dialogue rubric rates whole conversations: each record needs a "
                "'conversation' list (DuConv, DuRecDial) or 'messages' (KdConv)"
            )
        key = str(record.get("dialogue_id", record.get("id", line)))
        goal = record.get("goal")
        context = json.dumps(goal, ensure_ascii=False) if goal else ""
        units.append(Unit(key, "\n".join(f"{'AB'[j % 2]}: {t}" for j, t in enumerate(turns)), context))
    if not units:
        raise InputError(f"{path}: no conversation in the file")
    return units


# ---------------------------------------------------------------- sheets


@dataclass(frozen=True)
class SheetSet:
    rubric: str
    folder: str
    key: str
    sheets: dict[str, str]  # annotator -> sheet file
    instructions: str
    items: int
    systems: tuple[str, ...]
    sampled_units: int


def make_sheets(
    rubric_name: str | Path,
    systems: Mapping[str, Path],
    out: Path,
    *,
    annotators: int | None = None,
    seed: int = 0,
    sample: int | None = None,
    language: str = "zh",
    sheet_format: str = "csv",
    layout: str = "auto",
) -> SheetSet:
    """Write one blinded, shuffled sheet per annotator, the instructions and the un-blinding key into ``out``."""
    chosen = rubric(rubric_name)
    if language not in LANGUAGES:
        raise ArgumentError("--lang", f"{language!r} is not one of {', '.join(LANGUAGES)}")
    if sheet_format not in SHEET_FORMATS:
        raise ArgumentError("--format", f"{sheet_format!r} is not one of {', '.join(SHEET_FORMATS)}")
    if len(systems) < (2 if chosen.unit == "pair" else 1):
        raise ArgumentError("--system", f"rubric {chosen.name} compares systems in pairs: give two or more")
    units = {
        name: {u.key: u for u in system_units(path, "dialogue" if chosen.unit == "dialogue" else "turn", layout=layout)}
        for name, path in systems.items()
    }
    keys = _shared_keys(units)
    rng = random.Random(seed)
    if sample is not None and sample < len(keys):
        keys = sorted(rng.sample(keys, sample), key=keys.index)
    items = _items(chosen, units, keys, rng)
    raters = [f"annotator{i + 1}" for i in range(annotators or chosen.annotators)]
    out.mkdir(parents=True, exist_ok=True)
    sheets = {}
    for number, rater in enumerate(raters):
        order = list(items)
        random.Random(seed * 1000 + number + 1).shuffle(order)  # another order for every annotator
        sheets[rater] = f"sheet-{rater}.{sheet_format}"
        _write_sheet(out / sheets[rater], chosen, [(item_id, items[item_id]["show"]) for item_id in order], language)
    instructions = out / "instructions.md"
    with atomic_path(instructions) as tmp:
        Path(tmp).write_text(chosen.instructions_text(language), encoding="utf-8")
    key = {
        "rubric": chosen.name,
        "unit": chosen.unit,
        "level": chosen.level,
        "seed": seed,
        "rubric_file": str(rubric_name) if str(rubric_name).endswith(".toml") else None,
        "sheets": sheets,
        "systems": list(systems),
        "items": {item_id: {k: v for k, v in item.items() if k != "show"} for item_id, item in items.items()},
    }
    with atomic_path(out / KEY_FILE) as tmp:
        Path(tmp).write_text(json.dumps(key, ensure_ascii=False, indent=1), encoding="utf-8")
    return SheetSet(
        chosen.name,
        str(out),
        str(out / KEY_FILE),
        {r: str(out / s) for r, s in sheets.items()},
        str(instructions),
        len(items),
        tuple(systems),
        len(keys),
    )


def _shared_keys(units: Mapping[str, Mapping[str, Unit]]) -> list[str]:
    """The inputs every system answered (so that systems are compared on the same items), in file order."""
    first, *rest = units.values()
    shared = [key for key in first if all(key in other for other in rest)]
    if not shared:
        raise InputError(
            "the systems share no input (their response or dialogue ids differ); rate sheets compare "
            "systems on the same inputs"
        )
    return shared


def _items(
    chosen: Rubric, units: Mapping[str, Mapping[str, Unit]], keys: list[str], rng: random.Random
) -> dict[str, dict[str, Any]]:
    """Blinded items in a seeded random order: ``item-00001`` … → what they show and whose they are."""
    found: list[dict[str, Any]] = []
    names = list(units)
    for key in keys:
        if chosen.unit == "pair":
            for a, b in itertools.combinations(names, 2):
                first, second = (a, b) if rng.random() < 0.5 else (b, a)
                found.append(
                    {
                        "unit": key,
                        "systems": [first, second],
                        "show": (units[a][key].context, units[first][key].text, units[second][key].text),
                    }
                )
        else:
            for name in names:
                found.append({"unit": key, "system": name, "show": (units[name][key].context, units[name][key].text)})
    rng.shuffle(found)
    return {f"item-{i + 1:05d}": item for i, item in enumerate(found)}


def _header(chosen: Rubric) -> list[str]:
    shown = ["context", "output_1", "output_2"] if chosen.unit == "pair" else ["context", "text"]
    return ["item", *shown, *(aspect.key for aspect in chosen.aspects)]


def _write_sheet(path: Path, chosen: Rubric, rows: list[tuple[str, tuple[str, ...]]], language: str) -> None:
    body = [[item, *shown, *([""] * len(chosen.aspects))] for item, shown in rows]
    write_sheet(path, _header(chosen), body, chosen.instructions_text(language).splitlines(), "rate")


def write_sheet(path: Path, header: list[str], rows: list[list[Any]], notes: list[str], title: str) -> None:
    """A sheet to fill by hand: CSV, TSV or (``.xlsx``) a workbook with the ``notes`` on a second sheet. Every
    text cell is escaped so that a spreadsheet shows it as text, never runs it as a formula."""
    body = [[cell if isinstance(cell, int | float) else spreadsheet_cell(str(cell)) for cell in row] for row in rows]
    if path.suffix == ".xlsx":
        try:
            import openpyxl
        except ImportError:
            raise ArgumentError("--format", "xlsx needs openpyxl (pip install 'kgforge[excel]')") from None
        book = openpyxl.Workbook()
        sheet = book.active
        sheet.title = title
        for row in [header, *body]:
            sheet.append(row)
        instructions = book.create_sheet("instructions")
        for line in notes:
            instructions.append([spreadsheet_cell(line)])
        with atomic_path(path) as tmp:
            book.save(tmp)
        return
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t" if path.suffix == ".tsv" else ",")
        writer.writerow(header)
        writer.writerows(body)


# ---------------------------------------------------------------- import


@dataclass(frozen=True)
class RatingReport:
    rubric: str
    unit: str
    annotators: tuple[str, ...]
    items: int
    ratings: int
    missing: int
    means: tuple[dict[str, Any], ...]  # system, aspect, mean, n (items), ratings
    agreement: dict[str, dict[str, Any]]
    significance: tuple[dict[str, Any], ...]  # aspect, and a PairedTest's fields
    preferences: tuple[dict[str, Any], ...]  # pair rubrics: aspect, a, b, wins, losses, ties, sign_p

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_ratings(folder: Path, sheets: Iterable[Path] | None = None) -> RatingReport:
    """The filled sheets of ``folder`` (its key.json names them; ``sheets`` overrides the files, matched to the
    annotators in the key's order) read back and un-blinded."""
    folder = Path(folder)
    key_path = folder / KEY_FILE if folder.is_dir() else folder
    try:
        key = json.loads(key_path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{key_path}: not a rating key written by `kgforge rate sheet` ({exc})") from None
    chosen = rubric(key["rubric_file"] or key["rubric"])
    raters = list(key["sheets"])
    files = [Path(p) for p in sheets] if sheets else [key_path.parent / key["sheets"][r] for r in raters]
    if len(files) != len(raters):
        raise ArgumentError("sheets", f"{len(files)} sheets for {len(raters)} annotators ({', '.join(raters)})")
    rows, missing = [], 0
    for rater, path in zip(raters, files, strict=True):
        found, empty = _read_filled(path, chosen, key["items"])
        rows += [{"annotator": rater, **row} for row in found]
        missing += empty
    ratings = pl.DataFrame(
        rows, schema={"annotator": pl.String, "item": pl.String, "aspect": pl.String, "score": pl.Float64}
    )
    if chosen.unit == "pair":
        return _pair_report(chosen, key, raters, ratings, missing)
    return _turn_report(chosen, key, raters, ratings, missing)


def _read_filled(path: Path, chosen: Rubric, items: Mapping[str, Any]) -> tuple[list[dict[str, Any]], int]:
    if not path.is_file():
        raise InputError(f"{path}: no such sheet")
    rows, missing, seen = [], 0, set()
    for line, record in table_records(path):
        item = str(record.get("item", "")).strip()
        if item not in items:
            raise InputError(f"{path}:{line}: item {item!r} is not in the key (a sheet of another rating round?)")
        if item in seen:
            raise InputError(f"{path}:{line}: item {item!r} appears twice")
        seen.add(item)
        for aspect in chosen.aspects:
            if aspect.key not in record:
                raise InputError(f"{path}:{line}: no column {aspect.key!r} (the sheet's header was changed)")
            cell = record[aspect.key]
            if cell is None or str(cell).strip() == "":
                missing += 0 if aspect.optional else 1
                continue
            try:
                score = float(str(cell).strip())
            except ValueError:
                score = None
            if score is None or score not in aspect.scale:
                allowed = ", ".join(_number_text(v) for v in aspect.scale)
                raise InputError(f"{path}:{line}: {aspect.key} is {cell!r}, not one of {allowed}")
            rows.append({"item": item, "aspect": aspect.key, "score": score})
    absent = set(items) - seen
    if absent:
        raise InputError(
            f"{path}: {len(absent)} items of the key are missing from the sheet (e.g. {sorted(absent)[0]})"
        )
    return rows, missing


def _unblinded(ratings: pl.DataFrame, key: Mapping[str, Any]) -> pl.DataFrame:
    items = key["items"]
    return ratings.with_columns(
        system=pl.col("item").replace_strict({i: v["system"] for i, v in items.items()}),
        unit=pl.col("item").replace_strict({i: v["unit"] for i, v in items.items()}),
    )


def _turn_report(
    chosen: Rubric, key: Mapping[str, Any], raters: list[str], ratings: pl.DataFrame, missing: int
) -> RatingReport:
    frame = _unblinded(ratings, key)
    means = (
        frame.group_by("system", "aspect", maintain_order=True)
        .agg(mean=pl.col("score").mean(), n=pl.col("unit").n_unique(), ratings=pl.len())
        .sort("aspect", "system")
    )
    found_agreement, tests = {}, []
    systems = list(key["systems"])
    for aspect in chosen.aspects:
        mine = frame.filter(pl.col("aspect") == aspect.key)
        if mine.height == 0:
            continue
        found_agreement[aspect.key] = _agreement(mine, raters, chosen.level)
        per_unit = mine.group_by("system", "unit").agg(pl.col("score").mean())
        for a, b in itertools.combinations(systems, 2):
            paired = (
                per_unit.filter(pl.col("system") == a)
                .join(per_unit.filter(pl.col("system") == b), on="unit")
                .sort("unit")
            )
            if paired.height:
                tests.append(
                    {
                        "aspect": aspect.key,
                        **paired_test(a, b, paired["score"].to_numpy(), paired["score_right"].to_numpy()).to_dict(),
                    }
                )
    return RatingReport(
        chosen.name,
        chosen.unit,
        tuple(raters),
        len(key["items"]),
        ratings.height,
        missing,
        tuple(means.to_dicts()),
        found_agreement,
        tuple(tests),
        (),
    )


def _agreement(ratings: pl.DataFrame, raters: list[str], level: str) -> dict[str, Any]:
    """The agreement of one aspect's ratings: an item × annotator matrix, annotators in sheet order."""
    matrix = ratings.pivot("annotator", index="item", values="score").select(
        [r for r in raters if r in ratings["annotator"].unique().to_list()]
    )
    return agreement(matrix.to_numpy().astype(float), level).to_dict()


def _pair_report(
    chosen: Rubric, key: Mapping[str, Any], raters: list[str], ratings: pl.DataFrame, missing: int
) -> RatingReport:
    from scipy import stats

    items = key["items"]
    found_agreement, preferences = {}, []
    for aspect in chosen.aspects:
        mine = ratings.filter(pl.col("aspect") == aspect.key)
        if mine.height == 0:
            continue
        found_agreement[aspect.key] = _agreement(mine, raters, "nominal")
        tally: dict[tuple[str, str], list[int]] = {}
        for row in mine.iter_rows(named=True):
            first, second = items[row["item"]]["systems"]
            a, b = sorted((first, second), key=key["systems"].index)
            counts = tally.setdefault((a, b), [0, 0, 0])  # a wins, b wins, ties
            winner = {1.0: first, 2.0: second}.get(row["score"])
            counts[2 if winner is None else 0 if winner == a else 1] += 1
        for (a, b), (wins, losses, ties) in tally.items():
            p = float(stats.binomtest(wins, wins + losses, 0.5).pvalue) if wins + losses else None
            preferences.append(
                {"aspect": aspect.key, "a": a, "b": b, "wins": wins, "losses": losses, "ties": ties, "sign_p": p}
            )
    return RatingReport(
        chosen.name,
        chosen.unit,
        tuple(raters),
        len(items),
        ratings.height,
        missing,
        (),
        found_agreement,
        (),
        tuple(preferences),
    )


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else str(value)


__all__ = ["RUBRICS", "Aspect", "RatingReport", "Rubric", "SheetSet", "import_ratings", "make_sheets", "rubric"]
