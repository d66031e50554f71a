"""What is built in a workdir: one record per domain with a published store (`kgforge domains`)."""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from kgforge.core.vocab import DERIVED_GRAPHS
from kgforge.store.snapshot import Snapshot


@dataclass(frozen=True)
class DomainInfo:
    """One built domain: its published build, what stages added to it, and its size on disk."""

    name: str
    path: Path
    quads: int
    graphs: int
    size_bytes: int  # everything under the domain's folder (builds, raw, models, exports), hard links once
    build_id: str
    built_at: str  # when the published build was made (ISO 8601)
    schema: str
    derived: tuple[str, ...]  # derived graphs present (``kgforge derive``), by short name
    embeddings: tuple[str, ...]  # complete model bundles under models/ (``kgforge embed``)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self) | {
            "path": str(self.path),
            "derived": list(self.derived),
            "embeddings": list(self.embeddings),
        }


def describe_domain(snapshot: Snapshot) -> DomainInfo:
    """The domain of ``snapshot`` as ``kgforge domains`` lists it (``kgforge.api.list_domains`` opens one
    snapshot per built domain of the workdir)."""
    paths, manifest = snapshot.paths, snapshot.manifest
    graphs = manifest.graphs
    models = paths.models
    return DomainInfo(
        name=paths.domain,
        path=paths.root.absolute(),
        quads=manifest.quads,
        graphs=len(graphs),
        size_bytes=disk_usage(paths.root),
        build_id=manifest.build_id,
        built_at=manifest.created,
        schema=manifest.schema.name or "",
        derived=tuple(sorted(g[len(DERIVED_GRAPHS) :] for g in graphs if g.startswith(DERIVED_GRAPHS))),
        embeddings=tuple(sorted(m.name for m in models.iterdir() if (m / "bundle.json").exists()))
        if models.is_dir()
        else (),
    )


def disk_usage(folder: Path) -> int:
    """Bytes the files under ``folder`` occupy, each hard-linked file once, symlinks not followed."""
    seen: set[tuple[int, int]] = set()
    total = 0
    for parent, _dirs, files in os.walk(folder):
        for name in files:
            info = os.lstat(os.path.join(parent, name))
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_blocks * 512
    return total
