"""`kgforge related`: the entities nearest to a given one in a trained model's own geometry.

Similarity follows the model family (see :func:`kgforge.embed.similarity_metric`): cosine for
bilinear models (DistMult, ComplEx, …; complex vectors laid out as [re, im] so cosine is the
normalised Re<a, conj(b)>), negative L2 distance for translational ones (TransE, RotatE, …).
Search is exact: a chunked matrix product and top-k, on the GPU in batches when there is one,
on the CPU otherwise. The query entity itself is always excluded; ``exclude_neighbours`` also
drops entities linked to it by any triple the model saw (train, valid or test); ``type_`` keeps
only entities of a type. An entity named by label or IRI that the model does not know gets
close-label suggestions, or, if the store has it (added after training), its graph neighbours
with a notice.
"""

from __future__ import annotations

import difflib
import warnings
from dataclasses import dataclass
from typing import Any

import polars as pl
import pyoxigraph as ox
import torch

from kgforge.core.errors import KgforgeError
from kgforge.core.records import Record
from kgforge.core.resources import query_text
from kgforge.core.text import normalise_label
from kgforge.embed.bundle import Bundle, bundle_path
from kgforge.store.layout import DomainPaths
from kgforge.store.query import QueryRunner
from kgforge.store.snapshot import Snapshot
from kgforge.store.workdir import where

CHUNK_ROWS = 262_144  # entity rows scored at once per query batch


class UnknownEntityError(KgforgeError):
    """The name or IRI matches no entity of the model or the store."""


@dataclass(frozen=True)
class Match:
    iri: str
    label: str | None
    entity_id: int | None  # None: not in the model


