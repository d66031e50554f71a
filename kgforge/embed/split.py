"""The graph's entity-to-entity triples, split deterministically (derived triples follow the triples
they were derived from) and given integer ids."""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl
import torch

from kgforge.core.vocab import DERIVED_GRAPHS, ONTO
from kgforge.derive import PAIR_NODE
from kgforge.embed.config import (
    LITERAL_ENTITY,
    SPLIT_CODE,
    SPLITS,
    EmbedError,
    TripleSet,
)
from kgforge.store.tables import GraphTables

# ----------------------------------------------------------------------------------------------
# Triples and the split


def graph_triples(tables: GraphTables, include_literals: bool = False) -> pl.DataFrame:
    """(s, p, o, derived) from the fact table: entity edges, plus literal values as nodes if asked."""
    # Derived graphs also hold reified pair nodes (kg:left, kg:sharedObject, ...): structure, not facts.
    facts = tables.facts.filter(~pl.col("s").str.starts_with(PAIR_NODE) & ~pl.col("p").str.starts_with(ONTO))
    if not include_literals:
        facts = facts.filter(pl.col("o_is_entity"))
    return (
        facts.select(
            "s",
            "p",
            o=pl.when(pl.col("o_is_entity"))
            .then(pl.col("o"))
            .otherwise(pl.lit(LITERAL_ENTITY) + pl.col("o_lang").fill_null("") + pl.lit(":") + pl.col("o")),
            derived=pl.col("graph").str.starts_with(DERIVED_GRAPHS),
        )
        .unique(["s", "p", "o"], keep="first")
        .sort(["s", "p", "o"])
    )


def split_triples(triples: pl.DataFrame, ratios: Sequence[float], seed: int) -> tuple[pl.DataFrame, dict]:
    """Assign each triple to train/valid/test, deterministically for a given graph and seed.

    Source triples are shuffled with ``seed`` and cut by ``ratios``; a held-out triple whose
    entity or relation would be missing from training is moved to training (and counted).
    A derived triple goes to the most held-out split among the source triples it was derived
    from (two entities sharing a predicate and object, see :mod:`kgforge.derive`), so no held-out
    fact leaks into training through it; a held-out derived triple with an entity unknown to
    training is dropped.
    """
    if abs(sum(ratios) - 1.0) > 1e-6 or min(ratios) < 0 or ratios[0] <= 0:
        raise EmbedError(f"split ratios must be non-negative, with train > 0, and sum to 1; got {ratios}")
    base = triples.filter(~pl.col("derived")).sort(["s", "p", "o"])
    derived = triples.filter(pl.col("derived")).sort(["s", "p", "o"])
    if base.height == 0:
        raise EmbedError(
            "the graph has no entity-to-entity triples to train on (build a domain with "
            "entity-valued relations, or pass --include-literals)"
        )
    generator = torch.Generator().manual_seed(seed)
    position = torch.empty(base.height, dtype=torch.int64)
    position[torch.randperm(base.height, generator=generator)] = torch.arange(base.height)
    cut_train = round(base.height * ratios[0])
    cut_valid = cut_train + round(base.height * ratios[1])
    base = (
        base.with_columns(pos=pl.Series(position.numpy()))
        .with_columns(
            split=pl.when(pl.col("pos") < cut_train)
            .then(pl.lit("train"))
            .when(pl.col("pos") < cut_valid)
            .then(pl.lit("valid"))
            .otherwise(pl.lit("test"))
        )
        .drop("pos")
    )
    base, moved = _ensure_coverage(base)
    derived, dropped = _place_derived(base, derived)
    result = pl.concat([base, derived]).sort(["s", "p", "o"])
    counts = result.group_by("split").len()
    counted = dict(zip(counts["split"].to_list(), counts["len"].to_list()))
    total = result.height
    report = {
        "seed": seed,
        "requested_ratios": list(ratios),
        "triples": total,
        "counts": {s: counted.get(s, 0) for s in SPLITS},
        "actual_ratios": {s: round(counted.get(s, 0) / total, 4) for s in SPLITS},
        "moved_to_train_for_coverage": moved,
        "derived_triples": derived.height + dropped,
        "derived_dropped_unknown_entity": dropped,
    }
    return result, report


