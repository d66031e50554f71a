"""Adding one knowledge-base source (Wikidata, XLORE) to a domain's store without rebuilding the rest.

The source is imported like any ``kgforge build`` source (its own named graph, quarantine and
counts); the new build is a checkpoint of the current store with this graph (and the updated
schema graph) added, so the other graphs are not re-loaded. Importing the same file again
replaces its graph. With no store yet, the domain is created.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kgforge import checks
from kgforge.build import SourceResult, extend_build, import_source, load_graphs, write_schema_graph
from kgforge.errors import StoreMissingError
from kgforge.progress import progress_bar
from kgforge.schema import Relation, SourceSpec, load_schema
from kgforge.store import domain_paths, read_manifest, write_lock
from kgforge.vocab import SCHEMA_GRAPH

SCHEMA_FILE = "quads/schema.imports.nq"


def import_into_domain(domain: str, kind: str, path: Path | str, options: dict[str, Any],
                       workdir: Path | str | None = None, show_progress: bool = True) -> dict[str, Any]:
    """Import ``kind:path`` into ``domain``'s store; returns the source's manifest entry and build id."""
    checks.selection_options(options)
    paths = domain_paths(domain, workdir)
    with write_lock(paths), progress_bar(show_progress) as progress:
        try:
            manifest: dict[str, Any] | None = read_manifest(paths)
        except (StoreMissingError, FileNotFoundError):
            manifest = None
        schema = load_schema(manifest["schema"]["path"] if manifest else domain)
        spec = SourceSpec(kind, str(path), options)
        result, used = import_source(schema, paths, spec, Path(path), set(), progress)
        graphs = dict(manifest["graphs"]) if manifest else {}
        graphs[result.graph] = result.manifest_entry()
        relations = used | _declared_before(paths.root, graphs, schema.relations.values())
        graphs[SCHEMA_GRAPH] = dict(write_schema_graph(schema, relations, paths.root / SCHEMA_FILE),
                                    quads_file=SCHEMA_FILE)
        if manifest is None:
            summary = load_graphs(paths, graphs, schema, progress, {})
        else:
            added = {g: graphs[g] for g in (result.graph, SCHEMA_GRAPH)}
            summary = extend_build(paths, manifest, paths.oxigraph_dir().resolve(), [], added, {})
    return {"domain": domain, "build_id": summary.build_id, "total_quads": summary.total_quads,
            "source": dict(result.manifest_entry(), graph=result.graph), "graphs": summary.graphs}


def _declared_before(root: Path, graphs: dict[str, Any], relations: Any) -> set[Relation]:
    """Schema relations the current schema graph declares (so other sources keep their labels)."""
    entry = graphs.get(SCHEMA_GRAPH)
    if not entry or not (root / entry["quads_file"]).exists():
        return set()
    text = (root / entry["quads_file"]).read_text(encoding="utf-8")
    return {rel for rel in relations if f"<{rel.iri}> " in text}


__all__ = ["SourceResult", "import_into_domain"]
