"""ConvKGYarn's related entity: per seed, the single entity most similar to it by inner product of the
trained entity vectors (``kgforge embed``), among the entities that have questions.

This module loads torch (seconds), so :mod:`kgforge.qa.pipeline` imports it only for ``--related``.
"""

from __future__ import annotations

import torch

from kgforge.embed.related import open_index, search_topk
from kgforge.store.layout import DomainPaths


def most_similar(paths: DomainPaths, model: str, seeds: list[str], candidates: list[str]) -> dict[str, str]:
    """seed IRI → its most similar candidate by inner product (itself excluded); seeds the model does not
    know (added after training) get none."""
    index = open_index(paths, model)
    ids = index.bundle.iri_to_id
    known = [s for s in seeds if s in ids]
    allowed = torch.zeros(len(index.iris), dtype=torch.bool)
    allowed[[ids[c] for c in candidates if c in ids]] = True
    if not known or not bool(allowed.any()):
        return {}
    query = torch.tensor([ids[s] for s in known])
    # "cosine" scores by the plain dot product of the vectors given: the inner product
    scores, found = search_topk(
        index.vectors,
        index.vectors[query],
        1,
        "cosine",
        allowed=allowed,
        exclude=[torch.tensor([i]) for i in query.tolist()],
    )
    return {
        seed: index.iris[int(row[0])]
        for seed, row, score in zip(known, found.tolist(), scores.tolist())
        if row[0] >= 0 and score[0] > float("-inf")
    }
