"""Model bundles: everything a trained embedding needs to be used again, with no pickles.

``kg/<domain>/models/<name>/``::

    bundle.json          format version, file list with sha256 (written last: its presence means complete)
    config.json          hyperparameters actually used, seed, device, precision, package versions
    source.json          domain, store build id, triples sha256 (graph + split), options
    metrics.json         evaluation (labelled full or sampled) and training numbers
    weights.safetensors  the PyKEEN model's state dict
    index.safetensors    entity vectors prepared for the similarity metric (nearest-neighbour index)
    entities.parquet     id, iri, label, types
    relations.parquet    id, iri, label
    triples.parquet      s, p, o, derived, split, h, r, t  (the saved split)

:func:`Bundle.open` reloads all of it; :meth:`Bundle.model` rebuilds the PyKEEN model.
A new bundle is assembled in ``.<name>.work/`` and renamed into place, so readers never see
half of one.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, fields
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any

import polars as pl
import torch
from safetensors.torch import load_file, save_file

from kgforge.core import checks
from kgforge.core.errors import KgforgeError
from kgforge.core.files import package_versions, sha256_file, write_json_atomic
from kgforge.core.records import Record, omitted_when_none
from kgforge.embed.config import EmbedConfig, TripleSet, build_model
from kgforge.store.layout import DomainPaths
from kgforge.store.workdir import where

if TYPE_CHECKING:  # a bundle is read with torch alone; PyKEEN loads to rebuild its model (Bundle.model)
    from pykeen.models import ERModel

FORMAT_VERSION = 1
BUNDLE_FILES = (
    "config.json",
    "source.json",
    "metrics.json",
    "weights.safetensors",
    "index.safetensors",
    "entities.parquet",
    "relations.parquet",
    "triples.parquet",
)


def bundle_path(paths: DomainPaths, name: str) -> Path:
    """``<domain>/models/<name>``: ``name`` is one folder, never a path."""
    return paths.models / checks.folder_name(name, "model name")


class BundleError(KgforgeError):
    """A model bundle is missing, incomplete or corrupt."""


def entity_vectors(model: ERModel, metric: str) -> torch.Tensor:
    """(entities, width) float32 vectors in which the metric is plain cosine or L2.

    Complex embeddings are laid out as [real, imaginary]: then Re<a, conj(b)> and |a - b| are the
    real dot product and L2 distance of the laid-out vectors.
    """
    with torch.no_grad():
        vectors = model.entity_representations[0](indices=None).detach()
    if vectors.is_complex():
        vectors = torch.cat([vectors.real, vectors.imag], dim=-1)
    vectors = vectors.reshape(vectors.shape[0], -1).float().cpu()
    if metric == "cosine":
        vectors = torch.nn.functional.normalize(vectors, dim=1)
    return vectors.contiguous()


def _entity_table(triple_set: TripleSet, labels: dict[str, str], types: pl.DataFrame | None) -> pl.DataFrame:
    entities = triple_set.entities.with_columns(
        label=pl.col("iri").replace_strict(labels, default=None, return_dtype=pl.String)
    )
    if types is not None and types.height:
        grouped = types.group_by("iri").agg(types=pl.col("class").unique().sort())
        entities = entities.join(grouped, on="iri", how="left")
    else:
        entities = entities.with_columns(types=pl.lit(None, dtype=pl.List(pl.String)))
    return entities.with_columns(pl.col("types").fill_null([])).sort("id")


@dataclass(frozen=True)
class EmbedReport(Record):
    """A trained model bundle (``models/<name>``), or, on a node other than 0 of a multi-node run, which
    node it was and how far it trained (node 0 writes the bundle). The sections are the bundle's own
    ``metrics.json`` and ``source.json`` records, as ``kgforge embed --json`` prints them."""

    bundle: Path | None  # None on a node other than 0
    model: str | None = omitted_when_none()  # the PyKEEN model, e.g. RotatE
    dim: int | None = omitted_when_none()
    metric: str | None = omitted_when_none()  # the similarity ``kgforge related`` ranks by
    entities: int | None = omitted_when_none()
    relations: int | None = omitted_when_none()
    split: dict[str, Any] | None = omitted_when_none()  # counts and actual ratios of train/valid/test
    evaluation: dict[str, Any] | None = omitted_when_none()  # filtered rank metrics (mrr, hits_at_k), or why none
    training: dict[str, Any] | None = omitted_when_none()  # epochs, seconds, device, loss curves, …
    triples_sha256: str | None = omitted_when_none()  # of the triples trained on
    figures: tuple[Path, ...] | None = omitted_when_none()  # the loss and validation curves (PNG)
    node_rank: int | None = omitted_when_none()  # a node other than 0 of a multi-node run
    epochs_completed: int | None = omitted_when_none()  # on that node


def write_bundle(
    bundle_dir: Path,
    work_dir: Path,
    *,
    model: ERModel,
    triple_set: TripleSet,
    config: EmbedConfig,
    metric: str,
    labels: dict[str, str],
    types: pl.DataFrame | None,
    source: dict[str, Any],
    metrics: dict[str, Any],
    training: dict[str, Any],
) -> EmbedReport:
    """Write every bundle file into ``work_dir``, then rename it to ``bundle_dir``; returns what it wrote."""
    from dataclasses import asdict

    state = {k: v.detach().cpu().contiguous() for k, v in model.state_dict().items()}
    save_file(state, str(work_dir / "weights.safetensors"))
    save_file(
        {"vectors": entity_vectors(model, metric)}, str(work_dir / "index.safetensors"), metadata={"metric": metric}
    )
    _entity_table(triple_set, labels, types).write_parquet(work_dir / "entities.parquet")
    triple_set.relations.with_columns(
        label=pl.col("iri").replace_strict(labels, default=None, return_dtype=pl.String)
    ).write_parquet(work_dir / "relations.parquet")
    triple_set.triples.write_parquet(work_dir / "triples.parquet")
    config_data = {
        **asdict(config),
        "model_class": type(model).__name__,
        "metric": metric,
        "num_entities": triple_set.entities.height,
        "num_relations": triple_set.relations.height,
        "versions": package_versions(extra=("pykeen", "torch", "safetensors")),
    }
    write_json_atomic(work_dir / "config.json", config_data)
    write_json_atomic(work_dir / "source.json", {**source, "split": triple_set.split_report})
    write_json_atomic(work_dir / "metrics.json", {"evaluation": metrics, "training": training})
    (work_dir / "checkpoint.pt").unlink(missing_ok=True)
    manifest = {"format": FORMAT_VERSION, "files": {name: sha256_file(work_dir / name) for name in BUNDLE_FILES}}
    write_json_atomic(work_dir / "bundle.json", manifest)
    _swap_dir(work_dir, bundle_dir)
    return EmbedReport(
        bundle=bundle_dir,
        model=config.model,
        dim=config.dim,
        metric=metric,
        entities=triple_set.entities.height,
        relations=triple_set.relations.height,
        split=triple_set.split_report,
        evaluation=metrics,
        training=training,
        triples_sha256=source.get("triples_sha256"),
    )


def _swap_dir(new: Path, target: Path) -> None:
    old = target.with_name(f".{target.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if target.exists():
        os.replace(target, old)
    os.replace(new, target)
    shutil.rmtree(old, ignore_errors=True)


@dataclass
class Bundle:
    path: Path
    config: dict[str, Any]
    source: dict[str, Any]
    metrics: dict[str, Any]
    entities: pl.DataFrame
    relations: pl.DataFrame
    vectors: torch.Tensor
    metric: str

    @classmethod
    def open(cls, path: Path | str, verify: bool = False) -> Bundle:
        """Reload a bundle written by :func:`write_bundle`; ``verify`` re-checks every file's sha256."""
        path = Path(path)
        marker = path / "bundle.json"
        if not marker.exists():
            hint = (
                " (training is still running or was killed: finish it with `kgforge embed --resume`)"
                if path.with_name(f".{path.name}.work").exists()
                else " (train one with `kgforge embed DOMAIN`)"
            )
            raise BundleError(f"no complete model bundle at {where(path)}{hint}")
        manifest = json.loads(marker.read_text(encoding="utf-8"))
        if manifest.get("format") != FORMAT_VERSION:
            raise BundleError(f"{marker}: bundle format {manifest.get('format')} is not {FORMAT_VERSION}")
        for name, digest in manifest["files"].items():
            if not (path / name).exists():
                raise BundleError(f"model bundle {path} lacks {name}")
            if verify and sha256_file(path / name) != digest:
                raise BundleError(f"model bundle file {path / name} does not match its sha256 in {marker}")
        index = load_file(str(path / "index.safetensors"))
        config = _read_json(path / "config.json")
        return cls(
            path=path,
            config=config,
            source=_read_json(path / "source.json"),
            metrics=_read_json(path / "metrics.json"),
            entities=pl.read_parquet(path / "entities.parquet"),
            relations=pl.read_parquet(path / "relations.parquet"),
            vectors=index["vectors"],
            metric=config["metric"],
        )

    @cached_property
    def triples(self) -> pl.DataFrame:
        """The saved split (s, p, o, derived, split, h, r, t), read on first use."""
        return pl.read_parquet(self.path / "triples.parquet")

    @cached_property
    def iri_to_id(self) -> dict[str, int]:
        return dict(zip(self.entities["iri"].to_list(), self.entities["id"].to_list()))

    def model(self, device: str = "cpu") -> ERModel:
        """The trained PyKEEN model, rebuilt from config and weights (loaded without pickles)."""
        from pykeen.triples import CoreTriplesFactory

        known = {f.name for f in fields(EmbedConfig)}
        config = EmbedConfig(**{k: v for k, v in self.config.items() if k in known})
        train = self.triples.filter(pl.col("split") == "train").select("h", "r", "t").to_numpy()
        factory = CoreTriplesFactory(
            mapped_triples=torch.from_numpy(train.astype("int64")),
            num_entities=self.config["num_entities"],
            num_relations=self.config["num_relations"],
        )
        model = build_model(config, factory)
        model.load_state_dict(load_file(str(self.path / "weights.safetensors")))
        return model.to(device).eval()


def _read_json(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))
