"""`kgforge embed`: train a PyKEEN model on a domain's graph and write a model bundle.

Pipeline: entity-to-entity facts from the graph tables (``kgforge.tables.read_tables``)
→ a deterministic split, saved with the bundle (derived triples follow the triples they were derived
from) → int ids built with polars → a PyKEEN ``CoreTriplesFactory`` made from the id tensor (no TSV files) → a memory
preflight → training with kgforge's own loop → filtered rank evaluation → bundle.

The training loop is kgforge's, the model is PyKEEN's. Each batch scores its positives against a
set of negatives shared by the whole batch (both sides corrupted), one matrix-shaped call per
side, with a cross-entropy loss over [positive, negatives]. When the graph has no more entities
than the negative budget, the negatives are simply all entities (1-vs-all). On a GPU the forward
pass runs under bf16 autocast and batches are large. Checkpoints are written atomically every
``checkpoint_seconds``; the batch order and negatives of each step derive from (seed, epoch,
batch), so ``resume`` continues mid-epoch exactly where the checkpoint left off.
"""

from __future__ import annotations

import hashlib
import math
import os
import resource
import shutil
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import polars as pl
import torch
from pykeen.models import ERModel, model_resolver
from pykeen.triples import CoreTriplesFactory

from kgforge import checks
from kgforge.bundle import bundle_path
from kgforge.errors import ArgumentError, KgforgeError
from kgforge.evaluate import evaluate_model
from kgforge.progress import progress_bar
from kgforge.scoring import candidate_scores, has_fast_path
from kgforge.store import domain_paths, published_build, read_manifest
from kgforge.tables import GraphTables, read_tables
from kgforge.derive import PAIR_NODE
from kgforge.vocab import DERIVED_GRAPHS, ONTO

SPLITS = ("train", "valid", "test")
SPLIT_CODE = {name: code for code, name in enumerate(SPLITS)}
# Models whose scores are distances (similarity = -L2); every other model is compared by cosine.
DISTANCE_MODELS = frozenset({"transe", "transh", "transr", "transd", "rotate", "toruse", "pairre", "mure",
                             "se", "um", "kg2e", "transf", "boxe", "tripler", "crosse"})
LITERAL_ENTITY = "urn:kgforge:literal:"
PRECISIONS = ("auto", "fp32", "bf16")  # auto: bf16 autocast on GPU, fp32 on CPU
EVALUATIONS = ("auto", "full", "sampled", "none")


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
    checkpoint_seconds: float = 300.0
    ratios: tuple[float, float, float] = (0.8, 0.1, 0.1)
    include_literals: bool = False
    include_derived: bool = False
    evaluation: str = "auto"  # auto | full | sampled | none
    eval_candidates: int = 1000
    eval_max_triples: int = 10_000
    eval_batch_size: int | None = None
    memory_fraction: float = 0.85
    threads: int | None = None  # CPU threads for torch; None: the cores other processes leave idle
    devices: int = 1  # processes per machine (GPUs, or CPU processes); > 1 or nodes > 1: kgforge.embed_distributed
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
        checks.number(self.learning_rate, "EmbedConfig.learning_rate", above=True)
        checks.number(self.checkpoint_seconds, "EmbedConfig.checkpoint_seconds")  # 0: after every step
        checks.optional(checks.number, self.max_time, "EmbedConfig.max_time", above=True)
        checks.number(self.memory_fraction, "EmbedConfig.memory_fraction", above=True, maximum=1.0)
        checks.device(self.device, "EmbedConfig.device")
        checks.choice(self.precision, "EmbedConfig.precision", PRECISIONS)
        checks.choice(self.evaluation, "EmbedConfig.evaluation", EVALUATIONS)

    def resolved(self, device: torch.device) -> "EmbedConfig":
        """The config with device-dependent defaults filled in."""
        gpu = device.type == "cuda"
        values = asdict(self)
        values["batch_size"] = self.batch_size or (8192 if gpu else 512)
        values["num_negatives"] = self.num_negatives or (1024 if gpu else 128)
        values["precision"] = ("bf16" if gpu else "fp32") if self.precision == "auto" else self.precision
        values["device"] = str(device)
        values["threads"] = self.threads or (None if gpu else idle_cpu_threads())
        values["ratios"] = tuple(self.ratios)
        return EmbedConfig(**values)


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
        return CoreTriplesFactory(mapped_triples=self.mapped(split), num_entities=self.entities.height,
                                  num_relations=self.relations.height)

    def content_hash(self) -> str:
        """sha256 of the sorted (s, p, o, split) rows as TSV: which graph and which split a model saw."""
        digest = hashlib.sha256()
        rows = self.triples.sort(["s", "p", "o"]).select("s", "p", "o", "split")
        for offset in range(0, rows.height, 1_000_000):
            chunk = rows.slice(offset, 1_000_000).write_csv(include_header=False, separator="\t")
            digest.update(chunk.encode("utf-8"))
        return digest.hexdigest()


