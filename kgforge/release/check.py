"""``kgforge release check DIR``: is the folder the release it says it is, and can everyone read it?

Checks, each ok / failed / not run: ``checksums`` (every file's sha256 and size against release.json, no file
missing or added, release.json's own ``self_sha256``), ``card`` (the README's YAML header: the Hub's fields,
both configs, every split file), ``croissant`` (every file's sha256 in croissant.json, mlcroissant's validation,
and the ``turns`` records mlcroissant reads against the table's rows), ``files`` (every file read by its
format's reader, rows counted against release.json), ``readers`` (the seeds' own readers on the layout files,
through ``run-readers``, where its mirrors are given). A problem names the file.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pyoxigraph as ox
import yaml

from kgforge.core.errors import InputError, KgforgeError
from kgforge.core.files import sha256_file
from kgforge.core.records import Record
from kgforge.exports.dialogues import read_dialogues
from kgforge.release.folder import MANIFEST, MARK
from kgforge.release.layouts import LAYOUTS
from kgforge.release.manifest import release_files, self_digest_ok

CARD_KEYS = ("pretty_name", "license", "language", "task_categories", "size_categories", "configs")
CHECKS = ("checksums", "card", "croissant", "files", "readers")
RECORDS_AT_MOST = 200_000  # turn rows mlcroissant reads back by default (it reads about 10,000 a second)
MISSING_MLCROISSANT = "mlcroissant is not installed: pip install 'kgforge[release]'"


@dataclass(frozen=True)
class CheckLine:
    """One check of a release and what it found."""

    check: str
    status: str  # ok | failed | not run
    detail: str


@dataclass(frozen=True)
class ReleaseCheck(Record):
    """What ``kgforge release check`` found: each check's status, and every problem naming its file."""

    folder: str
    ok: bool  # no check failed
    checks: tuple[CheckLine, ...]
    problems: tuple[str, ...]  # each names the file


def read_release_json(folder: Path) -> tuple[dict[str, Any] | None, str | None]:
    """release.json, or None and why it cannot be read (it was changed); an InputError when there is none."""
    path = folder / MANIFEST
    if not folder.is_dir():
        raise InputError(f"{folder}: no such folder")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{folder}: not a kgforge release (no {MANIFEST})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        return None, f"{MANIFEST}:{getattr(exc, 'lineno', 1)}: not JSON ({exc}): changed after the release was made"
    if not isinstance(data, dict) or data.get(MARK) != 1:
        return None, f"{MANIFEST}:1: not the manifest of a kgforge release (changed after the release was made?)"
    return data, None


def check_release(
    folder: Path | str,
    *,
    mirrors: Path | str | None = None,
    readers: Path | str | None = None,
    records: bool | None = None,
) -> ReleaseCheck:
    """Check the release in ``folder``; ``mirrors`` and ``readers``: run-readers' mirrors folder and the program
    (default ``$READERS_MIRRORS``, ``$KGFORGE_RUN_READERS`` or ``run-readers`` on the PATH); ``records``: read the
    turn records back with mlcroissant (default: when the table has at most RECORDS_AT_MOST rows)."""
    folder = Path(folder)
    manifest, broken = read_release_json(folder)
    if manifest is None:
        rest = [CheckLine(name, "not run", f"{MANIFEST} cannot be read") for name in CHECKS[1:]]
        return ReleaseCheck(str(folder), False, (CheckLine(CHECKS[0], "failed", "1 problem(s)"), *rest), (str(broken),))
    lines, problems = [], []
    steps: list[tuple[str, Callable[[], tuple[str, str, list[str]]]]] = [
        ("checksums", lambda: _checksums(folder, manifest)),
        ("card", lambda: _card(folder, manifest)),
        ("croissant", lambda: _croissant(folder, manifest, records)),
        ("files", lambda: _files(folder, manifest)),
        ("readers", lambda: _readers(folder, manifest, mirrors, readers)),
    ]
    for name, step in steps:
        status, detail, found = step()
        lines.append(CheckLine(name, status, detail))
        problems += found
    return ReleaseCheck(str(folder), not any(line.status == "failed" for line in lines), tuple(lines), tuple(problems))


