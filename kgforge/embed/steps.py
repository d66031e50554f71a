"""One training step, shared by kgforge's own loop (``train``) and the distributed one (``distributed``):
the resumable position, the seeded generator of each step, and the loss over a batch and its negatives."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from pykeen.models import ERModel

from kgforge.embed.scoring import candidate_scores


@dataclass
class TrainState:
    epoch: int = 0
    batch: int = 0
    elapsed: float = 0.0
    triples_seen: int = 0
    last_loss: float = float("nan")
    epoch_loss: float = 0.0  # sum of this epoch's batch losses so far (a resumed epoch keeps its start)
    losses: list[float] = field(default_factory=list)  # mean training loss of each finished epoch
    valid_losses: list[float] = field(default_factory=list)  # the same loss on validation triples, per epoch
    best_epoch: int | None = None  # the finished epoch (1-based) with the lowest validation loss so far


def _step_generator(seed: int, epoch: int, batch: int) -> torch.Generator:
    return torch.Generator().manual_seed((seed * 1_000_003 + epoch) * 1_000_033 + batch)


def _cross_entropy_loss(model: ERModel, batch: torch.Tensor, negatives: torch.Tensor | None) -> torch.Tensor:
    """Softmax cross-entropy of each positive against shared negatives (or all entities), both sides."""
    losses = []
    positive = None if negatives is None else model.score_hrt(batch).float()
    for side, truth in (("tail", batch[:, 2]), ("head", batch[:, 0])):
        scores = candidate_scores(model, batch, negatives, side).float()
        # 1-vs-all (no negatives, so no positive scored apart): the true entity's column is the target
        if negatives is None or positive is None:
            losses.append(torch.nn.functional.cross_entropy(scores, truth))
            continue
        scores = scores.masked_fill(negatives.unsqueeze(0) == truth.unsqueeze(1), -1e9)
        logits = torch.cat([positive, scores], dim=1)
        losses.append(
            torch.nn.functional.cross_entropy(logits, torch.zeros(len(batch), dtype=torch.long, device=batch.device))
        )
    return 0.5 * (losses[0] + losses[1])
