"""KG embeddings: a PyKEEN model trained on a domain's graph, written as a model bundle, searched for
related entities.

``config`` (EmbedConfig, TripleSet, the MODELS registry) ← ``split`` (triples, deterministic split, ids)
← ``scoring`` (matrix-shaped scores) ← ``evaluate`` (filtered ranks) ← ``bundle`` (write, read, verify)
← ``train`` (the loop, checkpoints, ``embed``) ; ``related`` reads bundles. Arrows point one way.

The names below load with their module on first use: ``related`` reads a bundle with torch alone, and
PyKEEN (seconds to import, scikit-learn with it) loads only where a model is built or trained.
"""

from typing import TYPE_CHECKING

from kgforge.core import lazy

if TYPE_CHECKING:  # each loaded with its module on first use (kgforge.core.lazy)
    from kgforge.embed.config import EVALUATIONS as EVALUATIONS
    from kgforge.embed.config import KEEPS as KEEPS
    from kgforge.embed.config import MODELS as MODELS
    from kgforge.embed.config import PRECISIONS as PRECISIONS
    from kgforge.embed.config import SPLITS as SPLITS
    from kgforge.embed.config import EmbedConfig as EmbedConfig
    from kgforge.embed.config import EmbedError as EmbedError
    from kgforge.embed.config import TripleSet as TripleSet
    from kgforge.embed.config import build_model as build_model
    from kgforge.embed.config import check_model as check_model
    from kgforge.embed.split import graph_triples as graph_triples
    from kgforge.embed.split import index_triples as index_triples
    from kgforge.embed.split import split_triples as split_triples
    from kgforge.embed.split import triple_set_from_ids as triple_set_from_ids
    from kgforge.embed.train import Trainer as Trainer
    from kgforge.embed.train import embed as embed
    from kgforge.embed.train import pick_device as pick_device
    from kgforge.embed.train import train_bundle as train_bundle

__getattr__, __dir__ = lazy.attach(__name__)
