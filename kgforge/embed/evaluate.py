"""Filtered rank-based link prediction: MRR and Hits@1/3/10, full or sampled, in batches.

For each evaluation triple (h, r, t) the tail t is ranked among candidate tails for (h, r, ?) and
the head h among candidate heads for (?, r, t). Candidates that form a known triple (train, valid
or test) other than the one being ranked are filtered out. Ties count half ("realistic" rank).

``full`` ranks against every entity. ``sampled`` ranks against a fixed, seeded sample of
candidates shared by all triples, and the result says so: sampled MRR is higher than full MRR
and the two must not be compared. ``auto`` picks full when the number of scores stays small.
Known triples are looked up with a sorted int64 key array and ``searchsorted``, so no
(entities × entities) mask is ever built; scores are computed one batch at a time.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from pykeen.models import ERModel

from kgforge.core.records import Record, flattened, omitted_when_none
from kgforge.embed.config import EmbedConfig, TripleSet
from kgforge.embed.scoring import candidate_scores

FULL_SCORE_BUDGET = 2_000_000_000  # evaluation triples x entities x 2 sides, for "auto"


def _keys(a: torch.Tensor, r: torch.Tensor, b: torch.Tensor, n_e: int, n_r: int) -> torch.Tensor:
    return (r * n_e + a) * n_e + b


class KnownTriples:
    """Membership test for (h, r, t) in both directions, without a dense mask."""

    def __init__(self, mapped: torch.Tensor, num_entities: int, num_relations: int, device: torch.device) -> None:
        if num_relations * num_entities**2 >= 2**62:
            raise ValueError("graph too large for int64 triple keys")
        h, r, t = mapped.to(device).unbind(1)
        self.n_e, self.n_r = num_entities, num_relations
        self.tail_keys = torch.sort(_keys(h, r, t, num_entities, num_relations)).values
        self.head_keys = torch.sort(_keys(t, r, h, num_entities, num_relations)).values

    def contains(
        self, anchor: torch.Tensor, relation: torch.Tensor, candidates: torch.Tensor, side: str
    ) -> torch.Tensor:
        """(batch, candidates) bool: is (anchor, r, candidate) [tail side] or (candidate, r, anchor) known?"""
        keys_sorted = self.tail_keys if side == "tail" else self.head_keys
        if candidates.dim() == 1:
            candidates = candidates.unsqueeze(0)
        keys = _keys(anchor.unsqueeze(1), relation.unsqueeze(1), candidates, self.n_e, self.n_r)
        position = torch.searchsorted(keys_sorted, keys).clamp(max=len(keys_sorted) - 1)
        return keys_sorted[position] == keys


def _realistic_rank(scores: torch.Tensor, true_scores: torch.Tensor) -> torch.Tensor:
    greater = (scores > true_scores).sum(dim=1)
    equal = (scores == true_scores).sum(dim=1)
    return 1.0 + greater.float() + 0.5 * equal.float()


@torch.inference_mode()
def rank_triples(
    model: ERModel, triples: torch.Tensor, known: KnownTriples, batch_size: int, candidates: torch.Tensor | None = None
) -> torch.Tensor:
    """Filtered realistic ranks of heads and tails: shape (2 * len(triples),)."""
    model.eval()
    device = known.tail_keys.device
    ranks = []
    for start in range(0, len(triples), batch_size):
        batch = triples[start : start + batch_size].to(device)
        h, r, t = batch.unbind(1)
        true_scores = model.score_hrt(batch).float()
        for side, anchor in (("tail", h), ("head", t)):
            scores = candidate_scores(model, batch, candidates, side).float()
            pool = candidates if candidates is not None else torch.arange(known.n_e, device=device)
            mask = known.contains(anchor, r, pool, side)  # the true triple itself is known, so masked too
            scores = scores.masked_fill(mask, float("-inf"))
            ranks.append(_realistic_rank(scores, true_scores))
    model.train()
    return torch.cat(ranks) if ranks else torch.empty(0)


def summarise(ranks: torch.Tensor) -> dict[str, float]:
    ranks = ranks.double()
    return {
        "mrr": round(float((1.0 / ranks).mean()), 6),
        "hits_at_1": round(float((ranks <= 1).double().mean()), 6),
        "hits_at_3": round(float((ranks <= 3).double().mean()), 6),
        "hits_at_10": round(float((ranks <= 10).double().mean()), 6),
        "mean_rank": round(float(ranks.mean()), 3),
    }


@dataclass(frozen=True)
class RankMetrics(Record):
    """Filtered rank metrics of a trained model (a bundle's ``metrics.json``, ``evaluation``), or why none."""

    evaluation: str  # full, sampled, or none
    reason: str | None = omitted_when_none()  # why none (no held-out triples)
    label: str | None = omitted_when_none()  # what the numbers are (SAMPLED ones are not comparable to full)
    split: str | None = omitted_when_none()  # test, or valid when test is empty
    triples: int | None = omitted_when_none()  # held-out triples ranked
    triples_subsampled: bool | None = omitted_when_none()  # --eval-max-triples cut them
    candidates: int | None = omitted_when_none()  # entities each triple is ranked against
    sides: str | None = omitted_when_none()
    ties: str | None = omitted_when_none()
    scores: dict[str, float] = flattened()  # mrr, hits_at_1/3/10, mean_rank (at the record's level)


def evaluate_model(
    model: ERModel,
    triple_set: TripleSet,
    config: EmbedConfig,
    batch_size: int,
    device: torch.device,
    split: str = "test",
) -> RankMetrics:
    """Filtered rank metrics on ``split`` (falls back to valid when test is empty)."""
    if config.evaluation == "none":
        return RankMetrics("none")
    evaluated = triple_set.mapped(split)
    if len(evaluated) == 0:
        split, evaluated = "valid", triple_set.mapped("valid")
    if len(evaluated) == 0:
        return RankMetrics("none", reason="no held-out triples")
    num_entities = triple_set.entities.height
    mode = config.evaluation
    if mode == "auto":
        mode = "full" if len(evaluated) * num_entities * 2 <= FULL_SCORE_BUDGET else "sampled"
    generator = torch.Generator().manual_seed(config.seed)
    subsampled = mode == "sampled" and len(evaluated) > config.eval_max_triples
    if subsampled:
        evaluated = evaluated[torch.randperm(len(evaluated), generator=generator)[: config.eval_max_triples]]
    candidates = None
    if mode == "sampled" and config.eval_candidates < num_entities:
        candidates = torch.randperm(num_entities, generator=generator)[: config.eval_candidates].to(device)
    known = KnownTriples(triple_set.mapped(), num_entities, triple_set.relations.height, device)
    ranks = rank_triples(model, evaluated, known, batch_size, candidates)
    return RankMetrics(
        evaluation=mode if candidates is not None or mode == "full" else "full",
        label=(
            "filtered rank, all entities"
            if candidates is None
            else f"SAMPLED filtered rank against {len(candidates)} random candidates, not comparable to full-rank MRR"
        ),
        split=split,
        triples=len(evaluated),
        triples_subsampled=subsampled,
        candidates=num_entities if candidates is None else len(candidates),
        sides="head and tail",
        ties="realistic (half of ties)",
        scores=summarise(ranks),
    )
