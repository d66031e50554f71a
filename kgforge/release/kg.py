"""``kg/`` of a release: the facts its dialogues use as N-Triples (``used``), or the whole build as N-Quads
(``full``), with ``kg/about.json``: the build id and every source with its licence (no path: a source's file
by its name only). The N-Triples file opens with the same as comment lines."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from kgforge.core.files import atomic_write, write_json_atomic
from kgforge.corpus.card import SourceLine
from kgforge.store.rdf_export import export_rdf
from kgforge.store.snapshot import Snapshot

KG_CHOICES = ("used", "full", "none")


@dataclass(frozen=True)
class KgFiles:
    file: str | None  # inside the release: kg/used.nt or kg/full.nq
    statements: int


def source_rows(sources: list[SourceLine]) -> list[dict[str, Any]]:
    """The sources as a release names them: a file by its name, never by a path of the machine."""
    return [
        {
            "graph": s.graph,
            "kind": s.kind,
            "file": Path(s.path).name,
            "sha256": s.sha256,
            "quads": s.quads,
            "licence": s.licence,
        }
        for s in sources
    ]


def write_kg(
    folder: Path,
    choice: str,
    snapshot: Snapshot,
    sources: list[SourceLine],
    used: pl.DataFrame,
) -> KgFiles:
    """``kg/`` under ``folder`` for ``choice`` (``used``: the rows of ``used``, each with its N-Triples ``line``;
    ``full``: every graph of ``snapshot``'s build)."""
    domain, build_id = snapshot.domain, snapshot.build_id
    if choice == "none":
        return KgFiles(None, 0)
    kg = folder / "kg"
    kg.mkdir(parents=True, exist_ok=True)
    rows = source_rows(sources)
    if choice == "used":
        name = "kg/used.nt"
        head = [f"# the facts the dialogues of this release state; kgforge domain {domain}, build {build_id}"]
        head += [f"# source {r['graph']} ({r['kind']}, {r['file']}): licence {r['licence']}" for r in rows]
        with atomic_write(folder / name) as out:
            out.write("\n".join(head) + "\n")
            for line in used["line"].to_list():
                out.write(line + "\n")
        statements = used.height
    else:
        name = "kg/full.nq"
        statements = export_rdf(snapshot, "nq", folder / name).statements
    about = {
        "domain": domain,
        "build_id": build_id,
        "file": name,
        "holds": "the facts the dialogues state" if choice == "used" else "every graph of the build",
        "statements": statements,
        "sources": rows,
    }
    write_json_atomic(kg / "about.json", about)
    return KgFiles(name, statements)
