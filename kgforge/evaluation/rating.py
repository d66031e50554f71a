"""Human rating sheets: ``kgforge rate sheet`` writes blinded, shuffled sheets for a rubric; ``kgforge rate
import`` reads the filled sheets back, un-blinds them and reports per-system means, the annotators' agreement
(Fleiss' κ, Krippendorff's α, percent agreement) and paired significance between systems.

A rubric is a small TOML file (``kgforge/evaluation/rubrics/NAME.toml``, a dataset room's ``rubrics/NAME.toml``, or a path to the user's own): its unit
(``turn``: one response; ``dialogue``: a whole conversation; ``pair``: two systems' responses to the same input,
side by side), its aspects, each with a scale and its wording in Chinese and English, and the measurement level
for α. Blinding: a sheet shows an item number, the context, the knowledge and the text (what each holds:
:mod:`kgforge.evaluation.rated`) and an empty column per aspect; which system wrote what is only in ``key.json``,
beside the sheets, which the annotators are not given. Items are shuffled with a seed, in another order for each
annotator. Every text cell is escaped against formula injection (:func:`kgforge.core.text.spreadsheet_cell`).
``import_ratings(..., out=)`` writes every rating un-blinded in MSDE's released shape, the file ``kgforge eval
--human`` reads.
"""

from __future__ import annotations

import csv
import itertools
import json
import random
import tomllib
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field, replace
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.datasets import room_folders
from kgforge.core.errors import ArgumentError, InputError
from kgforge.core.limits import ReadPolicy, read_whole, reading
from kgforge.core.output import OutputDir, OutputFile, output_dir, output_file
from kgforge.core.registry import Entry, Registry
from kgforge.core.text import spreadsheet_cell, spreadsheet_text
from kgforge.evaluation.agreement import LEVELS, agreement, paired_test
from kgforge.evaluation.inputs import table_records
from kgforge.evaluation.rated import Unit, system_units

UNITS = ("turn", "dialogue", "pair")
SHEET_FORMATS = ("csv", "tsv", "xlsx")
LANGUAGES = ("zh", "en", "both")
KEY_FILE = "key.json"
SCORES_SUFFIX = ".jsonl"  # rate import --out: MSDE's released shape, what eval --human reads


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
    compares: str = "turn"  # what a pair rubric puts side by side: two responses, or two whole dialogues

    @property
    def rates(self) -> str:
        """What one output of the sheet is: ``turn`` (a response) or ``dialogue`` (a whole conversation)."""
        return "dialogue" if self.unit == "dialogue" or self.compares == "dialogue" else "turn"

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
    compares = data.get("compares", "turn")
    if compares not in ("turn", "dialogue"):
        raise InputError(f"{path}: compares must be 'turn' or 'dialogue' (what a pair rubric puts side by side)")
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
        compares,
    )


def _bundled() -> Iterable[tuple[str, Rubric]]:
    """The rubrics of no one dataset (``kgforge/evaluation/rubrics/``), then each dataset room's ``rubrics/``."""
    folders = [Path(str(resources.files("kgforge.evaluation").joinpath("rubrics")))]
    for folder in folders + [found for _, found in room_folders("rubrics")]:
        for entry in sorted(folder.glob("*.toml")):
            rubric = read_rubric(entry)
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
    without_context: int = 0  # items that show neither context nor knowledge (no --gold/--dialogues given)


