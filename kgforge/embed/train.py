"""`kgforge embed`: train a PyKEEN model on a domain's graph and write a model bundle.

Pipeline: entity-to-entity facts from the graph tables (``kgforge.store.snapshot.Snapshot.tables``)
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
import resource
import shutil
import time
from dataclasses import asdict, dataclass, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl
import torch
from pykeen.models import ERModel
from pykeen.triples import CoreTriplesFactory

from kgforge.core import checks, plots
from kgforge.core.errors import Interrupted
from kgforge.core.files import atomic_write
from kgforge.core.progress import progress_bar
from kgforge.core.records import Record
from kgforge.embed.bundle import EmbedReport, bundle_path, write_bundle
from kgforge.embed.config import (
    EmbedConfig,
    EmbedError,
    ResolvedEmbedConfig,
    TripleSet,
    build_model,
    model_key,
    similarity_metric,
)
from kgforge.embed.evaluate import evaluate_model
from kgforge.embed.scoring import has_fast_path
from kgforge.embed.split import graph_triples, index_triples, split_triples
from kgforge.embed.steps import TrainState, _cross_entropy_loss, _step_generator
from kgforge.store.snapshot import Snapshot
from kgforge.store.workdir import where

# ----------------------------------------------------------------------------------------------
# Model, device and memory


def pick_device(name: str) -> torch.device:
    checks.device(name, "device")
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name.startswith("cuda") and not torch.cuda.is_available():
        raise EmbedError(
            f"--device {name} was asked for, but torch {torch.__version__} sees no CUDA GPU; use --device cpu or auto"
        )
    return torch.device(name)


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
    weight = model.entity_representations[0](indices=torch.zeros(1, dtype=torch.long, device=model.device))
    return int(torch.view_as_real(weight).numel() if weight.is_complex() else weight.numel())


@dataclass(frozen=True)
class MemoryPreflight(Record):
    """What training is estimated to need, and what there is (the bundle's ``training.preflight``)."""

    parameters_bytes: int  # the model's weights
    training_state_bytes: int  # weights, gradients and two Adam moments
    batch_bytes: int  # one training batch with its negatives, gradients and temporaries
    available_bytes: int  # the share of the device's free memory training may use (--memory-fraction)
    width: int  # floats per score of one candidate (1 on the matrix-product fast path)
    eval_batch_size: int  # triples ranked at once (--eval-batch-size, or what fits)


def memory_preflight(
    config: ResolvedEmbedConfig, num_entities: int, num_relations: int, device: torch.device
) -> MemoryPreflight:
    """Estimate training and evaluation memory; refuse before the model is even allocated if it cannot fit.

    Sizes come from probe models of the same class on 2 entities and 2 relations, scaled up to the
    graph. The probes are small in ``dim`` too (a probe of the asked dimension would itself allocate what
    the preflight is there to refuse: 8 GB at ``--dim 1000000000``): every size is a polynomial of the
    dimension of degree two at most (linear for most models; TransR adds a dim x dim matrix per
    relation), so three small probes determine it exactly at the asked dimension.
    """
    small = min(config.dim, _PROBE_DIM)
    if config.dim <= 3 * _PROBE_DIM:
        width, entity_floats, relation_floats = _probe_sizes(config, config.dim)
    else:
        probes = [_probe_sizes(config, k * _PROBE_DIM) for k in (1, 2, 3)]
        width, entity_floats, relation_floats = (
            _quadratic_at(config.dim, _PROBE_DIM, [probe[i] for probe in probes]) for i in range(3)
        )
    probe = build_model(replace(config, dim=small), _probe_factory())
    params = (num_entities * entity_floats + num_relations * relation_floats) * 4
    state = params * 4  # weights, gradients, two Adam moments
    candidates = min(num_entities, config.num_negatives)
    # Per candidate and triple: one score (matrix-product models) or a width-long broadcast row (others);
    # two corrupted sides, x3 for gradients and temporaries.
    per_pair = 1 if has_fast_path(probe) else width
    batch_bytes = config.batch_size * (candidates * per_pair + 4 * width) * 4 * 2 * 3
    budget = int(available_memory(device) * config.memory_fraction)
    if state + batch_bytes > budget:
        fit_batch = max(0, (budget - state) // max(1, (candidates * per_pair + 4 * width) * 4 * 2 * 3))
        advice = (
            f"try --batch-size {fit_batch} or fewer --negatives"
            if fit_batch >= 16
            else "reduce --dim or train on a larger device"
        )
        raise EmbedError(
            f"memory preflight: {config.model} with dim {config.dim} on {num_entities:,} entities needs about "
            f"{_gib(state)} for weights+optimizer and {_gib(batch_bytes)} per batch of {config.batch_size} x "
            f"{candidates} negatives, but only {_gib(budget)} of {device.type} memory is available "
            f"({config.memory_fraction:.0%} of free); {advice}. Nothing was trained."
        )
    eval_room = max(budget - state, 1)
    eval_batch_size = config.eval_batch_size or max(
        1, min(4096, eval_room // max(1, min(num_entities, 65536) * width * 4 * 2))
    )
    return MemoryPreflight(params, state, batch_bytes, budget, width, eval_batch_size)


_PROBE_DIM = 16


def _probe_factory() -> CoreTriplesFactory:
    return CoreTriplesFactory(torch.tensor([[0, 0, 1], [1, 1, 0]]), num_entities=2, num_relations=2)


def _probe_sizes(config: EmbedConfig, dim: int) -> tuple[int, int, int]:
    """Floats per entity vector, parameters per entity and per relation, of the model at ``dim``."""
    probe = build_model(replace(config, dim=dim), _probe_factory())
    entity = sum(p.numel() for rep in probe.entity_representations for p in rep.parameters()) // 2
    relation = sum(p.numel() for rep in probe.relation_representations for p in rep.parameters()) // 2
    return _real_width(probe), entity, relation


def _quadratic_at(dim: int, step: int, sizes: list[int]) -> int:
    """The value at ``dim`` of the polynomial ``c + a*d + b*d**2`` through ``sizes`` at ``step``, ``2*step``, ``3*step``."""
    f1, f2, f3 = sizes
    b = Fraction(f3 - 2 * f2 + f1, 2 * step * step)
    a = Fraction(f2 - f1, step) - 3 * b * step
    c = f1 - a * step - b * step * step
    return int(c + a * dim + b * dim * dim)


def _gib(n: float) -> str:
    return f"{n / 1024**3:.2f} GiB"


# ----------------------------------------------------------------------------------------------
# Training

VALID_LOSS_TRIPLES = 2048  # validation triples the per-epoch validation loss is measured on


class Trainer:
    """kgforge's training loop over a PyKEEN model; checkpoints to ``work_dir/checkpoint.pt``."""

    def __init__(
        self,
        model: ERModel,
        train: torch.Tensor,
        config: ResolvedEmbedConfig,
        device: torch.device,
        work_dir: Path,
        fingerprint: str,
        valid: torch.Tensor | None = None,
    ) -> None:
        self.model, self.config, self.device = model, config, device
        self.train = train.to(device)
        self.valid = None if valid is None or not len(valid) else valid[:VALID_LOSS_TRIPLES].to(device)
        self.work_dir, self.fingerprint = work_dir, fingerprint
        self.optimizer = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
        self.state = TrainState()
        self.num_entities = model.num_entities
        self.stopped_by: str | None = None
        self.best_weights: dict[str, torch.Tensor] | None = None  # the model at state.best_epoch

    @property
    def checkpoint_path(self) -> Path:
        return self.work_dir / "checkpoint.pt"

    def batches_per_epoch(self) -> int:
        return math.ceil(len(self.train) / self.config.batch_size)

    def save_checkpoint(self) -> None:
        payload = {
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "state": asdict(self.state),
            "fingerprint": self.fingerprint,
            "model_name": self.config.model,
            "dim": self.config.dim,
            "best_model": self.best_weights,
        }
        with atomic_write(self.checkpoint_path, "wb") as out:
            torch.save(payload, out)

    def load_checkpoint(self) -> bool:
        """Restore model, optimizer and position from the checkpoint; False when there is none."""
        if not self.checkpoint_path.exists():
            return False
        payload = torch.load(self.checkpoint_path, map_location=self.device, weights_only=True)
        if payload["fingerprint"] != self.fingerprint:
            raise EmbedError(
                f"--resume: checkpoint {self.checkpoint_path} was made for another graph, split or model "
                f"(model {payload['model_name']}, dim {payload['dim']}); run without --resume to start over"
            )
        self.model.load_state_dict(payload["model"])
        self.optimizer.load_state_dict(payload["optimizer"])
        self.state = TrainState(**payload["state"])
        self.best_weights = payload.get("best_model")
        return True

    def fit(self, progress: bool = True) -> TrainState:
        """Train to ``config.epochs``, or until ``config.patience`` epochs bring no lower validation loss; the
        model then holds the weights ``config.keep`` asks for. Ctrl-C writes a checkpoint first, so --resume
        loses nothing."""
        try:
            state = self._fit(progress)
        except KeyboardInterrupt:
            self.save_checkpoint()
            raise Interrupted(
                f"interrupted: checkpoint kept at {self.checkpoint_path.absolute()} (epoch "
                f"{self.state.epoch + 1}/{self.config.epochs}, batch {self.state.batch}); rerun the "
                "same command with --resume to continue"
            ) from None
        if self.config.keep == "best" and self.best_weights is not None:
            self.model.load_state_dict(self.best_weights)
        return state

    def _fit(self, progress: bool) -> TrainState:
        config, state = self.config, self.state
        batches = self.batches_per_epoch()
        all_entities = self.num_entities <= config.num_negatives
        use_bf16 = config.precision == "bf16"
        run_started = time.perf_counter()  # --max-time counts from here, not from an interrupted run's start
        started = run_started - state.elapsed
        last_checkpoint = run_started
        total = config.epochs * len(self.train)
        self.model.train()
        with progress_bar(progress) as bar:
            task = bar.add_task(
                "training",
                total=total,
                completed=min(total, state.epoch * len(self.train) + state.batch * config.batch_size),
            )
            while state.epoch < config.epochs:
                order = torch.randperm(len(self.train), generator=_step_generator(config.seed, state.epoch, -1))
                loss = None  # stays None when a checkpoint taken after an epoch's last batch is resumed
                while state.batch < batches:
                    generator = _step_generator(config.seed, state.epoch, state.batch)
                    ids = order[state.batch * config.batch_size : (state.batch + 1) * config.batch_size]
                    batch = self.train[ids.to(self.device)]
                    negatives = (
                        None
                        if all_entities
                        else torch.randint(self.num_entities, (config.num_negatives,), generator=generator).to(
                            self.device
                        )
                    )
                    self.optimizer.zero_grad(set_to_none=True)
                    with torch.autocast(device_type=self.device.type, dtype=torch.bfloat16, enabled=use_bf16):
                        loss = _cross_entropy_loss(self.model, batch, negatives)
                        loss = loss + self.model.collect_regularization_term()
                    loss.backward()
                    self.optimizer.step()
                    self.model.post_parameter_update()
                    state.batch += 1
                    state.triples_seen += len(batch)
                    state.epoch_loss += float(loss.detach())
                    bar.update(task, advance=len(batch))
                    now = time.perf_counter()
                    state.elapsed = now - started
                    if config.max_time is not None and now - run_started >= config.max_time:
                        self.stopped_by = f"--max-time {config.max_time:g}s"
                        state.last_loss = float(loss.detach())
                        self.save_checkpoint()
                        return state
                    if now - last_checkpoint >= config.checkpoint_seconds:
                        state.last_loss = float(loss.detach())
                        self.save_checkpoint()
                        last_checkpoint = now
                if loss is not None:
                    state.last_loss = float(loss.detach())
                self._end_epoch(batches)
                bar.update(task, description=f"epoch {state.epoch}/{config.epochs} loss {state.last_loss:.4f}")
                if self._no_longer_improving():
                    break
        state.elapsed = time.perf_counter() - started
        self.save_checkpoint()
        return state

    def _end_epoch(self, batches: int) -> None:
        """Record the epoch's mean training loss and its validation loss, and move to the next epoch."""
        state = self.state
        state.losses.append(state.epoch_loss / batches)
        if self.valid is not None:
            self.model.eval()
            with torch.no_grad():
                negatives = (
                    None
                    if self.num_entities <= self.config.num_negatives
                    else torch.randint(
                        self.num_entities,
                        (self.config.num_negatives,),
                        generator=_step_generator(self.config.seed, -1, -1),
                    ).to(self.device)
                )
                state.valid_losses.append(float(_cross_entropy_loss(self.model, self.valid, negatives)))
            self.model.train()
            if state.best_epoch is None or state.valid_losses[-1] < state.valid_losses[state.best_epoch - 1]:
                state.best_epoch = len(state.valid_losses)
                self.best_weights = {k: v.detach().clone() for k, v in self.model.state_dict().items()}
        state.epoch, state.batch, state.epoch_loss = state.epoch + 1, 0, 0.0

    def _no_longer_improving(self) -> bool:
        """Early stopping: ``patience`` finished epochs since the lowest validation loss (none without a
        validation split, or with patience 0)."""
        best, patience = self.state.best_epoch, self.config.patience
        if not patience or best is None or len(self.state.valid_losses) - best < patience:
            return False
        self.stopped_by = f"early stopping: no lower validation loss in the {patience} epochs after epoch {best}"
        return True


def peak_memory(device: torch.device) -> int:
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return int(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) * 1024


# ----------------------------------------------------------------------------------------------
# The whole stage


def train_bundle(
    triple_set: TripleSet,
    config: EmbedConfig,
    bundle_dir: Path,
    *,
    labels: dict[str, str] | None = None,
    types: pl.DataFrame | None = None,
    source: dict[str, Any] | None = None,
    resume: bool = False,
    progress: bool = True,
) -> EmbedReport:
    """Train on ``triple_set`` and write a complete bundle at ``bundle_dir``; returns what it wrote."""
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
        f"{config.num_negatives}|{sorted(config.model_kwargs.items())}".encode()
    ).hexdigest()
    work_dir = bundle_dir.with_name(f".{bundle_dir.name}.work")
    if not resume and work_dir.exists():
        shutil.rmtree(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    if config.devices > 1 or config.nodes > 1:
        state, resumed_from, stopped_by, node = _distributed().fit_distributed(
            model, triple_set, config, device, work_dir, fingerprint, resume, progress
        )
        if node != 0:  # node 0 evaluates and writes the bundle
            return EmbedReport(bundle=None, node_rank=node, epochs_completed=state.epoch)
    else:
        state, resumed_from, stopped_by = _fit_here(
            model, factory, config, device, work_dir, fingerprint, resume, progress, triple_set.mapped("valid")
        )
    metrics = evaluate_model(model, triple_set, config, preflight.eval_batch_size, device)
    # --resume means "go on from the checkpoint if there is one": a script may rerun the same command after a
    # kill at any point, also before the first checkpoint; the report says when there was nothing to go on from
    resume_note = (
        f"--resume: no checkpoint in {where(work_dir)}, so training started from the beginning"
        if resume and resumed_from is None
        else None
    )
    training = _training_record(state, config, device, preflight, stopped_by, resumed_from, resume_note)
    return write_bundle(
        bundle_dir,
        work_dir,
        model=model,
        triple_set=triple_set,
        config=config,
        metric=similarity_metric(config.model),
        labels=labels or {},
        types=types,
        source={**(source or {}), "triples_sha256": content_hash},
        metrics=metrics.as_dict(),
        training=training,
    )


def _training_record(
    state: TrainState,
    config: EmbedConfig,
    device: torch.device,
    preflight: MemoryPreflight,
    stopped_by: str | None,
    resumed_from: dict[str, int] | None,
    resume_note: str | None,
) -> dict[str, Any]:
    """How training went, as the bundle's metrics.json records it (``training``): epochs, why it stopped, which
    weights were kept, speed, memory, where it ran, and the loss curves."""
    distributed = config.devices > 1 or config.nodes > 1
    return {
        "epochs_completed": state.epoch,
        "epochs_requested": config.epochs,
        "stopped_by": stopped_by,
        "kept_epoch": _kept_epoch(state, config, distributed),
        "resumed_from": resumed_from,
        "resume_note": resume_note,
        "seconds": round(state.elapsed, 3),
        "triples_per_second": round(state.triples_seen / state.elapsed, 1) if state.elapsed else None,
        "final_loss": state.last_loss,
        "peak_memory_bytes": peak_memory(device),
        "preflight": preflight.as_dict(),
        "device": str(device),
        "cpu_threads": torch.get_num_threads(),
        "precision": config.precision,
        "devices": config.devices,
        "nodes": config.nodes,
        "loss_curve": state.losses,
        "validation_loss_curve": state.valid_losses,
    }


def _kept_epoch(state: TrainState, config: EmbedConfig, distributed: bool) -> str:
    """Which epoch's weights the bundle holds, in words for the report."""
    if distributed:  # Lightning's loop keeps the last epoch: early stopping is kgforge's own loop's
        return f"the last ({state.epoch}): distributed training keeps the last epoch and does not stop early"
    if config.keep == "best" and state.best_epoch is not None:
        return f"the best ({state.best_epoch}, the lowest validation loss)"
    return f"the last ({state.epoch})" + ("" if state.valid_losses else ": no validation triples to choose by")


def _fit_here(
    model: ERModel,
    factory: CoreTriplesFactory,
    config: ResolvedEmbedConfig,
    device: torch.device,
    work_dir: Path,
    fingerprint: str,
    resume: bool,
    progress: bool,
    valid: torch.Tensor | None = None,
) -> tuple[TrainState, dict[str, int] | None, str | None]:
    """Train in this process with kgforge's loop; ``(state, resumed_from, stopped_by)``."""
    trainer = Trainer(model, factory.mapped_triples, config, device, work_dir, fingerprint, valid)
    resumed_from = None
    if resume and trainer.load_checkpoint():
        resumed_from = {"epoch": trainer.state.epoch, "batch": trainer.state.batch}
    return trainer.fit(progress=progress), resumed_from, trainer.stopped_by


def _distributed() -> Any:
    """kgforge.embed.distributed, or an error saying how to install what it needs."""
    try:
        import kgforge.embed.distributed  # lazy: optional dependency (PyTorch Lightning)
    except ImportError as exc:
        raise EmbedError(
            f"--devices/--nodes above 1 train through PyTorch Lightning, which is not installed "
            f"here ({exc}); install it with pip install 'kgforge[lightning]'"
        ) from None
    return kgforge.embed.distributed


def embed(
    snapshot: Snapshot,
    config: EmbedConfig | None = None,
    *,
    name: str = "default",
    resume: bool = False,
    progress: bool = True,
) -> EmbedReport:
    """`kgforge embed DOMAIN`: train on ``snapshot``'s build and write ``models/<name>/``, which records that
    build (``source.json``: ``build_id``) for ``kgforge related`` to read its links."""
    config = config or EmbedConfig()
    domain = snapshot.domain
    paths, build, manifest = snapshot.paths, snapshot.build, snapshot.manifest
    tables = snapshot.tables(include_derived=config.include_derived)
    triples = graph_triples(tables, include_literals=config.include_literals)
    split, split_report = split_triples(triples, tuple(config.ratios), config.seed)
    triple_set = index_triples(split, split_report)
    source = {
        "domain": domain,
        "build_id": manifest.build_id,
        "store": str(build),
        "graphs": manifest.to_dict()["graphs"],
        "include_literals": config.include_literals,
        "include_derived": config.include_derived,
    }
    bundle = bundle_path(paths, name)
    report = train_bundle(
        triple_set,
        config,
        bundle,
        labels=tables.label_map(),
        types=tables.types,
        source=source,
        resume=resume,
        progress=progress,
    )
    training = report.training or {}
    if report.bundle is not None and training.get("loss_curve"):
        figure = plots.curves(
            {"training loss": training["loss_curve"], "validation loss": training["validation_loss_curve"]},
            bundle.with_name(f"{name}-training.png"),
            title=f"{domain}: {config.model} training",
        )
        report = replace(report, figures=(figure,))
    return report
