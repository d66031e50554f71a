"""What a training run is: its settings (``EmbedConfig``), the split triples with integer ids
(``TripleSet``), and the PyKEEN models it can train (``MODELS``, one registry over PyKEEN's own)."""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl
import torch

from kgforge.core import checks
from kgforge.core.errors import ArgumentError, KgforgeError
from kgforge.core.registry import Registry

if TYPE_CHECKING:  # PyKEEN loads where a model is built (seconds, scikit-learn with it): not to read a bundle
    from pykeen.models import ERModel
    from pykeen.triples import CoreTriplesFactory

SPLITS = ("train", "valid", "test")
SPLIT_CODE = {name: code for code, name in enumerate(SPLITS)}
# Models whose scores are distances (similarity = -L2); every other model is compared by cosine.
DISTANCE_MODELS = frozenset(
    {
        "transe",
        "transh",
        "transr",
        "transd",
        "rotate",
        "toruse",
        "pairre",
        "mure",
        "se",
        "um",
        "kg2e",
        "transf",
        "boxe",
        "tripler",
        "crosse",
    }
)
LITERAL_ENTITY = "urn:kgforge:literal:"
PRECISIONS = ("auto", "fp32", "bf16")  # auto: bf16 autocast on GPU, fp32 on CPU
EVALUATIONS = ("auto", "full", "sampled", "none")
KEEPS = ("best", "last")  # which epoch's weights a bundle keeps


class EmbedError(KgforgeError):
    """Training cannot start or continue (bad option, memory preflight, checkpoint mismatch)."""