def make_sheets(
    rubric_name: str | Path,
    systems: Mapping[str, Path],
    out: Path | OutputDir,
    *,
    annotators: int | None = None,
    seed: int = 0,
    sample: int | None = None,
    language: str = "zh",
    sheet_format: str = "csv",
    layout: str = "auto",
    policy: ReadPolicy | None = None,
    gold: Path | None = None,
    dialogues: Path | None = None,
) -> SheetSet:
    """Write one blinded, shuffled sheet per annotator, the instructions and the un-blinding key into ``out``.
    ``gold`` and ``dialogues`` pair each response with its dialogue as ``kgforge eval`` pairs it, so that a
    sheet shows the dialogue before it and the knowledge behind it; the systems' files are read with ``policy``
    (:class:`~kgforge.core.limits.ReadPolicy`)."""
    folder = output_dir(out)  # refused before anything is read
    chosen = rubric(rubric_name)
    if language not in LANGUAGES:
        raise ArgumentError("--lang", f"{language!r} is not one of {', '.join(LANGUAGES)}")
    if sheet_format not in SHEET_FORMATS:
        raise ArgumentError("--format", f"{sheet_format!r} is not one of {', '.join(SHEET_FORMATS)}")
    if len(systems) < (2 if chosen.unit == "pair" else 1):
        raise ArgumentError("--system", f"rubric {chosen.name} compares systems in pairs: give two or more")
    with reading(policy):
        units = {
            name: _keyed(path, system_units(path, chosen.rates, gold, dialogues, layout))
            for name, path in systems.items()
        }
    keys = _shared_keys(units)
    rng = random.Random(seed)
    if sample is not None and sample < len(keys):
        keys = sorted(rng.sample(keys, sample), key=keys.index)
    items = _items(chosen, units, keys, rng)
    raters = [f"annotator{i + 1}" for i in range(annotators or chosen.annotators)]
    sheets = {rater: f"sheet-{rater}.{sheet_format}" for rater in raters}
    targets = {rater: folder.file(name) for rater, name in sheets.items()}  # all checked before the first is written
    instructions, key_file = folder.file("instructions.md"), folder.file(KEY_FILE)
    for number, rater in enumerate(raters):
        order = list(items)
        random.Random(seed * 1000 + number + 1).shuffle(order)  # another order for every annotator
        _write_sheet(targets[rater], chosen, [(item_id, items[item_id]["show"]) for item_id in order], language)
    instructions.write_text(chosen.instructions_text(language))
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
    key_file.write_text(json.dumps(key, ensure_ascii=False, indent=1))
    return SheetSet(
        chosen.name,
        str(folder),
        str(key_file),
        {r: str(targets[r]) for r in sheets},
        str(instructions),
        len(items),
        tuple(systems),
        len(keys),
        sum(1 for item in items.values() if not any(item["show"][:2])),
    )


def _keyed(path: Path, units: list[Unit]) -> dict[str, Unit]:
    """A system's units by key; a key given twice would hide one of its units, so it is refused."""
    keyed: dict[str, Unit] = {}
    for unit in units:
        if unit.key in keyed:
            raise InputError(f"{path}: {unit.key!r} names two inputs; a rating sheet needs each input once")
        keyed[unit.key] = unit
    return keyed


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
                shown = units[a][key]
                found.append(
                    {
                        "unit": key,
                        "systems": [first, second],
                        "show": (shown.context, shown.knowledge, units[first][key].text, units[second][key].text),
                    }
                )
        else:
            for name in names:
                shown = units[name][key]
                found.append({"unit": key, "system": name, "show": (shown.context, shown.knowledge, shown.text)})
    rng.shuffle(found)
    return {f"item-{i + 1:05d}": item for i, item in enumerate(found)}


def _header(chosen: Rubric) -> list[str]:
    shown = ["context", "knowledge", *(("output_1", "output_2") if chosen.unit == "pair" else ("text",))]
    return ["item", *shown, *(aspect.key for aspect in chosen.aspects)]


def _write_sheet(target: OutputFile, chosen: Rubric, rows: list[tuple[str, tuple[str, ...]]], language: str) -> None:
    body = [[item, *shown, *([""] * len(chosen.aspects))] for item, shown in rows]
    write_sheet(target, _header(chosen), body, chosen.instructions_text(language).splitlines(), "rate")


