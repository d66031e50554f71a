"""Writing an export: the records (checked against what the layout's readers need), ``OUT.ids.txt``,
``OUT.rejected.jsonl`` when something was left out, and ``OUT.manifest.json``."""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgforge.core.files import sha256_file
from kgforge.core.output import OutputFile
from kgforge.core.quarantine import write_rejected
from kgforge.core.records import Record, flattened
from kgforge.core.version import __version__
from kgforge.exports.assemble import Context, ExportCheckError
from kgforge.exports.formats.generic import GENERIC_SCHEMA_VERSION
from kgforge.exports.registry import Format, Layout
from kgforge.store.manifest import Manifest


def store_hash(manifest: Manifest) -> str:
    """One hash for the store a dialogue was cut from: its build id and each graph's quads sha256."""
    digest = hashlib.sha256(manifest.build_id.encode())
    for graph, sha256 in sorted(manifest.checksums().items()):
        digest.update(f"\n{graph}\t{sha256 or ''}".encode())
    return digest.hexdigest()


def layout_problems(fmt: Format, layout: Layout, records: list[tuple[str, dict[str, Any]]]) -> list[dict[str, Any]]:
    """Every record the layout's readers could not use, with why (``Format.check``)."""
    found = []
    for record_id, record in records:
        problems = fmt.check(record, layout)
        if problems:
            found.append({"record_id": record_id, "problems": problems})
    return found


@dataclass(frozen=True)
class ExportReport(Record):
    """An export as written: its manifest (``OUT.manifest.json``) less the per-graph checksums, plus the
    seconds it took. ``details`` are the sections only one kind of input has (the goals file and the goal
    checks for new goals; coverage, gold and ``changed_since`` for real dialogues), written where they stand
    in the manifest."""

    format: str
    layout: str
    layout_kind: str
    domain: str
    out: Path
    records: int
    ids_file: Path  # one record id a line, in the order of OUT
    rejected_file: Path | None  # the records the checks rejected, with why (None: none rejected)
    out_sha256: str
    store_hash: str  # of the build's graphs: two exports of one build name the same
    build_id: str
    schema: dict[str, Any]  # name, version, sha256
    generic_schema_version: int
    language: str  # of the labels written
    options: dict[str, Any]  # the ExportOptions used
    kgforge: str  # version
    created: str
    mixed_file: Path | None = None  # what was written in another language than asked (--allow-mixed), in full
    details: dict[str, Any] = flattened()
    seconds: float = 0.0

    @property
    def files(self) -> tuple[Path, ...]:
        """Everything written: OUT, its manifest, its ids and (if any) the rejected records."""
        return (
            self.out,
            self.out.with_name(self.out.name + ".manifest.json"),
            self.ids_file,
            *((self.rejected_file,) if self.rejected_file else ()),
            *((self.mixed_file,) if self.mixed_file else ()),
        )

    @property
    def rejected(self) -> int:
        """Dialogues or goals left out by the checks."""
        return self.details.get("dialogues_rejected", self.details.get("checks", {}).get("skipped", 0)) or 0


def finish(
    ctx: Context,
    fmt: Format,
    layout: Layout,
    records: list[tuple[str, dict[str, Any]]],
    options: Any,
    out: OutputFile,
    extra: dict[str, Any],
    started: float,
    rejected: list[dict[str, Any]] | None = None,
) -> ExportReport:
    """Write ``records`` (record id, record) to ``out`` in ``fmt``/``layout`` with its side files; the
    report is the manifest minus the per-graph checksums, plus the seconds it took."""
    if not records:
        raise ExportCheckError("no dialogue passed the export checks; nothing was written")
    # every file checked before the first is written: a refused sidecar leaves the old export whole
    # every file checked before the first is written
    ids_file, _, mixed_file, manifest_file = (
        out.sidecar(s) for s in (".ids.txt", ".rejected.jsonl", ".mixed.jsonl", ".manifest.json")
    )
    with out.part() as tmp:
        fmt.write([r for _, r in records], tmp, layout)
    ids_file.write_text("".join(record_id + "\n" for record_id, _ in records))
    listed = write_rejected(out, rejected or [])  # OUT.rejected.jsonl, or a stale one removed
    mixed = ctx.labels.mixed_rows()
    if mixed:
        mixed_file.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in mixed))
    else:
        mixed_file.remove()
    manifest = {
        "format": fmt.name,
        "layout": layout.name,
        "layout_kind": layout.kind,
        "domain": ctx.paths.domain,
        "out": str(out),
        "records": len(records),
        "ids_file": str(ids_file),
        "rejected_file": str(listed) if listed else None,
        "out_sha256": sha256_file(out.path),
        "store_hash": store_hash(ctx.manifest),
        "build_id": ctx.manifest.build_id,
        "graphs": ctx.manifest.checksums(),
        "schema": {k: ctx.manifest.schema.to_dict().get(k) for k in ("name", "version", "sha256")},
        "generic_schema_version": GENERIC_SCHEMA_VERSION,
        "language": ctx.labels.language,
        "options": asdict(options),
        "kgforge": __version__,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "mixed_file": str(mixed_file) if mixed else None,
        **extra,
    }
    manifest_file.write_json(manifest)
    common = {k: v for k, v in manifest.items() if k != "graphs" and k not in extra}
    common.update(
        out=out.path,
        ids_file=ids_file.path,
        rejected_file=listed,
        mixed_file=mixed_file.path if mixed else None,
    )
    return ExportReport(**common, details=extra, seconds=round(time.perf_counter() - started, 3))