# ----------------------------------------------------------------------------------------------
# Triples and the split


def graph_triples(tables: GraphTables, include_literals: bool = False) -> pl.DataFrame:
    """(s, p, o, derived) from the fact table: entity edges, plus literal values as nodes if asked."""
    # Derived graphs also hold reified pair nodes (kg:left, kg:sharedObject, ...): structure, not facts.
    facts = tables.facts.filter(~pl.col("s").str.starts_with(PAIR_NODE) & ~pl.col("p").str.starts_with(ONTO))
    if not include_literals:
        facts = facts.filter(pl.col("o_is_entity"))
    return facts.select(
        "s", "p",
        o=pl.when(pl.col("o_is_entity")).then(pl.col("o"))
        .otherwise(pl.lit(LITERAL_ENTITY) + pl.col("o_lang").fill_null("") + pl.lit(":") + pl.col("o")),
        derived=pl.col("graph").str.starts_with(DERIVED_GRAPHS),
    ).unique(["s", "p", "o"], keep="first").sort(["s", "p", "o"])


def split_triples(triples: pl.DataFrame, ratios: tuple[float, float, float], seed: int) -> tuple[pl.DataFrame, dict]:
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
        raise EmbedError("the graph has no entity-to-entity triples to train on (build a domain with "
                         "entity-valued relations, or pass --include-literals)")
    generator = torch.Generator().manual_seed(seed)
    position = torch.empty(base.height, dtype=torch.int64)
    position[torch.randperm(base.height, generator=generator)] = torch.arange(base.height)
    cut_train = round(base.height * ratios[0])
    cut_valid = cut_train + round(base.height * ratios[1])
    base = base.with_columns(pos=pl.Series(position.numpy())).with_columns(
        split=pl.when(pl.col("pos") < cut_train).then(pl.lit("train"))
        .when(pl.col("pos") < cut_valid).then(pl.lit("valid")).otherwise(pl.lit("test"))
    ).drop("pos")
    base, moved = _ensure_coverage(base)
    derived, dropped = _place_derived(base, derived)
    result = pl.concat([base, derived]).sort(["s", "p", "o"])
    counts = result.group_by("split").len()
    counted = dict(zip(counts["split"].to_list(), counts["len"].to_list()))
    total = result.height
    report = {
        "seed": seed, "requested_ratios": list(ratios), "triples": total,
        "counts": {s: counted.get(s, 0) for s in SPLITS},
        "actual_ratios": {s: round(counted.get(s, 0) / total, 4) for s in SPLITS},
        "moved_to_train_for_coverage": moved, "derived_triples": derived.height + dropped,
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
        .group_by("s", "o").agg(rank=pl.max_horizontal("rank", "rank_b").max())
    )
    placed = (derived.join(sources, on=["s", "o"], how="left")
              .with_columns(split=pl.col("rank").fill_null(0).replace_strict(dict(enumerate(SPLITS)),
                                                                              return_dtype=pl.String))
              .drop("rank"))
    train = pl.concat([base, placed]).filter(pl.col("split") == "train")
    known = pl.concat([train["s"], train["o"]]).unique().implode()
    keep = (pl.col("split") == "train") | (pl.col("s").is_in(known) & pl.col("o").is_in(known)
                                           & pl.col("p").is_in(train["p"].unique().implode()))
    dropped = placed.filter(~keep).height
    return placed.filter(keep), dropped


def index_triples(split: pl.DataFrame, split_report: dict) -> TripleSet:
    """Integer ids (sorted IRIs → 0..n-1) for entities and relations, joined onto the triples with polars."""
    entities = (pl.concat([split["s"], split["o"]]).unique().sort().to_frame("iri")
                .with_row_index("id").with_columns(pl.col("id").cast(pl.Int64)))
    relations = (split["p"].unique().sort().to_frame("iri").with_row_index("id")
                 .with_columns(pl.col("id").cast(pl.Int64)))
    triples = (split.join(entities.rename({"iri": "s", "id": "h"}), on="s")
               .join(relations.rename({"iri": "p", "id": "r"}), on="p")
               .join(entities.rename({"iri": "o", "id": "t"}), on="o")
               .sort(["s", "p", "o"]))
    return TripleSet(triples=triples, entities=entities, relations=relations, split_report=split_report)


