"""KG embeddings: a PyKEEN model trained on a domain's graph, written as a model bundle, searched for
related entities.

``config`` (EmbedConfig, TripleSet, the MODELS registry) ← ``split`` (triples, deterministic split, ids)
← ``scoring`` (matrix-shaped scores) ← ``evaluate`` (filtered ranks) ← ``bundle`` (write, read, verify)
← ``train`` (the loop, checkpoints, ``embed``) ; ``related`` reads bundles. Arrows point one way.
"""

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
from kgforge.embed.split import (
    graph_triples,
    index_triples,
    split_triples,
    triple_set_from_ids,
)
from kgforge.embed.train import Trainer, embed, pick_device, train_bundle

__all__ = [
    "EVALUATIONS",
    "MODELS",
    "KEEPS",
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