@dataclass
class EmbedConfig:
    model: str = "RotatE"
    dim: int = 128
    epochs: int = 100
    batch_size: int | None = None  # None: 512 on CPU, 8192 on GPU
    num_negatives: int | None = None  # None: 128 on CPU, 1024 on GPU
    learning_rate: float = 0.02
    seed: int = 42
    device: str = "auto"
    precision: str = "auto"  # auto (bf16 autocast on GPU, fp32 on CPU) | fp32 | bf16
    max_time: float | None = None  # seconds of training
    patience: int = 10  # epochs without a lower validation loss before training stops (0: train every epoch)
    keep: str = "best"  # the weights the bundle keeps: of the epoch with the lowest validation loss, or the last
    checkpoint_seconds: float = 300.0
    ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)
    include_literals: bool = False
    include_derived: bool = False
    evaluation: str = "auto"  # auto | full | sampled | none
    eval_candidates: int = 1000
    eval_max_triples: int = 10_000
    eval_batch_size: int | None = None
    memory_fraction: float = 0.85
    threads: int | None = None  # CPU threads for torch; None: the cores available to this process
    devices: int = 1  # processes per machine (GPUs, or CPU processes); > 1 or nodes > 1: kgforge.embed.distributed
    nodes: int = 1  # machines
    model_kwargs: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Refuse what training would choke on (the command line refuses the same values)."""
        check_model(self.model, "EmbedConfig.model")
        for name in ("dim", "epochs", "eval_candidates", "eval_max_triples", "devices", "nodes"):
            checks.whole(getattr(self, name), f"EmbedConfig.{name}", 1)
        for name in ("batch_size", "num_negatives", "eval_batch_size", "threads"):
            checks.optional(checks.whole, getattr(self, name), f"EmbedConfig.{name}", 1)
        checks.whole(self.seed, "EmbedConfig.seed", 0)
        checks.whole(self.patience, "EmbedConfig.patience", 0)
        checks.choice(self.keep, "EmbedConfig.keep", KEEPS)
        checks.number(self.learning_rate, "EmbedConfig.learning_rate", above=True)
        checks.number(self.checkpoint_seconds, "EmbedConfig.checkpoint_seconds")  # 0: after every step
        checks.optional(checks.number, self.max_time, "EmbedConfig.max_time", above=True)
        checks.number(self.memory_fraction, "EmbedConfig.memory_fraction", above=True, maximum=1.0)
        checks.device(self.device, "EmbedConfig.device")
        checks.choice(self.precision, "EmbedConfig.precision", PRECISIONS)
        checks.choice(self.evaluation, "EmbedConfig.evaluation", EVALUATIONS)

    def resolved(self, device: torch.device) -> ResolvedEmbedConfig:
        """The config with device-dependent defaults filled in."""
        gpu = device.type == "cuda"
        values = asdict(self)
        values["batch_size"] = self.batch_size or (8192 if gpu else 512)
        values["num_negatives"] = self.num_negatives or (1024 if gpu else 128)
        values["precision"] = ("bf16" if gpu else "fp32") if self.precision == "auto" else self.precision
        values["device"] = str(device)
        values["threads"] = self.threads or (None if gpu else available_cores())
        values["ratios"] = tuple(self.ratios)
        return ResolvedEmbedConfig(**values)


class ResolvedEmbedConfig(EmbedConfig):
    """An :class:`EmbedConfig` with its device-dependent defaults filled in (:meth:`EmbedConfig.resolved`, its
    only maker): the batch and negative counts are numbers, which training sizes its tensors by. The same
    dataclass fields; only their types are narrower."""

    batch_size: int
    num_negatives: int


@dataclass
class TripleSet:
    """A split graph with integer ids: what training, evaluation and the bundle need."""

    triples: pl.DataFrame  # s, p, o, derived, split, h, r, t
    entities: pl.DataFrame  # id, iri
    relations: pl.DataFrame  # id, iri
    split_report: dict[str, Any]

    def mapped(self, split: str | None = None) -> torch.Tensor:
        frame = self.triples if split is None else self.triples.filter(pl.col("split") == split)
        return torch.from_numpy(frame.select("h", "r", "t").to_numpy().astype("int64"))

    def factory(self, split: str = "train") -> CoreTriplesFactory:
        from pykeen.triples import CoreTriplesFactory  # lazy: PyKEEN loads where a model is trained

        return CoreTriplesFactory(
            mapped_triples=self.mapped(split), num_entities=self.entities.height, num_relations=self.relations.height
        )

    def content_hash(self) -> str:
        """sha256 of the sorted (s, p, o, split) rows as TSV: which graph and which split a model saw."""
        digest = hashlib.sha256()
        rows = self.triples.sort(["s", "p", "o"]).select("s", "p", "o", "split")
        for offset in range(0, rows.height, 1_000_000):
            chunk = rows.slice(offset, 1_000_000).write_csv(include_header=False, separator="\t")
            digest.update(chunk.encode("utf-8"))
        return digest.hexdigest()


def check_model(name: str, what: str = "model") -> str:
    """``name`` if PyKEEN knows it as an entity/relation embedding model kgforge can train."""
    model_class(name, what)
    return name


def _pykeen_models() -> Iterator[tuple[str, type[ERModel]]]:
    """PyKEEN's entity/relation embedding models, under PyKEEN's normalised names (``rotate``, ``transe``)."""
    from pykeen.models import ERModel, model_resolver  # lazy: PyKEEN loads where a model is named

    for key, cls in model_resolver.lookup_dict.items():
        if isinstance(cls, type) and issubclass(cls, ERModel):
            yield key, cls


MODELS: Registry[type[ERModel]] = Registry(
    "embedding model", discover=_pykeen_models, entry_point_group="kgforge.models"
)


def model_class(name: str, what: str = "model") -> type[ERModel]:
    """The model class ``name`` names: a PyKEEN model by any of its spellings (``RotatE``, ``rotate``,
    ``RotatEModel``), or a plug-in's model registered under the ``kgforge.models`` entry-point group."""
    from pykeen.models import model_resolver  # lazy: PyKEEN loads where a model is named

    key = model_key(name)
    if key in MODELS:
        return MODELS.get(key)
    try:
        model_cls = model_resolver.lookup(name)
    except (KeyError, ValueError, TypeError):
        raise ArgumentError(
            what, f"{name!r} is not a PyKEEN model; PyKEEN knows: {', '.join(sorted(model_resolver.lookup_dict))}"
        ) from None
    raise ArgumentError(
        what, f"{name!r} ({model_cls.__name__}) is not an entity/relation embedding model kgforge can train"
    )


def build_model(config: EmbedConfig, factory: CoreTriplesFactory) -> ERModel:
    model_cls = model_class(config.model)
    return model_cls(triples_factory=factory, embedding_dim=config.dim, random_seed=config.seed, **config.model_kwargs)


def model_key(model_name: str) -> str:
    from pykeen.models import model_resolver  # lazy: PyKEEN loads where a model is named

    return model_resolver.normalize(model_name)


def similarity_metric(model_name: str) -> str:
    """The model family's own geometry: L2 distance for translational models, cosine otherwise."""
    return "l2" if model_key(model_name) in DISTANCE_MODELS else "cosine"


def available_cores() -> int:
    """The CPU cores this process may run on (its affinity mask, which containers and ``taskset`` narrow),
    the default thread count for torch on a CPU; ``--threads`` overrides it."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # no sched_getaffinity (macOS)
        return os.cpu_count() or 1
