"""`kgforge export-rdf`: the store as N-Quads or TriG (graphs kept) or N-Triples or Turtle (union)."""

from __future__ import annotations

from pathlib import Path

import pyoxigraph as ox

from kgforge.core.errors import KgforgeError
from kgforge.core.files import atomic_path
from kgforge.store.layout import domain_paths
from kgforge.store.oxigraph import open_read_only
from kgforge.store.query import PREFIXES

FORMATS = {"nq": ox.RdfFormat.N_QUADS, "trig": ox.RdfFormat.TRIG,
           "nt": ox.RdfFormat.N_TRIPLES, "ttl": ox.RdfFormat.TURTLE}


def export_rdf(domain: str, fmt: str, out: Path, workdir: Path | str | None = None) -> dict:
    """Write the whole store to ``out``; triple formats get the union of all graphs, deduplicated."""
    if fmt not in FORMATS:
        raise KgforgeError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    store = open_read_only(domain_paths(domain, workdir))
    out = Path(out)
    prefixes = PREFIXES if fmt in ("ttl", "trig") else None
    with atomic_path(out) as tmp:
        if fmt in ("nq", "trig"):
            store.dump(str(tmp), FORMATS[fmt], prefixes=prefixes)
            count = sum(1 for _ in store.quads_for_pattern(None, None, None, None))
        else:
            triples = _union_triples(store)
            ox.serialize(triples, str(tmp), FORMATS[fmt], prefixes=prefixes)
            count = len(triples)
    return {"domain": domain, "format": fmt, "out": str(out), "statements": count}


def _union_triples(store: ox.Store) -> list[ox.Triple]:
    seen: dict[ox.Triple, None] = {}
    for quad in store.quads_for_pattern(None, None, None, None):
        seen.setdefault(quad.triple, None)
    return list(seen)