def triple_set_from_ids(train: torch.Tensor, valid: torch.Tensor, test: torch.Tensor,
                        entity_iris: list[str], relation_iris: list[str]) -> TripleSet:
    """A TripleSet from an existing split given as id tensors (e.g. a PyKEEN dataset's own split)."""
    frames = []
    for name, mapped in zip(SPLITS, (train, valid, test)):
        ids = mapped.numpy()
        frames.append(pl.DataFrame({"h": ids[:, 0], "r": ids[:, 1], "t": ids[:, 2]}).with_columns(
            split=pl.lit(name), derived=pl.lit(False)))
    entities = pl.DataFrame({"id": range(len(entity_iris)), "iri": entity_iris}, schema={"id": pl.Int64, "iri": pl.String})
    relations = pl.DataFrame({"id": range(len(relation_iris)), "iri": relation_iris},
                             schema={"id": pl.Int64, "iri": pl.String})
    triples = pl.concat(frames).with_columns(pl.col("h", "r", "t").cast(pl.Int64))
    triples = (triples.join(entities.rename({"id": "h", "iri": "s"}), on="h")
               .join(relations.rename({"id": "r", "iri": "p"}), on="r")
               .join(entities.rename({"id": "t", "iri": "o"}), on="t")
               .select("s", "p", "o", "derived", "split", "h", "r", "t").sort(["s", "p", "o"]))
    counts = {s: triples.filter(pl.col("split") == s).height for s in SPLITS}
    report = {"seed": None, "source": "given", "triples": triples.height, "counts": counts,
              "actual_ratios": {s: round(n / triples.height, 4) for s, n in counts.items()},
              "moved_to_train_for_coverage": 0, "derived_triples": 0, "derived_dropped_unknown_entity": 0}
    return TripleSet(triples=triples, entities=entities, relations=relations, split_report=report)


# ----------------------------------------------------------------------------------------------
# Model, device and memory


def idle_cpu_threads() -> int:
    """torch's thread count, lowered to the cores the 1-minute load average leaves idle (at least 1).

    torch's CPU thread pool spins while it waits; on cores other jobs are using, two threads can run
    several times slower than one.
    """
    idle = (os.cpu_count() or 1) - os.getloadavg()[0]
    return max(1, min(torch.get_num_threads(), round(idle)))


def pick_device(name: str) -> torch.device:
    checks.device(name, "device")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise EmbedError(f"--device {name} was asked for, but torch {torch.__version__} sees no CUDA GPU; "
                         "use --device cpu or auto")
    return torch.device(name)


def check_model(name: str, what: str = "model") -> str:
    """``name`` if PyKEEN knows it as an entity/relation embedding model kgforge can train."""
    model_class(name, what)
    return name


def model_class(name: str, what: str = "model") -> type[ERModel]:
    try:
        model_cls = model_resolver.lookup(name)
    except (KeyError, ValueError, TypeError):
        raise ArgumentError(what, f"{name!r} is not a PyKEEN model; PyKEEN knows: "
                                  f"{', '.join(sorted(model_resolver.lookup_dict))}") from None
    if not issubclass(model_cls, ERModel):
        raise ArgumentError(what, f"{name!r} is not an entity/relation embedding model kgforge can train")
    return model_cls


def build_model(config: EmbedConfig, factory: CoreTriplesFactory) -> ERModel:
    model_cls = model_class(config.model)
    return model_cls(triples_factory=factory, embedding_dim=config.dim, random_seed=config.seed,
                     **config.model_kwargs)


def model_key(model_name: str) -> str:
    return model_resolver.normalize(model_name)


def similarity_metric(model_name: str) -> str:
    """The model family's own geometry: L2 distance for translational models, cosine otherwise."""
    return "l2" if model_key(model_name) in DISTANCE_MODELS else "cosine"


def available_memory(device: torch.device) -> int:
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    with open("/proc/meminfo", encoding="ascii") as meminfo:
        for line in meminfo:
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    return 8 * 1024**3