def _result(found: list[str], ok: str) -> tuple[str, str, list[str]]:
    return ("failed", f"{len(found)} problem(s)", found) if found else ("ok", ok, [])


def _checksums(folder: Path, manifest: dict[str, Any]) -> tuple[str, str, list[str]]:
    found = []
    if not self_digest_ok((folder / MANIFEST).read_bytes()):
        found.append(f"{MANIFEST}: changed after the release was made (its self_sha256 does not match)")
    listed = manifest.get("files") or {}
    actual = release_files(folder)
    for name, expected in listed.items():
        if name not in actual:
            found.append(f"{name}: missing")
        elif actual[name] != expected:
            found.append(f"{name}: changed after the release was made (sha256 or size differs from {MANIFEST})")
    found += [f"{name}: not part of the release ({MANIFEST} does not list it)" for name in actual if name not in listed]
    return _result(found, f"{len(listed) + 1} files as released")


def _card(folder: Path, manifest: dict[str, Any]) -> tuple[str, str, list[str]]:
    path = folder / "README.md"
    try:
        text = path.read_text(encoding="utf-8")
        if not text.startswith("---\n"):
            return _result(["README.md: no YAML header (--- … ---) at the top"], "")
        header = yaml.safe_load(text[4 : text.index("\n---\n", 4)])
    except (OSError, UnicodeDecodeError, ValueError, yaml.YAMLError) as exc:
        return _result([f"README.md: the card's header cannot be read ({str(exc).splitlines()[0]})"], "")
    if not isinstance(header, dict):
        return _result(["README.md: the card's header is not a mapping"], "")
    found = [f"README.md: the card's header has no {key}" for key in CARD_KEYS if not header.get(key)]
    configs = {c.get("config_name"): c for c in header.get("configs") or [] if isinstance(c, dict)}
    splits = manifest.get("splits", [])
    for config, key in (("turns", "turns_file"), (manifest.get("config"), "layout_file")):
        files = {f.get("split"): f.get("path") for f in (configs.get(config) or {}).get("data_files", [])}
        expected = {s["name"]: s[key] for s in splits}
        if files != expected:
            found.append(f"README.md: config {config!r} lists {files}, not the release's split files {expected}")
    return _result(found, f"configs {', '.join(map(str, configs))}; licence {header.get('license')}")


def _croissant(folder: Path, manifest: dict[str, Any], records: bool | None) -> tuple[str, str, list[str]]:
    path = folder / "croissant.json"
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
        return _result([f"croissant.json: not readable JSON ({exc})"], "")
    found = []
    listed = {d.get("contentUrl"): d.get("sha256") for d in document.get("distribution", []) if "sha256" in d}
    for name in sorted(set(manifest.get("files", {})) - {"croissant.json"}):
        target = folder / name
        if name not in listed:
            found.append(f"croissant.json: does not list {name}")
        elif target.is_file() and listed[name] != sha256_file(target):
            found.append(f"{name}: its sha256 differs from croissant.json's")
    if found:
        return _result(found, "")
    try:
        import mlcroissant as mlc
    except ImportError:
        return "not run", f"sha256 of {len(listed)} files ok; {MISSING_MLCROISSANT}", []
    return _mlcroissant(mlc, path, manifest, records)


def _mlcroissant(mlc: Any, path: Path, manifest: dict[str, Any], records: bool | None) -> tuple[str, str, list[str]]:
    absl = logging.getLogger("absl")
    level = absl.level
    absl.setLevel(logging.ERROR)  # mlcroissant logs every recommended property it misses, as warnings
    try:
        dataset = mlc.Dataset(jsonld=str(path))
        rows = manifest.get("turns", 0)
        if records is False or (records is None and rows > RECORDS_AT_MOST):
            return "ok", f"valid Croissant 1.1 ({len(dataset.metadata.record_sets)} record sets; records not read)", []
        read = sum(1 for _ in dataset.records(record_set="turns"))
    except Exception as exc:  # mlcroissant raises its own ValidationError and whatever its readers raise
        return _result([f"croissant.json: {type(exc).__name__}: {str(exc).strip().splitlines()[0]}"], "")
    finally:
        absl.setLevel(level)
    if read != rows:
        return _result([f"croissant.json: mlcroissant reads {read:,} turn records, the table has {rows:,}"], "")
    return "ok", f"valid Croissant 1.1; mlcroissant reads all {read:,} turn records", []