def _ensure_coverage(base: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    train = base.filter(pl.col("split") == "train")
    known_entities = pl.concat([train["s"], train["o"]]).unique().implode()
    known_relations = train["p"].unique().implode()
    uncovered = (pl.col("split") != "train") & ~(
        pl.col("s").is_in(known_entities) & pl.col("o").is_in(known_entities) & pl.col("p").is_in(known_relations)
    )
    moved = base.filter(uncovered).height
    return base.with_columns(split=pl.when(uncovered).then(pl.lit("train")).otherwise(pl.col("split"))), moved


def _place_derived(base: pl.DataFrame, derived: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    if derived.height == 0:
        return derived.with_columns(split=pl.lit("train")), 0
    ranked = base.select("s", "p", "o", rank=pl.col("split").replace_strict(SPLIT_CODE, return_dtype=pl.Int8))
    pairs = derived.select("s", "o").unique()
    # Sources of (a, q, b): (a, p, x) and (b, p, x) for a shared (p, x). When they are not among the
    # triples trained on (a shared literal value), nothing held out can leak: the triple trains.
    sources = (
        pairs.join(ranked, left_on="s", right_on="s")
        .join(ranked, left_on=["o", "p", "o_right"], right_on=["s", "p", "o"], suffix="_b")
        .group_by("s", "o")
        .agg(rank=pl.max_horizontal("rank", "rank_b").max())
    )
    placed = (
        derived.join(sources, on=["s", "o"], how="left")
        .with_columns(split=pl.col("rank").fill_null(0).replace_strict(dict(enumerate(SPLITS)), return_dtype=pl.String))
        .drop("rank")
    )
    train = pl.concat([base, placed]).filter(pl.col("split") == "train")
    known = pl.concat([train["s"], train["o"]]).unique().implode()
    keep = (pl.col("split") == "train") | (
        pl.col("s").is_in(known) & pl.col("o").is_in(known) & pl.col("p").is_in(train["p"].unique().implode())
    )
    dropped = placed.filter(~keep).height
    return placed.filter(keep), dropped


def index_triples(split: pl.DataFrame, split_report: dict) -> TripleSet:
    """Integer ids (sorted IRIs → 0..n-1) for entities and relations, joined onto the triples with polars."""
    entities = (
        pl.concat([split["s"], split["o"]])
        .unique()
        .sort()
        .to_frame("iri")
        .with_row_index("id")
        .with_columns(pl.col("id").cast(pl.Int64))
    )
    relations = (
        split["p"].unique().sort().to_frame("iri").with_row_index("id").with_columns(pl.col("id").cast(pl.Int64))
    )
    triples = (
        split.join(entities.rename({"iri": "s", "id": "h"}), on="s")
        .join(relations.rename({"iri": "p", "id": "r"}), on="p")
        .join(entities.rename({"iri": "o", "id": "t"}), on="o")
        .sort(["s", "p", "o"])
    )
    return TripleSet(triples=triples, entities=entities, relations=relations, split_report=split_report)


def triple_set_from_ids(
    train: torch.Tensor, valid: torch.Tensor, test: torch.Tensor, entity_iris: list[str], relation_iris: list[str]
) -> TripleSet:
    """A TripleSet from an existing split given as id tensors (e.g. a PyKEEN dataset's own split)."""
    frames = []
    for name, mapped in zip(SPLITS, (train, valid, test)):
        ids = mapped.numpy()
        frames.append(
            pl.DataFrame({"h": ids[:, 0], "r": ids[:, 1], "t": ids[:, 2]}).with_columns(
                split=pl.lit(name), derived=pl.lit(False)
            )
        )
    entities = pl.DataFrame(
        {"id": range(len(entity_iris)), "iri": entity_iris}, schema={"id": pl.Int64, "iri": pl.String}
    )
    relations = pl.DataFrame(
        {"id": range(len(relation_iris)), "iri": relation_iris}, schema={"id": pl.Int64, "iri": pl.String}
    )
    triples = pl.concat(frames).with_columns(pl.col("h", "r", "t").cast(pl.Int64))
    triples = (
        triples.join(entities.rename({"id": "h", "iri": "s"}), on="h")
        .join(relations.rename({"id": "r", "iri": "p"}), on="r")
        .join(entities.rename({"id": "t", "iri": "o"}), on="t")
        .select("s", "p", "o", "derived", "split", "h", "r", "t")
        .sort(["s", "p", "o"])
    )
    counts = {s: triples.filter(pl.col("split") == s).height for s in SPLITS}
    report = {
        "seed": None,
        "source": "given",
        "triples": triples.height,
        "counts": counts,
        "actual_ratios": {s: round(n / triples.height, 4) for s, n in counts.items()},
        "moved_to_train_for_coverage": 0,
        "derived_triples": 0,
        "derived_dropped_unknown_entity": 0,
    }
    return TripleSet(triples=triples, entities=entities, relations=relations, split_report=report)