def _real_width(model: ERModel) -> int:
    """Floats per entity vector (a complex dimension counts twice)."""
    weight = model.entity_representations[0](indices=torch.zeros(1, dtype=torch.long,
                                                                 device=model.device))
    return int(torch.view_as_real(weight).numel() if weight.is_complex() else weight.numel())


def memory_preflight(config: EmbedConfig, num_entities: int, num_relations: int, device: torch.device) -> dict:
    """Estimate training and evaluation memory; refuse before the model is even allocated if it cannot fit.

    Sizes come from a probe model of the same class on 2 entities and 2 relations, scaled up.
    """
    probe_triples = torch.tensor([[0, 0, 1], [1, 1, 0]])
    probe = build_model(config, CoreTriplesFactory(probe_triples, num_entities=2, num_relations=2))
    width = _real_width(probe)
    entity_floats = sum(p.numel() for rep in probe.entity_representations for p in rep.parameters()) // 2
    relation_floats = sum(p.numel() for rep in probe.relation_representations for p in rep.parameters()) // 2
    params = (num_entities * entity_floats + num_relations * relation_floats) * 4
    state = params * 4  # weights, gradients, two Adam moments
    candidates = min(num_entities, config.num_negatives)
    # Per candidate and triple: one score (matrix-product models) or a width-long broadcast row (others);
    # two corrupted sides, x3 for gradients and temporaries.
    per_pair = 1 if has_fast_path(probe) else width
    batch_bytes = config.batch_size * (candidates * per_pair + 4 * width) * 4 * 2 * 3
    budget = int(available_memory(device) * config.memory_fraction)
    estimate = {"parameters_bytes": params, "training_state_bytes": state, "batch_bytes": batch_bytes,
                "available_bytes": budget, "width": width}
    if state + batch_bytes > budget:
        fit_batch = max(0, (budget - state) // max(1, (candidates * per_pair + 4 * width) * 4 * 2 * 3))
        advice = (f"try --batch-size {fit_batch} or fewer --negatives" if fit_batch >= 16 else
                  "reduce --dim or train on a larger device")
        raise EmbedError(
            f"memory preflight: {config.model} with dim {config.dim} on {num_entities:,} entities needs about "
            f"{_gib(state)} for weights+optimizer and {_gib(batch_bytes)} per batch of {config.batch_size} x "
            f"{candidates} negatives, but only {_gib(budget)} of {device.type} memory is available "
            f"({config.memory_fraction:.0%} of free); {advice}. Nothing was trained.")
    eval_room = max(budget - state, 1)
    estimate["eval_batch_size"] = config.eval_batch_size or max(
        1, min(4096, eval_room // max(1, min(num_entities, 65536) * width * 4 * 2)))
    return estimate


def _gib(n: float) -> str:
    return f"{n / 1024**3:.2f} GiB"


# ----------------------------------------------------------------------------------------------
# Training


@dataclass
class TrainState:
    epoch: int = 0
    batch: int = 0
    elapsed: float = 0.0
    triples_seen: int = 0
    last_loss: float = float("nan")


def _step_generator(seed: int, epoch: int, batch: int) -> torch.Generator:
    return torch.Generator().manual_seed((seed * 1_000_003 + epoch) * 1_000_033 + batch)


def _cross_entropy_loss(model: ERModel, batch: torch.Tensor, negatives: torch.Tensor | None) -> torch.Tensor:
    """Softmax cross-entropy of each positive against shared negatives (or all entities), both sides."""
    losses = []
    positive = None if negatives is None else model.score_hrt(batch).float()
    for side, truth in (("tail", batch[:, 2]), ("head", batch[:, 0])):
        scores = candidate_scores(model, batch, negatives, side).float()
        if negatives is None:  # 1-vs-all: the true entity's column is the target
            losses.append(torch.nn.functional.cross_entropy(scores, truth))
            continue
        scores = scores.masked_fill(negatives.unsqueeze(0) == truth.unsqueeze(1), -1e9)
        logits = torch.cat([positive, scores], dim=1)
        losses.append(torch.nn.functional.cross_entropy(
            logits, torch.zeros(len(batch), dtype=torch.long, device=batch.device)))
    return 0.5 * (losses[0] + losses[1])


class Trainer:
    """kgforge's training loop over a PyKEEN model; checkpoints to ``work_dir/checkpoint.pt``."""

    def __init__(self, model: ERModel, train: torch.Tensor, config: EmbedConfig, device: torch.device,
                 work_dir: Path, fingerprint: str) -> None:
        self.model, self.config, self.device = model, config, device
        self.train = train.to(device)
        self.work_dir, self.fingerprint = work_dir, fingerprint
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
        self.state = TrainState()
        self.num_entities = model.num_entities
        self.stopped_by: str | None = None

    @property
    def checkpoint_path(self) -> Path:
        return self.work_dir / "checkpoint.pt"

    def batches_per_epoch(self) -> int:
        return math.ceil(len(self.train) / self.config.batch_size)

    def save_checkpoint(self) -> None:
        payload = {"model": self.model.state_dict(), "optimizer": self.optimizer.state_dict(),
                   "state": asdict(self.state), "fingerprint": self.fingerprint,
                   "model_name": self.config.model, "dim": self.config.dim}
        tmp = self.checkpoint_path.with_name("checkpoint.pt.tmp")
        with open(tmp, "wb") as out:
            torch.save(payload, out)
            out.flush()
            os.fsync(out.fileno())
        os.replace(tmp, self.checkpoint_path)

    def load_checkpoint(self) -> bool:
        """Restore model, optimizer and position from the checkpoint; False when there is none."""
        if not self.checkpoint_path.exists():
            return False
        payload = torch.load(self.checkpoint_path, map_location=self.device, weights_only=True)
        if payload["fingerprint"] != self.fingerprint:
            raise EmbedError(
                f"--resume: checkpoint {self.checkpoint_path} was made for another graph, split or model "
                f"(model {payload['model_name']}, dim {payload['dim']}); run without --resume to start over")
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.state = TrainState(**payload["state"])
        return True

    def fit(self, progress: bool = True) -> TrainState:
        """Train to ``config.epochs``; Ctrl-C writes a checkpoint first, so --resume loses nothing."""
        try:
            return self._fit(progress)
        except KeyboardInterrupt:
            self.save_checkpoint()
            raise

    def _fit(self, progress: bool) -> TrainState:
        config, state = self.config, self.state
        batches = self.batches_per_epoch()
        all_entities = self.num_entities <= config.num_negatives
        use_bf16 = config.precision == "bf16"
        started = time.perf_counter() - state.elapsed
        last_checkpoint = time.perf_counter()
        total = config.epochs * len(self.train)
        self.model.train()
        with progress_bar(progress) as bar:
            task = bar.add_task("training", total=total,
                                completed=min(total, state.epoch * len(self.train) + state.batch * config.batch_size))
            while state.epoch < config.epochs:
                order = torch.randperm(len(self.train), generator=_step_generator(config.seed, state.epoch, -1))
                while state.batch < batches:
                    generator = _step_generator(config.seed, state.epoch, state.batch)
                    ids = order[state.batch * config.batch_size:(state.batch + 1) * config.batch_size]
                    batch = self.train[ids.to(self.device)]
                    negatives = None if all_entities else torch.randint(
                        self.num_entities, (config.num_negatives,), generator=generator).to(self.device)
                    self.optimizer.zero_grad(set_to_none=True)
                    with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=use_bf16):
                        loss = _cross_entropy_loss(self.model, batch, negatives)
                        loss = loss + self.model.collect_regularization_term()
                    loss.backward()
                    self.optimizer.step()
                    self.model.post_parameter_update()
                    state.batch += 1
                    state.triples_seen += len(batch)
                    bar.update(task, advance=len(batch))
                    now = time.perf_counter()
                    state.elapsed = now - started
                    if config.max_time is not None and state.elapsed >= config.max_time:
                        self.stopped_by = f"--max-time {config.max_time:g}s"
                        state.last_loss = float(loss.detach())
                        self.save_checkpoint()
                        return state
                    if now - last_checkpoint >= config.checkpoint_seconds:
                        state.last_loss = float(loss.detach())
                        self.save_checkpoint()
                        last_checkpoint = now
                state.last_loss = float(loss.detach())
                state.epoch += 1
                state.batch = 0
                bar.update(task, description=f"epoch {state.epoch}/{config.epochs} loss {state.last_loss:.4f}")
        state.elapsed = time.perf_counter() - started
        self.save_checkpoint()
        return state


def peak_memory(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


# ----------------------------------------------------------------------------------------------
# The whole stage


def train_bundle(triple_set: TripleSet, config: EmbedConfig, bundle_dir: Path, *,
                 labels: dict[str, str] | None = None, types: pl.DataFrame | None = None,
                 source: dict[str, Any] | None = None, resume: bool = False, progress: bool = True) -> dict:
    """Train on ``triple_set`` and write a complete bundle at ``bundle_dir``; returns the summary."""
    from kgforge.bundle import write_bundle

    device = pick_device(config.device)
    config = config.resolved(device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = True
        torch.cuda.reset_peak_memory_stats(device)
    if config.threads:
        torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    factory = triple_set.factory()
    preflight = memory_preflight(config, triple_set.entities.height, triple_set.relations.height, device)
    model = build_model(config, factory).to(device)
    content_hash = triple_set.content_hash()
    fingerprint = hashlib.sha256(
        f"{content_hash}|{model_key(config.model)}|{config.dim}|{config.seed}|{config.batch_size}|"
        f"{config.num_negatives}|{sorted(config.model_kwargs.items())}".encode()).hexdigest()
    work_dir = bundle_dir.with_name(f".{bundle_dir.name}.work")
    if not resume and work_dir.exists():
        shutil.rmtree(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    if config.devices > 1 or config.nodes > 1:
        state, resumed_from, stopped_by, node = _distributed().fit_distributed(
            model, triple_set, config, device, work_dir, fingerprint, resume, progress)
        if node != 0:  # node 0 evaluates and writes the bundle
            return {"bundle": None, "node_rank": node, "epochs_completed": state.epoch}
    else:
        state, resumed_from, stopped_by = _fit_here(model, factory, config, device, work_dir, fingerprint, resume,
                                                    progress)
    metrics = evaluate_model(model, triple_set, config, preflight["eval_batch_size"], device)
    training = {
        "epochs_completed": state.epoch, "epochs_requested": config.epochs, "stopped_by": stopped_by,
        "resumed_from": resumed_from, "seconds": round(state.elapsed, 3),
        "triples_per_second": round(state.triples_seen / state.elapsed, 1) if state.elapsed else None,
        "final_loss": state.last_loss, "peak_memory_bytes": peak_memory(device), "preflight": preflight,
        "device": str(device), "cpu_threads": torch.get_num_threads(), "precision": config.precision,
        "devices": config.devices, "nodes": config.nodes,
    }
    summary = write_bundle(
        bundle_dir, work_dir, model=model, triple_set=triple_set, config=config,
        metric=similarity_metric(config.model), labels=labels or {}, types=types,
        source={**(source or {}), "triples_sha256": content_hash}, metrics=metrics, training=training,
    )
    return summary


def _fit_here(model: ERModel, factory: CoreTriplesFactory, config: EmbedConfig, device: torch.device,
              work_dir: Path, fingerprint: str, resume: bool,
              progress: bool) -> tuple[TrainState, dict[str, int] | None, str | None]:
    """Train in this process with kgforge's loop; ``(state, resumed_from, stopped_by)``."""
    trainer = Trainer(model, factory.mapped_triples, config, device, work_dir, fingerprint)
    resumed_from = None
    if resume and trainer.load_checkpoint():
        resumed_from = {"epoch": trainer.state.epoch, "batch": trainer.state.batch}
    return trainer.fit(progress=progress), resumed_from, trainer.stopped_by


def _distributed() -> Any:
    """kgforge.embed_distributed, or an error saying how to install what it needs."""
    try:
        import kgforge.embed_distributed
    except ImportError as exc:
        raise EmbedError(f"--devices/--nodes above 1 train through PyTorch Lightning, which is not installed "
                         f"here ({exc}); install it with pip install 'kgforge[lightning]'") from None
    return kgforge.embed_distributed


def embed(domain: str, workdir: Path | str | None = None, config: EmbedConfig | None = None, *,
          name: str = "default", resume: bool = False, progress: bool = True) -> dict:
    """`kgforge embed DOMAIN`: train on the domain's current store and write ``models/<name>/``."""
    config = config or EmbedConfig()
    paths = domain_paths(domain, workdir)
    build = published_build(paths)
    manifest = read_manifest(paths, build)
    tables = read_tables(paths, include_derived=config.include_derived, build=build)
    triples = graph_triples(tables, include_literals=config.include_literals)
    split, report = split_triples(triples, tuple(config.ratios), config.seed)
    triple_set = index_triples(split, report)
    source = {"domain": domain, "build_id": manifest.get("build_id"), "store": str(build),
              "graphs": manifest.get("graphs"), "include_literals": config.include_literals,
              "include_derived": config.include_derived}
    return train_bundle(triple_set, config, bundle_path(paths, name), labels=tables.label_map(),
                        types=tables.types, source=source, resume=resume, progress=progress)