def _files(folder: Path, manifest: dict[str, Any]) -> tuple[str, str, list[str]]:
    found = []
    kind = manifest.get("layout")
    for split in manifest.get("splits", []):
        turns = split["turns_file"]
        parquet = turns.replace(".jsonl", ".parquet")
        found += _rows(folder, parquet, lambda p: pl.read_parquet(p).height, split["turns"])
        found += _rows(folder, turns, _json_lines, split["turns"])
        found += _rows(
            folder, split["layout_file"], lambda p: len(read_dialogues(p, kind).dialogues), split["dialogues"]
        )
    if manifest.get("kg_file"):
        found += _rows(folder, manifest["kg_file"], _statements, manifest.get("kg_statements", 0))
    layout_files = {split["layout_file"] for split in manifest.get("splits", [])}
    for name in manifest.get("files", {}):
        if name.endswith(".json") and name not in layout_files:
            found += _rows(folder, name, _json_document, 1)
    return _result(
        found, f"every file read; {manifest.get('turns', 0):,} turns, {manifest.get('dialogues', 0):,} dialogues"
    )


def _rows(folder: Path, name: str, count: Callable[[Path], int], expected: int) -> list[str]:
    """What is wrong with the release's file ``name``: it cannot be read, or it holds another number of rows."""
    try:
        got = count(folder / name)
    except (KgforgeError, OSError, ValueError, pl.exceptions.PolarsError, SyntaxError) as exc:
        first = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        return [f"{name}: cannot be read ({''.join(first.split(str(folder) + '/'))})"]  # the release's own names
    return [] if got == expected else [f"{name}: {got:,} rows, {MANIFEST} says {expected:,}"]


def _json_lines(path: Path) -> int:
    with open(path, encoding="utf-8") as handle:
        return sum(1 for line in handle if line.strip() and json.loads(line) is not None)


def _json_document(path: Path) -> int:
    json.loads(path.read_text(encoding="utf-8"))
    return 1


def _statements(path: Path) -> int:
    syntax = ox.RdfFormat.N_TRIPLES if path.suffix == ".nt" else ox.RdfFormat.N_QUADS
    return sum(1 for _ in ox.parse(path=str(path), format=syntax))


def _readers(
    folder: Path, manifest: dict[str, Any], mirrors: Path | str | None, readers: Path | str | None
) -> tuple[str, str, list[str]]:
    kind = manifest.get("layout", "")
    layout = LAYOUTS.get(kind) if kind in LAYOUTS else None
    if layout is None or layout.readers is None:
        return "not run", f"no known reader of the {manifest.get('layout')} layout", []
    mirrors = mirrors or os.environ.get("READERS_MIRRORS")
    program = readers or os.environ.get("KGFORGE_RUN_READERS") or shutil.which("run-readers")
    if not mirrors or not program:
        return "not run", "give --mirrors DIR and --readers PATH (run-readers) to run the seeds' readers", []
    found, ran = [], []
    for split in manifest.get("splits", []):
        result = subprocess.run(
            [str(program), "--mirrors", str(mirrors), layout.readers, str(folder / split["layout_file"]), "--json"],
            capture_output=True,
            text=True,
            env={**os.environ, "READERS_PYTHON": os.environ.get("READERS_PYTHON", sys.executable)},
        )
        try:
            verdict = json.loads(result.stdout.strip().splitlines()[-1])
        except (IndexError, json.JSONDecodeError):
            verdict = {"ok": False}
        if not verdict.get("ok"):
            tail = (result.stdout + result.stderr).strip().splitlines()[-1:] or ["no output"]
            found.append(f"{split['layout_file']}: run-readers {layout.readers} failed ({tail[0]})")
        ran.append(split["layout_file"])
    return _result(found, f"run-readers {layout.readers} read {', '.join(ran)}")