def search_topk(
    vectors: torch.Tensor,
    queries: torch.Tensor,
    k: int,
    metric: str,
    *,
    exclude: list[torch.Tensor] | None = None,
    allowed: torch.Tensor | None = None,
    sq_norms: torch.Tensor | None = None,
    query_batch: int = 256,
    chunk_rows: int = CHUNK_ROWS,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Exact top-k rows of ``vectors`` for each query vector: (scores, ids), each (queries, k).

    ``metric`` "cosine" expects normalised vectors and scores by dot product; "l2" scores by
    negative Euclidean distance. ``exclude[i]`` lists ids never returned for query i; ``allowed``
    is a bool mask over all rows. Rows are scored ``chunk_rows`` at a time, so memory stays at
    query_batch x chunk_rows scores. Runs on ``vectors.device``.
    """
    device = vectors.device
    if metric == "l2" and sq_norms is None:
        sq_norms = vectors.pow(2).sum(1)
    k = min(k, vectors.shape[0])
    all_scores, all_ids = [], []
    for q_start in range(0, len(queries), query_batch):
        q = queries[q_start : q_start + query_batch].to(device)
        q_sq = q.pow(2).sum(1, keepdim=True) if metric == "l2" else None
        rows = torch.arange(len(q), device=device)
        banned = None
        if exclude is not None:
            parts = exclude[q_start : q_start + query_batch]
            banned = (
                torch.repeat_interleave(rows, torch.tensor([len(p) for p in parts], device=device)),
                torch.cat([p.to(device) for p in parts]) if parts else torch.empty(0, dtype=torch.long),
            )
        keep = min(vectors.shape[0], 2 * k + 8) if metric == "l2" else k  # margin for the exact re-rank
        best_scores = torch.full((len(q), keep), float("-inf"), device=device)
        best_ids = torch.full((len(q), keep), -1, dtype=torch.long, device=device)
        for c_start in range(0, vectors.shape[0], chunk_rows):
            chunk = vectors[c_start : c_start + chunk_rows]
            scores = q @ chunk.t()
            if q_sq is not None and sq_norms is not None:  # both set exactly when the metric is l2
                scores = -(q_sq - 2.0 * scores + sq_norms[c_start : c_start + chunk_rows]).clamp_min(0).sqrt()
            if allowed is not None:
                scores.masked_fill_(~allowed[c_start : c_start + chunk_rows].unsqueeze(0), float("-inf"))
            if banned is not None:
                in_chunk = (banned[1] >= c_start) & (banned[1] < c_start + len(chunk))
                scores[banned[0][in_chunk], banned[1][in_chunk] - c_start] = float("-inf")
            top_scores, top_ids = scores.topk(min(keep, len(chunk)), dim=1)
            merged_scores = torch.cat([best_scores, top_scores], dim=1)
            merged_ids = torch.cat([best_ids, top_ids + c_start], dim=1)
            best_scores, order = merged_scores.topk(keep, dim=1)
            best_ids = merged_ids.gather(1, order)
        if metric == "l2":
            best_scores, best_ids = _exact_l2(q, vectors, best_scores, best_ids, k)
        all_scores.append(best_scores.cpu())
        all_ids.append(best_ids.cpu())
    return torch.cat(all_scores), torch.cat(all_ids)


def _exact_l2(
    q: torch.Tensor, vectors: torch.Tensor, scores: torch.Tensor, ids: torch.Tensor, k: int
) -> tuple[torch.Tensor, torch.Tensor]:
    """Distances recomputed as ``|q - v|`` for the candidates found with ``|q|² - 2q·v + |v|²``, whose
    float32 cancellation errs by up to ~1e-3 near zero; the candidates are re-ranked by the exact values."""
    found = scores > float("-inf")  # excluded or masked candidates stay out
    exact = (q.unsqueeze(1) - vectors[ids.clamp_min(0)]).norm(dim=2).neg()
    exact = torch.where(found, exact, scores)
    exact, order = exact.topk(k, dim=1)
    return exact, ids.gather(1, order)


class RelatedIndex:
    """A bundle's vectors ready for search on one device, plus its neighbour lists and labels."""

    def __init__(self, bundle: Bundle, device: str = "auto") -> None:
        self.bundle = bundle
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        self.device = torch.device(device)
        self.vectors = bundle.vectors.to(self.device)
        self.sq_norms = self.vectors.pow(2).sum(1) if bundle.metric == "l2" else None
        self.labels = bundle.entities["label"].to_list()
        self.iris = bundle.entities["iri"].to_list()

    def neighbours(self, entity_id: int) -> torch.Tensor:
        triples = self.bundle.triples
        linked = pl.concat(
            [triples.filter(pl.col("h") == entity_id)["t"], triples.filter(pl.col("t") == entity_id)["h"]]
        ).unique()
        return torch.from_numpy(linked.to_numpy().astype("int64"))

    def type_mask(self, type_: str) -> torch.Tensor:
        """Entities whose type IRI equals ``type_`` or ends with ``/type_`` or ``#type_``."""
        wanted = (
            pl.col("types")
            .list.eval(
                (pl.element() == type_)
                | pl.element().str.ends_with("/" + type_)
                | pl.element().str.ends_with("#" + type_)
            )
            .list.any()
        )
        mask = self.bundle.entities.select(wanted.fill_null(False))["types"].to_numpy()
        if not mask.any():
            known = sorted({t for ts in self.bundle.entities["types"].to_list() for t in ts})
            raise KgforgeError(
                f"--type {type_!r} matches no entity type of the model; types: {', '.join(known) or '(none recorded)'}"
            )
        return torch.from_numpy(mask).to(self.device)

    def top(
        self, entity_ids: list[int], k: int = 10, exclude_neighbours: bool = False, type_: str | None = None
    ) -> list[list[tuple[int, float]]]:
        queries = self.vectors[torch.tensor(entity_ids, device=self.device)]
        exclude = [
            torch.cat([torch.tensor([e]), self.neighbours(e)]) if exclude_neighbours else torch.tensor([e])
            for e in entity_ids
        ]
        scores, ids = search_topk(
            self.vectors,
            queries,
            k,
            self.bundle.metric,
            exclude=exclude,
            allowed=self.type_mask(type_) if type_ else None,
            sq_norms=self.sq_norms,
            query_batch=1024 if self.device.type == "cuda" else 256,
        )
        return [
            [(int(i), float(s)) for i, s in zip(row_ids, row_scores) if i >= 0 and s > float("-inf")]
            for row_ids, row_scores in zip(ids.tolist(), scores.tolist())
        ]


_INDEXES: dict[tuple[str, float, str], RelatedIndex] = {}


def open_index(paths: DomainPaths, model: str = "default", device: str = "auto") -> RelatedIndex:
    """The bundle ``models/<model>`` loaded once per process (reloaded when it is retrained)."""
    path = bundle_path(paths, model)
    marker = path / "bundle.json"
    key = (str(path.resolve()), marker.stat().st_mtime if marker.exists() else 0.0, device)
    if key not in _INDEXES:
        for stale in [k for k in _INDEXES if k[0] == key[0]]:  # a retrained bundle replaces the old one
            del _INDEXES[stale]
        _INDEXES[key] = RelatedIndex(Bundle.open(path), device)
    return _INDEXES[key]


def resolve(
    index: RelatedIndex, name: str, published: Snapshot | None = None, trained: Snapshot | None = None
) -> Match:
    """An entity by IRI or label: the model's own entities first, then the ``published`` store (added later).
    Several of the model's entities under one label are one entity when the links of the build the model was
    trained on (``trained``, else ``published``) join them.

    A name that is a valid IRI is first looked up as one; any name, IRI-shaped or not (``http://x y``,
    a label that happens to be a URL), is then looked up as a label. No IRI is built from a name that
    is not a valid one."""
    iri = _as_iri(name)
    if iri is not None:
        entity_id = index.bundle.iri_to_id.get(iri.value)
        if entity_id is not None:
            return Match(iri.value, index.labels[entity_id], entity_id)
        found = _iri_in_store(published, iri)
        if found is not None:
            return found
    entities = index.bundle.entities
    for candidate in dict.fromkeys([name, name.strip(), normalise_label(name)]):
        hits = entities.filter(pl.col("label") == candidate)
        if hits.height == 1:
            return Match(hits["iri"][0], hits["label"][0], int(hits["id"][0]))
        if hits.height > 1:
            linked = _one_linked_entity(trained or published, hits, index)
            if linked is not None:
                return linked
            raise KgforgeError(
                f"{name!r} labels {hits.height} entities of the model; pass one IRI: "
                + ", ".join(hits["iri"].head(10).to_list())
            )
    return _label_in_store(published, name, index, looked_up_as_iri=iri is not None)


def _as_iri(name: str) -> ox.NamedNode | None:
    """``name`` as an IRI when it has a scheme and is a valid IRI; None otherwise (then it is a label)."""
    if "://" not in name and not name.startswith("urn:"):
        return None
    try:
        return ox.NamedNode(name)
    except ValueError:
        return None


def _one_linked_entity(build: Snapshot | None, hits: pl.DataFrame, index: RelatedIndex) -> Match | None:
    """When every entity sharing the label is one entity linked across sources (the ``owl:sameAs`` pairs of
    ``build``, by the naming rule every stage follows: :meth:`Snapshot.same_as_pairs`), the best-connected of
    them; None when they are different entities."""
    if build is None:
        return None
    partners: dict[str, set[str]] = {}
    for a, b in build.same_as_pairs():
        partners.setdefault(a, set()).add(b)
        partners.setdefault(b, set()).add(a)
    iris = set(hits["iri"].to_list())
    cluster = {iris.pop()}
    frontier = list(cluster)
    while frontier:
        for other in partners.get(frontier.pop(), ()):
            if other in iris:
                iris.discard(other)
                cluster.add(other)
                frontier.append(other)
    if iris:
        return None
    triples = index.bundle.triples
    degree = {i: triples.filter((pl.col("h") == i) | (pl.col("t") == i)).height for i in hits["id"].to_list()}
    best = max(hits.iter_rows(named=True), key=lambda row: degree[row["id"]])
    return Match(best["iri"], best["label"], int(best["id"]))


def _iri_in_store(published: Snapshot | None, iri: ox.NamedNode) -> Match | None:
    """An entity the published store has under ``iri`` (added after training), or None."""
    if published is None:
        return None
    with QueryRunner(published) as runner:
        found = runner.query(query_text("entity_neighbours"), {"topic": iri}, timeout=30)
        rows = runner.query("SELECT ?e ?label WHERE { ?e rdfs:label ?label } LIMIT 1", {"e": iri}, timeout=30).rows
    if found.rows or rows:
        return Match(iri.value, rows[0]["label"].value if rows else None, None)
    return None


def _label_in_store(published: Snapshot | None, name: str, index: RelatedIndex, looked_up_as_iri: bool) -> Match:
    if published is not None:
        with QueryRunner(published) as runner:
            rows = runner.query(query_text("entity_by_label"), {"name": ox.Literal(name)}, timeout=30).rows
        if rows:
            label = rows[0].get("label")
            return Match(rows[0]["entity"].value, label.value if label is not None else name, None)
    suggestions = difflib.get_close_matches(name, _suggestion_pool(index.bundle.entities, name), n=5, cutoff=0.3)
    hint = f"; did you mean: {', '.join(suggestions)}?" if suggestions else ""
    how = "with IRI or label" if looked_up_as_iri else "labelled"
    raise UnknownEntityError(f"no entity {how} {name!r} in model {where(index.bundle.path)} or its store{hint}")


def _suggestion_pool(entities: pl.DataFrame, name: str, limit: int = 50_000) -> list[str]:
    """Labels worth comparing with ``name``: sharing a character with it and of a similar length."""
    pool = (
        entities.select("label")
        .drop_nulls()
        .filter(
            pl.col("label").str.contains_any(sorted(set(name))),
            pl.col("label").str.len_chars().is_between(len(name) // 2, len(name) * 2 + 1),
        )
    )
    return pool.unique(maintain_order=True).head(limit)["label"].to_list()


def _graph_neighbours(published: Snapshot, match: Match, k: int) -> list[dict[str, Any]]:
    with QueryRunner(published) as runner:
        result = runner.query(query_text("entity_neighbours"), {"topic": ox.NamedNode(match.iri)}, timeout=30)
    seen: dict[str, dict[str, Any]] = {}
    for row in result.rows:
        neighbour, label = row["neighbour"].value, row.get("label")
        if neighbour != match.iri and neighbour not in seen:
            seen[neighbour] = {
                "iri": neighbour,
                "label": label.value if label is not None else None,
                "score": None,
                "relation": row["p"].value,
            }
    return list(seen.values())[:k]


@dataclass(frozen=True)
class RelatedQuery(Record):
    """What was asked for: the text given, and the entity it resolved to."""

    text: str
    iri: str
    label: str | None


@dataclass(frozen=True)
class RelatedReport(Record):
    """The entities nearest one entity in a model bundle (or, for an entity newer than the model, its graph
    neighbours)."""

    query: RelatedQuery
    model: str  # the bundle folder
    metric: str  # the bundle's similarity
    k: int
    method: str  # "embedding", or "graph-neighbours" for an entity the model was not trained on
    notice: str | None  # why the method is not "embedding"
    results: tuple[dict[str, Any], ...]  # rank, iri, label, score (None for graph neighbours)

    @property
    def entity(self) -> str:
        return self.query.text


def related(
    source: Snapshot | DomainPaths,
    entity: str,
    *,
    k: int = 10,
    exclude_neighbours: bool = False,
    type_: str | None = None,
    model: str = "default",
    device: str = "auto",
) -> RelatedReport:
    """The ``k`` entities most related to ``entity`` (label or IRI) in ``models/<model>`` of the domain of
    ``source``: its published build, or only its folder where none is published (the model alone answers).
    Names are joined by the links of the build the model was trained on (kept while it is the published build
    or the one before it; else the published one's, with a warning); an entity newer than the model is looked
    up in the published build."""
    if k < 1:
        raise KgforgeError(f"-k must be at least 1, got {k}")
    snapshot = source if isinstance(source, Snapshot) else None
    paths = source.paths if isinstance(source, Snapshot) else source
    domain = paths.domain
    index = open_index(paths, model, device)
    trained = trained_build(snapshot, index.bundle, model) if snapshot is not None else None
    match = resolve(index, entity, snapshot, trained)
    query = RelatedQuery(entity, match.iri, match.label)
    if match.entity_id is None:
        notice = (
            f"{match.label or match.iri} was added to the store after model {model!r} was trained (build "
            f"{index.bundle.source.get('build_id')}); showing its graph neighbours instead. Run "
            f"`kgforge embed {domain}` to include it."
        )
        return RelatedReport(
            query,
            str(index.bundle.path),
            index.bundle.metric,
            k,
            "graph-neighbours",
            notice,
            tuple(_graph_neighbours(snapshot, match, k)) if snapshot is not None else (),
        )
    rows = index.top([match.entity_id], k, exclude_neighbours, type_)[0]
    return RelatedReport(
        query,
        str(index.bundle.path),
        index.bundle.metric,
        k,
        "embedding",
        None,
        tuple(
            {"rank": rank, "iri": index.iris[i], "label": index.labels[i], "score": round(score, 6)}
            for rank, (i, score) in enumerate(rows, 1)
        ),
    )


def trained_build(published: Snapshot, bundle: Bundle, model: str) -> Snapshot:
    """The build ``bundle`` was trained on (its ``source.json`` names it): ``published`` itself, or the build the
    domain keeps before it; where the domain no longer keeps it, ``published`` with a warning saying so."""
    build_id = bundle.source.get("build_id")
    if not build_id or build_id == published.build_id:
        return published
    try:
        return published.kept(str(build_id))
    except KgforgeError:
        warnings.warn(
            f"model {model!r} was trained on build {build_id} of {published.domain!r}, which the domain no longer "
            f"keeps; its entities are joined by the links of the published build {published.build_id} instead "
            f"(`kgforge embed {published.domain}` trains on the published build)",
            RuntimeWarning,
            stacklevel=2,
        )
        return published


def top_related(
    paths: DomainPaths, iri: str, k: int = 10, model: str = "default", exclude_neighbours: bool = False
) -> list[tuple[str, str | None, float]]:
    """Library entry for other stages: [(iri, label, score)] nearest to ``iri``, best first.

    Returns [] when the model does not know ``iri`` (an entity added after training); raises
    :class:`kgforge.embed.bundle.BundleError` when the domain has no trained model ``model``.
    """
    index = open_index(paths, model)
    entity_id = index.bundle.iri_to_id.get(iri)
    if entity_id is None:
        return []
    return [(index.iris[i], index.labels[i], score) for i, score in index.top([entity_id], k, exclude_neighbours)[0]]
