"""KG embeddings: a PyKEEN model trained on a domain's graph, written as a model bundle, searched for
related entities.

``config`` (EmbedConfig, TripleSet, the MODELS registry) ← ``split`` (triples, deterministic split, ids)
← ``scoring`` (matrix-shaped scores) ← ``evaluate`` (filtered ranks) ← ``bundle`` (write, read, verify)
← ``train`` (the loop, checkpoints, ``embed``) ; ``related`` reads bundles. Arrows point one way.

The names below load with their module on first use: ``related`` reads a bundle with torch alone, and
PyKEEN (seconds to import, scikit-learn with it) loads only where a model is built or trained.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kgforge.embed.config import (
        EVALUATIONS,
        KEEPS,
        MODELS,
        PRECISIONS,
        SPLITS,
        EmbedConfig,
        EmbedError,
        TripleSet,
        build_model,
        check_model,
    )
    from kgforge.embed.split import graph_triples, index_triples, split_triples, triple_set_from_ids
    from kgforge.embed.train import Trainer, embed, pick_device, train_bundle

_HOME = {
    "kgforge.embed.config": (
        "EVALUATIONS",
        "KEEPS",
        "MODELS",
        "PRECISIONS",
        "SPLITS",
        "EmbedConfig",
        "EmbedError",
        "TripleSet",
        "build_model",
        "check_model",
    ),
    "kgforge.embed.split": ("graph_triples", "index_triples", "split_triples", "triple_set_from_ids"),
    "kgforge.embed.train": ("Trainer", "embed", "pick_device", "train_bundle"),
}
__all__ = [
    "EVALUATIONS",
    "KEEPS",
    "MODELS",
    "PRECISIONS",
    "SPLITS",
    "EmbedConfig",
    "EmbedError",
    "Trainer",
    "TripleSet",
    "build_model",
    "check_model",
    "embed",
    "graph_triples",
    "index_triples",
    "pick_device",
    "split_triples",
    "train_bundle",
    "triple_set_from_ids",
]


def __getattr__(name: str) -> Any:
    module = next((module for module, names in _HOME.items() if name in names), None)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