def write_sheet(target: OutputFile, header: list[str], rows: list[list[Any]], notes: list[str], title: str) -> None:
    """A sheet to fill by hand: CSV, TSV or (``.xlsx``) a workbook with the ``notes`` on a second sheet. Every
    text cell is escaped so that a spreadsheet shows it as text, never runs it as a formula."""
    suffix = target.path.suffix
    body = [[cell if isinstance(cell, int | float) else spreadsheet_cell(str(cell)) for cell in row] for row in rows]
    if suffix == ".xlsx":
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
        with target.part() as tmp:
            book.save(tmp)
        return
    with target.part() as tmp, open(tmp, "w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, delimiter="\t" if suffix == ".tsv" else ",")
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
    scores_file: str | None = None  # the un-blinded per-item scores written (``out``), for eval --human

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def import_ratings(folder: Path, sheets: Iterable[Path] | None = None, out: Path | None = None) -> RatingReport:
    """The filled sheets of ``folder`` (its key.json names them; ``sheets`` overrides the files, matched to the
    annotators in the key's order) read back and un-blinded; ``out`` (``.jsonl``) receives every rating
    un-blinded, one line per (system, input, annotator) — the file ``kgforge eval --human`` reads."""
    if out is not None and Path(out).suffix.lower() != SCORES_SUFFIX:
        raise ArgumentError(
            "--out", f"{Path(out).name!r} must end in {SCORES_SUFFIX} (JSON lines, as eval --human reads)"
        )
    target = output_file(out) if out is not None else None  # refused before the sheets are read
    filled = read_filled(folder, sheets)
    chosen, key, raters, ratings = filled.rubric, filled.key, list(filled.annotators), filled.ratings
    make = _pair_report if chosen.unit == "pair" else _turn_report
    report = make(chosen, key, raters, ratings, filled.missing)
    if target is None:
        return report
    write_item_scores(target, chosen, key, raters, ratings)
    return replace(report, scores_file=str(target.path))


@dataclass(frozen=True)
class Filled:
    """Filled sheets read back: the rubric, the key, the annotators, every rating (``annotator``, ``item``,
    ``aspect``, ``score``), the cells left empty, and what each item showed (item -> (context, text), from
    the first sheet)."""

    rubric: Rubric
    key: dict[str, Any]
    annotators: tuple[str, ...]
    ratings: pl.DataFrame
    missing: int
    shown: dict[str, tuple[str, ...]]


def read_filled(folder: Path, sheets: Iterable[Path] | None = None) -> Filled:
    """The filled sheets of a rating folder (what ``import_ratings`` reads), with each item's shown texts."""
    folder = Path(folder)
    key_path = folder / KEY_FILE if folder.is_dir() else folder
    try:
        key = json.loads(read_whole(key_path, "key file").decode("utf-8"))
    except (OSError, ValueError) as exc:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
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
    shown_columns = _header(chosen)[1 : -len(chosen.aspects)]
    shown = {
        str(record["item"]).strip(): tuple(spreadsheet_text(str(record.get(column) or "")) for column in shown_columns)
        for _, record in table_records(files[0])
    }
    return Filled(chosen, key, tuple(raters), ratings, missing, shown)


def write_item_scores(
    target: OutputFile, chosen: Rubric, key: Mapping[str, Any], raters: list[str], ratings: pl.DataFrame
) -> None:
    """Every rating un-blinded, in MSDE's released shape (what ``eval --human`` reads as it is): one line per
    system, input and annotator, ``{"system", "id", "annotator", "scores": {aspect: score}}``, systems in the
    key's order, inputs in the order the sheets were made from, annotators in sheet order; ``id`` is the
    response's id as ``kgforge eval`` numbers it with the same files (a dialogue's key for a dialogue rubric).
    A pair rubric's line holds the judgement instead: ``{"id", "annotator", "systems": [output 1, output 2],
    "preferred": {aspect: system or "tie"}}``."""
    items = key["items"]
    order = {unit: i for i, unit in enumerate(dict.fromkeys(item["unit"] for item in items.values()))}
    lines: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in ratings.iter_rows(named=True):
        item = items[row["item"]]
        score = int(row["score"]) if float(row["score"]).is_integer() else row["score"]
        if chosen.unit == "pair":
            where: tuple[Any, ...] = (order[item["unit"]], tuple(item["systems"]), raters.index(row["annotator"]))
            line = lines.setdefault(
                where,
                {"id": item["unit"], "annotator": row["annotator"], "systems": item["systems"], "preferred": {}},
            )
            line["preferred"][row["aspect"]] = "tie" if score == 0 else item["systems"][score - 1]
        else:
            where = (key["systems"].index(item["system"]), order[item["unit"]], raters.index(row["annotator"]))
            line = lines.setdefault(
                where, {"system": item["system"], "id": item["unit"], "annotator": row["annotator"], "scores": {}}
            )
            line["scores"][row["aspect"]] = score
    with target.open() as handle:
        handle.writelines(json.dumps(lines[where], ensure_ascii=False) + "\n" for where in sorted(lines))


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


__all__ = [
    "RUBRICS",
    "Aspect",
    "Filled",
    "RatingReport",
    "Rubric",
    "SheetSet",
    "import_ratings",
    "make_sheets",
    "read_filled",
    "rubric",
]
